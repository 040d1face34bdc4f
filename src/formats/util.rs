//! Helpers shared by the format modules: the work splitting behind every parallel conversion and
//! CPU kernel (the refusal checks are in `refusal.rs`).
//!
//! Parallel work is split into contiguous *chunks of rows* (or slices, block rows …): each chunk
//! owns a contiguous piece of every output array, so the pieces are handed to rayon as disjoint
//! `&mut` slices and no `unsafe` is needed.

use crate::scalar::Scalar;
use crate::Csr;
use rayon::prelude::*;

/// Work units (rows + entries) below which a chunk is not split further.
const GRAIN: usize = 1 << 14;

/// How many chunks to cut `work` units into: about four per rayon thread, none smaller than
/// [`GRAIN`] units, at least one.
fn chunk_count(work: usize) -> usize {
    (rayon::current_num_threads() * 4).min(work / GRAIN).max(1)
}

/// First index `r` in `0..n` for which `pred(r)` is false (`pred` must be true then false);
/// `n` if there is none.
fn partition_point(n: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0usize, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Cut `0..nrows` into chunks of roughly equal work, counting one unit per row and one per entry.
/// `start(r)` is the number of entries before row `r` (non-decreasing, `start(nrows) == nnz`).
/// Returns increasing cuts `0 = c_0 < c_1 < … < c_m = nrows` (just `[0]` when `nrows == 0`).
pub(crate) fn row_cuts(nrows: usize, nnz: usize, start: impl Fn(usize) -> usize) -> Vec<usize> {
    let work = nrows + nnz;
    let n = chunk_count(work);
    let mut cuts = Vec::with_capacity(n + 1);
    cuts.push(0);
    for t in 1..n {
        let target = (work as u128 * t as u128 / n as u128) as usize;
        // Smallest r with r + start(r) >= target.
        let r = partition_point(nrows + 1, |r| r + start(r) < target);
        if r > *cuts.last().unwrap_or(&0) && r < nrows {
            cuts.push(r);
        }
    }
    if nrows > 0 {
        cuts.push(nrows);
    }
    cuts
}

/// Cut `0..n` into equal chunks, each item costing `cost` work units.
pub(crate) fn uniform_cuts(n: usize, cost: usize) -> Vec<usize> {
    let chunks = chunk_count(n.saturating_mul(cost.max(1))).min(n.max(1));
    let mut cuts: Vec<usize> = (0..=chunks).map(|t| n * t / chunks).collect();
    cuts.dedup();
    cuts
}

/// Split `data` into the consecutive pieces `data[pos[k]..pos[k+1]]`. `pos` must be non-decreasing
/// and end at `data.len()` (an empty `pos` or a single entry gives no piece).
pub(crate) fn split_at_cuts<'a, U>(mut data: &'a mut [U], pos: &[usize]) -> Vec<&'a mut [U]> {
    let mut out = Vec::with_capacity(pos.len().saturating_sub(1));
    for w in pos.windows(2) {
        let (head, tail) = std::mem::take(&mut data).split_at_mut(w[1] - w[0]);
        out.push(head);
        data = tail;
    }
    out
}

/// For a column-major array of `width` columns of `nrows` entries each (entry `k` of row `i` at
/// `k * nrows + i`), the pieces each chunk of rows owns: element `j` of the result holds, for every
/// column `k`, the slice of rows `cuts[j]..cuts[j+1]` of that column.
pub(crate) fn column_major_pieces<'a, U>(
    data: &'a mut [U],
    nrows: usize,
    width: usize,
    cuts: &[usize],
) -> Vec<Vec<&'a mut [U]>> {
    debug_assert_eq!(data.len(), nrows * width);
    let nchunks = cuts.len().saturating_sub(1);
    let mut out: Vec<Vec<&'a mut [U]>> = (0..nchunks).map(|_| Vec::with_capacity(width)).collect();
    if nrows == 0 {
        return out;
    }
    for column in data.chunks_mut(nrows) {
        for (j, piece) in split_at_cuts(column, cuts).into_iter().enumerate() {
            out[j].push(piece);
        }
    }
    out
}

/// Build a CSR matrix row by row in parallel: row `i` has `lens[i]` entries and `fill(i, cols,
/// vals)` writes them (columns strictly increasing). Used by every format's `to_csr`.
pub(crate) fn csr_from_rows<T: Scalar>(
    nrows: usize,
    ncols: usize,
    lens: &[usize],
    fill: impl Fn(usize, &mut [u32], &mut [T]) + Sync,
) -> Csr<T> {
    let mut row_ptr = Vec::with_capacity(nrows + 1);
    row_ptr.push(0usize);
    let mut acc = 0usize;
    for &l in lens {
        acc += l;
        row_ptr.push(acc);
    }
    let nnz = acc;
    let mut col_idx = vec![0u32; nnz];
    let mut values = vec![T::zero(); nnz];
    let cuts = row_cuts(nrows, nnz, |i| row_ptr[i]);
    let pos: Vec<usize> = cuts.iter().map(|&r| row_ptr[r]).collect();
    split_at_cuts(&mut col_idx, &pos)
        .into_par_iter()
        .zip(split_at_cuts(&mut values, &pos))
        .zip(cuts.par_windows(2))
        .for_each(|((c, v), w)| {
            let base = row_ptr[w[0]];
            for i in w[0]..w[1] {
                let (a, b) = (row_ptr[i] - base, row_ptr[i + 1] - base);
                fill(i, &mut c[a..b], &mut v[a..b]);
            }
        });
    Csr {
        nrows,
        ncols,
        row_ptr,
        col_idx,
        values,
    }
}

/// Length of every row of `csr`, in parallel.
pub(crate) fn row_lengths<T>(csr: &Csr<T>) -> Vec<usize> {
    csr.row_ptr.par_windows(2).map(|w| w[1] - w[0]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_cuts_cover_all_rows_in_order() {
        // One huge row among many short ones: cuts stay increasing and cover 0..nrows.
        let nrows = 100_000;
        let start = |r: usize| if r == 0 { 0 } else { 1_000_000 + r };
        let cuts = row_cuts(nrows, start(nrows), start);
        assert_eq!(cuts[0], 0);
        assert_eq!(*cuts.last().unwrap(), nrows);
        assert!(cuts.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(row_cuts(0, 0, |_| 0), vec![0]);
    }

    #[test]
    fn split_and_column_pieces_partition_the_data() {
        let mut d: Vec<u32> = (0..12).collect();
        let pieces = split_at_cuts(&mut d, &[0, 5, 5, 12]);
        assert_eq!(
            pieces.iter().map(|p| p.len()).collect::<Vec<_>>(),
            [5, 0, 7]
        );
        // 3 columns of 4 rows, rows cut at 0..1 and 1..4.
        let cm = column_major_pieces(&mut d, 4, 3, &[0, 1, 4]);
        assert_eq!(cm.len(), 2);
        assert_eq!(
            cm[0].iter().map(|p| p.to_vec()).collect::<Vec<_>>(),
            [vec![0], vec![4], vec![8]]
        );
        assert_eq!(cm[1][2].to_vec(), vec![9, 10, 11]);
    }

    #[test]
    fn uniform_cuts_are_increasing() {
        for n in [0, 1, 7, 100_000] {
            let c = uniform_cuts(n, 3);
            assert_eq!(c[0], 0);
            assert_eq!(*c.last().unwrap(), n);
            assert!(c.windows(2).all(|w| w[0] < w[1]));
        }
    }
}
