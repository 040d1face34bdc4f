//! One instrumenting run for one precision: plan the suite, time it, fit the model.

use super::{measure, plan, BenchmarkSource, DeviceLimits, MeasureOptions, Statistic, SuiteConfig};
use crate::backend::Backend;
use crate::model::AnalyticalModel;
use crate::profile::PrecisionProfile;
use crate::{Result, Scalar};
use indicatif::ProgressBar;
use std::time::Instant;

/// Plan the suite for `limits`, time every benchmark on `backend` with matrices from `source`,
/// and fit the analytical model to `statistic` of the runs. `progress` gets its length raised and
/// advances per benchmark.
pub fn run_precision<T: Scalar>(
    backend: &dyn Backend<T>,
    source: &dyn BenchmarkSource<T>,
    limits: &DeviceLimits,
    suite: &SuiteConfig,
    opts: &MeasureOptions,
    statistic: Statistic,
    progress: &ProgressBar,
) -> Result<PrecisionProfile> {
    let start = Instant::now();
    let planned = plan(limits, suite, T::PRECISION)?;
    progress.inc_length(planned.points.len() as u64);
    let measurements = measure(backend, source, &planned.points, opts, progress)?;
    let model = AnalyticalModel::fit(T::PRECISION, limits, statistic, &measurements)?;
    Ok(PrecisionProfile {
        model,
        skipped: planned.skipped,
        seconds: start.elapsed().as_secs_f64(),
        measurements,
    })
}
