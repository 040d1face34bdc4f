//! JAD (jagged diagonals): rows permuted by decreasing length; jagged diagonal d holds entry d of
//! every row that has more than d entries, in permuted row order.

use super::{FormatKind, FormatParams, SparseFormat};
use crate::{Csr, Result, Scalar};

/// Jagged diagonal format. Device footprint: `perm (nrows × 4) + jd_ptr ((ndiag+1) × 4) + nnz × (4 + sizeof T)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Jad<T> {
    pub nrows: usize,
    pub ncols: usize,
    /// `perm[k]` = original row index of the k-th longest row (stable for equal lengths).
    pub perm: Vec<u32>,
    /// Start of each jagged diagonal in `col_idx`/`values`; `ndiag + 1` entries. Diagonal d has
    /// `jd_ptr[d+1] - jd_ptr[d]` entries, belonging to permuted rows `0..that count`.
    pub jd_ptr: Vec<u32>,
    pub col_idx: Vec<u32>,
    pub values: Vec<T>,
}

impl<T: Scalar> Jad<T> {
    /// Convert from CSR.
    pub fn from_csr(_csr: &Csr<T>, _params: &FormatParams) -> Result<Self> {
        todo!("formats helper")
    }
}

impl<T: Scalar> SparseFormat<T> for Jad<T> {
    fn kind(&self) -> FormatKind {
        FormatKind::Jad
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
