//! Getting the bytes of a file: a memory map for plain files, streaming decompression for gzip.

use crate::{Error, Result};
use std::fs::File;
use std::io::Read;
use std::ops::Deref;
use std::path::Path;

/// The content of a file, mapped or read.
pub enum Bytes {
    /// A read-only memory map of a regular file.
    Mapped(memmap2::Mmap),
    /// Content read into memory (pipes, empty files, or where mapping failed).
    Owned(Vec<u8>),
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Mapped(m) => m,
            Bytes::Owned(v) => v,
        }
    }
}

/// Map a regular file read-only (falling back to reading it for anything else).
///
/// The map assumes nobody truncates or rewrites the file while it is read, as with any
/// memory-mapped reader; a concurrent writer could make the parse see inconsistent bytes.
pub fn load(path: &Path) -> Result<Bytes> {
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if meta.is_dir() {
        return Err(Error::io(
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "is a directory"),
        ));
    }
    if meta.is_file() && meta.len() > 0 {
        // SAFETY: read-only map of a file we do not modify; see the function documentation.
        if let Ok(m) = unsafe { memmap2::Mmap::map(&file) } {
            #[cfg(unix)]
            let _ = m.advise(memmap2::Advice::WillNeed);
            return Ok(Bytes::Mapped(m));
        }
    }
    let mut v = Vec::new();
    file.read_to_end(&mut v).map_err(|e| Error::io(path, e))?;
    Ok(Bytes::Owned(v))
}

/// Whether `b` starts with the gzip magic bytes `1f 8b`.
pub fn is_gzip(b: &[u8]) -> bool {
    b.len() >= 2 && b[0] == 0x1f && b[1] == 0x8b
}

/// Decompress gzip content (all members, as `gzip -d` does).
///
/// The output grows as data arrives (`read_to_end` reserves fallibly, so running out of memory
/// is an error, not an abort); the initial capacity comes from the size recorded in the gzip
/// trailer, trusted only up to 1032 × the compressed size, deflate's maximum ratio.
pub fn gunzip(name: &str, b: &[u8]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    if b.len() >= 18 {
        let isize_field = u32::from_le_bytes(b[b.len() - 4..].try_into().unwrap_or([0; 4]));
        let hint = (isize_field as usize).min(b.len().saturating_mul(1032));
        let _ = out.try_reserve_exact(hint);
    }
    let mut dec = flate2::read::MultiGzDecoder::new(b);
    match dec.read_to_end(&mut out) {
        Ok(_) => Ok(out),
        Err(e) if e.kind() == std::io::ErrorKind::OutOfMemory => Err(Error::Invalid(format!(
            "{name}: the decompressed content does not fit in memory ({} bytes so far)",
            out.len()
        ))),
        Err(e) => {
            let line = memchr::memchr_iter(b'\n', &out).count() as u64 + 1;
            Err(Error::parse(
                name,
                line,
                format!(
                    "truncated or corrupt gzip data after {} decompressed bytes ({e}): \
                     expected a complete gzip stream",
                    out.len()
                ),
            ))
        }
    }
}
