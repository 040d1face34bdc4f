//! `sparsecast instrument --cross-from REFERENCE`: measure only 003's benchmark matrices (and
//! the device's bounds) on this device and write a profile whose `cross` model carries the
//! reference's times here.

use crate::backend::Backend;
use crate::instrument::micro::{measure_bounds, raise_bounds};
use crate::instrument::{
    measure_fitting, plan, BenchmarkSource, DeviceLimits, MeasureOptions, Statistic,
};
use crate::model::cross::Selection;
use crate::model::{CrossModel, NamedModel, StoredModel};
use crate::profile::{PrecisionProfile, Profile};
use crate::{Precision, Scalar};
use anyhow::Context;
use indicatif::ProgressBar;
use std::time::Instant;

/// One precision: choose the benchmarks from `reference`'s suite, plan them for `limits`, time
/// them with `source` on `backend`, fit the cross model.
pub fn run_precision<T: Scalar>(
    backend: &dyn Backend<T>,
    source: &dyn BenchmarkSource<T>,
    reference: &Profile,
    limits: &DeviceLimits,
    opts: &MeasureOptions,
    statistic: Statistic,
    pb: &ProgressBar,
) -> anyhow::Result<PrecisionProfile> {
    let start = Instant::now();
    let p = T::PRECISION;
    let rp = reference.precision(p)?;
    let sel = Selection::choose(&rp.measurements, &rp.limits, limits)?;
    let keys = sel.keys();
    let mut suite = reference.suite.clone();
    suite.sub_strips.clear();
    suite.statistical = None;
    // Every selected benchmark must be planned on this device (the reference's grid values).
    for k in &keys {
        let (list, v) = match k.kernel {
            crate::backend::Variant::Coo => (&mut suite.coo_pnz, k.pnz),
            crate::backend::Variant::Ell => (&mut suite.ell_pnz, k.pnz),
            _ => (&mut suite.csr_pnz, k.pnz),
        };
        if !list.contains(&v) {
            list.push(v);
            list.sort_unstable();
        }
        if k.kernel != crate::backend::Variant::Coo && !suite.strips.contains(&k.strips) {
            suite.strips.push(k.strips);
            suite.strips.sort_unstable();
        }
    }
    let planned = plan(limits, &suite, p)?;
    let points: Vec<_> = planned
        .points
        .into_iter()
        .filter(|pt| {
            keys.iter()
                .any(|k| k.kernel == pt.variant && k.strips == pt.strips && k.pnz == pt.pnz)
        })
        .collect();
    pb.inc_length(points.len() as u64);
    let (ms, notes) = measure_fitting(backend, source, &points, opts, pb, true)?;
    // The device's bounds (seconds): the DRAM bandwidth and L2 size the bandwidth transfer of
    // our model reads (`crate::learn::cross_bw`), raised by these benchmarks as a full run
    // raises them.
    let budget = (limits.global_mem_bytes as f64 * reference.suite.memory_fraction) as u64;
    let variants = reference.suite.variants();
    let (mut bounds, micro) =
        measure_bounds(backend, source, &variants, budget, opts, statistic, pb)
            .with_context(|| format!("measuring the {p} bounds"))?;
    raise_bounds(&mut bounds, &ms, statistic, p.bytes() as u64);
    bounds.validate()?;
    let cross = CrossModel::fit(
        p,
        sel,
        (&rp.limits, &rp.measurements),
        (limits, &ms),
        rp.analytical().ok().cloned(),
    )
    .with_context(|| format!("fitting 003's cross model ({p})"))?;
    Ok(PrecisionProfile {
        precision: p,
        limits: limits.clone(),
        statistic,
        bounds: Some(bounds),
        micro,
        models: vec![NamedModel::new("cross", StoredModel::Cross(cross))],
        skipped: notes.len(),
        skipped_notes: notes,
        seconds: start.elapsed().as_secs_f64(),
        measurements: ms,
    })
}

/// Print what was measured: per precision the benchmarks, seconds and the factors.
pub fn print_summary(p: &Profile, reference: &Profile) {
    println!(
        "{} — {} (cross-architecture from {})",
        p.backend, p.device_name, reference.device_name
    );
    for s in &p.precisions {
        let full = reference
            .precision(s.precision)
            .map_or(0, |r| r.measurements.len());
        println!(
            "{}: {} benchmark matrices in {:.1} s (the reference's full suite: {full})",
            s.precision,
            s.measurements.len(),
            s.seconds
        );
    }
}

/// The precisions both asked for and measured on the reference.
pub fn precisions(reference: &Profile, asked: &[Precision]) -> Vec<Precision> {
    asked
        .iter()
        .copied()
        .filter(|p| reference.precision(*p).is_ok())
        .collect()
}
