//! One instrumenting run for one precision: measure the device bounds, plan the suite, time it,
//! fit the models — the analytical one and, where the suite asks for them, the statistical ones
//! (one per row-length distribution, on their own benchmark matrices, generated on the device
//! where the backend can and `source` is not host-only, see [`DistributedSource`]).

use super::measure::TIME_BUDGET;
use super::micro::{measure_bounds, raise_bounds};
use super::{
    measure_fitting, plan, BenchmarkSource, DeviceLimits, DistributedSource, MeasureOptions,
    Statistic, SuiteConfig,
};
use crate::backend::Backend;
use crate::model::{AnalyticalModel, NamedModel, StatisticalModel, StoredModel};
use crate::profile::PrecisionProfile;
use crate::{Result, Scalar};
use indicatif::ProgressBar;
use std::time::Instant;

/// Measure the device's sanity bounds ([`measure_bounds`]), plan the suite for `limits`, time
/// every benchmark on `backend` with matrices from `source` — skipping, with a note, those that
/// do not fit in the device memory free when they are prepared — and fit the models to
/// `statistic` of the runs. `progress` gets its length raised and advances per benchmark.
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
    let budget = (limits.global_mem_bytes as f64 * suite.memory_fraction) as u64;
    // The micro-benchmarks and the analytical suite are measured whole (its model is every
    // profile's base); the time budget applies to the statistical suites.
    let whole = MeasureOptions {
        deadline: None,
        ..opts.clone()
    };
    let (mut bounds, micro) = measure_bounds(
        backend,
        source,
        &suite.variants(),
        budget,
        &whole,
        statistic,
        progress,
    )?;
    let planned = plan(limits, suite, T::PRECISION)?;
    progress.inc_length(planned.points.len() as u64);
    let (measurements, notes) =
        measure_fitting(backend, source, &planned.points, &whole, progress, true)?;
    // The suite's benchmarks are SpMVs on the same device: they raise the bounds too.
    raise_bounds(
        &mut bounds,
        &measurements,
        statistic,
        T::PRECISION.bytes() as u64,
    );
    let model = AnalyticalModel::fit(T::PRECISION, limits, statistic, &measurements)?;
    let mut models = vec![NamedModel::new(
        "analytical",
        StoredModel::Analytical(model),
    )];
    let mut skipped = planned.skipped;
    let mut notes = notes;
    if let Some(stat) = &suite.statistical {
        for &dist in &stat.distributions {
            let planned = stat.plan(limits, dist, T::PRECISION, suite.memory_fraction)?;
            progress.inc_length(planned.points.len() as u64);
            let mut src = DistributedSource::new(dist, stat.spread);
            if source.host_only() {
                src = src.on_host();
            }
            let (ms, n) = measure_fitting(backend, &src, &planned.points, opts, progress, true)?;
            // Their times are SpMVs on the same device too (bandwidths are left to the
            // constant-row benchmarks, whose working sets are exact).
            for m in &ms {
                bounds.launch_floor_s = bounds.launch_floor_s.min(m.time(statistic));
            }
            let name = StatisticalModel::name_of(dist);
            let cut = n.iter().filter(|n| n.ends_with(TIME_BUDGET)).count();
            let fitted =
                StatisticalModel::fit(T::PRECISION, limits, statistic, dist, stat.spread, ms);
            skipped += planned.skipped;
            notes.extend(n.into_iter().map(|n| format!("{name}: {n}")));
            match fitted {
                Ok(m) => models.push(NamedModel::new(name, StoredModel::Statistical(m))),
                // A suite cut by the time budget may lack a relationship's points: the profile
                // is written without that model, and says why.
                Err(e) if cut > 0 => notes.push(format!(
                    "{name}: not fitted ({cut} benchmarks cut by the time budget): {e}"
                )),
                Err(e) => return Err(e),
            }
        }
    }
    Ok(PrecisionProfile {
        precision: T::PRECISION,
        limits: limits.clone(),
        statistic,
        bounds: Some(bounds),
        micro,
        models,
        skipped: skipped + notes.len(),
        skipped_notes: notes,
        seconds: start.elapsed().as_secs_f64(),
        measurements,
    })
}
