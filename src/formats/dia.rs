//! DIA: one dense array of length `nrows` per occupied diagonal. Refused when the stored slots
//! exceed `FormatParams::dia_max_fill` times the non-zeros (most of it would be padding).

use super::{FormatKind, FormatParams, SparseFormat};
use crate::{Csr, Result, Scalar};

/// Diagonal format. Device footprint: `ndiag × 4 (offsets) + ndiag × nrows × sizeof T`.
#[derive(Clone, Debug, PartialEq)]
pub struct Dia<T> {
    pub nrows: usize,
    pub ncols: usize,
    /// Real (non-padding) entries.
    pub nnz: usize,
    /// Diagonal offsets (column − row), increasing.
    pub offsets: Vec<i32>,
    /// Diagonal-major: `values[d * nrows + i] = A[i, i + offsets[d]]` (0 where absent or outside).
    pub values: Vec<T>,
}

impl<T: Scalar> Dia<T> {
    /// Convert from CSR.
    pub fn from_csr(_csr: &Csr<T>, _params: &FormatParams) -> Result<Self> {
        todo!("formats helper")
    }
}

impl<T: Scalar> SparseFormat<T> for Dia<T> {
    fn kind(&self) -> FormatKind {
        FormatKind::Dia
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
