//! SELL-C-σ (Kreutzer et al.): rows sorted by decreasing length within windows of σ rows, cut into
//! slices of C rows; each slice padded to its longest row and stored column-major (entry k of lane
//! r of slice s at `slice_ptr[s] + k * C + r`).

use super::refusal::{budget, offsets32, rows32};
use super::util::{csr_from_rows, row_cuts, split_at_cuts};
use super::{
    FormatKind, FormatParams, Missing, ParamError, Reason, Refusal, SparseFormat, Summary, PAD,
};
use crate::{Csr, Result, Scalar};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;

/// SELL-C-σ's parameters.
#[derive(clap::Args, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SellParams {
    /// SELL-C-σ slice height C (rows per slice).
    #[arg(id = "sell_c", long = "sell-c", value_name = "C", default_value_t = SellParams::DEFAULT_C, value_parser = super::at_least_one())]
    #[serde(rename = "sell_c")]
    pub c: usize,
    /// SELL-C-σ sorting window σ (rows; 1 = no sorting, else a multiple of C).
    #[arg(id = "sell_sigma", long = "sell-sigma", value_name = "SIGMA", default_value_t = SellParams::DEFAULT_SIGMA)]
    #[serde(rename = "sell_sigma")]
    pub sigma: usize,
}

impl SellParams {
    /// Default slice height C.
    pub const DEFAULT_C: usize = 32;
    /// Default sorting window σ.
    pub const DEFAULT_SIGMA: usize = 256;
}

impl Default for SellParams {
    fn default() -> Self {
        SellParams {
            c: Self::DEFAULT_C,
            sigma: Self::DEFAULT_SIGMA,
        }
    }
}

/// What SELL-C-σ's rules need beyond the matrix's size: its slices for one C and σ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SellCount {
    /// C.
    pub c: usize,
    /// σ.
    pub sigma: usize,
    /// Stored slots, padding included (`Σ slice width × C`), saturating.
    pub slots: u64,
}

/// C ≥ 1, and σ 1 or a multiple of C.
pub(crate) fn check_params(p: &SellParams) -> Result<(), ParamError> {
    if p.c == 0 {
        return Err(ParamError::SellC);
    }
    if p.sigma == 0 || (p.sigma != 1 && p.sigma % p.c != 0) {
        return Err(ParamError::SellSigma {
            sigma: p.sigma,
            c: p.c,
        });
    }
    Ok(())
}

/// Rows sorted by decreasing length within windows of σ rows (stably, in parallel) and the width
/// of every slice of C rows, with the count the rules read. `p` must pass [`check_params`] and
/// the rows must fit 32-bit row indices.
pub(crate) fn sorted_slices<T: Scalar>(
    csr: &Csr<T>,
    p: &SellParams,
) -> (Vec<u32>, Vec<usize>, SellCount) {
    let (c, sigma, nrows) = (p.c, p.sigma, csr.nrows);
    let mut perm: Vec<u32> = (0..nrows as u32).collect();
    if sigma > 1 {
        perm.par_chunks_mut(sigma)
            .for_each(|w| w.sort_by_key(|&r| Reverse(csr.row_len(r as usize))));
    }
    let nslices = nrows.div_ceil(c);
    let lanes = |s: usize| s * c..(s * c).saturating_add(c).min(nrows);
    let widths: Vec<usize> = (0..nslices)
        .into_par_iter()
        .map(|s| {
            lanes(s)
                .map(|p| csr.row_len(perm[p] as usize))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let slots = widths.iter().fold(0u64, |acc, &w| {
        acc.saturating_add((w as u64).saturating_mul(c as u64))
    });
    (perm, widths, SellCount { c, sigma, slots })
}

/// The count of [`sorted_slices`] from the row lengths alone (a slice's width only depends on the
/// lengths in its σ window): `None` where the summary would hold none (parameters out of range,
/// rows beyond 32-bit indices). Used for the row blocks of the optimizer, whose lengths are a
/// slice of the matrix's.
pub(crate) fn count_lengths(lens: &[usize], p: &SellParams) -> Option<SellCount> {
    if lens.len() > u32::MAX as usize || check_params(p).is_err() {
        return None;
    }
    let mut l = lens.to_vec();
    if p.sigma > 1 {
        l.par_chunks_mut(p.sigma)
            .for_each(|w| w.sort_unstable_by(|a, b| b.cmp(a)));
    }
    // σ is 1 or a multiple of C: no slice straddles two windows.
    let slots = l
        .par_chunks(p.c)
        .map(|s| s.iter().copied().max().unwrap_or(0) as u64)
        .fold(
            || 0u64,
            |acc, w| acc.saturating_add(w.saturating_mul(p.c as u64)),
        )
        .reduce(|| 0u64, u64::saturating_add);
    Some(SellCount {
        c: p.c,
        sigma: p.sigma,
        slots,
    })
}

/// Footprint: `(nslices + 1) × 4 + nslices × 4 + nrows × 4 + slots × (4 + value)`, saturating.
fn bytes_for(nslices: u64, nrows: u64, slots: u64, value_bytes: u64) -> u64 {
    nslices
        .saturating_add(1)
        .saturating_mul(4)
        .saturating_add(nslices.saturating_mul(4))
        .saturating_add(nrows.saturating_mul(4))
        .saturating_add(slots.saturating_mul(4 + value_bytes))
}

/// The summary's count for `params`' C and σ, refusing parameters out of range.
fn count(s: &Summary, params: &FormatParams) -> Result<SellCount, Refusal> {
    let p = &params.sell;
    let kind = FormatKind::Sell;
    check_params(p).map_err(|e| Refusal::new(kind, Reason::Param(e)))?;
    match s.counts.sell {
        Some(n) if n.c == p.c && n.sigma == p.sigma => Ok(n),
        _ => Err(Refusal::new(
            kind,
            Reason::Unknown(Missing::SellSlots {
                c: p.c,
                sigma: p.sigma,
            }),
        )),
    }
}

/// The device footprint of the matrix summarized by `s`, which must hold the slices for
/// `params`' C and σ (see [`FormatKind::footprint`]).
pub fn footprint(s: &Summary, params: &FormatParams, value_bytes: u64) -> Result<u64, Refusal> {
    let n = count(s, params)?;
    let nslices = s.nrows.div_ceil(n.c as u64);
    Ok(bytes_for(nslices, s.nrows, n.slots, value_bytes))
}

/// Padding slots (stored slots less the entries). The SELL kernel (`kernels/sell.cu`) never
/// loads their values, and in a slice split over warps (wider than its split threshold) it
/// walks each 32 lanes only as far as their longest row, so many of their column indices are
/// not read either.
pub fn padding_slots(s: &Summary, params: &FormatParams) -> Result<u64, Refusal> {
    Ok(count(s, params)?.slots.saturating_sub(s.nnz))
}

/// C ≥ 1 and σ 1 or a multiple of C, rows within 32-bit row indices, stored slots within
/// 32-bit offsets, footprint within `params.max_bytes` (see [`FormatKind::admit`]).
pub fn admit(s: &Summary, params: &FormatParams, value_bytes: u64) -> Result<(), Refusal> {
    let kind = FormatKind::Sell;
    check_params(&params.sell).map_err(|e| Refusal::new(kind, Reason::Param(e)))?;
    rows32(kind, s.nrows)?;
    offsets32(kind, "stored slots", count(s, params)?.slots as u128)?;
    budget(kind, footprint(s, params, value_bytes)?, params.max_bytes)
}

/// Where SELL-C-σ puts every row ([`Sell::from_csr`] fills it on the host, the CUDA backend
/// on the device): lane `p % C` of slice `p / C` holds row `perm[p]`, its entry k at
/// `slice_ptr[p / C] + k × C + p % C`; every other slot is padding.
pub(crate) struct SellPlan {
    /// Original row of each sorted position.
    pub perm: Vec<u32>,
    /// Width of each slice.
    pub widths: Vec<usize>,
    /// Offset of each slice, `nslices + 1` entries (the last: the stored slots).
    pub slice_ptr: Vec<u32>,
}

/// The layout of `csr` (summarized by `s`) as SELL-C-σ with `params.sell`, refused as
/// [`admit`] says before anything the size of the entries is allocated.
pub(crate) fn plan<T: Scalar>(
    csr: &Csr<T>,
    s: &Summary,
    params: &FormatParams,
    value_bytes: u64,
) -> Result<SellPlan> {
    let p = &params.sell;
    let kind = FormatKind::Sell;
    check_params(p).map_err(|e| Refusal::new(kind, Reason::Param(e)))?;
    rows32(kind, csr.nrows as u64)?;
    let (perm, widths, count) = sorted_slices(csr, p);
    let mut s = s.clone();
    s.counts.sell = Some(count);
    admit(&s, params, value_bytes)?;
    let mut slice_ptr = Vec::with_capacity(widths.len() + 1);
    slice_ptr.push(0u32);
    let mut acc = 0usize;
    for &w in &widths {
        acc += w * p.c;
        slice_ptr.push(acc as u32);
    }
    Ok(SellPlan {
        perm,
        widths,
        slice_ptr,
    })
}

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
    /// Convert from CSR (which must satisfy [`Csr::validate`]) with `C = params.sell.c` and
    /// `σ = params.sell.sigma`.
    ///
    /// Windows of σ consecutive rows (the last one possibly shorter) are each sorted by decreasing
    /// row length (stably: equal lengths keep their order), in parallel. Because σ is 1 or a
    /// multiple of C, every slice lies inside one window. Every slice stores all C lanes, so the
    /// last slice's lanes beyond `nrows` are padding too (counted in `stored_entries`).
    ///
    /// Refused, before the value arrays are allocated, as [`admit`] says.
    pub fn from_csr(csr: &Csr<T>, params: &FormatParams) -> Result<Self> {
        let (c, nrows) = (params.sell.c, csr.nrows);
        let SellPlan {
            perm,
            widths,
            slice_ptr,
        } = plan(csr, &Summary::of(csr, None), params, T::BYTES as u64)?;
        let nslices = widths.len();
        let stored = slice_ptr[nslices] as usize;
        let mut col_idx = vec![0u32; stored];
        let mut values = vec![T::zero(); stored];
        let cuts = row_cuts(nslices, stored, |s| slice_ptr[s] as usize);
        let pos: Vec<usize> = cuts.iter().map(|&s| slice_ptr[s] as usize).collect();
        split_at_cuts(&mut col_idx, &pos)
            .into_par_iter()
            .zip(split_at_cuts(&mut values, &pos))
            .zip(cuts.par_windows(2))
            .for_each(|((cs, vs), w)| {
                let base = slice_ptr[w[0]] as usize;
                let mut lanes: Vec<(&[u32], &[T])> = Vec::with_capacity(c);
                for s in w[0]..w[1] {
                    let off = slice_ptr[s] as usize - base;
                    let width = widths[s];
                    if width == 0 {
                        continue;
                    }
                    lanes.clear();
                    lanes.extend((s * c..s * c + c).map(|p| {
                        if p < nrows {
                            csr.row(perm[p] as usize)
                        } else {
                            (&[][..], &[][..])
                        }
                    }));
                    // Column by column of the slice, so that the writes are contiguous: the
                    // lane-by-lane order wrote with a stride of C slots (2–4 KB for 002's C =
                    // 512), and converting a 10⁷-entry matrix took seconds (docs/ACCURACY.md,
                    // session 15).
                    for k in 0..width {
                        let q = off + k * c;
                        let (cs, vs) = (&mut cs[q..q + c], &mut vs[q..q + c]);
                        for (r, (rc, rv)) in lanes.iter().enumerate() {
                            (cs[r], vs[r]) = match (rc.get(k), rv.get(k)) {
                                (Some(&j), Some(&v)) => (j, v),
                                _ => (PAD, T::zero()),
                            };
                        }
                    }
                }
            });
        Ok(Sell {
            nrows,
            ncols: csr.ncols,
            c,
            sigma: params.sell.sigma,
            nnz: csr.nnz(),
            slice_ptr,
            slice_width: widths.iter().map(|&w| w as u32).collect(),
            perm,
            col_idx,
            values,
        })
    }

    /// Number of slices.
    pub fn nslices(&self) -> usize {
        self.slice_width.len()
    }

    /// Footprint of this matrix as cuSPARSE's sliced ELL stores it: no row permutation and no
    /// slice widths, only the slice offsets, the columns and the values.
    pub fn sliced_ell_bytes(&self) -> u64 {
        (self.slice_ptr.len() as u64)
            .saturating_mul(4)
            .saturating_add((self.values.len() as u64).saturating_mul(4 + T::BYTES as u64))
    }

    /// Convert back to CSR (padding dropped); the exact inverse of [`Sell::from_csr`].
    pub fn to_csr(&self) -> Csr<T> {
        let c = self.c;
        let mut pos = vec![0usize; self.nrows];
        for (p, &r) in self.perm.iter().enumerate() {
            pos[r as usize] = p;
        }
        // Slot of entry k of the row at sorted position p.
        let slot = |p: usize, k: usize| self.slice_ptr[p / c] as usize + k * c + p % c;
        let lens: Vec<usize> = pos
            .par_iter()
            .map(|&p| {
                (0..self.slice_width[p / c] as usize)
                    .filter(|&k| self.col_idx[slot(p, k)] != PAD)
                    .count()
            })
            .collect();
        csr_from_rows(self.nrows, self.ncols, &lens, |i, cs, vs| {
            let p = pos[i];
            let mut t = 0;
            for k in 0..self.slice_width[p / c] as usize {
                let q = slot(p, k);
                if self.col_idx[q] != PAD {
                    cs[t] = self.col_idx[q];
                    vs[t] = self.values[q];
                    t += 1;
                }
            }
        })
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
        self.nnz
    }
    fn stored_entries(&self) -> usize {
        self.values.len()
    }
    fn footprint_bytes(&self) -> u64 {
        bytes_for(
            self.nslices() as u64,
            self.nrows as u64,
            self.values.len() as u64,
            T::BYTES as u64,
        )
    }
    /// Parallel over groups of whole sorting windows (σ rows; C rows when σ = 1): a window's
    /// permutation stays inside the window, so each task owns the contiguous piece of `y` its
    /// slices scatter to. Within a slice the C lanes accumulate column by column.
    fn spmv(&self, x: &[T], y: &mut [T]) {
        assert_eq!(x.len(), self.ncols, "x has the wrong length");
        assert_eq!(y.len(), self.nrows, "y has the wrong length");
        let (c, n, nslices) = (self.c, self.nrows, self.nslices());
        let group = if self.sigma == 1 { c } else { self.sigma };
        let ngroups = n.div_ceil(group);
        let row_of = |g: usize| g.saturating_mul(group).min(n);
        let gcuts = row_cuts(ngroups, self.values.len(), |g| {
            self.slice_ptr[row_of(g).div_ceil(c).min(nslices)] as usize
        });
        let cuts: Vec<usize> = gcuts.iter().map(|&g| row_of(g)).collect();
        split_at_cuts(y, &cuts)
            .into_par_iter()
            .zip(cuts.par_windows(2))
            .for_each(|(ys, w)| {
                let mut acc = vec![T::zero(); c.min(n)];
                for s in w[0] / c..w[1].div_ceil(c) {
                    acc.fill(T::zero());
                    let base = self.slice_ptr[s] as usize;
                    let lanes = c.min(n - s * c);
                    for k in 0..self.slice_width[s] as usize {
                        let cols = &self.col_idx[base + k * c..base + k * c + lanes];
                        let vals = &self.values[base + k * c..base + k * c + lanes];
                        for ((a, &col), &v) in acc.iter_mut().zip(cols).zip(vals) {
                            if col != PAD {
                                *a += v * x[col as usize];
                            }
                        }
                    }
                    for (r, &a) in acc[..lanes].iter().enumerate() {
                        ys[self.perm[s * c + r] as usize - w[0]] = a;
                    }
                }
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn the_count_from_lengths_is_the_sorted_slices_count() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _ in 0..60 {
            let nrows = rng.random_range(0..700);
            let lens: Vec<usize> = (0..nrows)
                .map(|_| match rng.random_range(0..4) {
                    0 => 0,
                    1 => rng.random_range(1..4),
                    _ => rng.random_range(1..40),
                })
                .collect();
            let (mut r, mut c) = (Vec::new(), Vec::new());
            for (i, &l) in lens.iter().enumerate() {
                for j in 0..l {
                    r.push(i as u32);
                    c.push(j as u32);
                }
            }
            let a = Csr::<f64>::from_triplets(nrows, 64, &r, &c, &vec![1.0; r.len()]).unwrap();
            for (cc, sigma) in [(32, 256), (4, 1), (8, 8), (16, 64), (512, 2048), (3, 9)] {
                let p = SellParams { c: cc, sigma };
                assert_eq!(
                    count_lengths(&lens, &p),
                    Some(sorted_slices(&a, &p).2),
                    "C {cc} σ {sigma}, {nrows} rows"
                );
            }
            assert_eq!(count_lengths(&lens, &SellParams { c: 4, sigma: 6 }), None);
        }
    }
}
