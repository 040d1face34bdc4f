//! ELL (ELLPACK): every row padded to one width, stored column-major (entry k of row i at
//! `k * nrows + i`), so that consecutive threads (rows) read consecutive addresses.

use super::{FormatKind, FormatParams, SparseFormat};
use crate::{Csr, Result, Scalar};

/// ELLPACK. Device footprint: `width × nrows × (4 + sizeof T)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Ell<T> {
    pub nrows: usize,
    pub ncols: usize,
    /// Entries per row (padded).
    pub width: usize,
    /// Real (non-padding) entries.
    pub nnz: usize,
    /// Column-major `width × nrows` column indices; padding slots hold [`super::PAD`].
    pub col_idx: Vec<u32>,
    /// Column-major `width × nrows` values; padding slots hold 0.
    pub values: Vec<T>,
}

impl<T: Scalar> Ell<T> {
    /// Convert from CSR.
    pub fn from_csr(_csr: &Csr<T>, _params: &FormatParams) -> Result<Self> {
        todo!("formats helper")
    }
}

impl<T: Scalar> SparseFormat<T> for Ell<T> {
    fn kind(&self) -> FormatKind {
        FormatKind::Ell
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
