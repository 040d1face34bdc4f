//! The parallel O(nnz) pass over the entries: column gaps, bandwidth, occupied diagonals, HYB's
//! COO share and non-finite values.

use crate::matrix::Csr;
use crate::scalar::Scalar;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

/// What the entry pass finds.
pub(super) struct EntryStats {
    pub min_dist: Option<usize>,
    pub max_dist: Option<usize>,
    pub bandwidth: usize,
    pub diagonals: usize,
    pub hyb_coo: usize,
    pub nonfinite: usize,
}

/// Partial results of one chunk of rows.
struct Acc {
    min_gap: usize,
    max_gap: usize,
    has_gap: bool,
    bandwidth: usize,
    hyb_coo: usize,
    nonfinite: usize,
}

impl Acc {
    fn new() -> Self {
        Acc {
            min_gap: usize::MAX,
            max_gap: 0,
            has_gap: false,
            bandwidth: 0,
            hyb_coo: 0,
            nonfinite: 0,
        }
    }
    fn merge(mut self, o: Acc) -> Self {
        self.min_gap = self.min_gap.min(o.min_gap);
        self.max_gap = self.max_gap.max(o.max_gap);
        self.has_gap |= o.has_gap;
        self.bandwidth = self.bandwidth.max(o.bandwidth);
        self.hyb_coo += o.hyb_coo;
        self.nonfinite += o.nonfinite;
        self
    }
}

/// A bitmap of the diagonals `j − i`, indexed by `j − i + nrows − 1`, shared by all threads.
///
/// Choice: one atomic bitmap rather than a bitmap per chunk OR-ed at the end — the result is
/// the same, but memory does not grow with the thread count. A bit is read before it is set, so
/// a diagonal already seen costs a plain (shared, cached) load, not a contended write.
struct Diagonals {
    words: Vec<AtomicU64>,
}

impl Diagonals {
    fn new(bits: usize) -> Self {
        Diagonals {
            words: (0..bits.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
        }
    }
    #[inline]
    fn set(&self, bit: usize) {
        let w = &self.words[bit / 64];
        let mask = 1u64 << (bit % 64);
        if w.load(Ordering::Relaxed) & mask == 0 {
            w.fetch_or(mask, Ordering::Relaxed);
        }
    }
    fn count(&self) -> usize {
        self.words
            .par_iter()
            .map(|w| w.load(Ordering::Relaxed).count_ones() as usize)
            .sum()
    }
}

impl EntryStats {
    /// One pass over `m`'s entries: rayon fold/reduce over row ranges (work stealing balances
    /// rows of very different lengths).
    pub fn compute<T: Scalar>(m: &Csr<T>, hyb_width: usize) -> EntryStats {
        let diag = Diagonals::new((m.nrows + m.ncols).saturating_sub(1));
        let offset = m.nrows.saturating_sub(1);
        let acc = (0..m.nrows)
            .into_par_iter()
            .with_min_len(256)
            .fold(Acc::new, |mut a, i| {
                let (cols, vals) = m.row(i);
                let len = cols.len();
                if len == 0 {
                    return a;
                }
                a.hyb_coo += len.saturating_sub(hyb_width);
                // Columns are sorted: the extreme distances to the diagonal are at the ends.
                let (first, last) = (cols[0] as usize, cols[len - 1] as usize);
                a.bandwidth = a.bandwidth.max(i.abs_diff(first)).max(i.abs_diff(last));
                for w in cols.windows(2) {
                    let g = (w[1] - w[0]) as usize;
                    a.min_gap = a.min_gap.min(g);
                    a.max_gap = a.max_gap.max(g);
                }
                a.has_gap |= len >= 2;
                for &c in cols {
                    diag.set(c as usize + offset - i);
                }
                a.nonfinite += vals.iter().filter(|v| !v.is_finite()).count();
                a
            })
            .reduce(Acc::new, Acc::merge);
        EntryStats {
            min_dist: acc.has_gap.then_some(acc.min_gap),
            max_dist: acc.has_gap.then_some(acc.max_gap),
            bandwidth: acc.bandwidth,
            diagonals: diag.count(),
            hyb_coo: acc.hyb_coo,
            nonfinite: acc.nonfinite,
        }
    }
}
