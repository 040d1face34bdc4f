//! Correctness self-test of a backend, shared by `sparsecast selftest` and the test suite.
//!
//! Every kernel variant the backend supports runs, in f32 and f64 and with several block sizes, on
//! the matrices of [`matrices::test_matrices`]. Before each run y is poisoned (NaN) and a fresh
//! random x (uniform in [-1, 1)) is set; the result is compared with the f64 CPU reference
//! ([`Csr::spmv_reference`] of the matrix in the tested precision).
//!
//! Acceptance: every element finite and within `tol_i = (len_i + 2) · ε_T · Σ_j |a_ij · x_j|` of
//! the reference, where `len_i` is the row's length and `ε_T` the precision's machine epsilon.
//! This is the classical worst-case bound of a floating-point sum of `len_i` products, whatever the
//! summation order (so atomics and tree reductions pass, and no correct kernel can fail), with a
//! factor of two to spare. A wrong or missing entry moves the result by about `|a_ij · x_j|`, far
//! more than the bound in f64; in f32 a single missing entry of a very long row can hide under it,
//! which is why both precisions run.
//!
//! A format that refuses a matrix (e.g. DIA on a matrix without diagonal structure) or a
//! configuration the backend does not support is reported as skipped, not failed.
//!
//! Some variants also run with other parameters ([`cases::param_sets`]: SELL-C-σ with C = 512,
//! σ = 2048, ELL-BRO with other slice heights); such a case's matrix name carries the options
//! (`random [--sell-c 512 --sell-sigma 2048]`). A matrix made for one format
//! ([`TestMatrix::only`]) runs only with that format's kernels, default parameters and the first
//! block size.

pub mod cases;
pub mod matrices;

use crate::backend::{Backend, KernelConfig, Variant};
use crate::{Csr, Error, Precision, Scalar};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde::Serialize;
use std::time::Instant;

pub use matrices::{test_matrices, TestMatrix};

/// What to run.
#[derive(Clone, Debug)]
pub struct SelftestConfig {
    /// Kernel variants (those the backend does not support are skipped).
    pub variants: Vec<Variant>,
    /// CUDA block sizes; vendor variants run once, whatever the list.
    pub block_sizes: Vec<u32>,
    /// Seed of the random x vectors.
    pub seed: u64,
    /// Formats larger than this are refused (skipped), which bounds the time of padded formats
    /// (ELL of a matrix with a few long rows) on a machine with much memory.
    pub max_format_bytes: u64,
    /// Run each matrix's cases together, grouped by conversion, with the backend sharing
    /// converted arrays between kernels of one matrix ([`Backend::share_arrays`], as `collect`
    /// measures): proves that kernels reading shared arrays compute what fresh ones do.
    pub share_arrays: bool,
}

/// Default of [`SelftestConfig::max_format_bytes`]: 512 MiB.
pub const MAX_FORMAT_BYTES: u64 = 512 << 20;

impl SelftestConfig {
    /// Every variant (ours and the vendor's) with the given block sizes.
    pub fn all(block_sizes: Vec<u32>, seed: u64) -> Self {
        SelftestConfig {
            variants: Variant::ours()
                .into_iter()
                .chain(Variant::vendor())
                .collect(),
            block_sizes,
            seed,
            max_format_bytes: MAX_FORMAT_BYTES,
            share_arrays: false,
        }
    }
}

/// The outcome of one case.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "lowercase", tag = "outcome")]
pub enum Outcome {
    /// Within tolerance.
    Pass {
        /// Max over rows of |error| / tolerance (≤ 1).
        worst: f64,
        /// Norm-wise relative error ‖y − ref‖₂ / ‖ref‖₂ (0 when ref = 0).
        rel: f64,
    },
    /// Wrong result or error.
    Fail {
        /// What went wrong.
        reason: String,
    },
    /// Not applicable (format refused the matrix, configuration unsupported).
    Skip {
        /// Why.
        reason: String,
    },
}

/// One case: a variant, a precision, a block size and a matrix.
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    /// Kernel variant name.
    pub variant: String,
    /// f32 or f64.
    pub precision: Precision,
    /// Block size (0 for vendor variants, which choose their own).
    pub block_size: u32,
    /// Test matrix name.
    pub matrix: String,
    /// What happened.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// Compare a result with the reference; `Ok((worst, rel))` or the first offending row.
pub fn check<T: Scalar>(csr: &Csr<T>, x: &[T], y: &[T]) -> Result<(f64, f64), String> {
    if y.len() != csr.nrows {
        return Err(format!("y has {} entries, expected {}", y.len(), csr.nrows));
    }
    let xf: Vec<f64> = x.par_iter().map(|v| v.as_f64()).collect();
    let reference = csr.spmv_reference(&xf);
    let eps = T::epsilon().as_f64();
    let (mut worst, mut err2, mut ref2) = (0.0f64, 0.0f64, 0.0f64);
    for i in 0..csr.nrows {
        let (c, v) = csr.row(i);
        let abs: f64 = c
            .iter()
            .zip(v)
            .map(|(&c, &v)| (v.as_f64() * xf[c as usize]).abs())
            .sum();
        let tol = (c.len() as f64 + 2.0) * eps * abs;
        let got = y[i].as_f64();
        if !got.is_finite() {
            return Err(format!(
                "row {i}: got {got} (not written, or overflow), expected {}",
                reference[i]
            ));
        }
        let err = (got - reference[i]).abs();
        if err > tol {
            return Err(format!(
                "row {i} (length {}): got {got:e}, expected {:e}, error {err:.3e} > tolerance {tol:.3e}",
                c.len(),
                reference[i]
            ));
        }
        if tol > 0.0 {
            worst = worst.max(err / tol);
        }
        err2 += err * err;
        ref2 += reference[i] * reference[i];
    }
    let rel = if ref2 > 0.0 {
        (err2 / ref2).sqrt()
    } else {
        0.0
    };
    Ok((worst, rel))
}

fn run_case<T: Scalar>(
    backend: &dyn Backend<T>,
    csr: &Csr<T>,
    cfg: &KernelConfig,
    rng: &mut ChaCha8Rng,
) -> Outcome {
    let mut prepared = match backend.prepare(csr, cfg) {
        Ok(p) => p,
        Err(e @ (Error::FormatRefused { .. } | Error::Unsupported(_))) => {
            return Outcome::Skip {
                reason: e.to_string(),
            }
        }
        Err(e) => {
            return Outcome::Fail {
                reason: format!("prepare: {e}"),
            }
        }
    };
    // Two runs with different x: a kernel that leaves state behind (e.g. an accumulation that is
    // not reset) fails the second.
    let mut last = (0.0f64, 0.0f64);
    for _ in 0..2 {
        let x: Vec<T> = cases::random_x(rng, csr.ncols);
        let step = prepared
            .set_x(&x)
            .and_then(|_| prepared.poison_y())
            .and_then(|_| prepared.run())
            .and_then(|_| prepared.y());
        let y = match step {
            Ok(y) => y,
            Err(e) => {
                return Outcome::Fail {
                    reason: e.to_string(),
                }
            }
        };
        match check(csr, &x, &y) {
            Ok(r) => last = (last.0.max(r.0), last.1.max(r.1)),
            Err(reason) => return Outcome::Fail { reason },
        }
    }
    Outcome::Pass {
        worst: last.0,
        rel: last.1,
    }
}

/// The cases of `variant` in one precision, in order: (block size, parameter set, index of the
/// matrix).
fn plan<'a>(
    variant: Variant,
    cfg: &SelftestConfig,
    sets: &'a [cases::ParamSet],
    matrices: &[TestMatrix],
) -> Vec<(u32, &'a cases::ParamSet, usize)> {
    let blocks: Vec<u32> = if variant.is_vendor() {
        vec![0]
    } else {
        cfg.block_sizes.clone()
    };
    let mut todo = Vec::new();
    for (b, &block) in blocks.iter().enumerate() {
        for (p, set) in sets.iter().enumerate() {
            for (i, m) in matrices.iter().enumerate() {
                if m.only.map_or(true, |k| k == variant.format() && b + p == 0) {
                    todo.push((block, set, i));
                }
            }
        }
    }
    todo
}

/// How many cases [`run_all`] runs (both precisions).
pub fn count_cases(matrices: &[TestMatrix], cfg: &SelftestConfig) -> usize {
    let per_precision: usize = cfg
        .variants
        .iter()
        .map(|&v| plan(v, cfg, &cases::param_sets(v), matrices).len())
        .sum();
    2 * per_precision
}

/// Run the self-test in precision `T` on `backend`; `progress` is called after each case.
pub fn run<T: Scalar>(
    backend: &dyn Backend<T>,
    matrices: &[TestMatrix],
    cfg: &SelftestConfig,
    progress: &mut dyn FnMut(&CaseResult),
) -> Vec<CaseResult> {
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ T::BYTES as u64);
    let cast: Vec<(&TestMatrix, Csr<T>)> =
        matrices.iter().map(|m| (m, m.csr.cast::<T>())).collect();
    let sets: Vec<Vec<cases::ParamSet>> =
        cfg.variants.iter().map(|&v| cases::param_sets(v)).collect();
    let mut todo: Vec<(Variant, u32, &cases::ParamSet, usize)> = Vec::new();
    for (&variant, sets) in cfg.variants.iter().zip(&sets) {
        for (block, set, i) in plan(variant, cfg, sets, matrices) {
            todo.push((variant, block, set, i));
        }
    }
    if cfg.share_arrays {
        // Matrix by matrix, each conversion's kernels together (ours before cuSPARSE's, as
        // `collect` measures them), so that kernels find the arrays shared.
        // (Grouped first, then a stable sort by matrix keeps each group together.)
        let pairs: Vec<_> = todo
            .iter()
            .map(|(v, _, set, _)| (*v, &set.params))
            .collect();
        let mut grouped: Vec<_> = crate::backend::conversion_order(&pairs)
            .into_iter()
            .map(|j| todo[j])
            .collect();
        grouped.sort_by_key(|c| c.3);
        todo = grouped;
    }
    backend.share_arrays(cfg.share_arrays);
    let mut out = Vec::new();
    for (variant, block, set, i) in todo {
        let (m, csr) = &cast[i];
        let name = match set.label {
            "" => m.name.clone(),
            label => format!("{} [{label}]", m.name),
        };
        let outcome = if !backend.supports(variant) {
            Outcome::Skip {
                reason: format!("{} does not support {variant}", backend.name()),
            }
        } else {
            let mut kc = KernelConfig::new(variant);
            kc.params = set.params.clone();
            if block > 0 {
                kc.block_size = block;
            }
            kc.params.max_bytes = kc.params.max_bytes.min(cfg.max_format_bytes);
            // A panic (a bug in a conversion or a kernel wrapper) is a failure of that
            // case, not the end of the self-test.
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run_case(backend, csr, &kc, &mut rng)
            }))
            .unwrap_or_else(|p| Outcome::Fail {
                reason: format!(
                    "panicked: {}",
                    p.downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default()
                ),
            })
        };
        let r = CaseResult {
            variant: variant.name(),
            precision: T::PRECISION,
            block_size: block,
            matrix: name,
            outcome,
        };
        progress(&r);
        out.push(r);
    }
    backend.share_arrays(false);
    out
}

/// One line of the summary: a variant, precision and block size over all matrices.
#[derive(Clone, Debug, Serialize)]
pub struct SummaryRow {
    /// Kernel variant name.
    pub variant: String,
    /// f32 or f64.
    pub precision: Precision,
    /// Block size (0 = vendor's choice).
    pub block_size: u32,
    /// Cases that passed.
    pub passed: usize,
    /// Cases that failed.
    pub failed: usize,
    /// Cases skipped.
    pub skipped: usize,
    /// Largest error / tolerance over the passed cases.
    pub worst: f64,
    /// Largest norm-wise relative error over the passed cases.
    pub max_rel: f64,
}

/// Aggregate results per (variant, precision, block size), in the order first seen.
pub fn summarize(results: &[CaseResult]) -> Vec<SummaryRow> {
    let mut rows: Vec<SummaryRow> = Vec::new();
    for r in results {
        let i = match rows.iter().position(|s| {
            s.variant == r.variant && s.precision == r.precision && s.block_size == r.block_size
        }) {
            Some(i) => i,
            None => {
                rows.push(SummaryRow {
                    variant: r.variant.clone(),
                    precision: r.precision,
                    block_size: r.block_size,
                    passed: 0,
                    failed: 0,
                    skipped: 0,
                    worst: 0.0,
                    max_rel: 0.0,
                });
                rows.len() - 1
            }
        };
        let s = &mut rows[i];
        match &r.outcome {
            Outcome::Pass { worst, rel } => {
                s.passed += 1;
                s.worst = s.worst.max(*worst);
                s.max_rel = s.max_rel.max(*rel);
            }
            Outcome::Fail { .. } => s.failed += 1,
            Outcome::Skip { .. } => s.skipped += 1,
        }
    }
    rows
}

/// Run both precisions; returns the results and the elapsed seconds.
pub fn run_all<B>(
    backend: &B,
    matrices: &[TestMatrix],
    cfg: &SelftestConfig,
    progress: &mut dyn FnMut(&CaseResult),
) -> (Vec<CaseResult>, f64)
where
    B: Backend<f32> + Backend<f64>,
{
    let t0 = Instant::now();
    let mut all = run::<f32>(backend, matrices, cfg, progress);
    all.extend(run::<f64>(backend, matrices, cfg, progress));
    (all, t0.elapsed().as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    fn small() -> Csr<f64> {
        Csr::from_triplets(3, 3, &[0, 0, 2, 2], &[0, 2, 1, 2], &[1.0, 2.0, -3.0, 0.5]).unwrap()
    }

    #[test]
    fn check_accepts_exact_and_rejects_wrong_or_nan() {
        let m = small();
        let x = [1.0, 2.0, 4.0];
        let y = [9.0, 0.0, -4.0];
        let (worst, rel) = check(&m, &x, &y).unwrap();
        assert_eq!((worst, rel), (0.0, 0.0));
        assert!(check(&m, &x, &[9.0, 0.0, -4.001]).is_err());
        assert!(check(&m, &x, &[9.0, f64::NAN, -4.0])
            .unwrap_err()
            .contains("row 1"));
        assert!(check(&m, &x, &[9.0, 0.0]).is_err());
        // An empty row must be exactly 0.
        assert!(check(&m, &x, &[9.0, 1e-300, -4.0]).is_err());
    }

    #[test]
    fn check_tolerates_rounding_of_another_order() {
        // Summing in reverse order in f32 stays within the bound.
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let n = 5000;
        let vals: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let cols: Vec<u32> = (0..n as u32).collect();
        let m = Csr::new(1, n, vec![0, n], cols, vals.clone()).unwrap();
        let x: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let rev: f32 = (0..n).rev().map(|k| vals[k] * x[k]).sum();
        let (worst, _) = check(&m, &x, &[rev]).unwrap();
        assert!(worst < 1.0);
    }

    #[test]
    fn summary_counts() {
        let mk = |v: &str, o: Outcome| CaseResult {
            variant: v.into(),
            precision: Precision::F64,
            block_size: 256,
            matrix: "m".into(),
            outcome: o,
        };
        let s = summarize(&[
            mk(
                "a",
                Outcome::Pass {
                    worst: 0.5,
                    rel: 1e-16,
                },
            ),
            mk("a", Outcome::Fail { reason: "x".into() }),
            mk("b", Outcome::Skip { reason: "y".into() }),
            mk(
                "a",
                Outcome::Pass {
                    worst: 0.7,
                    rel: 0.0,
                },
            ),
        ]);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].passed, s[0].failed, s[0].skipped), (2, 1, 0));
        assert_eq!(s[0].worst, 0.7);
        assert_eq!((s[1].passed, s[1].skipped), (0, 1));
    }
}
