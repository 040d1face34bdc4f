//! Micro-benchmarks that measure a device's sanity bounds ([`DeviceBounds`]): the launch floor
//! (the fastest SpMV there is) and the bandwidth an SpMV reaches from L2 and from DRAM.
//!
//! They are benchmark matrices of [`super::synthetic`] like the suite's, timed the same way:
//!
//! * **launch**: every instrumented kernel on a 32 × 64 matrix with one entry per row; the floor
//!   is the least of their times;
//! * **l2**: ELL (one thread per row, coalesced) with 64 entries per row on a matrix whose working
//!   set is about half the L2 (skipped where the L2 size is unknown, as on the CPU);
//! * **dram**: the same with a working set of eight times the L2 (at least 512 MiB), within the
//!   memory free on the device.
//!
//! The instrumenting run ([`super::run_precision`]) then lowers the floor to, and raises the
//! ceilings to, anything the suite's own benchmarks reached. DRAM bandwidth is the larger of the backend's measured copy bandwidth (CUDA) and the dram
//! micro-benchmark's effective bandwidth; L2 bandwidth the largest of that, the l2
//! micro-benchmark's and the backend's measured L2 read bandwidth
//! ([`Backend::l2_read_bandwidth_gbs`]: on CUDA one long launch that re-reads a quarter of the L2,
//! `backend::cuda::l2`). The l2 SpMV alone does not isolate the L2: its x gathers through
//! hashed columns and its few-microsecond launch bound it near the DRAM figure (4.3 TB/s on the
//! H200), so a prediction of an L2-resident SpMV above DRAM speed would have been clamped. An SpMV-measured value is a lower bound of what the memory can deliver, so
//! a prediction above it is implausible rather than impossible; the load-time check of a profile
//! allows [`crate::model::bounds::MEASUREMENT_SLACK`].

use super::measure::{measure_fitting, variant_name, MeasureOptions, Measurement, Statistic};
use super::source::BenchmarkSource;
use super::suite::working_set_bytes;
use super::BenchmarkPoint;
use crate::backend::{Backend, Variant};
use crate::model::DeviceBounds;
use crate::{Error, Result, Scalar};
use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};

/// What a micro-benchmark measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MicroRole {
    /// The launch floor.
    Launch,
    /// Bandwidth from L2.
    L2,
    /// Bandwidth from DRAM.
    Dram,
}

/// One timed micro-benchmark.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MicroMeasurement {
    /// What it measures.
    pub role: MicroRole,
    /// Kernel.
    #[serde(with = "variant_name")]
    pub kernel: Variant,
    /// Rows.
    pub rows: u64,
    /// Columns.
    pub cols: u64,
    /// Entries per row.
    pub pnz: u64,
    /// Working set (format arrays + x + y), bytes.
    pub bytes: u64,
    /// Time by the profile's statistic, seconds.
    pub seconds: f64,
}

/// Entries per row of the bandwidth micro-benchmarks.
const BW_PNZ: u64 = 64;

/// An ELL point of about `bytes` working set (square, [`BW_PNZ`] per row).
fn ell_point(bytes: u64, val: u64) -> BenchmarkPoint {
    let per_row = BW_PNZ * (4 + val) + 2 * val;
    let rows = (bytes / per_row).max(2 * BW_PNZ);
    BenchmarkPoint {
        variant: Variant::Ell,
        rows,
        cols: rows,
        pnz: BW_PNZ,
        strips: 1,
    }
}

/// The micro-benchmarks for the kernels `variants`, with the L2 size (0: unknown) and the bytes
/// one benchmark may use.
pub fn plan(
    variants: &[Variant],
    l2_bytes: u64,
    budget: u64,
    val: u64,
) -> Vec<(MicroRole, BenchmarkPoint)> {
    let mut v: Vec<(MicroRole, BenchmarkPoint)> = variants
        .iter()
        .map(|&variant| {
            (
                MicroRole::Launch,
                BenchmarkPoint {
                    variant,
                    rows: 32,
                    cols: 64,
                    pnz: 1,
                    strips: 1,
                },
            )
        })
        .collect();
    if l2_bytes > 0 {
        v.push((MicroRole::L2, ell_point(l2_bytes / 2, val)));
    }
    let dram = (8 * l2_bytes).max(512 << 20).min(budget / 2);
    let dram = ell_point(dram, val);
    if dram.rows.saturating_mul(dram.pnz) <= u32::MAX as u64 {
        v.push((MicroRole::Dram, dram));
    }
    v
}

/// Measure the bounds of the device behind `backend` (see the module documentation).
#[allow(clippy::too_many_arguments)]
pub fn measure_bounds<T: Scalar>(
    backend: &dyn Backend<T>,
    source: &dyn BenchmarkSource<T>,
    variants: &[Variant],
    budget: u64,
    opts: &MeasureOptions,
    statistic: Statistic,
    progress: &ProgressBar,
) -> Result<(DeviceBounds, Vec<MicroMeasurement>)> {
    let val = T::PRECISION.bytes() as u64;
    let l2_bytes = backend.l2_bytes().unwrap_or(0);
    let planned = plan(variants, l2_bytes, budget, val);
    let points: Vec<BenchmarkPoint> = planned.iter().map(|(_, p)| *p).collect();
    progress.inc_length(points.len() as u64);
    let (ms, _) = measure_fitting(backend, source, &points, opts, progress, true)?;
    let mut micro = Vec::new();
    for m in &ms {
        let role = planned
            .iter()
            .find(|(_, p)| p.variant == m.kernel && p.rows == m.rows && p.pnz == m.pnz)
            .map(|(r, _)| *r)
            .ok_or_else(|| Error::Invalid("micro-benchmark result without its plan".into()))?;
        micro.push(MicroMeasurement {
            role,
            kernel: m.kernel,
            rows: m.rows,
            cols: m.cols,
            pnz: m.pnz,
            bytes: working_set_bytes(m.kernel, m.rows, m.cols, m.pnz, val),
            seconds: m.time(statistic),
        });
    }
    let gbs = |role: MicroRole| {
        micro
            .iter()
            .filter(|m| m.role == role)
            .map(|m| m.bytes as f64 / m.seconds / 1e9)
            .fold(0.0, f64::max)
    };
    let launch_floor_s = micro
        .iter()
        .filter(|m| m.role == MicroRole::Launch)
        .map(|m| m.seconds)
        .fold(f64::INFINITY, f64::min);
    if !launch_floor_s.is_finite() {
        return Err(Error::Invalid(
            "no launch micro-benchmark could be measured".into(),
        ));
    }
    let dram_gbs = gbs(MicroRole::Dram).max(backend.copy_bandwidth_gbs().unwrap_or(0.0));
    if dram_gbs <= 0.0 {
        return Err(Error::Invalid(
            "no DRAM bandwidth: the dram micro-benchmark did not fit and the backend measures no \
             copy bandwidth"
                .into(),
        ));
    }
    let l2_read_gbs = if l2_bytes > 0 {
        backend.l2_read_bandwidth_gbs()
    } else {
        None
    };
    let bounds = DeviceBounds {
        launch_floor_s,
        dram_gbs,
        l2_gbs: gbs(MicroRole::L2)
            .max(dram_gbs)
            .max(l2_read_gbs.unwrap_or(0.0)),
        l2_bytes,
        l2_read_gbs,
    };
    bounds.validate()?;
    Ok((bounds, micro))
}

/// Lower the launch floor to, and raise the bandwidth ceilings to, what the SpMVs `ms` (of
/// values of `val` bytes, timed on the same device) reached: the fastest of them, and the highest
/// bandwidth of those whose working set fits in L2 (the L2 ceiling) or not (the DRAM ceiling,
/// which the L2 ceiling is never below).
pub fn raise_bounds(bounds: &mut DeviceBounds, ms: &[Measurement], statistic: Statistic, val: u64) {
    for m in ms {
        let t = m.time(statistic);
        let bytes = working_set_bytes(m.kernel, m.rows, m.cols, m.pnz, val);
        let gbs = bytes as f64 / t / 1e9;
        bounds.launch_floor_s = bounds.launch_floor_s.min(t);
        if bounds.l2_bytes > 0 && bytes <= bounds.l2_bytes {
            bounds.l2_gbs = bounds.l2_gbs.max(gbs);
        } else {
            bounds.dram_gbs = bounds.dram_gbs.max(gbs);
            bounds.l2_gbs = bounds.l2_gbs.max(bounds.dram_gbs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_sizes_the_bandwidth_benchmarks() {
        let v = [Variant::Ell, Variant::Coo];
        let p = plan(&v, 60 << 20, 100 << 30, 8);
        assert_eq!(p.iter().filter(|(r, _)| *r == MicroRole::Launch).count(), 2);
        let ws = |r: MicroRole| {
            p.iter()
                .find(|(x, _)| *x == r)
                .map(|(_, q)| working_set_bytes(q.variant, q.rows, q.cols, q.pnz, 8))
                .unwrap()
        };
        // About half the L2, and eight L2s.
        assert!((ws(MicroRole::L2) as f64 - (30 << 20) as f64).abs() < 1e4);
        // max(8 × 60 MiB, 512 MiB) = 512 MiB.
        assert!((ws(MicroRole::Dram) as f64 - (512u64 << 20) as f64).abs() < 1e4);
        // No L2 size: no L2 benchmark; a small budget caps the DRAM one.
        let p = plan(&v, 0, 64 << 20, 8);
        assert!(p.iter().all(|(r, _)| *r != MicroRole::L2));
        let d = p.iter().find(|(r, _)| *r == MicroRole::Dram).unwrap().1;
        assert!(working_set_bytes(d.variant, d.rows, d.cols, d.pnz, 8) <= 32 << 20);
    }
}
