//! Power-law matrices from the Chung–Lu model.
//!
//! Choice (documented because the task allowed R-MAT or Chung–Lu): **Chung–Lu**, because each row
//! is an independent draw, which fits the per-row parallel, thread-count-independent generation
//! of every other family (R-MAT produces edges in arbitrary order and needs a global sort and
//! de-duplication). Row `i` and column `j` get the weight `w_i = c·(i+1)^(−β)` with
//! `β = 1/(γ−1)` for the degree exponent `γ`, `c` chosen so the weights average `mean`;
//! entry `(i, j)` is present independently with probability `min(1, w_i·w_j / Σw)`. Expected row
//! and column lengths are therefore `w_i` (below the cap), with a degree distribution whose tail
//! follows `k^(−γ)`. High-degree rows and columns come first (the matrix is in degree order);
//! where `w_i·w_0 > Σw` the probability is capped at 1, so the realised mean falls somewhat
//! below `mean` for small `n` or small `γ`.
//!
//! Each row is drawn with the skipping algorithm of Miller & Hagberg ("Efficient generation of
//! networks with given expected degrees", WAW 2011): columns are visited in decreasing weight,
//! jumping geometrically over absent entries, in `O(1 + row length)` expected time. Values are
//! uniform in `[-1, 1)`.

use super::build::{self, Phase};
use crate::matrix::Csr;
use crate::{Error, Result};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// The `n × n` Chung–Lu matrix with mean row length `mean` and degree exponent `exponent`
/// (`γ > 1`; real networks have 2 < γ < 3). Refuses `n = 0`, `mean` outside `(0, n]`, `γ ≤ 1`,
/// `n` beyond 32-bit column indices, and a matrix over `max_bytes` (checked once before drawing
/// on the row pointers and weights, then on the exact non-zero count before filling).
pub fn power_law(
    n: usize,
    mean: f64,
    exponent: f64,
    seed: u64,
    max_bytes: u64,
) -> Result<Csr<f64>> {
    const WHAT: &str = "power-law matrix";
    if n == 0 {
        return Err(Error::Invalid(format!("{WHAT}: n must be ≥ 1")));
    }
    if !(mean.is_finite() && mean > 0.0 && mean <= n as f64) {
        return Err(Error::Invalid(format!(
            "{WHAT}: mean row length {mean} must lie in (0, n = {n}]"
        )));
    }
    if !(exponent.is_finite() && exponent > 1.0) {
        return Err(Error::Invalid(format!(
            "{WHAT}: exponent γ = {exponent} must be a finite number > 1"
        )));
    }
    build::check_dim(WHAT, "n", n as u128)?;
    // Row pointers plus the weight array.
    build::check_budget(WHAT, 2 * n as u128, 0, max_bytes)?;
    let w = weights(n, mean, exponent);
    let s = mean * n as f64;

    let mut counts = vec![0usize; n];
    counts
        .par_chunks_mut(build::CHUNK_ROWS)
        .enumerate()
        .for_each(|(k, out)| {
            let mut rng = build::rng(seed, Phase::Pattern, k as u64);
            let first = k * build::CHUNK_ROWS;
            for (r, c) in out.iter_mut().enumerate() {
                row_pattern(first + r, &w, s, &mut rng, |_| *c += 1);
            }
        });
    let row_ptr = build::prefix_sum(&counts);
    drop(counts);
    build::check_budget(WHAT, 2 * n as u128, row_ptr[n] as u128, max_bytes)?;

    // The fill pass replays the pattern streams chunk by chunk (same fixed chunks).
    let bounds = build::fixed_chunks(n);
    Ok(build::fill_chunks(n, n, row_ptr, &bounds, |mut ch| {
        let mut rng = build::rng(seed, Phase::Pattern, ch.index as u64);
        let mut val = build::rng(seed, Phase::Values, ch.index as u64);
        for i in ch.rows.clone() {
            let (ci, cv) = ch.row_mut(i);
            let mut k = 0usize;
            row_pattern(i, &w, s, &mut rng, |j| {
                ci[k] = j as u32;
                cv[k] = build::uniform_value(&mut val);
                k += 1;
            });
            debug_assert_eq!(k, ci.len());
        }
    }))
}

/// `w_i = c·(i+1)^(−1/(γ−1))`, scaled to average `mean`. The normalising sum is taken over fixed
/// chunks in a fixed order, so it is bit-identical whatever the thread count.
fn weights(n: usize, mean: f64, exponent: f64) -> Vec<f64> {
    let beta = 1.0 / (exponent - 1.0);
    let mut w: Vec<f64> = (0..n)
        .into_par_iter()
        .map(|i| ((i + 1) as f64).powf(-beta))
        .collect();
    let partial: Vec<f64> = w
        .par_chunks(build::CHUNK_ROWS)
        .map(|c| c.iter().sum::<f64>())
        .collect();
    let total: f64 = partial.iter().sum();
    let scale = mean * n as f64 / total;
    w.par_iter_mut().for_each(|x| *x *= scale);
    w
}

/// Visit the columns of row `i` in increasing order (decreasing weight), calling `emit` for each
/// present entry (Miller & Hagberg's skip-and-thin loop).
#[inline]
fn row_pattern(i: usize, w: &[f64], s: f64, rng: &mut ChaCha8Rng, mut emit: impl FnMut(usize)) {
    let n = w.len();
    let wi = w[i] / s;
    let mut j = 0usize;
    let mut p = (wi * w[0]).min(1.0);
    while j < n && p > 0.0 {
        if p < 1.0 {
            // Geometric skip: the number of columns passed over before the next candidate.
            let u: f64 = rng.random();
            let skip = ((1.0 - u).ln() / (-p).ln_1p()).floor();
            // `skip` is finite and ≥ 0 (both logarithms are ≤ 0 and the divisor is < 0).
            if skip >= (n - j) as f64 {
                break;
            }
            j += skip as usize;
        }
        let q = (wi * w[j]).min(1.0);
        let u: f64 = rng.random();
        if u < q / p {
            emit(j);
        }
        p = q;
        j += 1;
    }
}
