//! COO: one (row, column, value) triplet per entry, sorted by row then column.

use super::{FormatKind, FormatParams, SparseFormat};
use crate::{Csr, Result, Scalar};

/// Coordinate format. Device footprint: `nnz × (4 + 4 + sizeof T)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Coo<T> {
    pub nrows: usize,
    pub ncols: usize,
    /// Row of each entry (non-decreasing).
    pub rows: Vec<u32>,
    /// Column of each entry (increasing within a row).
    pub cols: Vec<u32>,
    pub values: Vec<T>,
}

impl<T: Scalar> Coo<T> {
    /// Convert from CSR.
    pub fn from_csr(_csr: &Csr<T>, _params: &FormatParams) -> Result<Self> {
        todo!("formats helper")
    }
}

impl<T: Scalar> SparseFormat<T> for Coo<T> {
    fn kind(&self) -> FormatKind {
        FormatKind::Coo
    }
    fn nrows(&self) -> usize {
        self.nrows
    }
    fn ncols(&self) -> usize {
        self.ncols
    }
    fn nnz(&self) -> usize {
        todo!()
    }
    fn stored_entries(&self) -> usize {
        todo!()
    }
    fn footprint_bytes(&self) -> u64 {
        todo!()
    }
    fn spmv(&self, _x: &[T], _y: &mut [T]) {
        todo!()
    }
}
