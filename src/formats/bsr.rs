//! BSR: square dense `b × b` blocks in a CSR structure over block rows; blocks stored row-major.

use super::{FormatKind, FormatParams, SparseFormat};
use crate::{Csr, Result, Scalar};

/// Block sparse row. Device footprint: `(nbrows+1) × 4 + nblocks × 4 + nblocks × b² × sizeof T`.
#[derive(Clone, Debug, PartialEq)]
pub struct Bsr<T> {
    pub nrows: usize,
    pub ncols: usize,
    /// Block size b.
    pub block: usize,
    /// Real (non-padding) entries.
    pub nnz: usize,
    /// Block-row pointers, `ceil(nrows / b) + 1` entries.
    pub row_ptr: Vec<u32>,
    /// Block-column index of each block (increasing within a block row).
    pub col_idx: Vec<u32>,
    /// `b × b` values per block, row-major within the block; zero-filled where absent.
    pub values: Vec<T>,
}

impl<T: Scalar> Bsr<T> {
    /// Convert from CSR.
    pub fn from_csr(_csr: &Csr<T>, _params: &FormatParams) -> Result<Self> {
        todo!("formats helper")
    }
}

impl<T: Scalar> SparseFormat<T> for Bsr<T> {
    fn kind(&self) -> FormatKind {
        FormatKind::Bsr
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
