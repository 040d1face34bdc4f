//! `instrument --bounds-only`: measure only the device's sanity bounds (the launch, L2 and DRAM
//! micro-benchmarks and the backend's L2 read bandwidth: seconds, not the minutes of a suite) and
//! write the `--base` profile with them, its models and measurements unchanged. The new bounds
//! are raised by the base's own benchmarks exactly as a full run raises them
//! ([`crate::instrument::micro::raise_bounds`]), so that the profile's load-time check (no
//! benchmark outside its bounds) holds as it did.

use super::common;
use crate::backend::Backend;
use crate::instrument::micro::{measure_bounds, raise_bounds};
use crate::instrument::{BenchmarkSource, MeasureOptions};
use crate::profile::{PrecisionProfile, Profile};
use crate::{Precision, Scalar};
use anyhow::Context;
use indicatif::ProgressBar;

/// Re-measure the bounds of every precision of `base` on `be` (same device required) and
/// return the profile with them; prints the old and new bounds.
pub fn refresh<B: Backend<f32> + Backend<f64>>(
    be: &B,
    mut base: Profile,
    source32: &dyn BenchmarkSource<f32>,
    source64: &dyn BenchmarkSource<f64>,
    opts: &MeasureOptions,
) -> anyhow::Result<Profile> {
    let here = Backend::<f64>::device_name(be);
    if here != base.device_name {
        anyhow::bail!(
            "--bounds-only: the base profile was measured on {}, this is {here}",
            base.device_name
        );
    }
    let opts = MeasureOptions {
        deadline: None,
        ..opts.clone()
    };
    let pb = common::progress(0, "bounds");
    let mut t = common::table(&[
        "precision",
        "launch floor",
        "DRAM GB/s",
        "L2 GB/s",
        "L2 read GB/s",
        "",
    ]);
    let variants = base.suite.variants();
    let fraction = base.suite.memory_fraction;
    for p in &mut base.precisions {
        let old = p.bounds.clone();
        match p.precision {
            Precision::F32 => one::<f32>(be, source32, p, &variants, fraction, &opts, &pb),
            Precision::F64 => one::<f64>(be, source64, p, &variants, fraction, &opts, &pb),
        }
        .with_context(|| format!("measuring the {} bounds", p.precision))?;
        for (what, b) in [("before", old.as_ref()), ("now", p.bounds.as_ref())] {
            if let Some(b) = b {
                t.add_row(vec![
                    p.precision.to_string(),
                    common::fmt_seconds(b.launch_floor_s),
                    format!("{:.0}", b.dram_gbs),
                    format!("{:.0}", b.l2_gbs),
                    b.l2_read_gbs.map_or("—".into(), |g| format!("{g:.0}")),
                    what.into(),
                ]);
            }
        }
    }
    pb.finish_and_clear();
    println!("{t}");
    Ok(base)
}

fn one<T: Scalar>(
    be: &dyn Backend<T>,
    source: &dyn BenchmarkSource<T>,
    p: &mut PrecisionProfile,
    variants: &[crate::backend::Variant],
    fraction: f64,
    opts: &MeasureOptions,
    pb: &ProgressBar,
) -> anyhow::Result<()> {
    let budget = (p.limits.global_mem_bytes as f64 * fraction) as u64;
    let (mut bounds, micro) = measure_bounds(be, source, variants, budget, opts, p.statistic, pb)?;
    raise_bounds(
        &mut bounds,
        &p.measurements,
        p.statistic,
        T::PRECISION.bytes() as u64,
    );
    bounds.validate()?;
    p.bounds = Some(bounds);
    p.micro = micro;
    Ok(())
}
