//! HYB (Bell & Garland): the first `width` entries of each row in an ELL part, the rest of each
//! row in a COO part.

use super::util::{
    check_bytes, check_rows, check_u32, csr_from_rows, row_cuts, row_lengths, split_at_cuts,
};
use super::{FormatKind, FormatParams, SparseFormat};
use crate::{Csr, Result, Scalar};
use rayon::prelude::*;

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

/// ELL speed relative to COO assumed by the rule (cusp's `relative_speed`).
const RELATIVE_SPEED: usize = 3;
/// Fewest rows for which an ELL column pays off (cusp's `breakeven_threshold`).
const BREAKEVEN_ROWS: usize = 4096;

/// The ELL width rule of Bell & Garland (cusp's `compute_optimal_entries_per_row`): the largest K
/// such that at least `max(4096, nrows / 3)` rows have K or more entries.
///
/// Source: cusp (`cusplibrary/cusplibrary`, `cusp/detail/format_utils.inl`,
/// `compute_optimal_entries_per_row` with its defaults `relative_speed = 3`,
/// `breakeven_threshold = 4096`, used by cusp's CSR→HYB conversion). cusp builds a histogram of
/// row lengths and returns the first `i` (from 0) at which the number of rows longer than `i`,
/// `rows`, satisfies `3 · rows < nrows || rows < 4096`, or the longest row length if there is
/// none. Equivalently: the largest `K ≥ 0` such that every `K' ∈ 1..=K` has
/// `count(len ≥ K') ≥ 4096` and `3 · count(len ≥ K') ≥ nrows`; the counts only decrease with `K'`,
/// so checking `K` itself suffices. We compare `3 · count ≥ nrows` in exact integers (cusp uses
/// a float product; the two differ only beyond 2^24 rows, by rounding). Consequence worth knowing:
/// a matrix with fewer than 4096 rows gets width 0, i.e. it is stored entirely in the COO part.
pub fn auto_width(row_lengths: &[usize]) -> usize {
    let nrows = row_lengths.len();
    let longest = row_lengths.iter().copied().max().unwrap_or(0);
    let mut histogram = vec![0usize; longest + 1];
    for &l in row_lengths {
        histogram[l] += 1;
    }
    // `longer` = number of rows with length > i.
    let mut longer = nrows;
    for (i, &h) in histogram.iter().enumerate().take(longest) {
        longer -= h;
        if RELATIVE_SPEED * longer < nrows || longer < BREAKEVEN_ROWS {
            return i;
        }
    }
    longest
}

/// Footprint of a HYB with an ELL part of `width` and a COO part of `coo_nnz` entries.
fn bytes_for(width: usize, nrows: usize, coo_nnz: usize, value_bytes: usize) -> u128 {
    super::ell::bytes_for(width, nrows, value_bytes) + coo_nnz as u128 * (8 + value_bytes as u128)
}

impl<T: Scalar> Hyb<T> {
    /// Convert from CSR (which must satisfy [`Csr::validate`]). The width is `params.hyb_width`,
    /// or [`auto_width`] of the row lengths when that is `None`.
    ///
    /// Refused, before allocating, when the ELL slots or the COO entries exceed 32-bit offsets or
    /// the total footprint exceeds `params.max_bytes`.
    pub fn from_csr(csr: &Csr<T>, params: &FormatParams) -> Result<Self> {
        check_rows("hyb", csr.nrows)?;
        let lens = row_lengths(csr);
        let width = params.hyb_width.unwrap_or_else(|| auto_width(&lens));
        let rest: Vec<usize> = lens.par_iter().map(|&l| l.saturating_sub(width)).collect();
        let coo_nnz: usize = rest.par_iter().sum();
        check_u32(
            "hyb",
            "ELL slots (width × rows)",
            width as u128 * csr.nrows as u128,
        )?;
        check_u32("hyb", "COO entries", coo_nnz as u128)?;
        check_bytes(
            "hyb",
            bytes_for(width, csr.nrows, coo_nnz, T::BYTES),
            params.max_bytes,
        )?;
        let ell = Ell::build(csr, width, "hyb")?;
        let coo = Self::remainder(csr, width, &rest, coo_nnz);
        Ok(Hyb {
            nrows: csr.nrows,
            ncols: csr.ncols,
            ell,
            coo,
        })
    }

    /// The COO part: entries `width..` of every row, `rest[i]` of them in row `i`.
    fn remainder(csr: &Csr<T>, width: usize, rest: &[usize], coo_nnz: usize) -> Coo<T> {
        let nrows = csr.nrows;
        let mut start = Vec::with_capacity(nrows + 1);
        start.push(0usize);
        let mut acc = 0;
        for &r in rest {
            acc += r;
            start.push(acc);
        }
        let mut rows = vec![0u32; coo_nnz];
        let mut cols = vec![0u32; coo_nnz];
        let mut values = vec![T::zero(); coo_nnz];
        let cuts = row_cuts(nrows, coo_nnz, |i| start[i]);
        let pos: Vec<usize> = cuts.iter().map(|&r| start[r]).collect();
        split_at_cuts(&mut rows, &pos)
            .into_par_iter()
            .zip(split_at_cuts(&mut cols, &pos))
            .zip(split_at_cuts(&mut values, &pos))
            .zip(cuts.par_windows(2))
            .for_each(|(((ro, co), vo), w)| {
                let base = start[w[0]];
                for i in w[0]..w[1] {
                    let (a, b) = (start[i] - base, start[i + 1] - base);
                    if a == b {
                        continue;
                    }
                    let (c, v) = csr.row(i);
                    ro[a..b].fill(i as u32);
                    co[a..b].copy_from_slice(&c[width..]);
                    vo[a..b].copy_from_slice(&v[width..]);
                }
            });
        Coo {
            nrows,
            ncols: csr.ncols,
            rows,
            cols,
            values,
        }
    }

    /// Convert back to CSR: each row is its ELL entries followed by its COO entries (which hold
    /// the larger columns); the exact inverse of [`Hyb::from_csr`].
    pub fn to_csr(&self) -> Csr<T> {
        let ell = self.ell.to_csr();
        let coo = self.coo.to_csr();
        let lens: Vec<usize> = (0..self.nrows)
            .into_par_iter()
            .map(|i| ell.row_len(i) + coo.row_len(i))
            .collect();
        csr_from_rows(self.nrows, self.ncols, &lens, |i, c, v| {
            let (ec, ev) = ell.row(i);
            let (cc, cv) = coo.row(i);
            let n = ec.len();
            c[..n].copy_from_slice(ec);
            v[..n].copy_from_slice(ev);
            c[n..].copy_from_slice(cc);
            v[n..].copy_from_slice(cv);
        })
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
        self.ell.nnz + self.coo.values.len()
    }
    fn stored_entries(&self) -> usize {
        self.ell.width * self.ell.nrows + self.coo.values.len()
    }
    fn footprint_bytes(&self) -> u64 {
        bytes_for(
            self.ell.width,
            self.ell.nrows,
            self.coo.values.len(),
            T::BYTES,
        ) as u64
    }
    /// The ELL kernel writes every element of `y`, then the COO kernel adds the remainder.
    fn spmv(&self, x: &[T], y: &mut [T]) {
        self.ell.spmv(x, y);
        self.coo.spmv_add(x, y);
    }
}
