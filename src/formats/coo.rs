//! COO: one (row, column, value) triplet per entry, sorted by row then column.

use super::refusal::{budget, offsets32, rows32};
use super::util::{csr_from_rows, row_cuts, split_at_cuts};
use super::{FormatKind, FormatParams, Refusal, SparseFormat, Summary};
use crate::{Csr, Result, Scalar};
use rayon::prelude::*;

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

/// Footprint of `nnz` triplets: `nnz × (4 + 4 + value)`, saturating.
pub(crate) fn bytes_for(nnz: u64, value_bytes: u64) -> u64 {
    nnz.saturating_mul(8 + value_bytes)
}

/// The device footprint of the matrix summarized by `s` (see [`FormatKind::footprint`]).
pub fn footprint(s: &Summary, _: &FormatParams, value_bytes: u64) -> Result<u64, Refusal> {
    Ok(bytes_for(s.nnz, value_bytes))
}

/// Rows within 32-bit row indices, non-zeros within 32-bit offsets (the device kernels index
/// entries with 32-bit integers, like every other format's offsets), footprint within
/// `params.max_bytes` (see [`FormatKind::admit`]).
pub fn admit(s: &Summary, params: &FormatParams, value_bytes: u64) -> Result<(), Refusal> {
    let kind = FormatKind::Coo;
    rows32(kind, s.nrows)?;
    offsets32(kind, "non-zeros", s.nnz as u128)?;
    budget(kind, footprint(s, params, value_bytes)?, params.max_bytes)
}

impl<T: Scalar> Coo<T> {
    /// Convert from CSR (which must satisfy [`Csr::validate`]). Row indices are filled in parallel;
    /// columns and values are the CSR's arrays.
    ///
    /// Refused as [`admit`] says, before allocating.
    pub fn from_csr(csr: &Csr<T>, params: &FormatParams) -> Result<Self> {
        let nnz = csr.nnz();
        admit(&Summary::of(csr, None), params, T::BYTES as u64)?;
        let mut rows = vec![0u32; nnz];
        let cuts = row_cuts(csr.nrows, nnz, |i| csr.row_ptr[i]);
        let pos: Vec<usize> = cuts.iter().map(|&r| csr.row_ptr[r]).collect();
        split_at_cuts(&mut rows, &pos)
            .into_par_iter()
            .zip(cuts.par_windows(2))
            .for_each(|(out, w)| {
                let base = csr.row_ptr[w[0]];
                for i in w[0]..w[1] {
                    out[csr.row_ptr[i] - base..csr.row_ptr[i + 1] - base].fill(i as u32);
                }
            });
        Ok(Coo {
            nrows: csr.nrows,
            ncols: csr.ncols,
            rows,
            cols: csr.col_idx.clone(),
            values: csr.values.clone(),
        })
    }

    /// Number of entries before row `r` (binary search on the sorted row indices).
    fn row_start(&self, r: usize) -> usize {
        self.rows.partition_point(|&x| (x as usize) < r)
    }

    /// `y += A·x` for the rows of `y` (`y[i]` corresponds to row `i`). Rows are cut into chunks of
    /// about equal rows + entries and each chunk accumulates its own entries, so no two threads
    /// write one element.
    pub(crate) fn spmv_add(&self, x: &[T], y: &mut [T]) {
        assert_eq!(x.len(), self.ncols, "x has the wrong length");
        assert_eq!(y.len(), self.nrows, "y has the wrong length");
        let cuts = row_cuts(self.nrows, self.values.len(), |r| self.row_start(r));
        split_at_cuts(y, &cuts)
            .into_par_iter()
            .zip(cuts.par_windows(2))
            .for_each(|(ys, w)| {
                let (mut k, b) = (self.row_start(w[0]), self.row_start(w[1]));
                // Sum each run of one row's entries in a register, then add it once.
                while k < b {
                    let r = self.rows[k];
                    let mut s = T::zero();
                    while k < b && self.rows[k] == r {
                        s += self.values[k] * x[self.cols[k] as usize];
                        k += 1;
                    }
                    ys[r as usize - w[0]] += s;
                }
            });
    }

    /// Convert back to CSR; the exact inverse of [`Coo::from_csr`].
    pub fn to_csr(&self) -> Csr<T> {
        let lens: Vec<usize> = (0..self.nrows)
            .into_par_iter()
            .map(|r| self.row_start(r + 1) - self.row_start(r))
            .collect();
        csr_from_rows(self.nrows, self.ncols, &lens, |i, c, v| {
            let a = self.row_start(i);
            c.copy_from_slice(&self.cols[a..a + c.len()]);
            v.copy_from_slice(&self.values[a..a + v.len()]);
        })
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
        self.values.len()
    }
    fn stored_entries(&self) -> usize {
        self.values.len()
    }
    fn footprint_bytes(&self) -> u64 {
        bytes_for(self.values.len() as u64, T::BYTES as u64)
    }
    fn spmv(&self, x: &[T], y: &mut [T]) {
        y.par_iter_mut().for_each(|v| *v = T::zero());
        self.spmv_add(x, y);
    }
}
