//! SELL-C-σ (Kreutzer et al.): rows sorted by decreasing length within windows of σ rows, cut into
//! slices of C rows; each slice padded to its longest row and stored column-major (entry k of lane
//! r of slice s at `slice_ptr[s] + k * C + r`).

use super::util::{check_bytes, check_rows, check_u32, csr_from_rows, row_cuts, split_at_cuts};
use super::{FormatKind, FormatParams, SparseFormat, PAD};
use crate::{Csr, Error, Result, Scalar};
use rayon::prelude::*;
use std::cmp::Reverse;

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

/// Footprint: `(nslices + 1) × 4 + nslices × 4 + nrows × 4 + stored × (4 + sizeof T)`.
fn bytes_for(nslices: usize, nrows: usize, stored: u128, value_bytes: usize) -> u128 {
    (nslices as u128 + 1) * 4
        + nslices as u128 * 4
        + nrows as u128 * 4
        + stored * (4 + value_bytes as u128)
}

impl<T: Scalar> Sell<T> {
    /// Convert from CSR (which must satisfy [`Csr::validate`]) with `C = params.sell_c` and
    /// `σ = params.sell_sigma`.
    ///
    /// Windows of σ consecutive rows (the last one possibly shorter) are each sorted by decreasing
    /// row length (stably: equal lengths keep their order), in parallel. Because σ is 1 or a
    /// multiple of C, every slice lies inside one window. Every slice stores all C lanes, so the
    /// last slice's lanes beyond `nrows` are padding too (counted in `stored_entries`).
    ///
    /// Refused when C is 0, when σ is neither 1 nor a multiple of C, when the stored slots exceed
    /// 32-bit offsets or when the footprint exceeds `params.max_bytes` (checked before the value
    /// arrays are allocated).
    pub fn from_csr(csr: &Csr<T>, params: &FormatParams) -> Result<Self> {
        let (c, sigma) = (params.sell_c, params.sell_sigma);
        if c == 0 {
            return Err(Error::refused("sell", "slice height C must be at least 1"));
        }
        if sigma == 0 || (sigma != 1 && sigma % c != 0) {
            return Err(Error::refused(
                "sell",
                format!("sorting window σ = {sigma} must be 1 or a multiple of C = {c}"),
            ));
        }
        let nrows = csr.nrows;
        check_rows("sell", nrows)?;
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
        let stored: u128 = widths.iter().map(|&w| w as u128 * c as u128).sum();
        check_u32("sell", "stored slots", stored)?;
        check_bytes(
            "sell",
            bytes_for(nslices, nrows, stored, T::BYTES),
            params.max_bytes,
        )?;
        let mut slice_ptr = Vec::with_capacity(nslices + 1);
        slice_ptr.push(0u32);
        let mut acc = 0usize;
        for &w in &widths {
            acc += w * c;
            slice_ptr.push(acc as u32);
        }
        let stored = acc;
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
                for s in w[0]..w[1] {
                    let off = slice_ptr[s] as usize - base;
                    let width = widths[s];
                    if width == 0 {
                        continue;
                    }
                    for r in 0..c {
                        let p = s * c + r;
                        let (rc, rv) = if p < nrows {
                            csr.row(perm[p] as usize)
                        } else {
                            (&[][..], &[][..])
                        };
                        for k in 0..width {
                            let q = off + k * c + r;
                            if k < rc.len() {
                                cs[q] = rc[k];
                                vs[q] = rv[k];
                            } else {
                                cs[q] = PAD;
                                vs[q] = T::zero();
                            }
                        }
                    }
                }
            });
        Ok(Sell {
            nrows,
            ncols: csr.ncols,
            c,
            sigma,
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
            self.nslices(),
            self.nrows,
            self.values.len() as u128,
            T::BYTES,
        ) as u64
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
