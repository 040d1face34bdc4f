//! The DP of 004 §4 against a brute-force enumeration of all 2^(N−1) partitions.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sparsecast::optimize::dp::{solve_table, Partition};

/// A random E table (`e[i][j]` for `i ≤ j`) and F table.
fn random_table(n: usize, rng: &mut ChaCha8Rng, integer: bool) -> Vec<Vec<(f64, u32)>> {
    (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    if j < i {
                        return (f64::NAN, u32::MAX);
                    }
                    let t = if integer {
                        // Few distinct values: many ties.
                        rng.random_range(1..4) as f64 * (j - i + 1) as f64
                    } else {
                        // Blocks roughly proportional to their length, with noise, sometimes
                        // refused.
                        if rng.random_bool(0.05) {
                            f64::INFINITY
                        } else {
                            (j - i + 1) as f64 * rng.random_range(0.5..1.5)
                                + rng.random_range(0.0..2.0)
                        }
                    };
                    (t, rng.random_range(0..4))
                })
                .collect()
        })
        .collect()
}

/// Every partition of `0..n` as its cut mask (bit k set = a block ends after strip k), with the
/// sum of its blocks' E added left to right, as the DP adds.
fn brute_force(e: &[Vec<(f64, u32)>]) -> Vec<(f64, Vec<(usize, usize)>)> {
    let n = e.len();
    (0u32..1 << (n - 1))
        .map(|mask| {
            let mut blocks = Vec::new();
            let mut first = 0;
            for k in 0..n {
                if k == n - 1 || mask >> k & 1 == 1 {
                    blocks.push((first, k));
                    first = k + 1;
                }
            }
            let total = blocks.iter().fold(0.0, |acc, &(i, j)| acc + e[i][j].0);
            (total, blocks)
        })
        .collect()
}

fn spans(p: &Partition) -> Vec<(usize, usize)> {
    p.blocks.iter().map(|b| (b.first, b.last)).collect()
}

/// The DP's blocks cover 0..n, carry E and F of their span, and add up to the total.
fn check_consistent(p: &Partition, e: &[Vec<(f64, u32)>]) {
    let n = e.len();
    let mut next = 0;
    let mut sum = 0.0;
    for b in &p.blocks {
        assert_eq!(b.first, next);
        assert!(b.last >= b.first && b.last < n);
        assert_eq!(b.seconds.to_bits(), e[b.first][b.last].0.to_bits());
        assert_eq!(b.format, e[b.first][b.last].1);
        sum += b.seconds;
        next = b.last + 1;
    }
    assert_eq!(next, n);
    assert_eq!(sum.to_bits(), p.total.to_bits());
}

#[test]
fn dp_equals_brute_force_on_random_tables() {
    let mut cases = 0;
    for seed in 0..400u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = 1 + (seed as usize % 12);
        let e = random_table(n, &mut rng, false);
        let dp = solve_table(n, |i, j| e[i][j]);
        check_consistent(&dp, &e);
        let all = brute_force(&e);
        let best = all.iter().map(|(t, _)| *t).fold(f64::INFINITY, f64::min);
        assert_eq!(dp.total, best, "seed {seed}, n {n}");
        // Continuous random times: the optimum is unique, so the partitions agree too.
        let winners: Vec<_> = all.iter().filter(|(t, _)| *t == best).collect();
        if winners.len() == 1 && best.is_finite() {
            assert_eq!(spans(&dp), winners[0].1, "seed {seed}, n {n}");
            cases += 1;
        }
    }
    assert!(cases > 300, "only {cases} cases with a unique optimum");
}

#[test]
fn ties_keep_the_single_block_as_the_paper_does() {
    let mut single = 0;
    for seed in 0..400u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(1000 + seed);
        let n = 1 + (seed as usize % 12);
        let e = random_table(n, &mut rng, true);
        let dp = solve_table(n, |i, j| e[i][j]);
        check_consistent(&dp, &e);
        let best = brute_force(&e)
            .iter()
            .map(|(t, _)| *t)
            .fold(f64::INFINITY, f64::min);
        assert_eq!(dp.total, best, "seed {seed}, n {n}");
        // Where no split is strictly cheaper, Fig. 11 reports the whole matrix as one block.
        if e[0][n - 1].0 == best {
            assert_eq!(spans(&dp), vec![(0, n - 1)], "seed {seed}, n {n}");
            single += 1;
        }
    }
    assert!(
        single > 20,
        "only {single} tables where the single block is optimal"
    );
}

#[test]
fn the_last_block_starts_at_the_first_strictly_better_split() {
    // E[k+1, N] + T[1, k] equal for every k: Fig. 11 keeps the first k (the earliest start of
    // the last block) once the whole block is beaten.
    let n = 5;
    let p = solve_table(n, |i, j| {
        if i == 0 && j == n - 1 {
            (100.0, 0)
        } else {
            ((j - i + 1) as f64, 1)
        }
    });
    assert_eq!(p.total, 5.0);
    // T[1, j] = j for j < N (single blocks), and the first split k = 1 wins at j = N.
    assert_eq!(spans(&p), vec![(0, 0), (1, 4)]);
}
