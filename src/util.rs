//! Small shared helpers: atomic file writes.

use crate::{Error, Result};
use std::io::Write;
use std::path::Path;

/// Write a file atomically: the content goes to a temporary file in the same directory, which is
/// renamed over `path` only once everything was written and flushed. A failure midway leaves any
/// existing file at `path` untouched.
pub fn write_atomic<F>(path: &Path, write: F) -> Result<()>
where
    F: FnOnce(&mut dyn Write) -> std::io::Result<()>,
{
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| Error::io(dir, e))?;
    {
        let mut w = std::io::BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
        write(&mut w).map_err(|e| Error::io(path, e))?;
        w.flush().map_err(|e| Error::io(path, e))?;
    }
    // The temporary file is created 0600; give the result the permissions a plain create would
    // (0666 less the umask, i.e. usually 0644), or keep those of the file it replaces.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let perms = match std::fs::metadata(path) {
            Ok(m) => m.permissions(),
            Err(_) => std::fs::Permissions::from_mode(0o644),
        };
        tmp.as_file()
            .set_permissions(perms)
            .map_err(|e| Error::io(path, e))?;
    }
    tmp.as_file().sync_all().map_err(|e| Error::io(path, e))?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

/// Print a line on the process's real standard error, bypassing the test harness's output
/// capture (which only intercepts the `print!` family of macros). Tests that skip their work —
/// the GPU tests on a machine without CUDA — use it so that "skipped: no CUDA device" is visible
/// in a plain `cargo test` run instead of passing silently.
pub fn notice(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

/// Seconds in a readable unit (µs below a millisecond, ms below a second); `missing` for a
/// non-finite value.
pub fn fmt_seconds(s: f64, missing: &str) -> String {
    if !s.is_finite() {
        missing.into()
    } else if s < 1e-3 {
        format!("{:.2} µs", s * 1e6)
    } else if s < 1.0 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{s:.3} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_is_readable() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.txt");
        write_atomic(&p, |w| w.write_all(b"one")).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        // A failing writer leaves the old content in place.
        let r = write_atomic(&p, |w| {
            w.write_all(b"partial")?;
            Err(std::io::Error::other("boom"))
        });
        assert!(r.is_err());
        assert_eq!(std::fs::read(&p).unwrap(), b"one");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o644);
        }
    }
}
