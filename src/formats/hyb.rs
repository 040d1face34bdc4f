//! HYB (Bell & Garland): the first `width` entries of each row in an ELL part, the rest of each
//! row in a COO part.

use super::refusal::{budget, offsets32, rows32};
use super::summary::length_histogram;
use super::util::{csr_from_rows, row_cuts, split_at_cuts};
use super::{FormatKind, FormatParams, Missing, Reason, Refusal, SparseFormat, Summary};
use crate::{Csr, Result, Scalar};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// HYB's parameter.
#[derive(clap::Args, Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct HybParams {
    /// Width of HYB's ELL part. Default: Bell & Garland's rule (`formats::hyb::auto_width`).
    #[arg(id = "hyb_width", long = "hyb-width", value_name = "N")]
    #[serde(rename = "hyb_width")]
    pub width: Option<usize>,
}

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
pub(crate) const RELATIVE_SPEED: u64 = 3;
/// Fewest rows for which an ELL column pays off (cusp's `breakeven_threshold`).
pub(crate) const BREAKEVEN_ROWS: u64 = 4096;

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
    auto_width_of(row_lengths.len(), &length_histogram(row_lengths)) as usize
}

/// [`auto_width`] from the `(length, rows)` histogram of `nrows` rows (lengths increasing).
/// The count of rows longer than `i` only changes at the lengths present, so the first `i` the
/// rule stops at is 0 or one of them.
pub(crate) fn auto_width_of(nrows: usize, hist: &[(u64, u64)]) -> u64 {
    let nrows = nrows as u64;
    let longest = hist.last().map_or(0, |&(l, _)| l);
    let stops = |longer: u64| RELATIVE_SPEED * longer < nrows || longer < BREAKEVEN_ROWS;
    // `longer` = number of rows with length > i.
    let mut longer = nrows;
    let mut rest = hist;
    if let Some((&(0, c), tail)) = hist.split_first() {
        longer -= c;
        rest = tail;
    }
    if longest > 0 && stops(longer) {
        return 0;
    }
    for &(l, c) in rest {
        if l >= longest {
            break;
        }
        longer -= c;
        if stops(longer) {
            return l;
        }
    }
    longest
}

/// Footprint of a HYB with an ELL part of `width` and a COO part of `coo_nnz` entries,
/// saturating.
fn bytes_for(width: u64, nrows: u64, coo_nnz: u64, value_bytes: u64) -> u64 {
    super::ell::bytes_for(width, nrows, value_bytes)
        .saturating_add(super::coo::bytes_for(coo_nnz, value_bytes))
}

/// The HYB split `(width, COO entries)` for `params`: the summary's. A width other than the one
/// the summary was built with cannot be derived from it ([`Missing::HybSplit`]).
pub fn split(s: &Summary, params: &FormatParams) -> Result<(u64, u64), Refusal> {
    match params.hyb.width {
        Some(w) if w as u64 != s.hyb_width => Err(Refusal::new(
            FormatKind::Hyb,
            Reason::Unknown(Missing::HybSplit {
                held: s.hyb_width,
                wanted: w as u64,
            }),
        )),
        _ => Ok((s.hyb_width, s.hyb_coo_nnz)),
    }
}

/// Whether HYB with `params` has a COO part (entries beyond the ELL width): from the summary's
/// split, or, for another fixed width, whether some row is longer than it. HYB's launch sequence
/// has a second kernel only then.
pub fn has_coo_part(s: &Summary, params: &FormatParams) -> bool {
    match (split(s, params), params.hyb.width) {
        (Ok((_, coo)), _) => coo > 0,
        (Err(_), Some(w)) => s.max_row_len > w as u64,
        (Err(_), None) => true,
    }
}

/// Padding slots of the ELL part (`width × rows` less the entries it holds, all but the COO
/// part's), whose values the ELL kernel skips ([`super::ell::padding_slots`]).
pub fn padding_slots(s: &Summary, params: &FormatParams) -> Result<u64, Refusal> {
    let (w, over) = split(s, params)?;
    Ok(w.saturating_mul(s.nrows)
        .saturating_sub(s.nnz.saturating_sub(over)))
}

/// The device footprint of the matrix summarized by `s`: its ELL part and its COO part (see
/// [`FormatKind::footprint`]).
pub fn footprint(s: &Summary, params: &FormatParams, value_bytes: u64) -> Result<u64, Refusal> {
    let (w, over) = split(s, params)?;
    Ok(bytes_for(w, s.nrows, over, value_bytes))
}

/// Rows within 32-bit row indices, the ELL slots and the COO entries within 32-bit offsets, the
/// footprint of both parts within `params.max_bytes` (see [`FormatKind::admit`]).
pub fn admit(s: &Summary, params: &FormatParams, value_bytes: u64) -> Result<(), Refusal> {
    let kind = FormatKind::Hyb;
    rows32(kind, s.nrows)?;
    let (w, over) = split(s, params)?;
    offsets32(kind, super::ell::SLOTS, w as u128 * s.nrows as u128)?;
    offsets32(kind, "COO entries", over as u128)?;
    budget(kind, footprint(s, params, value_bytes)?, params.max_bytes)
}

/// Where HYB's COO part puts every row's entries beyond `width` ([`Hyb::from_csr`] fills it on
/// the host, the CUDA backend on the device): row `i`'s from `start[i]` on (`nrows + 1`
/// offsets, the last the COO entries). Its ELL part is [`super::Ell`]'s layout of that width.
pub(crate) fn remainder_starts<T: Scalar>(csr: &Csr<T>, width: usize) -> Vec<usize> {
    let mut start = Vec::with_capacity(csr.nrows + 1);
    start.push(0usize);
    let mut acc = 0;
    for w in csr.row_ptr.windows(2) {
        acc += (w[1] - w[0]).saturating_sub(width);
        start.push(acc);
    }
    start
}

impl<T: Scalar> Hyb<T> {
    /// Convert from CSR (which must satisfy [`Csr::validate`]). The width is `params.hyb.width`,
    /// or [`auto_width`] of the row lengths when that is `None`.
    ///
    /// Refused, before allocating, as [`admit`] says.
    pub fn from_csr(csr: &Csr<T>, params: &FormatParams) -> Result<Self> {
        let s = Summary::of(csr, params.hyb.width);
        admit(&s, params, T::BYTES as u64)?;
        let (width, start) = (
            s.hyb_width as usize,
            remainder_starts(csr, s.hyb_width as usize),
        );
        let ell = Ell::build(csr, width);
        let coo = Self::remainder(csr, width, &start);
        Ok(Hyb {
            nrows: csr.nrows,
            ncols: csr.ncols,
            ell,
            coo,
        })
    }

    /// The COO part: entries `width..` of every row, row `i`'s from `start[i]` on.
    fn remainder(csr: &Csr<T>, width: usize, start: &[usize]) -> Coo<T> {
        let nrows = csr.nrows;
        let coo_nnz = start[nrows];
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
            self.ell.width as u64,
            self.ell.nrows as u64,
            self.coo.values.len() as u64,
            T::BYTES as u64,
        )
    }
    /// The ELL kernel writes every element of `y`, then the COO kernel adds the remainder.
    fn spmv(&self, x: &[T], y: &mut [T]) {
        self.ell.spmv(x, y);
        self.coo.spmv_add(x, y);
    }
}
