//! SELL-C-σ (Kreutzer et al.): rows sorted by decreasing length within windows of σ rows, cut into
//! slices of C rows; each slice padded to its longest row and stored column-major (entry k of lane
//! r of slice s at `slice_ptr[s] + k * C + r`).

use super::{FormatKind, FormatParams, SparseFormat};
use crate::{Csr, Result, Scalar};

/// SELL-C-σ. Device footprint: `(nslices+1) × 4 (slice_ptr) + nslices × 4 (slice_width) +
/// nrows × 4 (perm) + stored × (4 + sizeof T)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Sell<T> {
    pub nrows: usize,
    pub ncols: usize,
    /// Slice height C.
    pub c: usize,
    /// Sorting window σ (1 = unsorted).
    pub sigma: usize,
    /// Real (non-padding) entries.
    pub nnz: usize,
    /// Offset of each slice in `col_idx`/`values`; `nslices + 1` entries.
    pub slice_ptr: Vec<u32>,
    /// Width (padded row length) of each slice.
    pub slice_width: Vec<u32>,
    /// `perm[p]` = original row stored at sorted position p (`nrows` entries; lanes of the last
    /// slice beyond `nrows` are padding and have no entry here).
    pub perm: Vec<u32>,
    /// Column indices; padding holds [`super::PAD`].
    pub col_idx: Vec<u32>,
    /// Values; padding holds 0.
    pub values: Vec<T>,
}

impl<T: Scalar> Sell<T> {
    /// Convert from CSR.
    pub fn from_csr(_csr: &Csr<T>, _params: &FormatParams) -> Result<Self> {
        todo!("formats helper")
    }
}

impl<T: Scalar> SparseFormat<T> for Sell<T> {
    fn kind(&self) -> FormatKind {
        FormatKind::Sell
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
