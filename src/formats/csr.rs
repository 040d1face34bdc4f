//! CSR as a storage format: the canonical [`Csr`] matrix itself (`crate::matrix::csr` holds the
//! type), its device footprint, its refusal rules and its parallel CPU kernel.

use super::refusal::{budget, offsets32, rows32};
use super::util;
use super::{FormatKind, FormatParams, Refusal, SparseFormat, Summary};
pub use crate::Csr;
use crate::{Result, Scalar};

/// Footprint of a CSR of `nrows` rows and `nnz` entries: `(nrows + 1) × 4 + nnz × (4 + value)`,
/// saturating.
fn bytes_for(nrows: u64, nnz: u64, value_bytes: u64) -> u64 {
    nrows
        .saturating_add(1)
        .saturating_mul(4)
        .saturating_add(nnz.saturating_mul(4 + value_bytes))
}

/// The device footprint of the matrix summarized by `s` (see [`FormatKind::footprint`]).
pub fn footprint(s: &Summary, _: &FormatParams, value_bytes: u64) -> Result<u64, Refusal> {
    Ok(bytes_for(s.nrows, s.nnz, value_bytes))
}

/// Rows within 32-bit row indices, non-zeros within 32-bit offsets, footprint within
/// `params.max_bytes` (see [`FormatKind::admit`]).
pub fn admit(s: &Summary, params: &FormatParams, value_bytes: u64) -> Result<(), Refusal> {
    let kind = FormatKind::Csr;
    rows32(kind, s.nrows)?;
    offsets32(kind, "non-zeros", s.nnz as u128)?;
    budget(kind, footprint(s, params, value_bytes)?, params.max_bytes)
}

impl<T: Scalar> Csr<T> {
    /// CSR as a storage format, "converted" from CSR: [`admit`], then a copy (refused before the
    /// copy is made). What [`super::AnyFormat::convert`] does for [`FormatKind::Csr`].
    pub fn from_csr(csr: &Csr<T>, params: &FormatParams) -> Result<Csr<T>> {
        admit(&Summary::of(csr, None), params, T::BYTES as u64)?;
        Ok(csr.clone())
    }

    /// Back to CSR: a copy (what [`super::AnyFormat::to_csr`] does for CSR).
    pub fn to_csr(&self) -> Csr<T> {
        self.clone()
    }
}

impl<T: Scalar> SparseFormat<T> for Csr<T> {
    fn kind(&self) -> FormatKind {
        FormatKind::Csr
    }
    fn nrows(&self) -> usize {
        self.nrows
    }
    fn ncols(&self) -> usize {
        self.ncols
    }
    fn nnz(&self) -> usize {
        Csr::nnz(self)
    }
    fn stored_entries(&self) -> usize {
        Csr::nnz(self)
    }
    fn footprint_bytes(&self) -> u64 {
        bytes_for(self.nrows as u64, Csr::nnz(self) as u64, T::BYTES as u64)
    }
    fn spmv(&self, x: &[T], y: &mut [T]) {
        csr_spmv(self, x, y)
    }
}

/// Parallel CSR SpMV on the CPU: rows are split into chunks of roughly equal work (rows plus
/// non-zeros) so that a few long rows do not serialize the work.
pub fn csr_spmv<T: Scalar>(a: &Csr<T>, x: &[T], y: &mut [T]) {
    use rayon::prelude::*;
    assert_eq!(x.len(), a.ncols, "x has the wrong length");
    assert_eq!(y.len(), a.nrows, "y has the wrong length");
    let cuts = util::row_cuts(a.nrows, a.nnz(), |i| a.row_ptr[i]);
    util::split_at_cuts(y, &cuts)
        .into_par_iter()
        .zip(cuts.par_windows(2))
        .for_each(|(ys, w)| {
            for (yi, i) in ys.iter_mut().zip(w[0]..w[1]) {
                let (c, v) = a.row(i);
                let mut s = T::zero();
                for (&c, &v) in c.iter().zip(v) {
                    s += v * x[c as usize];
                }
                *yi = s;
            }
        });
}
