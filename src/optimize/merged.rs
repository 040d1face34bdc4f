//! The dynamic program of 004 §4 over plans whose adjacent blocks differ in configuration.
//!
//! 004's program ([`super::dp`]) may return two adjacent blocks of the same format: executed,
//! they are one kernel on their union run twice over, paying a launch more for nothing. Here a
//! plan is a partition of the strips `0..n` into blocks, each with a configuration `c`, **no two
//! adjacent blocks sharing one** — a run of equal configurations is the single block of their
//! union, which is itself a candidate. The cost of a block is `w(i, j, c)`
//! ([`super::rule::PlanRule::block_cost`]: its work beyond the floor plus a per-block cost) and
//! the plan's the sum, so the program stays exact:
//!
//! ```text
//! T[j][c] = min_{0≤k<j} ( B[k, c] + w(k, j−1, c) ),   B[0, c] = 0,
//! B[k, c] = min_{c' ≠ c} T[k][c']                      (best and second best of T[k][·])
//! ```
//!
//! `O(N²·C)` with the best-two trick. **Ties**: fewer blocks first (`k` ascending, a split
//! replaces the single block only when strictly cheaper, as in Fig. 11), then the first
//! configuration. Tested against brute force (`tests/it/optimize_dp.rs`).

/// One block of a plan: strips `first..=last`, configuration index `config`, cost `cost`.
#[derive(Clone, Debug, PartialEq)]
pub struct MergedBlock {
    /// First strip (0-based).
    pub first: usize,
    /// Last strip (inclusive).
    pub last: usize,
    /// Index of the configuration.
    pub config: usize,
    /// `w(first, last, config)`.
    pub cost: f64,
}

/// Cheapest plan of `n` strips and `c` configurations with block costs `w(i, j, k)` for
/// `0 ≤ i ≤ j < n`, `k < c` (`+∞` or NaN = cannot be built). `None` when every plan has an
/// infinite block (or `n = 0`). Returns the blocks and the sum of their costs.
#[allow(clippy::needless_range_loop)]
pub fn solve_merged(
    n: usize,
    c: usize,
    w: impl Fn(usize, usize, usize) -> f64,
) -> Option<(Vec<MergedBlock>, f64)> {
    if n == 0 || c == 0 {
        return None;
    }
    let inf = f64::INFINITY;
    // t[j][k]: best cost of strips 0..j ending in config k; from[j][k] = start of the last block.
    let mut t = vec![vec![inf; c]; n + 1];
    let mut from = vec![vec![(usize::MAX, usize::MAX); c]; n + 1];
    // best two of t[j]: (cost, config) of the best, and the second best's cost.
    let mut best2 = vec![(0.0, usize::MAX, 0.0, usize::MAX); n + 1];
    for j in 1..=n {
        for k in 0..c {
            for s in 0..j {
                let (before, kp) = if s == 0 {
                    (0.0, usize::MAX)
                } else {
                    let (b1, k1, b2, k2) = best2[s];
                    if k1 == k {
                        (b2, k2)
                    } else {
                        (b1, k1)
                    }
                };
                let q = before + w(s, j - 1, k);
                if q < t[j][k] {
                    t[j][k] = q;
                    from[j][k] = (s, kp);
                }
            }
        }
        let (mut b1, mut k1, mut b2, mut k2) = (inf, usize::MAX, inf, usize::MAX);
        for (k, &v) in t[j].iter().enumerate() {
            if v < b1 {
                (b2, k2, b1, k1) = (b1, k1, v, k);
            } else if v < b2 {
                (b2, k2) = (v, k);
            }
        }
        best2[j] = (b1, k1, b2, k2);
    }
    let (total, mut k, _, _) = best2[n];
    if !total.is_finite() {
        return None;
    }
    let mut blocks = Vec::new();
    let mut j = n;
    while j > 0 {
        let (s, kp) = from[j][k];
        blocks.push(MergedBlock {
            first: s,
            last: j - 1,
            config: k,
            cost: w(s, j - 1, k),
        });
        (j, k) = (s, kp);
    }
    blocks.reverse();
    Some((blocks, total))
}

/// All plans of `n` strips and `c` configurations with no two adjacent blocks alike, by brute
/// force: the least total (for tests; `O(2^n · c^n)`).
pub fn brute_force(n: usize, c: usize, w: &dyn Fn(usize, usize, usize) -> f64) -> f64 {
    fn go(
        s: usize,
        prev: usize,
        n: usize,
        c: usize,
        w: &dyn Fn(usize, usize, usize) -> f64,
    ) -> f64 {
        if s == n {
            return 0.0;
        }
        let mut best = f64::INFINITY;
        for e in s..n {
            for k in (0..c).filter(|&k| k != prev) {
                let q = w(s, e, k) + go(e + 1, k, n, c, w);
                if q < best {
                    best = q;
                }
            }
        }
        best
    }
    go(0, usize::MAX, n, c, w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_configuration_is_one_block() {
        // Splitting in config 0 would be cheaper, but adjacent equal blocks are one block.
        let w = |i: usize, j: usize, k: usize| match k {
            0 => (j - i + 1) as f64 * 10.0 - if i == j { 5.0 } else { 0.0 },
            _ => 100.0,
        };
        let (b, t) = solve_merged(3, 2, w).unwrap();
        assert_eq!(t, brute_force(3, 2, &w));
        assert!(b.windows(2).all(|p| p[0].config != p[1].config));
        assert_eq!(b.iter().map(|b| b.cost).sum::<f64>(), t);
    }

    #[test]
    fn refused_everywhere_is_none() {
        assert!(solve_merged(2, 1, |_, _, _| f64::INFINITY).is_none());
        assert!(solve_merged(0, 1, |_, _, _| 1.0).is_none());
    }
}
