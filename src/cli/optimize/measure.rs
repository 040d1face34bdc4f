//! `optimize --measure`: build the plan on the backend, check its y against the f64 reference,
//! time it, and time every single format the model predicted and every cuSPARSE algorithm the
//! backend has, with the same x and timing protocol.

use crate::backend::measure::{measure_kernel, Reference, Status};
use crate::backend::{Backend, BackendScalar, KernelConfig, PreparedSpmv, TimingProtocol, Variant};
use crate::cli::common;
use crate::formats::FormatParams;
use crate::model::accuracy::difference_rate;
use crate::optimize::{Optimum, Plan, PreparedPlan};
use crate::{Csr, Scalar};
use serde::Serialize;

/// Measured times of one kernel (or the plan). Every kernel is checked against the f64 reference
/// before it is timed (a wrong result is reported as an error, not timed).
#[derive(Debug, Serialize)]
pub struct MeasuredKernel {
    /// Kernel name, or `plan (N blocks)`.
    pub kernel: String,
    /// Predicted seconds (`None`: refused by the model, or not modelled: cuSPARSE).
    pub predicted_seconds: Option<f64>,
    /// The papers' warm-up-excluding mean, seconds.
    pub measured_seconds: Option<f64>,
    /// Median of the runs after the warm-up, seconds.
    pub median_seconds: Option<f64>,
    /// |predicted − measured| / measured.
    pub difference_rate: Option<f64>,
    /// `(t_kernel − t_plan) / t_kernel`, measured: the fraction of this kernel's time the plan
    /// saves (the papers' "performance improvement"; negative when the plan is slower).
    pub plan_improvement: Option<f64>,
    /// The same, predicted.
    pub predicted_plan_improvement: Option<f64>,
    /// Why it was not measured.
    pub error: Option<String>,
}

/// Everything `--measure` found for one matrix.
#[derive(Debug, Serialize)]
pub struct Measured {
    /// Backend name.
    pub backend: String,
    /// Device description.
    pub device: String,
    /// The timing protocol.
    pub protocol: TimingProtocol,
    /// The plan's y against the f64 reference (relative to Σ|a_ij·x_j| per row).
    pub max_relative_error: f64,
    /// The tolerance of the precision.
    pub tolerance: f64,
    /// The plan, timed as one SpMV (every block queued in row order).
    pub plan: MeasuredKernel,
    /// Each block's measured mean and median (seconds) when timed alone, in row order.
    pub plan_blocks: Vec<(f64, f64)>,
    /// Every single format the model covers, in ranking order.
    pub singles: Vec<MeasuredKernel>,
    /// Every cuSPARSE algorithm the backend runs.
    pub vendor: Vec<MeasuredKernel>,
    /// The fastest cuSPARSE algorithm measured.
    pub best_vendor: Option<String>,
}

/// `(other − plan) / other`.
pub fn improvement(other: Option<f64>, plan: Option<f64>) -> Option<f64> {
    match (other, plan) {
        (Some(o), Some(p)) if o > 0.0 => Some((o - p) / o),
        _ => None,
    }
}

/// Check one whole-matrix kernel against the reference and time it, through the shared
/// measurement path ([`measure_kernel`]): (warm mean, median), or why it was not measured.
fn time_single<T: Scalar>(
    be: &dyn Backend<T>,
    m: &Csr<T>,
    variant: Variant,
    params: &FormatParams,
    x: &[T],
    reference: &Reference,
    protocol: &TimingProtocol,
) -> crate::Result<(f64, f64)> {
    let cfg = KernelConfig {
        params: params.clone(),
        ..KernelConfig::new(variant)
    };
    let k = measure_kernel(be, m, x, reference, &cfg, protocol);
    match (k.status, k.warm_mean_s, k.median_s) {
        (Status::Ok, Some(mean), Some(median)) => Ok((mean, median)),
        (status, ..) => Err(crate::Error::Invalid(format!(
            "{}: {}",
            status.name(),
            k.reason.unwrap_or_default()
        ))),
    }
}

/// Run and time the plan, the single formats and cuSPARSE on `be`.
pub fn measure_all<T: BackendScalar>(
    m: &Csr<T>,
    plan: &Plan,
    opt: &Optimum,
    params: &FormatParams,
    be: &dyn Backend<T>,
    protocol: &TimingProtocol,
    seed: u64,
) -> anyhow::Result<Measured> {
    let x: Vec<T> = common::random_vector(m.ncols, seed);
    let reference = Reference::new(m, &x);
    // The plan is dropped (its device memory freed) before the single formats are prepared.
    let (max_relative_error, timing) = {
        let mut p = PreparedPlan::new(be, m, plan, "the plan")?;
        p.set_x(&x)?;
        p.poison_y()?;
        p.run()?;
        let y = p.y()?;
        (reference.max_relative_error(&y), p.time_blocks(protocol)?)
    };
    let plan_t = timing.total.warm_mean();
    let kernel = |name: String, predicted: Option<f64>, r: crate::Result<(f64, f64)>| {
        let (mean, median, error) = match r {
            Ok((a, b)) => (Some(a), Some(b), None),
            Err(e) => (None, None, Some(e.to_string())),
        };
        MeasuredKernel {
            kernel: name,
            predicted_seconds: predicted,
            difference_rate: predicted.zip(mean).map(|(p, m)| difference_rate(p, m)),
            plan_improvement: improvement(mean, Some(plan_t)),
            predicted_plan_improvement: improvement(predicted, Some(opt.predicted)),
            measured_seconds: mean,
            median_seconds: median,
            error,
        }
    };
    let singles = opt
        .singles
        .iter()
        .map(|r| {
            let t = match r.seconds {
                // Not run where the model refuses (e.g. beyond the device memory).
                None => Err(crate::Error::Unsupported("refused by the model".into())),
                Some(_) => time_single(be, m, r.config.variant, params, &x, &reference, protocol),
            };
            kernel(r.config.variant.name(), r.seconds, t)
        })
        .collect();
    let vendor: Vec<MeasuredKernel> = Variant::vendor()
        .into_iter()
        .filter(|&v| be.supports(v))
        .map(|v| {
            kernel(
                v.name(),
                None,
                time_single(be, m, v, params, &x, &reference, protocol),
            )
        })
        .collect();
    let best_vendor = vendor
        .iter()
        .filter_map(|k| k.measured_seconds.map(|t| (t, &k.kernel)))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| n.clone());
    let mut plan_k = kernel(
        format!("plan ({} blocks)", plan.blocks.len()),
        Some(opt.predicted),
        Ok((plan_t, timing.total.median())),
    );
    plan_k.plan_improvement = None;
    plan_k.predicted_plan_improvement = None;
    Ok(Measured {
        backend: be.name().to_string(),
        device: be.device_name(),
        protocol: protocol.clone(),
        max_relative_error,
        tolerance: common::tolerance::<T>(),
        plan: plan_k,
        plan_blocks: timing
            .blocks
            .iter()
            .map(|t| (t.warm_mean(), t.median()))
            .collect(),
        singles,
        vendor,
        best_vendor,
    })
}
