//! COO: one (row, column, value) triplet per entry, sorted by row then column.

use super::util::{check_bytes, check_rows, check_u32, csr_from_rows, row_cuts, split_at_cuts};
use super::{FormatKind, FormatParams, SparseFormat};
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

/// Footprint of `nnz` triplets: `nnz × (4 + 4 + sizeof T)`.
fn bytes_for(nnz: usize, value_bytes: usize) -> u128 {
    nnz as u128 * (8 + value_bytes as u128)
}

impl<T: Scalar> Coo<T> {
    /// Convert from CSR (which must satisfy [`Csr::validate`]). Row indices are filled in parallel;
    /// columns and values are the CSR's arrays.
    ///
    /// Refused when the rows or the entry count exceed 32-bit indices (the device kernels index
    /// entries with 32-bit integers, like every other format's offsets) or the footprint exceeds
    /// `params.max_bytes`.
    pub fn from_csr(csr: &Csr<T>, params: &FormatParams) -> Result<Self> {
        let nnz = csr.nnz();
        check_rows("coo", csr.nrows)?;
        check_u32("coo", "non-zeros", nnz as u128)?;
        check_bytes("coo", bytes_for(nnz, T::BYTES), params.max_bytes)?;
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
        bytes_for(self.values.len(), T::BYTES) as u64
    }
    fn spmv(&self, x: &[T], y: &mut [T]) {
        y.par_iter_mut().for_each(|v| *v = T::zero());
        self.spmv_add(x, y);
    }
}
