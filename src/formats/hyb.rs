//! HYB (Bell & Garland): the first `width` entries of each row in an ELL part, the rest of each
//! row in a COO part.

use super::{FormatKind, FormatParams, SparseFormat};
use crate::{Csr, Result, Scalar};

use super::{Coo, Ell};

/// Hybrid ELL + COO. Footprint: the sum of its parts.
#[derive(Clone, Debug, PartialEq)]
pub struct Hyb<T> {
    pub nrows: usize,
    pub ncols: usize,
    /// ELL part (its width is the HYB width).
    pub ell: Ell<T>,
    /// COO remainder: entries beyond the ELL width, sorted by row.
    pub coo: Coo<T>,
}

/// The ELL width rule of Bell & Garland (cusp's `compute_optimal_entries_per_row`): the largest K
/// such that at least `max(4096, nrows / 3)` rows have K or more entries.
pub fn auto_width(_row_lengths: &[usize]) -> usize {
    todo!()
}

impl<T: Scalar> Hyb<T> {
    /// Convert from CSR.
    pub fn from_csr(_csr: &Csr<T>, _params: &FormatParams) -> Result<Self> {
        todo!("formats helper")
    }
}

impl<T: Scalar> SparseFormat<T> for Hyb<T> {
    fn kind(&self) -> FormatKind {
        FormatKind::Hyb
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
