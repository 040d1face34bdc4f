//! Row-length statistics: min, max, mode, lower median, population standard deviation, empty
//! rows and the log2 histogram.

use rayon::prelude::*;

/// Statistics of the row lengths.
pub(super) struct RowStats {
    pub min: usize,
    pub max: usize,
    pub mode: usize,
    pub median: usize,
    pub std: f64,
    pub empty: usize,
    pub log2_hist: Vec<usize>,
}

/// Log2 bucket of a row length: 0 for 0, else its bit length (`k` for `[2^(k−1), 2^k)`).
#[inline]
pub(super) fn log2_bucket(len: usize) -> usize {
    (usize::BITS - len.leading_zeros()) as usize
}

/// Partial sums of one chunk of rows.
#[derive(Clone)]
struct Acc {
    min: usize,
    max: usize,
    sum: u128,
    sum_sq: u128,
    log2: [usize; usize::BITS as usize + 1],
}

impl Acc {
    fn new() -> Self {
        Acc {
            min: usize::MAX,
            max: 0,
            sum: 0,
            sum_sq: 0,
            log2: [0; usize::BITS as usize + 1],
        }
    }
    fn add(mut self, len: usize) -> Self {
        self.min = self.min.min(len);
        self.max = self.max.max(len);
        self.sum += len as u128;
        self.sum_sq += (len as u128) * (len as u128);
        self.log2[log2_bucket(len)] += 1;
        self
    }
    fn merge(mut self, o: Acc) -> Self {
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.sum += o.sum;
        self.sum_sq += o.sum_sq;
        for (a, b) in self.log2.iter_mut().zip(o.log2) {
            *a += b;
        }
        self
    }
}

impl RowStats {
    /// Statistics of `lengths` (one entry per row).
    pub fn compute(lengths: &[usize]) -> RowStats {
        let n = lengths.len();
        if n == 0 {
            return RowStats {
                min: 0,
                max: 0,
                mode: 0,
                median: 0,
                std: 0.0,
                empty: 0,
                log2_hist: Vec::new(),
            };
        }
        let acc = lengths
            .par_iter()
            .with_min_len(1 << 14)
            .fold(Acc::new, |a, &l| a.add(l))
            .reduce(Acc::new, Acc::merge);
        let (mode, median) = mode_median(lengths, acc.max);
        // Population variance from exact integer sums: (n·Σx² − (Σx)²) / n².
        let nn = n as u128;
        let var = match (nn.checked_mul(acc.sum_sq), acc.sum.checked_mul(acc.sum)) {
            (Some(a), Some(b)) => (a - b) as f64 / (nn as f64 * nn as f64),
            _ => {
                let mean = acc.sum as f64 / n as f64;
                (acc.sum_sq as f64 / n as f64 - mean * mean).max(0.0)
            }
        };
        let top = log2_bucket(acc.max);
        RowStats {
            min: acc.min,
            max: acc.max,
            mode,
            median,
            std: var.sqrt(),
            empty: acc.log2[0],
            log2_hist: acc.log2[..=top].to_vec(),
        }
    }
}

/// Mode (smallest most frequent length) and lower median (sorted position `(n − 1) / 2`) by
/// counting. Lengths up to `min(max, n)` are counted in a dense array; the few longer ones (a
/// row longer than `n` entries — there are at most `nnz / n` of them) are collected and sorted,
/// so memory stays O(nrows) even for a matrix with one huge row. Sequential: O(nrows + max(n)).
fn mode_median(lengths: &[usize], max: usize) -> (usize, usize) {
    let n = lengths.len();
    let cap = max.min(n);
    let mut dense = vec![0usize; cap + 1];
    let mut long = Vec::new();
    for &l in lengths {
        if l <= cap {
            dense[l] += 1;
        } else {
            long.push(l);
        }
    }
    long.sort_unstable();
    // (length, count) in increasing length order.
    let mut groups = dense
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(l, &c)| (l, c))
        .collect::<Vec<_>>();
    for chunk in long.chunk_by(|a, b| a == b) {
        groups.push((chunk[0], chunk.len()));
    }
    let mut mode = (0usize, 0usize);
    for &(l, c) in &groups {
        if c > mode.1 {
            mode = (l, c);
        }
    }
    let target = (n - 1) / 2;
    let mut seen = 0usize;
    let mut median = 0usize;
    for &(l, c) in &groups {
        seen += c;
        if seen > target {
            median = l;
            break;
        }
    }
    (mode.0, median)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets() {
        assert_eq!(
            [0, 1, 2, 3, 4, 7, 8].map(log2_bucket),
            [0, 1, 2, 2, 3, 3, 4]
        );
    }

    #[test]
    fn long_rows_go_through_the_overflow_list() {
        // 3 rows; lengths above 3 are "long".
        let s = RowStats::compute(&[100, 7, 100]);
        assert_eq!((s.mode, s.median, s.min, s.max), (100, 100, 7, 100));
        let s = RowStats::compute(&[9, 1, 9, 1, 4]);
        assert_eq!((s.mode, s.median), (1, 4));
    }
}
