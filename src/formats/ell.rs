//! ELL (ELLPACK): every row padded to one width, stored column-major (entry k of row i at
//! `k * nrows + i`), so that consecutive threads (rows) read consecutive addresses.

use super::util::{
    check_bytes, check_rows, check_u32, column_major_pieces, csr_from_rows, max_row_len,
    split_at_cuts, uniform_cuts,
};
use super::{FormatKind, FormatParams, SparseFormat, PAD};
use crate::{Csr, Error, Result, Scalar};
use rayon::prelude::*;

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

/// Footprint of a `width × nrows` ELL: `width × nrows × (4 + sizeof T)`.
pub(crate) fn bytes_for(width: usize, nrows: usize, value_bytes: usize) -> u128 {
    width as u128 * nrows as u128 * (4 + value_bytes as u128)
}

impl<T: Scalar> Ell<T> {
    /// Convert from CSR (which must satisfy [`Csr::validate`]).
    ///
    /// The width is `params.ell_width`, or the longest row when that is `None`. Refused, before
    /// anything is allocated, when a row is longer than a given width, when `width × nrows` slots
    /// exceed 32-bit offsets, or when the footprint exceeds `params.max_bytes`.
    pub fn from_csr(csr: &Csr<T>, params: &FormatParams) -> Result<Self> {
        check_rows("ell", csr.nrows)?;
        let longest = max_row_len(csr);
        let width = match params.ell_width {
            None => longest,
            Some(w) if longest > w => {
                let i = (0..csr.nrows)
                    .into_par_iter()
                    .find_first(|&i| csr.row_len(i) > w)
                    .unwrap_or(0);
                return Err(Error::refused(
                    "ell",
                    format!(
                        "row {i} has {} entries, more than the requested ELL width {w}",
                        csr.row_len(i)
                    ),
                ));
            }
            Some(w) => w,
        };
        check_u32(
            "ell",
            "ELL slots (width × rows)",
            width as u128 * csr.nrows as u128,
        )?;
        check_bytes(
            "ell",
            bytes_for(width, csr.nrows, T::BYTES),
            params.max_bytes,
        )?;
        Self::build(csr, width, "ell")
    }

    /// Build an ELL of exactly `width` entries per row from the first `min(len, width)` entries of
    /// each row (HYB puts the rest in its COO part). Checks 32-bit offsets; the caller checks the
    /// memory budget.
    pub(crate) fn build(csr: &Csr<T>, width: usize, format: &str) -> Result<Self> {
        let nrows = csr.nrows;
        let slots = width as u128 * nrows as u128;
        check_u32(format, "ELL slots (width × rows)", slots)?;
        let slots = slots as usize;
        let nnz: usize = csr
            .row_ptr
            .par_windows(2)
            .map(|w| (w[1] - w[0]).min(width))
            .sum();
        // Zeroed allocations are lazy; every slot is written below, in parallel.
        let mut col_idx = vec![0u32; slots];
        let mut values = vec![T::zero(); slots];
        let cuts = uniform_cuts(nrows, width);
        let cp = column_major_pieces(&mut col_idx, nrows, width, &cuts);
        let vp = column_major_pieces(&mut values, nrows, width, &cuts);
        cp.into_par_iter()
            .zip(vp)
            .zip(cuts.par_windows(2))
            .for_each(|((mut cs, mut vs), w)| {
                for i in w[0]..w[1] {
                    let (c, v) = csr.row(i);
                    let t = i - w[0];
                    let n = c.len().min(width);
                    for k in 0..n {
                        cs[k][t] = c[k];
                        vs[k][t] = v[k];
                    }
                    for k in n..width {
                        cs[k][t] = PAD;
                        vs[k][t] = T::zero();
                    }
                }
            });
        Ok(Ell {
            nrows,
            ncols: csr.ncols,
            width,
            nnz,
            col_idx,
            values,
        })
    }

    /// Convert back to CSR (padding dropped); the exact inverse of [`Ell::from_csr`].
    pub fn to_csr(&self) -> Csr<T> {
        let n = self.nrows;
        let lens: Vec<usize> = (0..n)
            .into_par_iter()
            .map(|i| {
                (0..self.width)
                    .filter(|k| self.col_idx[k * n + i] != PAD)
                    .count()
            })
            .collect();
        csr_from_rows(n, self.ncols, &lens, |i, c, v| {
            let mut t = 0;
            for k in 0..self.width {
                let col = self.col_idx[k * n + i];
                if col != PAD {
                    c[t] = col;
                    v[t] = self.values[k * n + i];
                    t += 1;
                }
            }
        })
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
        self.nnz
    }
    fn stored_entries(&self) -> usize {
        self.width * self.nrows
    }
    fn footprint_bytes(&self) -> u64 {
        bytes_for(self.width, self.nrows, T::BYTES) as u64
    }
    /// Each chunk of rows accumulates column by column, reading contiguous pieces of every ELL
    /// column (the CPU-friendly order of the column-major layout).
    fn spmv(&self, x: &[T], y: &mut [T]) {
        assert_eq!(x.len(), self.ncols, "x has the wrong length");
        assert_eq!(y.len(), self.nrows, "y has the wrong length");
        let n = self.nrows;
        let cuts = uniform_cuts(n, self.width);
        split_at_cuts(y, &cuts)
            .into_par_iter()
            .zip(cuts.par_windows(2))
            .for_each(|(ys, w)| {
                ys.fill(T::zero());
                for k in 0..self.width {
                    let (a, b) = (k * n + w[0], k * n + w[1]);
                    let cols = &self.col_idx[a..b];
                    let vals = &self.values[a..b];
                    for ((yi, &c), &v) in ys.iter_mut().zip(cols).zip(vals) {
                        if c != PAD {
                            *yi += v * x[c as usize];
                        }
                    }
                }
            });
    }
}
