//! Every model in the build, and the optimizer, as the evaluation sees them.
//!
//! Models are evaluated side by side through the one [`Model`] trait: a new model only needs a
//! line in [`models`] to appear in every record and every table of the report. The optimizer
//! enters through [`Planner`]: its plan is one more configuration (`plan-<model>`), measured like
//! a kernel and predicted by the model it was optimized with.

use super::record::{PlanBlockInfo, PlanInfo};
use crate::backend::{Backend, PreparedSpmv};
use crate::formats::FormatParams;
use crate::instrument::Statistic;
use crate::model::Model;
use crate::optimize::{self, MatrixIdentity, OptimizeOptions, Plan, PreparedPlan, Provenance};
use crate::profile::{PrecisionProfile, Profile};
use crate::{Csr, Precision, Result, Scalar};
use std::time::Instant;

/// A model and the statistic of the timed runs it predicts (what its predictions are compared
/// with: the papers' warm-up-excluding mean, or the median for profiles fitted on noisy hosts).
pub struct EvalModel {
    /// The model.
    pub model: Box<dyn Model>,
    /// What it predicts.
    pub statistic: Statistic,
    /// The families of its training matrices (sorted; empty for benchmark-fitted models).
    pub trained_families: Vec<String>,
}

impl EvalModel {
    /// Whether the matrix family `family` was among its training matrices.
    pub fn trained_on(&self, family: &str) -> bool {
        crate::model::registry::in_families(&self.trained_families, family)
    }
}

/// The models of `profile` for `precision` named in `names` (every model when `None`; none
/// without a profile or without that precision's section); an unknown name is an error.
pub fn models(
    profile: Option<&Profile>,
    precision: Precision,
    names: Option<&[String]>,
) -> Result<Vec<EvalModel>> {
    let Some(section) = profile.and_then(|p| p.precision(precision).ok()) else {
        return Ok(Vec::new());
    };
    // Each model is checked against the device bounds.
    let named = crate::model::registry::select(&section.models, names)?;
    Ok(section
        .bounded_models(names)?
        .into_iter()
        .zip(named)
        .map(|(m, n)| EvalModel {
            statistic: m.statistic(),
            model: Box::new(m),
            trained_families: n.trained_families.clone(),
        })
        .collect())
}

/// A plan prepared on a backend, with what the optimizer predicted for it.
pub struct PlannedSpmv<'a, T: Scalar> {
    /// The plan as one kernel (every block run in turn).
    pub kernel: Box<dyn PreparedSpmv<T> + 'a>,
    /// The model's predicted seconds for the whole plan.
    pub predicted: f64,
    /// The statistic the prediction is of.
    pub statistic: Statistic,
    /// The blocks and the optimizer's time.
    pub info: PlanInfo,
}

/// The optimizer with one model: partitions a matrix and prepares the plan on a backend.
pub trait Planner<T: Scalar> {
    /// The model it optimizes with (the configuration is `plan-<model>`).
    fn model(&self) -> &str;
    /// Optimize `a` and prepare the plan on `backend`.
    fn plan<'a>(&self, backend: &'a dyn Backend<T>, a: &Csr<T>) -> Result<PlannedSpmv<'a, T>>;
}

/// The configuration name of a planner's plan.
pub fn plan_config(model: &str) -> String {
    format!("plan-{model}")
}

/// The optimizer with one model (004 §4): the dynamic program over row strips, the plan, and the
/// plan prepared on the backend ([`crate::optimize`]).
pub struct OptimizerPlanner<'p> {
    name: &'static str,
    section: &'p PrecisionProfile,
    params: FormatParams,
    by: Provenance,
}

impl<T: Scalar> Planner<T> for OptimizerPlanner<'_> {
    fn model(&self) -> &str {
        self.name
    }

    fn plan<'a>(&self, backend: &'a dyn Backend<T>, a: &Csr<T>) -> Result<PlannedSpmv<'a, T>> {
        let start = Instant::now();
        let model = optimize::block_model(self.name, self.section)?;
        let opts = OptimizeOptions {
            params: self.params.clone(),
            ..OptimizeOptions::default()
        };
        let opt = optimize::optimize(a, model.as_ref(), &opts)?;
        let plan = Plan::from_optimum(&opt, MatrixIdentity::of("evaluate", a), &self.by);
        let optimize_s = start.elapsed().as_secs_f64();
        let blocks = plan
            .blocks
            .iter()
            .map(|b| {
                let rows = b.row_range();
                PlanBlockInfo {
                    row_start: rows.start,
                    row_end: rows.end,
                    kernel: b.kernel.name(),
                }
            })
            .collect();
        let kernel = PreparedPlan::new(backend, a, &plan, "the plan")?;
        Ok(PlannedSpmv {
            kernel: Box::new(kernel),
            predicted: opt.predicted,
            statistic: self.section.statistic,
            info: PlanInfo {
                model: self.name.to_string(),
                blocks,
                optimize_s,
            },
        })
    }
}

/// The optimizer's planners for `precision`: one per model the optimizer can use
/// ([`optimize::MODEL_NAMES`]) that the profile has. `params` are the evaluation's format
/// parameters (the footprint cap applies to every block).
pub fn planners<'p, T: Scalar>(
    profile: Option<(&str, &'p Profile)>,
    precision: Precision,
    params: &FormatParams,
) -> Vec<Box<dyn Planner<T> + 'p>> {
    let Some((name, p)) = profile else {
        return Vec::new();
    };
    let Ok(section) = p.precision(precision) else {
        return Vec::new();
    };
    optimize::MODEL_NAMES
        .iter()
        .filter(|m| optimize::block_model(m, section).is_ok())
        .map(|&m| {
            Box::new(OptimizerPlanner {
                name: m,
                section,
                params: params.clone(),
                by: Provenance {
                    model: m.to_string(),
                    profile: name.to_string(),
                    device: p.device_name.clone(),
                    precision,
                },
            }) as Box<dyn Planner<T> + 'p>
        })
        .collect()
}

/// Whether this build has the optimizer.
pub const HAS_OPTIMIZER: bool = true;
