//! Features of every block of consecutive strips, from structures built once over the strips.
//!
//! The DP needs, for each of the `N(N+1)/2` blocks `[i, j]`, what the analytical model reads from
//! a matrix — its [`Shape`]: rows, non-zeros, the longest and the most frequent row length, and
//! the HYB split (the width `K` of the ELL part and the entries beyond it). Re-scanning the rows
//! of every block would cost `O(N² · rows)`. Instead:
//!
//! * [`StripTable`] holds, per strip, its rows, non-zeros, longest row and a *compressed
//!   histogram* of its row lengths: `(length id, rows)` pairs, where ids number the distinct
//!   row lengths of the whole matrix in increasing order. Built in one parallel pass over the
//!   row pointers.
//! * [`Sweep::column`] fixes the block's last strip `j` and grows the block to the front,
//!   `i = j, j−1, …, 0`, merging one strip's histogram per step into a dense count array
//!   indexed by length id. Rows and non-zeros are running sums; the longest row a running
//!   maximum; the mode a running arg-max (counts only grow, so only the ids just updated can take
//!   over); and the HYB width is tracked by a pointer into the sorted ids (below). A column costs
//!   `O(Σ_{i≤j} h_i)` where `h_i` is the number of distinct lengths in strip `i`, so all blocks
//!   cost `O(N · H)` with `H = Σ h_i` — independent of the rows per strip.
//!
//! **HYB width.** Bell & Garland's rule (as [`crate::formats::hyb::auto_width`] computes it from
//! the row lengths) picks the smallest `K < max` such that fewer than
//! `thr = max(⌈n/3⌉, 4096)` rows are longer than `K`, else `K = max`. For `n < 4096` that is
//! `K = 0`. Otherwise `K` is the length of the smallest id `p` with `G(p) < thr`, where `G(p)` is
//! the number of rows whose id exceeds `p`. The sweep keeps `p`, `G(p)` and the sum of those rows'
//! lengths, updates them as histograms are merged, and walks `p` up or down to restore the
//! condition after each step; the entries beyond `K` are then `Σ_{id>p} len·rows − K·G(p)`.
//! With a fixed width (`--hyb-width w`) the entries beyond `w` are a per-strip sum instead.

use super::strips::StripLayout;
use crate::formats::hyb::{
    BREAKEVEN_ROWS as HYB_BREAKEVEN_ROWS, RELATIVE_SPEED as HYB_RELATIVE_SPEED,
};
use crate::model::Shape;
use crate::{Error, Result};
use rayon::prelude::*;

/// One entry of a strip's compressed histogram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Bin {
    /// Index into [`StripTable::lens`].
    id: u32,
    /// Rows of that length in the strip (8-byte bins: the sweep streams them once per column,
    /// so their size is its memory traffic).
    rows: u32,
}

/// Per-strip summaries of a matrix, the prefix structure every block's features come from.
#[derive(Clone, Debug)]
pub struct StripTable {
    ncols: u64,
    /// Rows per strip.
    rows: Vec<u64>,
    /// Non-zeros per strip.
    nnz: Vec<u64>,
    /// Id of the longest row per strip.
    max_id: Vec<u32>,
    /// Distinct row lengths of the matrix, increasing; ids index this.
    lens: Vec<u64>,
    /// Strip `s`'s histogram is `bins[bin_ptr[s]..bin_ptr[s + 1]]`, ids increasing.
    bin_ptr: Vec<usize>,
    bins: Vec<Bin>,
    /// With a fixed HYB width: the width and the entries beyond it per strip.
    fixed_hyb: Option<(u64, Vec<u64>)>,
}

impl StripTable {
    /// Summarize the rows of a matrix with row pointers `row_ptr` (`nrows + 1` entries,
    /// non-decreasing) and `ncols` columns, cut as `layout` says. `hyb_width`: a fixed HYB width,
    /// or `None` for Bell & Garland's rule.
    pub fn new(
        row_ptr: &[usize],
        ncols: u64,
        layout: &StripLayout,
        hyb_width: Option<u64>,
    ) -> Result<StripTable> {
        let nrows = row_ptr.len().saturating_sub(1);
        if nrows as u64 != layout.nrows {
            return Err(Error::Invalid(format!(
                "strip layout for {} rows applied to a matrix of {nrows} rows",
                layout.nrows
            )));
        }
        if let Some(w) = row_ptr.windows(2).position(|w| w[1] < w[0]) {
            return Err(Error::Invalid(format!("row pointers decrease at row {w}")));
        }
        if layout.strip_rows > u32::MAX as u64 {
            return Err(Error::Invalid(format!(
                "strips of {} rows: at most {} rows per strip are supported",
                layout.strip_rows,
                u32::MAX
            )));
        }
        let n = layout.strips as usize;
        // Pass 1 (parallel over strips): each strip's (length, rows) histogram.
        let raw: Vec<Vec<(u64, u64)>> = (0..n)
            .into_par_iter()
            .map(|s| {
                let r = layout.rows(s, s);
                let mut lens: Vec<u64> = row_ptr[r.start..=r.end]
                    .windows(2)
                    .map(|w| (w[1] - w[0]) as u64)
                    .collect();
                lens.sort_unstable();
                let mut hist: Vec<(u64, u64)> = Vec::new();
                for l in lens {
                    match hist.last_mut() {
                        Some((len, c)) if *len == l => *c += 1,
                        _ => hist.push((l, 1)),
                    }
                }
                hist
            })
            .collect();
        // The distinct lengths of the matrix.
        let mut lens: Vec<u64> = raw.iter().flatten().map(|&(l, _)| l).collect();
        lens.par_sort_unstable();
        lens.dedup();
        if lens.len() > u32::MAX as usize {
            return Err(Error::Invalid("too many distinct row lengths".into()));
        }
        let id_of = |l: u64| lens.binary_search(&l).expect("collected above") as u32;
        let mut bin_ptr = Vec::with_capacity(n + 1);
        bin_ptr.push(0);
        let mut bins = Vec::with_capacity(raw.iter().map(Vec::len).sum());
        let (mut rows, mut nnz, mut max_id) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        for (s, hist) in raw.iter().enumerate() {
            let r = layout.rows(s, s);
            rows.push((r.end - r.start) as u64);
            nnz.push((row_ptr[r.end] - row_ptr[r.start]) as u64);
            max_id.push(hist.last().map_or(0, |&(l, _)| id_of(l)));
            bins.extend(hist.iter().map(|&(l, c)| Bin {
                id: id_of(l),
                rows: c as u32,
            }));
            bin_ptr.push(bins.len());
        }
        let fixed_hyb = hyb_width.map(|w| {
            let beyond = raw
                .iter()
                .map(|h| {
                    h.iter()
                        .filter(|&&(l, _)| l > w)
                        .map(|&(l, c)| (l - w) * c)
                        .sum()
                })
                .collect();
            (w, beyond)
        });
        Ok(StripTable {
            ncols,
            rows,
            nnz,
            max_id,
            lens,
            bin_ptr,
            bins,
            fixed_hyb,
        })
    }

    /// `N`, the number of strips.
    pub fn strips(&self) -> usize {
        self.rows.len()
    }

    /// The number of distinct row lengths in the matrix.
    pub fn distinct_lengths(&self) -> usize {
        self.lens.len()
    }

    /// `H`: the histogram entries of all strips (the cost of one full column is at most this).
    pub fn histogram_entries(&self) -> usize {
        self.bins.len()
    }

    fn strip_bins(&self, s: usize) -> &[Bin] {
        &self.bins[self.bin_ptr[s]..self.bin_ptr[s + 1]]
    }
}

/// Scratch space to enumerate blocks; one per thread.
#[derive(Clone, Debug)]
pub struct Sweep<'t> {
    table: &'t StripTable,
    /// Rows of the current block per length id.
    count: Vec<u64>,
}

impl<'t> Sweep<'t> {
    /// Scratch for `table`.
    pub fn new(table: &'t StripTable) -> Sweep<'t> {
        Sweep {
            table,
            count: vec![0; table.lens.len()],
        }
    }

    /// Call `f(i, &shape of [i, j])` for `i = j, j−1, …, 0`.
    ///
    /// # Panics
    /// If `j` is not a strip of the table.
    pub fn column(&mut self, j: usize, mut f: impl FnMut(usize, &Shape)) {
        let t = self.table;
        assert!(j < t.strips(), "strip {j} of {}", t.strips());
        let count = &mut self.count;
        let lens = &t.lens;
        let (mut nrows, mut nnz, mut beyond_fixed) = (0u64, 0u64, 0u64);
        let mut max_id = 0u32;
        // Mode: (rows, id) of the most frequent length, ties to the smaller id.
        let (mut mode_rows, mut mode_id) = (0u64, 0u32);
        // HYB pointer: p, G(p) = rows with id > p, SL(p) = Σ their lengths.
        let (mut p, mut g, mut sl) = (0usize, 0u64, 0u64);
        let mut touched = 0usize;
        for i in (0..=j).rev() {
            nrows += t.rows[i];
            nnz += t.nnz[i];
            max_id = max_id.max(t.max_id[i]);
            let bins = t.strip_bins(i);
            touched += bins.len();
            for b in bins {
                let id = b.id as usize;
                let c = &mut count[id];
                let rows = b.rows as u64;
                *c += rows;
                if *c > mode_rows || (*c == mode_rows && b.id < mode_id) {
                    mode_rows = *c;
                    mode_id = b.id;
                }
                if id > p {
                    g += rows;
                    sl += rows * lens[id];
                }
            }
            let (hyb_width, hyb_coo_nnz) = match &t.fixed_hyb {
                Some((w, per_strip)) => {
                    beyond_fixed += per_strip[i];
                    (*w, beyond_fixed)
                }
                None if nrows < HYB_BREAKEVEN_ROWS => (0, nnz),
                None => {
                    let thr = nrows.div_ceil(HYB_RELATIVE_SPEED).max(HYB_BREAKEVEN_ROWS);
                    while g >= thr {
                        p += 1;
                        g -= count[p];
                        sl -= count[p] * lens[p];
                    }
                    while p > 0 && g + count[p] < thr {
                        g += count[p];
                        sl += count[p] * lens[p];
                        p -= 1;
                    }
                    let k = lens[p];
                    (k, sl - k * g)
                }
            };
            f(
                i,
                &Shape {
                    nrows,
                    ncols: t.ncols,
                    nnz,
                    max_row_len: lens[max_id as usize],
                    mode_row_len: lens[mode_id as usize],
                    hyb_width,
                    hyb_coo_nnz,
                    counts: Default::default(),
                },
            );
        }
        // Reset the counts: by the ids touched, or wholesale when that is cheaper.
        if touched < count.len() {
            for i in 0..=j {
                for b in t.strip_bins(i) {
                    count[b.id as usize] = 0;
                }
            }
        } else {
            count.fill(0);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row_ptr(lens: &[u64]) -> Vec<usize> {
        let mut p = vec![0usize];
        for &l in lens {
            p.push(p.last().unwrap() + l as usize);
        }
        p
    }

    /// Every block's features from the sweep equal those of its rows.
    fn check(lens: &[u64], strip_rows: u64, hyb: Option<u64>) {
        let layout = StripLayout::new(lens.len() as u64, strip_rows, u64::MAX).unwrap();
        let table = StripTable::new(&row_ptr(lens), 99, &layout, hyb).unwrap();
        let mut sweep = Sweep::new(&table);
        for j in 0..table.strips() {
            sweep.column(j, |i, f| {
                let r: Vec<usize> = lens[layout.rows(i, j)]
                    .iter()
                    .map(|&l| l as usize)
                    .collect();
                let want = Shape::from_row_lengths(99, &r, hyb.map(|w| w as usize));
                assert_eq!(*f, want, "block [{i}, {j}]");
            });
        }
    }

    #[test]
    fn small_blocks_match_their_rows() {
        check(&[3, 1, 3, 0, 7, 7, 2, 2, 2, 9], 3, None);
        check(&[3, 1, 3, 0, 7, 7, 2, 2, 2, 9], 1, Some(2));
        check(&[0, 0, 0], 2, None);
    }

    #[test]
    fn hyb_width_moves_with_the_block() {
        // Long rows first, then many short ones: K must fall back as the block grows.
        let mut lens = vec![40u64; 6000];
        lens.extend(std::iter::repeat_n(2, 9000));
        lens.extend((0..5000).map(|r| r % 13));
        lens.extend(std::iter::repeat_n(100, 5000));
        check(&lens, 1000, None);
    }
}
