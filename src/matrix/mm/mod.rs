//! Matrix Market reader and writer.
//!
//! API (implemented by the matrix-market work; signatures are the contract other modules use).

use crate::{Csr, Result, Scalar};
use std::path::Path;

/// Storage layout of a Matrix Market file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    Coordinate,
    Array,
}

/// Value field of a Matrix Market file (complex and hermitian are rejected).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Field {
    Real,
    Integer,
    Pattern,
}

/// Symmetry of a Matrix Market file; symmetric and skew-symmetric are expanded on read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Symmetry {
    General,
    Symmetric,
    SkewSymmetric,
}

/// What the reader learned about a file besides the matrix.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MmInfo {
    pub layout: Layout,
    pub field: Field,
    pub symmetry: Symmetry,
    pub nrows: usize,
    pub ncols: usize,
    /// Entries declared on the size line (before symmetric expansion).
    pub declared_entries: u64,
    /// Whether the file was gzip-compressed.
    pub gzip: bool,
}

/// Read a Matrix Market file (plain or gzip, detected by content) into CSR.
pub fn read<T: Scalar>(path: &Path) -> Result<Csr<T>> {
    read_with_info(path).map(|(m, _)| m)
}

/// Read a Matrix Market file and report its header.
pub fn read_with_info<T: Scalar>(_path: &Path) -> Result<(Csr<T>, MmInfo)> {
    todo!("matrix-market helper")
}

/// Parse Matrix Market content held in memory (`name` is used in error messages).
pub fn read_bytes<T: Scalar>(_name: &str, _bytes: &[u8]) -> Result<(Csr<T>, MmInfo)> {
    todo!("matrix-market helper")
}

/// Read a dense vector: an `n × 1` array file (or an `n × 1` / `1 × n` coordinate file).
pub fn read_vector(_path: &Path) -> Result<Vec<f64>> {
    todo!("matrix-market helper")
}

/// Write a matrix as `coordinate real general`, atomically.
pub fn write_csr<T: Scalar>(_path: &Path, _m: &Csr<T>) -> Result<()> {
    todo!("matrix-market helper")
}

/// Write a vector as an `n × 1` `array real general` file, atomically.
pub fn write_vector<T: Scalar>(_path: &Path, _v: &[T]) -> Result<()> {
    todo!("matrix-market helper")
}
