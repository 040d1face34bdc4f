//! Block-diagonal matrices: `blocks` dense `block_size × block_size` blocks on the diagonal,
//! values uniform in `[-1, 1)`.

use super::build::{self, Phase};
use crate::matrix::Csr;
use crate::{Error, Result};

/// The block-diagonal matrix of order `blocks · block_size`. Refuses zero sizes, an order beyond
/// 32-bit column indices and a matrix over `max_bytes`.
pub fn block_diagonal(
    blocks: usize,
    block_size: usize,
    seed: u64,
    max_bytes: u64,
) -> Result<Csr<f64>> {
    const WHAT: &str = "block-diagonal matrix";
    if blocks == 0 || block_size == 0 {
        return Err(Error::Invalid(format!(
            "{WHAT}: blocks ({blocks}) and block size ({block_size}) must be ≥ 1"
        )));
    }
    let n = build::check_dim(WHAT, "order", blocks as u128 * block_size as u128)?;
    let bs = block_size as u128;
    build::check_budget(WHAT, n as u128, blocks as u128 * bs * bs, max_bytes)?;
    let row_ptr = build::counts_by(n, |_| block_size);
    let bounds = build::balanced_chunks(&row_ptr);
    Ok(build::fill_chunks(n, n, row_ptr, &bounds, |mut ch| {
        let mut rng = build::rng(seed, Phase::Values, ch.rows.start as u64);
        for i in ch.rows.clone() {
            let (ci, cv) = ch.row_mut(i);
            let lo = i / block_size * block_size;
            for (k, (c, v)) in ci.iter_mut().zip(cv.iter_mut()).enumerate() {
                *c = (lo + k) as u32;
                *v = build::uniform_value(&mut rng);
            }
        }
    }))
}
