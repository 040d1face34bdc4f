//! Matrix Market reader and writer.
//!
//! # Reading
//!
//! [`read`] accepts the `coordinate` and `array` layouts, the fields `real`, `integer` and
//! `pattern` (pattern entries get the value 1), and the symmetries `general`, `symmetric` and
//! `skew-symmetric`, which are expanded to the full matrix (a diagonal entry is stored once;
//! skew-symmetric mirrors store `A[j,i] = −A[i,j]`). Banner words match case-insensitively;
//! blank lines and `%` comment lines are skipped anywhere after the banner; CRLF line ends are
//! accepted. `complex` and `hermitian` files are rejected with an error naming the field.
//! Plain and gzip-compressed files are both accepted; gzip is recognised by its magic bytes,
//! not by the file name.
//!
//! In coordinate files, duplicate entries are summed (in file order), explicit zeros are kept,
//! empty rows and rectangular shapes are fine, and NaN / Inf values are accepted as they are
//! (feature extraction reports them). Choices where the format leaves room:
//!
//! * an off-diagonal entry of a symmetric file is mirrored wherever it lies, so a file that
//!   (against the specification) stores upper-triangle entries still reads as symmetric;
//! * a diagonal entry of a skew-symmetric file is kept as written;
//! * `pattern` with `skew-symmetric` and `pattern` with `array` are rejected (they have no
//!   meaning);
//! * every value of an `array` file is an explicit entry, zeros included.
//!
//! Every malformed input gives [`Error::Parse`] naming the file, the 1-based line and what was
//! expected; nothing panics, and nothing is allocated from a declared count that the file does
//! not back up. The one size the reader has to trust is the row count (a CSR has one row
//! pointer per row even when rows are empty): a file may declare at most
//! [`MAX_ROWS_PER_BYTE`] rows per byte of its length plus [`MAX_ROWS_FREE`], or as many rows as
//! a quarter of the machine's memory holds row pointers for, whichever is more; more is
//! rejected as implausible rather than risking an allocation the machine cannot back.
//! Real values may use a Fortran exponent (`1.5D+00`), as scipy's reader accepts.
//!
//! # Speed
//!
//! The data lines are cut into chunks at line boundaries and parsed in parallel (rayon); plain
//! files are memory-mapped, gzip files decompressed into memory first. Coordinate files are
//! turned into CSR by a counting pass and a second pass that appends entries to their row
//! block's part of the CSR arrays, followed by an in-cache grouping of each block by row (see
//! `coord.rs`); there are no intermediate triplet arrays. Measured throughput and memory are in
//! `docs/PERFORMANCE.md`.
//!
//! # Writing
//!
//! [`write_csr`] writes `coordinate real general` and [`write_vector`] an `n × 1`
//! `array real general` file, atomically, with values in their shortest round-trip form.
//!
//! # Example
//!
//! ```
//! use sparsecast::matrix::mm;
//!
//! let text = "%%MatrixMarket matrix coordinate real symmetric\n% a comment\n2 2 2\n1 1 4\n2 1 -1\n";
//! let (a, info) = mm::read_bytes::<f64>("example.mtx", text.as_bytes())?;
//! assert_eq!(info.declared_entries, 2);
//! assert_eq!(a.nnz(), 3); // the mirror of (2, 1) is stored too
//! assert_eq!(a.row(0), (&[0u32, 1][..], &[4.0, -1.0][..]));
//!
//! let err = mm::read_bytes::<f64>("bad.mtx", b"%%MatrixMarket matrix coordinate real general\n2 2 1\n3 1 1\n")
//!     .unwrap_err();
//! assert_eq!(err.to_string(), "bad.mtx:3: row index 3 is out of range: expected 1..=2 (indices are 1-based)");
//! # Ok::<(), sparsecast::Error>(())
//! ```

mod array;
mod chunks;
mod coord;
mod header;
mod lex;
mod source;
mod write;

use crate::{Csr, Error, Result, Scalar};
use std::path::Path;

pub use write::{write_csr, write_csr_with_progress, write_vector};

/// Storage layout of a Matrix Market file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// One `row column [value]` line per stored entry.
    Coordinate,
    /// Every value, column by column.
    Array,
}

/// Value field of a Matrix Market file (complex and hermitian are rejected).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Field {
    /// Floating-point values.
    Real,
    /// Integer values (converted to the floating-point type read into).
    Integer,
    /// No values: every stored entry is 1.
    Pattern,
}

/// Symmetry of a Matrix Market file; symmetric and skew-symmetric are expanded on read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Symmetry {
    /// Every entry is stored.
    General,
    /// `A[j,i] = A[i,j]`; the file stores the lower triangle.
    Symmetric,
    /// `A[j,i] = −A[i,j]`; the file stores the strictly lower triangle.
    SkewSymmetric,
}

/// What the reader learned about a file besides the matrix.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MmInfo {
    /// Storage layout.
    pub layout: Layout,
    /// Value field.
    pub field: Field,
    /// Symmetry (the matrix returned is always expanded).
    pub symmetry: Symmetry,
    /// Rows.
    pub nrows: usize,
    /// Columns.
    pub ncols: usize,
    /// Entries declared on the size line (before symmetric expansion); for an array file,
    /// the number of values its size line and symmetry imply.
    pub declared_entries: u64,
    /// Whether the file was gzip-compressed.
    pub gzip: bool,
}

/// Rows a file may declare beyond [`MAX_ROWS_PER_BYTE`] per byte (2^26 rows: 512 MiB of row
/// pointers).
pub const MAX_ROWS_FREE: u64 = 1 << 26;

/// Rows a file may declare per byte of its (decompressed) length, on top of [`MAX_ROWS_FREE`].
pub const MAX_ROWS_PER_BYTE: u64 = 64;

/// Read a Matrix Market file (plain or gzip, detected by content) into CSR.
pub fn read<T: Scalar>(path: &Path) -> Result<Csr<T>> {
    read_with_info(path).map(|(m, _)| m)
}

/// Read a Matrix Market file and report its header.
pub fn read_with_info<T: Scalar>(path: &Path) -> Result<(Csr<T>, MmInfo)> {
    let bytes = source::load(path)?;
    read_bytes(&path.display().to_string(), &bytes)
}

/// Parse Matrix Market content held in memory (`name` is used in error messages). Gzip content
/// is recognised by its magic bytes and decompressed first.
pub fn read_bytes<T: Scalar>(name: &str, bytes: &[u8]) -> Result<(Csr<T>, MmInfo)> {
    read_bytes_chunked(name, bytes, None)
}

/// [`read_bytes`] with the number of parallel chunks forced (`None`: automatic). The result
/// does not depend on the chunk count; tests use this to exercise chunk boundaries.
#[doc(hidden)]
pub fn read_bytes_chunked<T: Scalar>(
    name: &str,
    bytes: &[u8],
    chunks: Option<usize>,
) -> Result<(Csr<T>, MmInfo)> {
    if source::is_gzip(bytes) {
        let plain = source::gunzip(name, bytes)?;
        let (m, mut info) = parse_plain(name, &plain, chunks)?;
        info.gzip = true;
        return Ok((m, info));
    }
    parse_plain(name, bytes, chunks)
}

/// Parse uncompressed content.
fn parse_plain<T: Scalar>(name: &str, s: &[u8], chunks: Option<usize>) -> Result<(Csr<T>, MmInfo)> {
    let h = header::parse(name, s)?;
    check_plausible_rows(name, &h, s.len())?;
    let m = match h.layout {
        Layout::Coordinate => coord::parse(name, s, &h, chunks)?,
        Layout::Array => array::to_csr(name, &h, &array::parse_packed(name, s, &h, chunks)?)?,
    };
    let info = MmInfo {
        layout: h.layout,
        field: h.field,
        symmetry: h.symmetry,
        nrows: h.nrows,
        ncols: h.ncols,
        declared_entries: h.entries,
        gzip: false,
    };
    Ok((m, info))
}

/// Reject a row count far beyond what the file's size makes plausible (see the module docs),
/// unless the row pointers fit in a quarter of the machine's memory: a legitimate file may
/// declare 10^8 × 10^8 with one entry.
fn check_plausible_rows(name: &str, h: &header::Header, len: usize) -> Result<()> {
    let by_size = MAX_ROWS_FREE.saturating_add((len as u64).saturating_mul(MAX_ROWS_PER_BYTE));
    let by_memory = crate::formats::default_max_bytes() / 2 / std::mem::size_of::<usize>() as u64;
    let max = by_size.max(by_memory);
    if h.nrows as u64 > max {
        return Err(Error::parse(
            name,
            h.size_line,
            format!(
                "{} rows is implausible for a file of {len} bytes: expected at most {max}",
                h.nrows
            ),
        ));
    }
    Ok(())
}

/// Read a dense vector: an `n × 1` array file (or an `n × 1` / `1 × n` coordinate file).
///
/// A `1 × n` array file is accepted too (its values are the vector in order). Missing entries
/// of a coordinate file are zero; duplicates are summed.
pub fn read_vector(path: &Path) -> Result<Vec<f64>> {
    let bytes = source::load(path)?;
    vector_from_bytes(&path.display().to_string(), &bytes)
}

/// [`read_vector`] on content held in memory.
pub fn vector_from_bytes(name: &str, bytes: &[u8]) -> Result<Vec<f64>> {
    if source::is_gzip(bytes) {
        return vector_from_plain(name, &source::gunzip(name, bytes)?);
    }
    vector_from_plain(name, bytes)
}

fn vector_from_plain(name: &str, s: &[u8]) -> Result<Vec<f64>> {
    let h = header::parse(name, s)?;
    if h.nrows != 1 && h.ncols != 1 {
        return Err(Error::parse(
            name,
            h.size_line,
            format!(
                "expected a vector (n × 1 or 1 × n), found a {} × {} matrix",
                h.nrows, h.ncols
            ),
        ));
    }
    let n = h.nrows.max(h.ncols);
    let max = MAX_ROWS_FREE.saturating_add((s.len() as u64).saturating_mul(MAX_ROWS_PER_BYTE));
    if n as u64 > max {
        return Err(Error::parse(
            name,
            h.size_line,
            format!(
                "a vector of {n} elements is implausible for a file of {} bytes: expected at most {max}",
                s.len()
            ),
        ));
    }
    match h.layout {
        // Column-major order of an n × 1 or 1 × n array is the vector order; a symmetric
        // vector is 1 × 1.
        Layout::Array => array::parse_values::<f64>(name, s, &h, None),
        Layout::Coordinate => {
            let m = coord::parse::<f64>(name, s, &h, None)?;
            let mut v: Vec<f64> = alloc_zeroed(name, n, "vector")?;
            for i in 0..m.nrows {
                let (cols, vals) = m.row(i);
                for (&c, &x) in cols.iter().zip(vals) {
                    v[if m.ncols == 1 { i } else { c as usize }] = x;
                }
            }
            Ok(v)
        }
    }
}

/// A vector of `n` zeros, or an error instead of an abort when memory is short.
///
/// The memory comes from the allocator's zeroed allocation (`calloc`), which for large sizes
/// maps fresh pages that the kernel zeroes on first touch: nothing is written here, and the
/// page faults happen later in the parallel passes that fill the vector. (A reserve followed
/// by `resize` wrote every byte on one thread: 85 ms of the 0.46 s the benchmark file took.)
pub(crate) fn alloc_zeroed<T: bytemuck::Zeroable>(
    name: &str,
    n: usize,
    what: &str,
) -> Result<Vec<T>> {
    bytemuck::allocation::try_zeroed_slice_box(n)
        .map(|b: Box<[T]>| {
            let v = b.into_vec();
            advise_huge_pages(&v);
            v
        })
        .map_err(|_| {
            Error::Invalid(format!(
                "{name}: not enough memory for {n} {what} ({} bytes)",
                n as u128 * std::mem::size_of::<T>() as u128
            ))
        })
}

/// Ask the kernel to back the 2 MiB-aligned interior of `v` with transparent huge pages, where
/// the system enables them on request (`madvise` mode, the Linux default): first touches then
/// take one fault per 2 MiB instead of one per 4 KiB. A hint only; failures are ignored.
fn advise_huge_pages<T>(v: &[T]) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let end = start + std::mem::size_of_val(v);
        let a = start.next_multiple_of(HUGE);
        let b = end & !(HUGE - 1);
        if b > a {
            // SAFETY: the range lies inside memory this vector owns; MADV_HUGEPAGE changes how
            // pages are backed, never their content.
            unsafe {
                libc::madvise(a as *mut libc::c_void, b - a, libc::MADV_HUGEPAGE);
            }
        }
    }
}
