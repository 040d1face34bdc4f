//! Every model in the build, and the optimizer, as the evaluation sees them.
//!
//! Models are evaluated side by side through the one [`Model`] trait: a new model only needs a
//! line in [`models`] to appear in every record and every table of the report. The optimizer
//! enters through [`Planner`]: its plan is one more configuration (`plan-<model>`), measured like
//! a kernel and predicted by the model it was optimized with.

use super::record::PlanInfo;
use crate::backend::{Backend, PreparedSpmv};
use crate::instrument::Statistic;
use crate::model::Model;
use crate::profile::Profile;
use crate::{Csr, Precision, Result, Scalar};

/// A model and the statistic of the timed runs it predicts (what its predictions are compared
/// with: the papers' warm-up-excluding mean, or the median for profiles fitted on noisy hosts).
pub struct EvalModel {
    /// The model.
    pub model: Box<dyn Model>,
    /// What it predicts.
    pub statistic: Statistic,
}

/// The models of `profile` for `precision` (none without a profile or without that precision's
/// section).
pub fn models(profile: Option<&Profile>, precision: Precision) -> Vec<EvalModel> {
    let Some(section) = profile.and_then(|p| p.precision(precision).ok()) else {
        return Vec::new();
    };
    // One entry per model family of the build.
    vec![EvalModel {
        statistic: section.model.statistic,
        model: Box::new(section.model.clone()),
    }]
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

/// The optimizer's planners of the build for `precision`: none while the optimizer (branch
/// `opt`, `crate::optimize`) is not part of the build. The report says so.
pub fn planners<T: Scalar>(
    profile: Option<&Profile>,
    precision: Precision,
) -> Vec<Box<dyn Planner<T>>> {
    let _ = (profile, precision);
    Vec::new()
}

/// Whether this build has the optimizer.
pub const HAS_OPTIMIZER: bool = false;
