//! Kronecker products `A ⊗ P`: grow a real matrix `A` (`m × n`) by a small pattern `P`
//! (`k × l`) into an `mk × nl` matrix whose entry `(i·k + r, j·l + c)` is `a_ij · p_rc`. Every
//! stored entry of `A` (explicit zeros included) meets every stored entry of `P`, so
//! `nnz(A ⊗ P) = nnz(A) · nnz(P)` exactly, and `A`'s structure is repeated at `P`'s scale.

use super::build::{self, Phase};
use crate::matrix::Csr;
use crate::{Error, Result};
use rand::Rng;
use serde::{Deserialize, Serialize};

/// The small right-hand factor `P` of a Kronecker product.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum KronPattern {
    /// `k × k` all ones: each entry of `A` becomes a dense `k × k` block of its value.
    Dense {
        /// Order of the pattern.
        k: usize,
    },
    /// `k × k` identity: each entry of `A` becomes a diagonal `k × k` block of its value.
    Identity {
        /// Order of the pattern.
        k: usize,
    },
    /// `k × k`, each entry present independently with probability `density`, values uniform in
    /// `[-1, 1)`; drawn from the generator's seed.
    Random {
        /// Order of the pattern.
        k: usize,
        /// Probability of each entry, in `[0, 1]`.
        density: f64,
    },
}

impl KronPattern {
    /// The pattern as a matrix. Refuses `k = 0`, a density outside `[0, 1]` and a pattern of
    /// more than 2^24 entries (the pattern is meant to be small).
    pub fn build(&self, seed: u64) -> Result<Csr<f64>> {
        let k = match *self {
            KronPattern::Dense { k }
            | KronPattern::Identity { k }
            | KronPattern::Random { k, .. } => k,
        };
        if k == 0 || (k as u128) * (k as u128) > 1 << 24 {
            return Err(Error::Invalid(format!(
                "Kronecker pattern: order k = {k} must satisfy 1 ≤ k and k² ≤ 2^24"
            )));
        }
        let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
        match *self {
            KronPattern::Dense { k } => {
                for r in 0..k {
                    for c in 0..k {
                        rows.push(r as u32);
                        cols.push(c as u32);
                        vals.push(1.0);
                    }
                }
            }
            KronPattern::Identity { k } => {
                for r in 0..k {
                    rows.push(r as u32);
                    cols.push(r as u32);
                    vals.push(1.0);
                }
            }
            KronPattern::Random { k, density } => {
                if !(0.0..=1.0).contains(&density) {
                    return Err(Error::Invalid(format!(
                        "Kronecker pattern: density {density} must lie in [0, 1]"
                    )));
                }
                let mut rng = build::rng(seed, Phase::Pattern, u64::MAX);
                for r in 0..k {
                    for c in 0..k {
                        if rng.random_bool(density) {
                            rows.push(r as u32);
                            cols.push(c as u32);
                            vals.push(build::uniform_value(&mut rng));
                        }
                    }
                }
            }
        }
        Csr::from_triplets(k, k, &rows, &cols, &vals)
    }

    /// Short label for matrix names: `dense4`, `eye8`, `rand4-0.5`.
    pub fn label(&self) -> String {
        match *self {
            KronPattern::Dense { k } => format!("dense{k}"),
            KronPattern::Identity { k } => format!("eye{k}"),
            KronPattern::Random { k, density } => format!("rand{k}-{density}"),
        }
    }
}

/// `A ⊗ P`. Refuses a product whose dimensions exceed 32-bit column indices or whose CSR would
/// exceed `max_bytes`, before allocating.
pub fn kron(a: &Csr<f64>, p: &Csr<f64>, max_bytes: u64) -> Result<Csr<f64>> {
    const WHAT: &str = "Kronecker product";
    let nrows = a.nrows as u128 * p.nrows as u128;
    let ncols = build::check_dim(WHAT, "columns", a.ncols as u128 * p.ncols as u128)?;
    let nnz = a.nnz() as u128 * p.nnz() as u128;
    build::check_budget(WHAT, nrows, nnz, max_bytes)?;
    let nrows = nrows as usize;
    let (k, l) = (p.nrows, p.ncols);
    let row_ptr = build::counts_by(nrows, |r| a.row_len(r / k) * p.row_len(r % k));
    let bounds = build::balanced_chunks(&row_ptr);
    Ok(build::fill_chunks(
        nrows,
        ncols,
        row_ptr,
        &bounds,
        |mut ch| {
            for r in ch.rows.clone() {
                let (ci, cv) = ch.row_mut(r);
                let (ac, av) = a.row(r / k);
                let (pc, pv) = p.row(r % k);
                let mut w = 0usize;
                // Columns j·l + c increase with j, then with c < l: the row comes out sorted.
                for (&j, &x) in ac.iter().zip(av) {
                    for (&c, &y) in pc.iter().zip(pv) {
                        ci[w] = (j as usize * l + c as usize) as u32;
                        cv[w] = x * y;
                        w += 1;
                    }
                }
            }
        },
    ))
}
