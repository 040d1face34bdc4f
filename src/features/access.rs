//! How the kernels would touch memory: per-warp load imbalance of every CSR thread mapping, the
//! locality of the gathers of `x`, and the parameter-dependent counts of the padded formats
//! (DIA, SELL-C-σ, BSR), so that a model can predict from the features alone, without the matrix.
//!
//! Computed in the features' one parallel pass over groups of 32 consecutive rows (a warp of the
//! thread-per-row kernels, [`super::scan`]), plus SELL-C-σ's sort of the row lengths. Cost: the
//! group pass sorts each group's column indices (≤ 32 sorted runs), O(nnz · log 32) work spread
//! over the cores, well below the time to parse the matrix from a file.

use crate::formats::{self, FormatParams, SellParams};
use crate::matrix::Csr;
use crate::scalar::Scalar;
use serde::{Deserialize, Serialize};

/// Threads per row of the CSR thread mappings whose imbalance is counted, in the order of
/// [`Access::warp_steps`].
pub const THREADS_PER_ROW: [u32; 6] = [1, 2, 4, 8, 16, 32];

/// Rows per group of the `x` locality counts (one warp of a thread-per-row kernel).
pub const GROUP_ROWS: usize = 32;

/// The memory-access features of a matrix ([`Access::compute`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Access {
    /// For `t` = 1, 2, 4, 8, 16, 32 threads per row ([`THREADS_PER_ROW`]): the sum over warps
    /// (`32 / t` consecutive rows each) of the warp's longest row in steps of `t` entries,
    /// `max ⌈len / t⌉` — the loop trips a warp makes, which is what a row-per-thread or
    /// row-per-warp kernel pays for load imbalance. With perfect balance and no padding it is
    /// `nnz / 32` (`t = 1`)…
    pub warp_steps: [u64; 6],
    /// Sum over groups of 32 consecutive rows of the distinct 32-byte sectors of `x` their
    /// entries read, for 4-byte values (`col / 8`). Divided by `nnz`: the sectors per entry a
    /// thread-per-row kernel fetches (1/8 when every sector is fully used).
    pub x_sectors_f32: u64,
    /// The same for 8-byte values (`col / 4`).
    pub x_sectors_f64: u64,
    /// Sum over rows of the distinct 32-byte sectors of an 8-byte `x` the row reads: what a
    /// warp-per-row kernel fetches.
    pub row_sectors_f64: u64,
    /// Distinct columns with at least one entry (the part of `x` read at all).
    pub cols_used: u64,
    /// DIA's occupied diagonals and offset range, if the rows fit 32-bit indices.
    pub dia: Option<formats::dia::DiaCount>,
    /// SELL-C-σ's stored slots for the default C, σ and for Lehnert et al.'s C = 512, σ = 2048.
    pub sell: Vec<formats::sell::SellCount>,
    /// BSR's blocks for the default block size.
    pub bsr: Option<formats::bsr::BsrCount>,
    /// For each mapping of [`THREADS_PER_ROW`], in that order: how the warp steps summed in
    /// [`Access::warp_steps`] are spread over the warps ([`WarpHist`]). Empty in features
    /// computed before it (session 31; `sparsecast refeature` adds it to measured tables).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warp_hist: Vec<WarpHist>,
    /// For 4- and 8-byte elements (in that order): the sum over warps of the row-per-thread
    /// mapping (32 consecutive rows) and over the steps `s` of each warp's loop of the largest
    /// number of the warp's rows still in their loop (`len > s`) whose entries start at the same
    /// byte offset modulo 128 (`row_ptr · bytes mod 128`, [`warp_align_steps`]). Each lane of a
    /// thread-per-row kernel reads its own 128-byte line, and lines that share that offset share
    /// the L1's 4-byte banks, so such a step is served in that many passes: rows of a constant
    /// length that is a multiple of 8, 16 or 32 entries make every step 8, 16 or 32 passes.
    /// Divided by `warp_steps[0]`: the mean degree of a step (1: every lane its own bank).
    /// Invariant to a shift of every row start, so row blocks compose. Zero in features
    /// computed before it (session 44; `sparsecast refeature` adds it to measured tables).
    #[serde(default)]
    pub align_steps: [u64; 2],
    /// The rows' entries and their own distinct `x` sectors by the rows' length
    /// ([`RowLenSectors`], session 71): the locality of the longest rows, whose chains a
    /// row-per-thread kernel waits on, apart from the whole matrix's. Empty in features computed
    /// before it (`sparsecast refeature` adds it to measured tables).
    #[serde(default, skip_serializing_if = "RowLenSectors::is_empty")]
    pub row_len_sectors: RowLenSectors,
    /// HYB's COO part (at [`super::Features::hyb_width`]) as its COO walk sends it onto `y`, for
    /// 4- and 8-byte values on a GPU of 132 SMs × 64 resident warps (the H100 and the H200): the
    /// most carries that rows spanning ≥ 2 of the walk's warps send onto one 128-byte line
    /// ([`crate::backend::cuda::launch::coo_line_carries`]). Where it reaches
    /// [`crate::backend::cuda::launch::MERGE_FROM`] the merged HYB sequence runs its COO part
    /// block-merged (session 92). `None` in features computed before it, and once HYB is split
    /// at another width ([`super::Features::split_hyb_at`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hyb_line_carries: Option<[u64; 2]>,
}

/// [`Access::hyb_line_carries`] of rows of `lens` entries split at `width`.
pub fn hyb_line_carries(lens: &[usize], width: usize) -> [u64; 2] {
    let excess = || lens.iter().map(|&l| l.saturating_sub(width)).enumerate();
    let nnz = excess().map(|(_, e)| e).sum();
    [4, 8].map(|vb| {
        crate::backend::cuda::launch::coo_line_carries(excess(), nnz, vb, HYB_RESIDENT_WARPS)
    })
}

/// Whether HYB's COO part (at [`super::Features::hyb_width`]) may reach `from` carries onto one
/// line for values of `value_bytes` ([`Access::hyb_line_carries`]): exactly where the features
/// hold the count, else by a bound from the row lengths — a row spans at most `l / W + 2` of
/// the walk's warps (`W` = 32 × chunks entries) and a line holds `R = 128 / value_bytes` rows,
/// so the line needs ≥ `(from − 2R) · W` entries beyond the width in all, and its `R` rows at
/// most the `R` longest (each at the top of its log2 bucket, at most the longest row). The bound
/// is what `scripts/merge_retime_list.py` chose the tables' re-timing by (session 92).
pub fn hyb_may_reach(f: &super::Features, value_bytes: u64, from: u64) -> bool {
    let vb = value_bytes.clamp(1, 128);
    if let Some(c) = f.access.as_ref().and_then(|a| a.hyb_line_carries) {
        return c[usize::from(vb == 8)] >= from;
    }
    let ex = f.hyb_coo_nnz as u64;
    if ex == 0 {
        return false;
    }
    let chunks = crate::backend::cuda::launch::coo_chunks(ex as usize, HYB_RESIDENT_WARPS) as u64;
    let (w, r) = (32 * chunks, 128 / vb);
    let need = from.saturating_sub(2 * r) * w;
    if ex < need {
        return false;
    }
    let (mut top, mut left) = (0u64, r);
    for (k, &n) in f.row_len_log2_hist.iter().enumerate().skip(1).rev() {
        let n = (n as u64).min(left);
        if n == 0 {
            continue;
        }
        let len = ((1u64 << k.min(62)) - 1).min(f.max_nnz as u64);
        top += n * len.saturating_sub(f.hyb_width as u64);
        left -= n;
        if left == 0 {
            break;
        }
    }
    top >= need
}

/// The resident warps [`Access::hyb_line_carries`] assumes: 132 SMs × 64 (H100, H200).
pub const HYB_RESIDENT_WARPS: u32 = 132 * 64;

/// Per log2 bucket of the row length (bucket `k ≥ 1`: rows of `[2^(k−1), 2^k)` entries, as
/// [`super::Features::row_len_log2_hist`]; empty rows count nothing): the entries of those rows
/// and the sum over them of each row's distinct 32-byte sectors of `x`, for 4-byte (`col / 8`)
/// and 8-byte (`col / 4`) values. A thread that walks a row fetches a new sector at each of the
/// row's sectors, so sectors over entries is the share of its steps that wait on a gather the
/// previous step did not bring: where the longest rows are scattered and the rest banded (a
/// stack), the whole matrix's [`Access::row_sectors_f64`] hides it. Trailing empty buckets
/// trimmed; the three vectors have one length.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RowLenSectors {
    /// Entries per bucket.
    pub entries: Vec<u64>,
    /// Summed per-row distinct sectors of a 4-byte `x`, per bucket.
    pub sectors_f32: Vec<u64>,
    /// The same for an 8-byte `x`.
    pub sectors_f64: Vec<u64>,
}

impl RowLenSectors {
    /// Whether no row with an entry was counted (also: features from before it).
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// From flat `[entries, f32 sectors, f64 sectors]` triples per bucket, trimmed.
    pub fn trimmed(flat: &[u64]) -> RowLenSectors {
        let n = flat.chunks(3).rposition(|c| c[0] > 0).map_or(0, |k| k + 1);
        let col = |j: usize| flat.chunks(3).take(n).map(|c| c[j]).collect();
        RowLenSectors {
            entries: col(0),
            sectors_f32: col(1),
            sectors_f64: col(2),
        }
    }

    /// Sectors per entry (values of `bytes` = 4 or 8 bytes) over the rows of the `top` highest
    /// buckets, empty ones included (the longest rows: within `2^top`× of the longest), and over
    /// every row; `None` without rows.
    pub fn per_entry(&self, bytes: u64, top: usize) -> Option<(f64, f64)> {
        let s = if bytes == 4 {
            &self.sectors_f32
        } else {
            &self.sectors_f64
        };
        let k = self.entries.len().saturating_sub(top);
        let ratio = |from: usize| {
            let e: u64 = self.entries[from..].iter().sum();
            (e > 0).then(|| s[from..].iter().sum::<u64>() as f64 / e as f64)
        };
        Some((ratio(k)?, ratio(0)?))
    }
}

/// Element sizes of [`Access::align_steps`], in that order.
pub const ALIGN_BYTES: [usize; 2] = [4, 8];

/// The warps of one group of [`GROUP_ROWS`] rows of lengths `lens` for every mapping of
/// [`THREADS_PER_ROW`]: `warp(mapping, steps)` for each warp (`32 / t` rows), its steps the
/// longest row's `⌈len / t⌉` ([`Access::warp_steps`]).
pub fn group_warps(lens: &[usize], mut warp: impl FnMut(usize, u64)) {
    for (k, &t) in THREADS_PER_ROW.iter().enumerate() {
        let t = t as usize;
        for w in lens.chunks(GROUP_ROWS / t) {
            warp(
                k,
                w.iter().map(|&l| l.div_ceil(t)).max().unwrap_or(0) as u64,
            );
        }
    }
}

/// [`Access::warp_steps`] and [`Access::align_steps`] of a matrix from its `row_ptr` alone (the
/// counts that need no column: what `sparsecast refeature` adds to tables measured before
/// [`Access::align_steps`] existed, without the full pass of [`super::Features::compute`]).
pub fn warp_counts(row_ptr: &[usize]) -> ([u64; 6], [u64; 2]) {
    use rayon::prelude::*;
    let nrows = row_ptr.len().saturating_sub(1);
    (0..nrows.div_ceil(GROUP_ROWS))
        .into_par_iter()
        .map(|g| {
            let ptr = &row_ptr[g * GROUP_ROWS..=((g + 1) * GROUP_ROWS).min(nrows)];
            let lens: Vec<usize> = ptr.windows(2).map(|w| w[1] - w[0]).collect();
            let mut steps = [0u64; 6];
            group_warps(&lens, |k, s| steps[k] += s);
            (steps, warp_align_steps(ptr))
        })
        .reduce(
            || ([0; 6], [0; 2]),
            |a, b| {
                (
                    std::array::from_fn(|k| a.0[k] + b.0[k]),
                    [a.1[0] + b.1[0], a.1[1] + b.1[1]],
                )
            },
        )
}

/// [`Access::align_steps`] of one warp of the row-per-thread mapping whose rows start at the
/// entries `ptr[..n]` and end at `ptr[1..]` (`ptr` is a slice of `row_ptr`, at most 33 long).
/// `O(rows · log rows)`: the rows sorted by length, longest first, each step range
/// `(len of the next, len of this]` counts the most rows of one offset among those so far.
pub fn warp_align_steps(ptr: &[usize]) -> [u64; 2] {
    let n = ptr.len().saturating_sub(1);
    debug_assert!(n <= GROUP_ROWS);
    let mut rows = [(0usize, 0usize); GROUP_ROWS];
    for (k, w) in ptr.windows(2).enumerate() {
        rows[k] = (w[1] - w[0], w[0]);
    }
    let rows = &mut rows[..n];
    rows.sort_unstable_by_key(|r| std::cmp::Reverse(r.0));
    let mut out = [0u64; 2];
    for (e, &bytes) in ALIGN_BYTES.iter().enumerate() {
        let mut count = [0u8; 128];
        let mut most = 0u8;
        for (k, &(len, start)) in rows.iter().enumerate() {
            if len == 0 {
                break;
            }
            let c = &mut count[(start * bytes) % 128];
            *c += 1;
            most = most.max(*c);
            let next = rows.get(k + 1).map_or(0, |r| r.0);
            out[e] += (len - next) as u64 * most as u64;
        }
    }
    out
}

/// Buckets of a [`WarpHist`]: bucket 0 holds the warps of no step (only empty rows), bucket
/// `k ≥ 1` those of `[2^(k−1), 2^k)` steps, so 48 buckets cover any matrix of < 2^47 entries.
pub const WARP_HIST_BUCKETS: usize = 48;

/// The bucket of a warp of `steps` steps in a [`WarpHist`].
pub fn warp_bucket(steps: u64) -> usize {
    ((u64::BITS - steps.leading_zeros()) as usize).min(WARP_HIST_BUCKETS - 1)
}

/// A log2 histogram of the warps of one thread mapping by their steps (`max ⌈len / t⌉` over the
/// warp's rows, see [`Access::warp_steps`]): how many warps, and how many steps they make, per
/// bucket ([`warp_bucket`]). What the sum alone cannot tell: whether a kernel's steps are spread
/// evenly over many warps, which the device runs side by side, or held by a few heavy warps
/// that run after the rest have finished (a stack of long rows on short ones).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WarpHist {
    /// Warps per bucket, trailing empty buckets trimmed.
    pub warps: Vec<u64>,
    /// Steps of those warps per bucket (same length as `warps`).
    pub steps: Vec<u64>,
}

impl WarpHist {
    /// The histogram of full-length bucket arrays, trailing empty buckets trimmed.
    pub fn trimmed(warps: &[u64], steps: &[u64]) -> WarpHist {
        let n = warps.iter().rposition(|&w| w > 0).map_or(0, |k| k + 1);
        WarpHist {
            warps: warps[..n].to_vec(),
            steps: steps[..n].to_vec(),
        }
    }

    /// The tail of the distribution, for a model: the share of the steps made by the warps of the
    /// top bucket and of the top four buckets (warps within 16× of the heaviest), `ln(1 + warps)`
    /// of each, and `ln` of the total steps over the top bucket's mean steps per warp (how many
    /// heaviest warps the whole work equals). Zeros without warps.
    pub fn tail(&self) -> [f64; 5] {
        let (Some(&top_w), Some(&top_s)) = (self.warps.last(), self.steps.last()) else {
            return [0.0; 5];
        };
        let total = self.steps.iter().sum::<u64>().max(1) as f64;
        let k = self.warps.len().saturating_sub(4);
        let (w4, s4) = (
            self.warps[k..].iter().sum::<u64>(),
            self.steps[k..].iter().sum::<u64>(),
        );
        let heavy_mean = (top_s as f64 / top_w.max(1) as f64).max(1.0);
        [
            top_s as f64 / total,
            (top_w as f64).ln_1p(),
            s4 as f64 / total,
            (w4 as f64).ln_1p(),
            (total / heavy_mean).ln(),
        ]
    }
}

/// SELL-C-σ parameters whose slot counts [`Access`] keeps: the default and 002's.
pub fn sell_params_counted() -> [SellParams; 2] {
    [
        SellParams::default(),
        SellParams {
            c: 512,
            sigma: 2048,
        },
    ]
}

impl Access {
    /// Every access feature of `m` (rows sorted by column, as [`Csr`] keeps them): those of
    /// [`super::Features::compute`], computed in the same pass ([`super::scan`]).
    pub fn compute<T: Scalar>(m: &Csr<T>) -> Access {
        super::Features::compute(m)
            .access
            .expect("Features::compute always sets the access features")
    }

    /// `summary` with the counts this holds for `params` (DIA always; SELL-C-σ and BSR where
    /// `params` asks for the counted C, σ and block size), so that the formats' footprint rules
    /// can size the padded formats from the features alone.
    pub fn add_counts(
        &self,
        mut summary: formats::Summary,
        params: &FormatParams,
    ) -> formats::Summary {
        summary.counts.dia = self.dia;
        summary.counts.sell = self
            .sell
            .iter()
            .find(|s| s.c == params.sell.c && s.sigma == params.sell.sigma)
            .copied()
            .or_else(|| {
                // Unsorted slices of one warp's rows (cuSPARSE's sliced ELL): each slice is as
                // wide as its longest row, which the row-per-thread warp steps already sum.
                (params.sell.c == GROUP_ROWS && params.sell.sigma == 1).then(|| {
                    formats::sell::SellCount {
                        c: GROUP_ROWS,
                        sigma: 1,
                        slots: self.warp_steps[0].saturating_mul(GROUP_ROWS as u64),
                    }
                })
            });
        summary.counts.bsr = self.bsr.filter(|b| b.block == params.bsr.block);
        summary
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csr(rows: &[&[u32]], ncols: usize) -> Csr<f64> {
        let (mut r, mut c) = (Vec::new(), Vec::new());
        for (i, cols) in rows.iter().enumerate() {
            for &j in *cols {
                r.push(i as u32);
                c.push(j);
            }
        }
        Csr::from_triplets(rows.len(), ncols, &r, &c, &vec![1.0; r.len()]).unwrap()
    }

    #[test]
    fn unsorted_slices_of_a_warp_are_counted_from_the_warp_steps() {
        // 70 rows of lengths 1..=9 with two long rows: SELL-32-1 as cuSPARSE stores it.
        let long: Vec<u32> = (0..50).collect();
        let lens: Vec<Vec<u32>> = (0..70u32)
            .map(|i| match i {
                3 | 40 => long.clone(),
                _ => (0..1 + i % 9).collect(),
            })
            .collect();
        let rows: Vec<&[u32]> = lens.iter().map(|r| r.as_slice()).collect();
        let m = csr(&rows, 64);
        let f = crate::features::Features::compute(&m);
        let a = f.access.as_ref().unwrap();
        let mut params = FormatParams {
            sell: SellParams { c: 32, sigma: 1 },
            ..Default::default()
        };
        let s = a.add_counts(formats::Summary::from_features(&f), &params);
        let stored = formats::sell::Sell::from_csr(&m, &params).unwrap();
        let n = s.counts.sell.expect("derived from the warp steps");
        assert_eq!((n.c, n.sigma), (32, 1));
        assert_eq!(n.slots, stored.values.len() as u64);
        // Sorting windows keep their stored counts; other unsorted slice sizes stay unknown.
        params.sell = SellParams { c: 16, sigma: 1 };
        let s = a.add_counts(formats::Summary::from_features(&f), &params);
        assert!(s.counts.sell.is_none());
    }

    /// 33 rows: rows 0..32 of length 1 except row 5 (length 40); row 32 of length 3.
    fn a_long_row_in_a_warp() -> Access {
        let long: Vec<u32> = (0..40).collect();
        let mut rows: Vec<&[u32]> = vec![&[7]; 33];
        rows[5] = &long;
        rows[32] = &[0, 1, 2];
        Access::compute(&csr(&rows, 64))
    }

    #[test]
    fn warp_steps_follow_the_longest_row_of_each_warp() {
        let a = a_long_row_in_a_warp();
        // t = 1: warp 0 (rows 0..32) max 40, warp 1 (row 32) max 3.
        assert_eq!(a.warp_steps[0], 43);
        // t = 32: every row is a warp: 31 rows × 1 + ⌈40/32⌉ + ⌈3/32⌉ = 31 + 2 + 1.
        assert_eq!(a.warp_steps[5], 34);
        // t = 2: 16 rows per warp: [0..16) has row 5 → 20, [16..32) → 1, [32] → 2.
        assert_eq!(a.warp_steps[1], 23);
        assert_eq!(a.cols_used, 40);
    }

    /// Rows of constant length `len`, as a `row_ptr`.
    fn ptr_of(lens: &[usize]) -> Vec<usize> {
        let mut p = vec![0];
        for &l in lens {
            p.push(p.last().unwrap() + l);
        }
        p
    }

    /// [`warp_align_steps`] the slow way: every step of the warp, the most active rows of one
    /// offset.
    fn align_by_steps(ptr: &[usize]) -> [u64; 2] {
        let rows: Vec<(usize, usize)> = ptr.windows(2).map(|w| (w[0], w[1] - w[0])).collect();
        let longest = rows.iter().map(|r| r.1).max().unwrap_or(0);
        ALIGN_BYTES.map(|e| {
            (0..longest)
                .map(|s| {
                    let mut c = std::collections::HashMap::new();
                    for &(start, len) in &rows {
                        if len > s {
                            *c.entry((start * e) % 128).or_insert(0u64) += 1;
                        }
                    }
                    c.values().copied().max().unwrap_or(0)
                })
                .sum()
        })
    }

    #[test]
    fn align_steps_count_the_rows_that_share_an_offset_modulo_128_bytes() {
        // 4-byte elements: rows of 32 entries start on 128-byte multiples (every lane one
        // bank: 32 per step), of 8 on four offsets (8 per step), of 3 on 32 offsets (1).
        // 8-byte elements: 32 → 32, 8 → 16, 3 → 2 (24-byte strides: 16 offsets).
        for (len, deg) in [(32, [32, 32]), (8, [8, 16]), (3, [1, 2]), (33, [1, 2])] {
            let p = ptr_of(&[len; 32]);
            let steps = len as u64;
            assert_eq!(warp_align_steps(&p), deg.map(|d| d * steps), "length {len}");
        }
        // Rows that finish leave the count: 31 rows of one entry and row 5 of 40. Step 0: rows
        // start at entries 0..=5 and 45..=70, so 4-byte offsets (entry mod 32) meet at most
        // twice (64..=70 on 0..=6) and 8-byte ones (entry mod 16) three times (0, 48, 64);
        // steps 1..40 hold row 5 alone.
        let mut lens = vec![1; 32];
        lens[5] = 40;
        assert_eq!(warp_align_steps(&ptr_of(&lens)), [2 + 39, 3 + 39]);
        // Empty rows, an empty warp and a partial warp.
        assert_eq!(warp_align_steps(&ptr_of(&[0, 0, 0])), [0, 0]);
        assert_eq!(warp_align_steps(&[]), [0, 0]);
        // Two rows of 16 start 64 bytes apart in 4 bytes, 128 in 8 bytes.
        assert_eq!(warp_align_steps(&ptr_of(&[16, 0, 16])), [16, 2 * 16]);
    }

    #[test]
    fn align_steps_agree_with_the_step_by_step_count_and_ignore_a_common_shift() {
        let mut x = 12345u64;
        for trial in 0..300 {
            let n = 1 + trial % 32;
            let lens: Vec<usize> = (0..n)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    let r = (x >> 33) as usize;
                    match trial % 3 {
                        0 => r % 70,
                        1 => 8 * (r % 6),
                        _ => [0, 16, 32, 17][r % 4],
                    }
                })
                .collect();
            let p = ptr_of(&lens);
            let want = align_by_steps(&p);
            assert_eq!(warp_align_steps(&p), want, "lengths {lens:?}");
            let shifted: Vec<usize> = p.iter().map(|v| v + 1000 + trial).collect();
            assert_eq!(warp_align_steps(&shifted), want, "shifted {lens:?}");
        }
    }

    #[test]
    fn warp_counts_from_row_ptr_agree_with_the_full_pass() {
        let long: Vec<u32> = (0..64).collect();
        let mut rows: Vec<&[u32]> = vec![&[1, 2, 3, 4, 5, 6, 7, 8]; 100];
        rows[40] = &long;
        rows[70] = &[];
        let m = csr(&rows, 64);
        let a = Access::compute(&m);
        assert_eq!(warp_counts(&m.row_ptr), (a.warp_steps, a.align_steps));
    }

    #[test]
    fn align_steps_are_summed_over_the_warps_of_a_matrix() {
        // 33 rows: warp 0 has row 5 of 40 and 31 of one entry (as in the test above), warp 1
        // the row of 3.
        let a = a_long_row_in_a_warp();
        assert_eq!(a.align_steps, [41 + 3, 42 + 3]);
        for e in 0..2 {
            assert!(a.align_steps[e] >= a.warp_steps[0]);
        }
    }

    #[test]
    fn warp_hist_spreads_the_warp_steps_over_their_warps() {
        // t = 1 has a warp of 40 steps (bucket 6, [32, 64)) and one of 3 (bucket 2); t = 32 has
        // 32 warps of one step (31 rows of one entry, the row of 3) and one of 2 (the long row).
        let a = a_long_row_in_a_warp();
        assert_eq!(a.warp_hist.len(), THREADS_PER_ROW.len());
        let h = &a.warp_hist[0];
        assert_eq!(h.warps, vec![0, 0, 1, 0, 0, 0, 1]);
        assert_eq!(h.steps, vec![0, 0, 3, 0, 0, 0, 40]);
        let h = &a.warp_hist[5];
        assert_eq!(
            (h.warps.clone(), h.steps.clone()),
            (vec![0, 32, 1], vec![0, 32, 2])
        );
        for (k, h) in a.warp_hist.iter().enumerate() {
            assert_eq!(h.steps.iter().sum::<u64>(), a.warp_steps[k], "mapping {k}");
        }
        // The tail of t = 1: the top bucket holds 40 of 43 steps in one warp; the top four
        // buckets (3..=6) the same; the whole work is 43 / 40 heaviest warps.
        let t = a.warp_hist[0].tail();
        assert!((t[0] - 40.0 / 43.0).abs() < 1e-12 && (t[2] - 40.0 / 43.0).abs() < 1e-12);
        assert!((t[1] - 2f64.ln()).abs() < 1e-12 && (t[3] - 2f64.ln()).abs() < 1e-12);
        assert!((t[4] - (43.0f64 / 40.0).ln()).abs() < 1e-12);
        // Empty rows make warps of no step, in bucket 0; a matrix without rows has none.
        let e = Access::compute(&csr(&[&[], &[]], 4));
        assert_eq!(e.warp_hist[0].warps, vec![1]);
        assert_eq!(e.warp_hist[0].tail()[4], 0.0);
        assert!(Access::compute(&csr(&[], 4)).warp_hist.is_empty());
        assert_eq!(WarpHist::default().tail(), [0.0; 5]);
        assert_eq!(warp_bucket(u64::MAX), WARP_HIST_BUCKETS - 1);
    }

    #[test]
    fn bsr_counts_are_the_converted_block_rows() {
        // 70 rows (three groups, the last one partial): short rows on a band, a row of 50
        // scattered columns (its block row holds the most blocks) and an empty block row.
        let long: Vec<u32> = (0..50).map(|k| k * 4 + 1).collect();
        let lens: Vec<Vec<u32>> = (0..70u32)
            .map(|i| match i {
                37 => long.clone(),
                12..=15 => Vec::new(),
                _ => (i..i + 1 + i % 5).collect(),
            })
            .collect();
        let rows: Vec<&[u32]> = lens.iter().map(|r| r.as_slice()).collect();
        let m = csr(&rows, 256);
        let b = Access::compute(&m)
            .bsr
            .expect("the default block size is counted");
        let stored = formats::bsr::Bsr::from_csr(&m, &FormatParams::default()).unwrap();
        let per_row: Vec<u64> = stored
            .row_ptr
            .windows(2)
            .map(|w| (w[1] - w[0]) as u64)
            .collect();
        assert_eq!(b.blocks, stored.col_idx.len() as u64);
        assert_eq!(b.max_row_blocks, *per_row.iter().max().unwrap());
        let groups = (32 / stored.block) as u64;
        assert_eq!(
            b.warp_trips,
            per_row.iter().map(|n| n.div_ceil(groups)).sum::<u64>()
        );
        // The longest block row is the scattered row's: 50 distinct block columns, among which
        // its neighbours' few fall, so 7 trips of 8 blocks.
        assert_eq!(
            (b.max_row_blocks, b.max_row_blocks.div_ceil(groups)),
            (50, 7)
        );
    }

    #[test]
    fn sectors_count_distinct_32_byte_pieces_of_x() {
        // Group 0: columns 0..8 (one f32 sector, two f64 sectors) twice, and column 100.
        let a = Access::compute(&csr(&[&[0, 1, 2, 3, 4, 5, 6, 7], &[0, 7, 100]], 128));
        assert_eq!(a.x_sectors_f32, 2);
        assert_eq!(a.x_sectors_f64, 3);
        // Per row (f64): row 0 two sectors, row 1 three (0, 1, 25).
        assert_eq!(a.row_sectors_f64, 5);
        assert_eq!(a.cols_used, 9);
        // By row length: row 1 (3 entries, bucket 2: one f32 sector for 0 and 7, one for 100;
        // f64 0, 1, 25), row 0 (8 entries, bucket 4: one f32 sector, two f64).
        let h = &a.row_len_sectors;
        assert_eq!(h.entries, vec![0, 0, 3, 0, 8]);
        assert_eq!(h.sectors_f32, vec![0, 0, 2, 0, 1]);
        assert_eq!(h.sectors_f64, vec![0, 0, 3, 0, 2]);
        assert_eq!(h.sectors_f64.iter().sum::<u64>(), a.row_sectors_f64);
        // The longest rows' sectors per entry against every row's.
        assert_eq!(h.per_entry(4, 1), Some((1.0 / 8.0, 3.0 / 11.0)));
        assert_eq!(h.per_entry(8, 4), Some((5.0 / 11.0, 5.0 / 11.0)));
        // Empty rows count nothing; no rows, no histogram.
        let e = Access::compute(&csr(&[&[], &[]], 4));
        assert!(e.row_len_sectors.is_empty() && e.row_len_sectors.per_entry(8, 1).is_none());
    }

    #[test]
    fn counts_size_the_padded_formats_as_their_conversions_do() {
        let a = csr(&[&[0, 3], &[1], &[2, 3], &[]], 4);
        let acc = Access::compute(&a);
        let p = FormatParams::default();
        let s = acc.add_counts(formats::Summary::of(&a, None), &p);
        for kind in [
            formats::FormatKind::Dia,
            formats::FormatKind::Sell,
            formats::FormatKind::Bsr,
        ] {
            let exact = formats::Summary::for_format(&a, kind, &p);
            assert_eq!(
                kind.footprint(&s, &p, 8).unwrap(),
                kind.footprint(&exact, &p, 8).unwrap(),
                "{kind:?}"
            );
        }
        let mut paper = p.clone();
        paper.sell = sell_params_counted()[1].clone();
        let s = acc.add_counts(formats::Summary::of(&a, None), &paper);
        assert!(formats::FormatKind::Sell.footprint(&s, &paper, 4).is_ok());
        paper.sell.c = 64;
        let s = acc.add_counts(formats::Summary::of(&a, None), &paper);
        assert!(formats::FormatKind::Sell.footprint(&s, &paper, 4).is_err());
    }
}
