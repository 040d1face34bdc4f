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
/// `n` beyond 32-bit column indices, and a matrix over `max_bytes` (checked before drawing on
/// the expected size `n · mean` plus the pattern buffers, then on the exact non-zero count).
/// Rows are drawn once, per fixed chunk of rows, into chunk buffers that are then copied into
/// place: one pattern pass at the price of a transient `4 · nnz` bytes.
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
    // Expected entries `n · mean` (the cap only lowers it); the pattern pass holds them once more
    // as `u32` (with `Vec` growth slack) until they are copied into place.
    let expected = (n as f64 * mean).ceil() as u128;
    build::check_budget(WHAT, n as u128, expected * 3 / 2, max_bytes)?;
    let w = Weights::new(n, mean, exponent);

    // One pattern pass per fixed chunk of rows, into chunk-local buffers.
    let bounds = build::fixed_chunks(n);
    let parts: Vec<(Vec<u32>, Vec<usize>)> = bounds
        .par_windows(2)
        .enumerate()
        .map(|(k, r)| {
            let mut rng = build::rng(seed, Phase::Pattern, k as u64);
            let mut cols = Vec::new();
            let mut lens = Vec::with_capacity(r[1] - r[0]);
            for i in r[0]..r[1] {
                let before = cols.len();
                row_pattern(i, &w, &mut rng, |j| cols.push(j as u32));
                lens.push(cols.len() - before);
            }
            cols.shrink_to_fit();
            (cols, lens)
        })
        .collect();
    let lens: Vec<usize> = parts.iter().flat_map(|p| p.1.iter().copied()).collect();
    let row_ptr = build::prefix_sum(&lens);
    drop(lens);
    let nnz = row_ptr[n] as u128;
    build::check_budget(WHAT, n as u128, nnz + nnz / 3, max_bytes)?;

    Ok(build::fill_chunks(n, n, row_ptr, &bounds, |ch| {
        ch.cols.copy_from_slice(&parts[ch.index].0);
        let mut val = build::rng(seed, Phase::Values, ch.index as u64);
        for v in ch.vals.iter_mut() {
            *v = build::uniform_value(&mut val);
        }
    }))
}

/// Chung–Lu weights `w_i = c·(i+1)^(−β)`, `β = 1/(γ−1)`, scaled to average `mean`, evaluated on
/// the fly (a table would turn every candidate column into a cache miss on large `n`).
struct Weights {
    n: usize,
    beta: f64,
    /// `c / √(Σw)`, so that `w_i·w_j / Σw = u_i·u_j` with `u_i = scale·(i+1)^(−β)`.
    scale: f64,
}

impl Weights {
    /// The normalising sum is taken over fixed chunks in a fixed order, so it is bit-identical
    /// whatever the thread count.
    fn new(n: usize, mean: f64, exponent: f64) -> Self {
        let beta = 1.0 / (exponent - 1.0);
        let partial: Vec<f64> = build::fixed_chunks(n)
            .par_windows(2)
            .map(|r| {
                (r[0]..r[1])
                    .map(|i| ((i + 1) as f64).powf(-beta))
                    .sum::<f64>()
            })
            .collect();
        let total: f64 = partial.iter().sum();
        let c = mean * n as f64 / total;
        let sum_w = mean * n as f64;
        Weights {
            n,
            beta,
            scale: c / sum_w.sqrt(),
        }
    }

    /// `u_i`, the weight of row/column `i` divided by `√(Σw)`.
    #[inline]
    fn u(&self, i: usize) -> f64 {
        self.scale * ((i + 1) as f64).powf(-self.beta)
    }
}

/// Visit the columns of row `i` in increasing order (decreasing weight), calling `emit` for each
/// present entry (Miller & Hagberg's skip-and-thin loop).
#[inline]
fn row_pattern(i: usize, w: &Weights, rng: &mut ChaCha8Rng, mut emit: impl FnMut(usize)) {
    let n = w.n;
    let ui = w.u(i);
    let mut j = 0usize;
    let mut p = (ui * w.u(0)).min(1.0);
    while j < n && p > 0.0 {
        if p < 1.0 {
            // Geometric skip: the number of columns passed over before the next candidate.
            let r: f64 = rng.random();
            let skip = ((1.0 - r).ln() / (-p).ln_1p()).floor();
            // `skip` is finite and ≥ 0 (both logarithms are ≤ 0 and the divisor is < 0).
            if skip >= (n - j) as f64 {
                break;
            }
            j += skip as usize;
        }
        let q = (ui * w.u(j)).min(1.0);
        let r: f64 = rng.random();
        if r < q / p {
            emit(j);
        }
        p = q;
        j += 1;
    }
}
