//! The proof that conversions on the device ([`super::convert`]) give what the host conversions
//! give (`sparsecast selftest --backend cuda`, its "conv …" rows).
//!
//! Every test matrix of the self-test, in each precision, is prepared twice for each kernel of a
//! format converted on the device (COO, ELL, HYB, SELL-C-σ with each tested parameter set, JAD,
//! DIA, BSR, ELL-BRO, and cuSPARSE's COO and sliced ELL, σ = 1): once converted on the device, once
//! converted on the host and uploaded ([`CudaBackend::set_host_conversion`]). The case passes
//! when both ways refuse the matrix alike (a skip, with the reason), or when both prepare it with
//! the same footprint and every array the kernel (or cuSPARSE) reads is the same, element for
//! element (values bit for bit, padding included). The SpMV results themselves are checked by
//! the self-test's own cases, which convert on the device.
//!
//! The same rows ("check csr-scalar") prove the check on the device (`PreparedSpmv::check`,
//! what `collect` and `evaluate` judge every kernel with) equal to the host's
//! [`Reference::max_relative_error`], bit for bit: against the matrix's own reference (a small
//! error) and against the reference of another x (a large one).

use super::prepared::{converts_on_device, CudaPrepared};
use super::rowdist_check::compare;
use super::{CudaBackend, CudaScalar};
use crate::backend::measure::Reference;
use crate::backend::selftest::{cases, CaseResult, Outcome, TestMatrix};
use crate::backend::{KernelConfig, PreparedSpmv, Variant, VendorAlg};
use crate::{Csr, Result};

/// Whether `variant`'s format is converted on the device (cuSPARSE's second COO algorithm reads
/// the first one's arrays: checked once).
fn converted(variant: Variant) -> bool {
    converts_on_device(variant.format()) && variant != Variant::Vendor(VendorAlg::CooAlg2)
}

/// The cases among `variants`: (variant, parameter set, matrix index).
fn plan(matrices: &[TestMatrix], variants: &[Variant]) -> Vec<(Variant, cases::ParamSet, usize)> {
    let mut out = Vec::new();
    for &v in variants.iter().filter(|&&v| converted(v)) {
        for set in cases::param_sets(v) {
            for (i, m) in matrices.iter().enumerate() {
                if m.only.map_or(true, |k| k == v.format()) {
                    out.push((v, set.clone(), i));
                }
            }
        }
    }
    out
}

/// How many cases [`run`] runs (both precisions).
pub fn count(matrices: &[TestMatrix], variants: &[Variant]) -> usize {
    2 * (plan(matrices, variants).len() + matrices.len())
}

/// Run the check in f32 and f64; `progress` gets every case. A case's variant is `conv <kernel>`.
pub fn run(
    be: &CudaBackend,
    matrices: &[TestMatrix],
    variants: &[Variant],
    max_format_bytes: u64,
    progress: &mut dyn FnMut(&CaseResult),
) -> Vec<CaseResult> {
    let was = be.host_conversion();
    let mut out = run_precision::<f32>(be, matrices, variants, max_format_bytes, progress);
    out.extend(run_precision::<f64>(
        be,
        matrices,
        variants,
        max_format_bytes,
        progress,
    ));
    be.set_host_conversion(was);
    out
}

fn run_precision<T: CudaScalar>(
    be: &CudaBackend,
    matrices: &[TestMatrix],
    variants: &[Variant],
    max_format_bytes: u64,
    progress: &mut dyn FnMut(&CaseResult),
) -> Vec<CaseResult> {
    let cast: Vec<Csr<T>> = matrices.iter().map(|m| m.csr.cast::<T>()).collect();
    let mut out = Vec::new();
    for (v, set, i) in plan(matrices, variants) {
        let mut cfg = KernelConfig::new(v);
        cfg.params = set.params.clone();
        cfg.params.max_bytes = cfg.params.max_bytes.min(max_format_bytes);
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            check_case(be, &cast[i], &cfg)
        }))
        .unwrap_or_else(|_| Outcome::Fail {
            reason: "panicked".into(),
        });
        let name = match set.label {
            "" => matrices[i].name.clone(),
            label => format!("{} [{label}]", matrices[i].name),
        };
        let r = CaseResult {
            variant: format!("conv {}", v.name()),
            precision: T::PRECISION,
            block_size: cfg.block_size,
            matrix: name,
            outcome,
        };
        progress(&r);
        out.push(r);
    }
    for (m, csr) in matrices.iter().zip(&cast) {
        let cfg = KernelConfig::new(Variant::Csr { threads_per_row: 1 });
        let r = CaseResult {
            variant: format!("check {}", cfg.variant.name()),
            precision: T::PRECISION,
            block_size: cfg.block_size,
            matrix: m.name.clone(),
            outcome: check_on_device(be, csr, &cfg),
        };
        progress(&r);
        out.push(r);
    }
    out
}

/// The check on the device against the host's, bit for bit.
fn check_on_device<T: CudaScalar>(be: &CudaBackend, csr: &Csr<T>, cfg: &KernelConfig) -> Outcome {
    let fail = |reason: String| Outcome::Fail { reason };
    let mut k = match CudaPrepared::new(be, csr, cfg) {
        Ok(k) => k,
        Err(e) => return fail(format!("prepare: {e}")),
    };
    let x = |seed: u64| -> Vec<T> {
        (0..csr.ncols)
            .map(|j| T::cast_f64(((j as u64 * 7919 + seed) % 1000) as f64 / 500.0 - 1.0))
            .collect()
    };
    let (x1, x2) = (x(1), x(2));
    let own = Reference::new(csr, &x1);
    let other = Reference::new(csr, &x2);
    for r in [&own, &other] {
        let dev = match k.check(&x1, r) {
            Ok(e) => e,
            Err(e) => return fail(format!("check on the device: {e}")),
        };
        let host = match k.y() {
            Ok(y) => r.max_relative_error(&y),
            Err(e) => return fail(format!("reading y: {e}")),
        };
        if dev.to_bits() != host.to_bits() {
            return fail(format!(
                "largest relative error {dev:e} on the device, {host:e} on the host"
            ));
        }
    }
    Outcome::Pass {
        worst: 0.0,
        rel: 0.0,
    }
}

fn prepare<'a, T: CudaScalar>(
    be: &'a CudaBackend,
    csr: &Csr<T>,
    cfg: &KernelConfig,
    on_host: bool,
) -> Result<CudaPrepared<'a, T>> {
    be.set_host_conversion(on_host);
    CudaPrepared::new(be, csr, cfg)
}

/// One case: both ways, then their footprints and arrays.
fn check_case<T: CudaScalar>(be: &CudaBackend, csr: &Csr<T>, cfg: &KernelConfig) -> Outcome {
    let fail = |reason: String| Outcome::Fail { reason };
    let dev = prepare(be, csr, cfg, false);
    let host = prepare(be, csr, cfg, true);
    let (dev, host) = match (dev, host) {
        (Ok(d), Ok(h)) => (d, h),
        (Err(d), Err(h)) if d.to_string() == h.to_string() => {
            return Outcome::Skip {
                reason: d.to_string(),
            }
        }
        (Err(d), Err(h)) => return fail(format!("refused differently: device: {d}; host: {h}")),
        (Err(d), Ok(_)) => return fail(format!("device conversion: {d}")),
        (Ok(_), Err(h)) => return fail(format!("host conversion: {h}")),
    };
    if dev.footprint_bytes() != host.footprint_bytes() {
        return fail(format!(
            "footprint {} bytes converted on the device, {} on the host",
            dev.footprint_bytes(),
            host.footprint_bytes()
        ));
    }
    match (dev.arrays(), host.arrays()) {
        (Ok(d), Ok(h)) => match compare(&d, &h) {
            Ok(()) => Outcome::Pass {
                worst: 0.0,
                rel: 0.0,
            },
            Err(e) => fail(e),
        },
        (Err(e), _) | (_, Err(e)) => fail(format!("reading arrays back: {e}")),
    }
}
