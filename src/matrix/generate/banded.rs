//! Banded matrices: every entry within `half_bandwidth` of the diagonal is stored
//! (row `i` holds columns `max(0, i−b)..=min(n−1, i+b)`), values uniform in `[-1, 1)`.

use super::build::{self, Phase};
use crate::matrix::Csr;
use crate::{Error, Result};

/// Exact non-zeros of an `n × n` band of half-bandwidth `b < n`: `n(2b+1) − b(b+1)`.
pub fn banded_nnz(n: u64, b: u64) -> u128 {
    let (n, b) = (n as u128, b as u128);
    n * (2 * b + 1) - b * (b + 1)
}

/// The `n × n` band of half-bandwidth `half_bandwidth` (0 = diagonal). Refuses `n = 0`,
/// `half_bandwidth ≥ n`, `n` beyond 32-bit column indices and a matrix over `max_bytes`.
pub fn banded(n: usize, half_bandwidth: usize, seed: u64, max_bytes: u64) -> Result<Csr<f64>> {
    const WHAT: &str = "banded matrix";
    if n == 0 {
        return Err(Error::Invalid(format!("{WHAT}: n must be ≥ 1")));
    }
    if half_bandwidth >= n {
        return Err(Error::Invalid(format!(
            "{WHAT}: half-bandwidth {half_bandwidth} must be < n = {n}"
        )));
    }
    build::check_dim(WHAT, "n", n as u128)?;
    let b = half_bandwidth;
    build::check_budget(WHAT, n as u128, banded_nnz(n as u64, b as u64), max_bytes)?;
    let row_ptr = build::counts_by(n, |i| (i + b).min(n - 1) - i.saturating_sub(b) + 1);
    let bounds = build::balanced_chunks(&row_ptr);
    Ok(build::fill_chunks(n, n, row_ptr, &bounds, |mut ch| {
        let mut rng = build::rng(seed, Phase::Values, ch.rows.start as u64);
        for i in ch.rows.clone() {
            let (ci, cv) = ch.row_mut(i);
            let lo = i.saturating_sub(b);
            for (k, (c, v)) in ci.iter_mut().zip(cv.iter_mut()).enumerate() {
                *c = (lo + k) as u32;
                *v = build::uniform_value(&mut rng);
            }
        }
    }))
}
