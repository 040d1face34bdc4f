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

/// Cheapest plan under a cost that is not a sum: `max(offset + Σ w(block), max m(block))`, with
/// `m(i, j, k)` the block's own bound (for a concurrent plan: its time alone,
/// [`super::rule::PlanRule::plan_time`]). Same plans as [`solve_merged`] (no two adjacent blocks
/// alike; `+∞`/NaN in `w` or `m` = cannot be built). Returns the blocks and the plan's cost.
///
/// Exact: for a bound `τ` on `max m`, let `g(τ)` be the least `offset + Σ w` over plans whose
/// blocks all have `m ≤ τ` ([`solve_merged`] with the other blocks refused). `g` does not grow
/// with `τ` and the optimum is `min_τ max(g(τ), τ)` over the candidate blocks' values of `m`;
/// `g(τ) ≤ τ` holds from some `τ₁` on (it is monotone), and the optimum is the better of the
/// plans at `τ₁` and at the candidate just below it. So a bisection finds it in
/// `O(log(N²·C))` runs of the program, `O(N²·C·log(N²·C))` in all. Ties: the plan at `τ₁`
/// (the smaller largest block) unless the one below is strictly cheaper. Tested against brute
/// force ([`brute_force_max`]).
pub fn solve_merged_max(
    n: usize,
    c: usize,
    offset: f64,
    w: impl Fn(usize, usize, usize) -> f64,
    m: impl Fn(usize, usize, usize) -> f64,
) -> Option<(Vec<MergedBlock>, f64)> {
    if n == 0 || c == 0 {
        return None;
    }
    let mut taus: Vec<f64> = (0..n)
        .flat_map(|i| (i..n).flat_map(move |j| (0..c).map(move |k| (i, j, k))))
        .filter(|&(i, j, k)| w(i, j, k).is_finite())
        .map(|(i, j, k)| m(i, j, k))
        .filter(|t| t.is_finite())
        .collect();
    taus.sort_by(f64::total_cmp);
    taus.dedup();
    // The plan whose blocks all have m ≤ τ, and its cost max(offset + Σ w, max m).
    let at = |tau: f64| -> Option<(Vec<MergedBlock>, f64, f64)> {
        let (blocks, sum) = solve_merged(n, c, |i, j, k| {
            if m(i, j, k) <= tau {
                w(i, j, k)
            } else {
                f64::INFINITY
            }
        })?;
        let largest = blocks
            .iter()
            .map(|b| m(b.first, b.last, b.config))
            .fold(f64::NEG_INFINITY, f64::max);
        let chain = offset + sum;
        Some((blocks, chain, chain.max(largest)))
    };
    // Smallest index whose least chain is within its τ (taus.len() when none is).
    let (mut lo, mut hi) = (0usize, taus.len());
    while lo < hi {
        let mid = (lo + hi) / 2;
        match at(taus[mid]) {
            Some((_, chain, _)) if chain <= taus[mid] => hi = mid,
            _ => lo = mid + 1,
        }
    }
    let above = taus.get(lo).and_then(|&t| at(t));
    let below = lo.checked_sub(1).and_then(|k| at(taus[k]));
    match (above, below) {
        (Some(a), Some(b)) if b.2 < a.2 => Some((b.0, b.2)),
        (Some(a), _) => Some((a.0, a.2)),
        (None, Some(b)) => Some((b.0, b.2)),
        (None, None) => None,
    }
}

/// The least `max(offset + Σ w, max m)` over all plans with no two adjacent blocks alike, by
/// brute force (for tests).
pub fn brute_force_max(
    n: usize,
    c: usize,
    offset: f64,
    w: &dyn Fn(usize, usize, usize) -> f64,
    m: &dyn Fn(usize, usize, usize) -> f64,
) -> f64 {
    type Cost<'a> = &'a dyn Fn(usize, usize, usize) -> f64;
    #[allow(clippy::too_many_arguments)]
    fn go(
        s: usize,
        prev: usize,
        sum: f64,
        big: f64,
        n: usize,
        c: usize,
        off: f64,
        w: Cost,
        m: Cost,
    ) -> f64 {
        if s == n {
            return (off + sum).max(big);
        }
        let mut best = f64::INFINITY;
        for e in s..n {
            for k in (0..c).filter(|&k| k != prev) {
                let (wk, mk) = (w(s, e, k), m(s, e, k));
                if !(wk.is_finite() && mk.is_finite()) {
                    continue;
                }
                let q = go(e + 1, k, sum + wk, big.max(mk), n, c, off, w, m);
                if q < best {
                    best = q;
                }
            }
        }
        best
    }
    go(0, usize::MAX, 0.0, f64::NEG_INFINITY, n, c, offset, w, m)
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

    #[test]
    fn bounded_program_equals_brute_force() {
        // Small deterministic pseudo-random tables (an LCG), some blocks refused.
        let mut seed = 12345u64;
        let mut next = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) as f64 / (1u64 << 31) as f64
        };
        for case in 0..300 {
            let (n, c) = (1 + case % 5, 1 + case % 3);
            let mut tw = vec![vec![vec![0.0; c]; n]; n];
            let mut tm = tw.clone();
            for i in 0..n {
                for j in i..n {
                    for k in 0..c {
                        let r = next();
                        tw[i][j][k] = if r < 0.08 {
                            f64::INFINITY
                        } else {
                            (next() * 8.0).round()
                        };
                        tm[i][j][k] = (next() * 20.0).round();
                    }
                }
            }
            let offset = (next() * 4.0).round() - 2.0;
            let w = |i: usize, j: usize, k: usize| tw[i][j][k];
            let m = |i: usize, j: usize, k: usize| tm[i][j][k];
            let want = brute_force_max(n, c, offset, &w, &m);
            match solve_merged_max(n, c, offset, w, m) {
                Some((b, t)) => {
                    assert_eq!(t, want, "case {case}");
                    assert!(b.windows(2).all(|p| p[0].config != p[1].config));
                    let sum: f64 = b.iter().map(|x| tw[x.first][x.last][x.config]).sum();
                    let big = b
                        .iter()
                        .map(|x| tm[x.first][x.last][x.config])
                        .fold(f64::NEG_INFINITY, f64::max);
                    assert_eq!(
                        (offset + sum).max(big),
                        t,
                        "case {case}: the cost is the plan's"
                    );
                    assert_eq!(b.first().unwrap().first, 0);
                    assert_eq!(b.last().unwrap().last, n - 1);
                }
                None => assert!(want.is_infinite(), "case {case}"),
            }
        }
    }
}
