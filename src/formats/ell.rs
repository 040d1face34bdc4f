//! ELL (ELLPACK): every row padded to one width, stored column-major (entry k of row i at
//! `k * nrows + i`), so that consecutive threads (rows) read consecutive addresses.

use super::refusal::{budget, offsets32, rows32};
use super::util::{column_major_pieces, csr_from_rows, split_at_cuts, uniform_cuts};
use super::{FormatKind, FormatParams, Reason, Refusal, SparseFormat, Summary, PAD};
use crate::features::access::WarpHist;
use crate::{Csr, Result, Scalar};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Padding slots of the ELL for `params`: `width × rows` less the entries. The kernel
/// (`kernels/ell.cu`) reads their column indices but never their values, so an SpMV moves
/// `padding_slots × value bytes` fewer bytes than [`footprint`] (a stack of 7 × 10⁶ rows of
/// about 4 entries under 2,727 rows of 52 stores 13× its entries' values and loads 1×).
pub fn padding_slots(s: &Summary, params: &FormatParams) -> Result<u64, Refusal> {
    Ok(width(s, params)?
        .saturating_mul(s.nrows)
        .saturating_sub(s.nnz))
}

/// ELL's parameter.
#[derive(clap::Args, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EllParams {
    /// ELL width (entries per row). Default: the longest row.
    #[arg(id = "ell_width", long = "ell-width", value_name = "N")]
    #[serde(rename = "ell_width")]
    pub width: Option<usize>,
}

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

/// Footprint of a `width × nrows` ELL: `width × nrows × (4 + value)`, saturating.
pub(crate) fn bytes_for(width: u64, nrows: u64, value_bytes: u64) -> u64 {
    width.saturating_mul(nrows).saturating_mul(4 + value_bytes)
}

/// Value slots the ELL kernel (`kernels/ell.cu`, also HYB's ELL part) loads at `width`. It reads
/// every slot's column index but skips a padding slot's value, so a warp of 32 rows loads values
/// for as many steps as its longest row has entries, up to `width`. From `hist`, the warps of one
/// thread per row by their steps ([`WarpHist`]): the sum over its buckets of warps × min(mean
/// steps, width) × 32 — exact for the buckets wholly below or above `width`, the bucket that
/// straddles it by its mean. Warp-granular, so an upper bound: a 32-byte sector of values (8 rows
/// in f32, 4 in f64) is skipped only where all of its rows are padding. Where a stack of short
/// rows sits on a few long ones, this is a small part of `width × rows` (a 5-point stencil under
/// a width of 27 loads 5 of every 27 values).
pub fn loaded_value_slots(hist: &WarpHist, width: u64) -> f64 {
    hist.warps
        .iter()
        .zip(&hist.steps)
        .filter(|(&w, _)| w > 0)
        .map(|(&w, &s)| w as f64 * (s as f64 / w as f64).min(width as f64) * 32.0)
        .sum()
}

/// The ELL width for `params`: the given width, or the longest row. Refused when a row is longer
/// than the given width.
pub fn width(s: &Summary, params: &FormatParams) -> Result<u64, Refusal> {
    let longest = s.max_row_len;
    match params.ell.width {
        None => Ok(longest),
        Some(w) if w as u64 >= longest => Ok(w as u64),
        Some(w) => Err(Refusal::new(
            FormatKind::Ell,
            Reason::RowLongerThanWidth {
                longest,
                width: w as u64,
            },
        )),
    }
}

/// The device footprint of the matrix summarized by `s`: the given width (or the longest row)
/// × rows × (4 + value) (see [`FormatKind::footprint`]).
pub fn footprint(s: &Summary, params: &FormatParams, value_bytes: u64) -> Result<u64, Refusal> {
    let w = params.ell.width.map_or(s.max_row_len, |w| w as u64);
    Ok(bytes_for(w, s.nrows, value_bytes))
}

/// Rows within 32-bit row indices, no row longer than a given width ([`width`]), `width × rows`
/// slots within 32-bit offsets, footprint within `params.max_bytes` (see
/// [`FormatKind::admit`]).
pub fn admit(s: &Summary, params: &FormatParams, value_bytes: u64) -> Result<(), Refusal> {
    let kind = FormatKind::Ell;
    rows32(kind, s.nrows)?;
    let w = width(s, params)?;
    offsets32(kind, SLOTS, w as u128 * s.nrows as u128)?;
    budget(kind, footprint(s, params, value_bytes)?, params.max_bytes)
}

/// What ELL's 32-bit slot offsets count.
pub(crate) const SLOTS: &str = "ELL slots (width × rows)";

impl<T: Scalar> Ell<T> {
    /// Convert from CSR (which must satisfy [`Csr::validate`]).
    ///
    /// The width is `params.ell.width`, or the longest row when that is `None`. Refused, before
    /// anything is allocated, as [`admit`] says.
    pub fn from_csr(csr: &Csr<T>, params: &FormatParams) -> Result<Self> {
        let s = Summary::of(csr, None);
        admit(&s, params, T::BYTES as u64)?;
        Ok(Self::build(csr, width(&s, params)? as usize))
    }

    /// Build an ELL of exactly `width` entries per row from the first `min(len, width)` entries of
    /// each row (HYB puts the rest in its COO part). The caller has checked the slots against
    /// 32-bit offsets and the memory budget ([`admit`], or HYB's).
    pub(crate) fn build(csr: &Csr<T>, width: usize) -> Self {
        let nrows = csr.nrows;
        let slots = width * nrows;
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
        Ell {
            nrows,
            ncols: csr.ncols,
            width,
            nnz,
            col_idx,
            values,
        }
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
        bytes_for(self.width as u64, self.nrows as u64, T::BYTES as u64)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::features::Features;

    /// Rows of the given lengths, columns 0, 1, … of each.
    fn rows(lens: &[usize]) -> Csr<f64> {
        csr_from_rows(lens.len(), 64, lens, |_, cols, vals| {
            for (k, (c, v)) in cols.iter_mut().zip(vals).enumerate() {
                *c = k as u32;
                *v = 1.0;
            }
        })
    }

    fn hist(m: &Csr<f64>) -> WarpHist {
        Features::compute(m).access.unwrap().warp_hist[0].clone()
    }

    #[test]
    fn loaded_values_follow_each_warps_longest_row_up_to_the_width() {
        // Two warps of rows of 2 entries, then a warp of rows of 40: the first two load 2
        // values a row, the last 40 (or the width, below it).
        let lens: Vec<usize> = [vec![2; 64], vec![40; 32]].concat();
        let h = hist(&rows(&lens));
        assert_eq!(loaded_value_slots(&h, 40), (2.0 * 2.0 + 40.0) * 32.0);
        assert_eq!(loaded_value_slots(&h, 10), (2.0 * 2.0 + 10.0) * 32.0);
        assert_eq!(loaded_value_slots(&h, 0), 0.0);
    }

    #[test]
    fn loaded_values_lie_between_the_warps_exact_loads_and_the_stored_slots() {
        // Lengths 0..=50 spread unevenly over warps: a bucket straddles every width below.
        let lens: Vec<usize> = (0..1000).map(|i| (i * 37 % 51) * (i % 3) / 2).collect();
        let m = rows(&lens);
        let h = hist(&m);
        for width in [1u64, 3, 7, 12, 25, 50] {
            let exact: u64 = lens
                .chunks(32)
                .map(|w| (*w.iter().max().unwrap() as u64).min(width) * 32)
                .sum();
            let est = loaded_value_slots(&h, width);
            let stored = (width * lens.len().div_ceil(32) as u64 * 32) as f64;
            assert!(
                exact as f64 <= est + 1e-9 && est <= stored,
                "{width}: {exact} {est} {stored}"
            );
        }
    }
}
