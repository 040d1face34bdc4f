//! Small shared helpers: writing output files, notices, seconds.

use crate::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Write the output file `path`, never leaving a half-written one behind:
///
/// - `-` is standard output;
/// - a regular file (or a new path) is written atomically: the content goes to a hidden
///   temporary file in the same directory, which is renamed over `path` only once everything
///   was written and synced, so a failure midway leaves any existing file untouched; the
///   temporary file is removed on failure and when the process is interrupted (Ctrl-C, SIGTERM,
///   SIGHUP);
/// - a symbolic link is written through: its target is replaced (atomically, as above), the link
///   stays;
/// - a special file (a device such as `/dev/null` or `/dev/full`, a FIFO) is opened and written
///   as it is, never replaced.
///
/// Errors name `path`, never the temporary file.
pub fn write_atomic<F>(path: &Path, write: F) -> Result<()>
where
    F: FnOnce(&mut dyn Write) -> std::io::Result<()>,
{
    if path.as_os_str() == "-" {
        let mut out = std::io::stdout().lock();
        return write(&mut out)
            .and_then(|()| out.flush())
            .map_err(|e| Error::io("standard output", e));
    }
    let target = resolve_links(path)?;
    match std::fs::metadata(&target) {
        Ok(m) if !m.is_file() && !m.is_dir() => write_special(path, &target, write),
        _ => write_replacing(path, &target, write),
    }
}

/// Check before long work that `path` can be written: `-`, a special file, or a file whose
/// directory exists and is writable (by creating and removing a temporary file there). Nothing
/// at `path` itself is changed.
pub fn check_writable(path: &Path) -> Result<()> {
    if path.as_os_str() == "-" {
        return Ok(());
    }
    let target = resolve_links(path)?;
    match std::fs::metadata(&target) {
        Ok(m) if m.is_dir() => {
            return Err(Error::Invalid(format!(
                "{}: is a directory, expected a file name",
                path.display()
            )))
        }
        Ok(m) if !m.is_file() => return Ok(()),
        _ => {}
    }
    let dir = parent_dir(&target);
    tempfile::Builder::new()
        .prefix(".sparsecast-check")
        .tempfile_in(dir)
        .map(drop)
        .map_err(|e| Error::io(path, without_path(e)))
}

/// Follow symbolic links from `path` to the path finally written (which may not exist yet).
fn resolve_links(path: &Path) -> Result<PathBuf> {
    let mut p = path.to_path_buf();
    // As the kernel does: give up after 40 links (a loop).
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&p).map_err(|e| Error::io(path, e))?;
                p = if link.is_absolute() {
                    link
                } else {
                    parent_dir(&p).join(link)
                };
            }
            _ => return Ok(p),
        }
    }
    Err(Error::Invalid(format!(
        "{}: too many levels of symbolic links",
        path.display()
    )))
}

/// The directory of `path` (`.` for a bare file name).
fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// An I/O error without the temporary file's path that `tempfile` adds to its messages: the
/// operating system's error where there is one, else the kind.
fn without_path(e: std::io::Error) -> std::io::Error {
    if let Some(code) = e.raw_os_error() {
        return std::io::Error::from_raw_os_error(code);
    }
    // `tempfile` wraps the operating system's error in a private one whose message is
    // "{error} at path {path:?}" (and which hides the original): keep the part before the path.
    let text = e.to_string();
    let text = text
        .rsplit_once(" at path ")
        .map_or(text.as_str(), |(m, _)| m);
    std::io::Error::new(e.kind(), text.to_string())
}

/// Write a device or FIFO in place.
fn write_special<F>(path: &Path, target: &Path, write: F) -> Result<()>
where
    F: FnOnce(&mut dyn Write) -> std::io::Result<()>,
{
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(target)
        .map_err(|e| Error::io(path, e))?;
    let mut w = std::io::BufWriter::with_capacity(1 << 20, file);
    write(&mut w)
        .and_then(|()| w.flush())
        .map_err(|e| Error::io(path, e))
}

/// Write `target` (a regular file or a new path; `path` is what the user named) through a
/// temporary file and a rename.
fn write_replacing<F>(path: &Path, target: &Path, write: F) -> Result<()>
where
    F: FnOnce(&mut dyn Write) -> std::io::Result<()>,
{
    let dir = parent_dir(target);
    let tmp = tempfile::Builder::new()
        .prefix(".sparsecast-")
        .tempfile_in(dir)
        .map_err(|e| Error::io(path, without_path(e)))?;
    let _guard = interrupt::register(tmp.path());
    let mut tmp = tmp;
    {
        let mut w = std::io::BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
        write(&mut w)
            .and_then(|()| w.flush())
            .map_err(|e| Error::io(path, e))?;
    }
    // The temporary file is created 0600; give the result the permissions a plain create would
    // (0666 less the umask, i.e. usually 0644), or keep those of the file it replaces.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let perms = match std::fs::metadata(target) {
            Ok(m) => m.permissions(),
            Err(_) => std::fs::Permissions::from_mode(0o644),
        };
        tmp.as_file()
            .set_permissions(perms)
            .map_err(|e| Error::io(path, e))?;
    }
    tmp.as_file().sync_all().map_err(|e| Error::io(path, e))?;
    tmp.persist(target)
        .map_err(|e| Error::io(path, without_path(e.error)))?;
    Ok(())
}

/// Removal of the temporary files being written when the process is interrupted (SIGINT,
/// SIGTERM, SIGHUP): the handler (installed with the first temporary file) deletes them and exits
/// with status 130, as an interrupted shell command does.
mod interrupt {
    use std::path::{Path, PathBuf};
    use std::sync::{Mutex, Once};

    static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

    /// Removes its path from the list when dropped (the file was renamed or deleted).
    pub struct Registered(PathBuf);

    impl Drop for Registered {
        fn drop(&mut self) {
            let mut p = PENDING.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(i) = p.iter().position(|x| *x == self.0) {
                p.swap_remove(i);
            }
        }
    }

    /// Remember `path` for removal on interruption while the returned guard lives.
    pub fn register(path: &Path) -> Registered {
        static HANDLER: Once = Once::new();
        HANDLER.call_once(|| {
            // Fails only when the program installed another handler; then the files stay, as
            // before.
            let _ = ctrlc::set_handler(|| {
                let p = PENDING.lock().unwrap_or_else(|e| e.into_inner());
                for f in p.iter() {
                    let _ = std::fs::remove_file(f);
                }
                eprintln!("interrupted");
                std::process::exit(130);
            });
        });
        PENDING
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(path.to_path_buf());
        Registered(path.to_path_buf())
    }
}

/// Read a file expected to hold the JSON of a sparsecast `what` (a plan, a profile): a file that
/// is not text is reported as "not a sparsecast {what}", with the line of its first invalid byte.
pub fn read_json_text(path: &Path, what: &str) -> Result<String> {
    let mut bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    if bytes.starts_with(&[0x1f, 0x8b]) {
        bytes = gunzip_capped(&bytes, MAX_JSON_BYTES).map_err(|e| {
            Error::parse(
                path.display().to_string(),
                1,
                format!("not a sparsecast {what}: gzip data that does not decompress ({e})"),
            )
        })?;
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() as u64;
        Error::parse(
            path.display().to_string(),
            line,
            format!("not a sparsecast {what}: binary data where JSON text was expected"),
        )
    })
}

/// The largest JSON document [`read_json_text`] decompresses (a profile with every learned
/// model is ≈ 13 MB): a corrupt or hostile `.gz` cannot exhaust memory.
pub const MAX_JSON_BYTES: u64 = 1 << 30;

/// Decompress gzip data (every member), refusing more than `cap` bytes of output.
pub fn gunzip_capped(bytes: &[u8], cap: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .take(cap + 1)
        .read_to_end(&mut out)?;
    if out.len() as u64 > cap {
        return Err(std::io::Error::other(format!(
            "it decompresses to more than {cap} bytes"
        )));
    }
    Ok(out)
}

/// Open a JSON Lines file, plain or gzip-compressed (by content), for reading line by line.
pub fn open_lines(path: &Path) -> Result<Box<dyn std::io::BufRead>> {
    use std::io::{BufRead, BufReader};
    let file = std::fs::File::open(path)
        .map_err(|e| Error::Invalid(format!("{}: cannot open: {e}", path.display())))?;
    let mut head = BufReader::new(file);
    let gz = head
        .fill_buf()
        .map(|b| b.starts_with(&[0x1f, 0x8b]))
        .map_err(|e| Error::io(path, e))?;
    Ok(match gz {
        true => Box::new(BufReader::new(flate2::read::MultiGzDecoder::new(head))),
        false => Box::new(head),
    })
}

/// Read JSON Lines from `reader` (of the file `path`, for errors) as `T`, calling `each` with
/// every value and its line number (from 1); blank lines are skipped, a line that cannot be read
/// or is not `what` (e.g. "a training-table row") is an error naming the file and line.
pub fn json_lines<T: serde::de::DeserializeOwned>(
    reader: Box<dyn std::io::BufRead>,
    path: &Path,
    what: &str,
    mut each: impl FnMut(T, usize) -> Result<()>,
) -> Result<()> {
    use std::io::BufRead;
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| {
            Error::Invalid(format!("{}:{}: cannot read: {e}", path.display(), i + 1))
        })?;
        if line.trim().is_empty() {
            continue;
        }
        let v: T = serde_json::from_str(&line).map_err(|e| {
            Error::Invalid(format!("{}:{}: not {what}: {e}", path.display(), i + 1))
        })?;
        each(v, i + 1)?;
    }
    Ok(())
}

/// Whether `path` names a gzip file (ends in `.gz`): writers compress it.
pub fn wants_gzip(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"))
}

/// [`write_atomic`] for data files (JSON, JSON Lines): gzip-compressed when `path` ends in `.gz`
/// ([`wants_gzip`]), so that a file named `r.jsonl.gz` is what its name says; the readers
/// ([`open_lines`], [`read_json_text`]) take either by content.
pub fn write_data<F>(path: &Path, write: F) -> Result<()>
where
    F: FnOnce(&mut dyn Write) -> std::io::Result<()>,
{
    write_atomic(path, |w| match wants_gzip(path) {
        true => gzip(w, write),
        false => write(w),
    })
}

/// Run `write` through a gzip encoder (best compression) into `w`, and finish the stream.
pub fn gzip<F>(w: &mut dyn Write, write: F) -> std::io::Result<()>
where
    F: FnOnce(&mut dyn Write) -> std::io::Result<()>,
{
    let mut gz = flate2::write::GzEncoder::new(w, flate2::Compression::best());
    write(&mut gz)?;
    gz.finish().map(|_| ())
}

/// `skip_serializing_if` for counts that are usually zero.
pub fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Print a line on the process's real standard error, bypassing the test harness's output
/// capture (which only intercepts the `print!` family of macros). Tests that skip their work —
/// the GPU tests on a machine without CUDA — use it so that "skipped: no CUDA device" is visible
/// in a plain `cargo test` run instead of passing silently.
pub fn notice(line: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{line}");
}

/// `n` and the noun in the number it needs: `1 strip`, `0 strips`, `3 strips`.
pub fn count(n: impl Into<u128>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
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

/// Whether `SPARSECAST_TRACE` is set (non-empty): then the measurement path prints where each
/// configuration's time goes (host conversion, device set-up, check, timing) to stderr, one
/// `trace:` line per phase. Read once per process.
pub fn tracing() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var_os("SPARSECAST_TRACE").is_some_and(|v| !v.is_empty()))
}

/// Print `what` with the milliseconds since `since` when [`tracing`] is on.
pub fn trace(what: impl FnOnce() -> String, since: std::time::Instant) {
    if tracing() {
        eprintln!(
            "trace: {} {:.2} ms",
            what(),
            since.elapsed().as_secs_f64() * 1e3
        );
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
        // No temporary file is left beside it, and errors name the path asked for.
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1);
        let missing = dir.path().join("no/such/dir/f.txt");
        let e = write_atomic(&missing, |w| w.write_all(b"x"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with(&missing.display().to_string()), "{e}");
        assert!(
            e.contains("No such file") && !e.contains(".sparsecast-"),
            "{e}"
        );
        assert!(check_writable(&missing).is_err());
        assert!(check_writable(&p).is_ok() && check_writable(dir.path()).is_err());
    }

    /// A data file named `.gz` is gzip-compressed, any other is plain, and the line reader
    /// reads both back the same.
    #[test]
    fn data_files_named_gz_are_compressed() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["r.jsonl", "r.jsonl.gz", "R.JSONL.GZ"] {
            let p = dir.path().join(name);
            write_data(&p, |w| w.write_all(b"{\"a\":1}\n{\"a\":2}\n")).unwrap();
            let bytes = std::fs::read(&p).unwrap();
            assert_eq!(
                bytes.starts_with(&[0x1f, 0x8b]),
                name != "r.jsonl",
                "{name}"
            );
            let mut seen = Vec::new();
            json_lines::<serde_json::Value>(open_lines(&p).unwrap(), &p, "a row", |v, i| {
                seen.push((v["a"].as_i64().unwrap(), i));
                Ok(())
            })
            .unwrap();
            assert_eq!(seen, [(1, 1), (2, 2)], "{name}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.txt");
        std::fs::write(&target, b"old").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink("target.txt", &link).unwrap();
        write_atomic(&link, |w| w.write_all(b"new")).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        // A dangling link creates its target.
        let dangling = dir.path().join("dangling");
        std::os::unix::fs::symlink(dir.path().join("new.txt"), &dangling).unwrap();
        write_atomic(&dangling, |w| w.write_all(b"made")).unwrap();
        assert_eq!(std::fs::read(dir.path().join("new.txt")).unwrap(), b"made");
        assert!(std::fs::symlink_metadata(&dangling)
            .unwrap()
            .file_type()
            .is_symlink());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn devices_and_fifos_are_written_not_replaced() {
        use std::os::unix::fs::FileTypeExt;
        // /dev/full takes nothing: the error is reported, and the device stays a device (as
        // root, a rename would have replaced it with a regular file).
        let full = Path::new("/dev/full");
        if full.exists() {
            let e = write_atomic(full, |w| w.write_all(&[b'x'; 4096]))
                .unwrap_err()
                .to_string();
            assert!(e.starts_with("/dev/full: "), "{e}");
            assert!(std::fs::metadata(full)
                .unwrap()
                .file_type()
                .is_char_device());
        }
        write_atomic(Path::new("/dev/null"), |w| w.write_all(b"gone")).unwrap();
        assert!(std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
        // A FIFO is opened and written; a reader at the other end gets the content.
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        write_atomic(&fifo, |w| w.write_all(b"through the pipe")).unwrap();
        assert_eq!(reader.join().unwrap(), b"through the pipe");
        assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn non_text_json_is_named_for_what_it_should_be() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("plan.json");
        std::fs::write(&p, b"{\n\xff\xfe").unwrap();
        let e = read_json_text(&p, "plan").unwrap_err().to_string();
        assert!(e.contains("plan.json:2: not a sparsecast plan"), "{e}");
        assert_eq!(count(1u64, "strip", "strips"), "1 strip");
        assert_eq!(count(0u64, "strip", "strips"), "0 strips");
    }
}
