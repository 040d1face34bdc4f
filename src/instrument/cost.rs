//! A rough estimate of what a planned suite costs on a GPU, so that a device session can be
//! sized before it runs (`instrument --plan-only`) and the plans can be measured cheapest first.
//!
//! Per benchmark: a fixed cost (the timing protocol's 30 ms warm-up and 21 batches of at least
//! 0.5 ms, [`CostRates::per_benchmark_s`]), [`CostRates::spmvs`] SpMVs each moving the working
//! set at [`CostRates::dram_bytes_per_s`] (the scalar CSR kernel [`CostRates::scalar_slowdown`]
//! times slower: one thread per row does not coalesce), and, for a matrix built on the host, the
//! build (once per matrix: the kernels of one matrix are adjacent, see
//! [`super::stat_source::DistributedSource`]), the conversion to ELL or JAD and the upload.
//!
//! **These are assumptions, not measurements of the GPU machine**: the host rates are the build
//! machine's CPU time per non-zero (f64, 2.7·10⁵ rows of mean 256, user + system time: build
//! ≈ 8 ns, ELL conversion ≈ 30 ns, JAD ≈ 30 ns) divided by 6 effective cores of the GPU
//! machine's 16 (the conversions are memory-bound and page-fault on fresh allocations); the
//! upload is pageable memory over PCIe (15 GB/s). The device rates reproduce the embedded
//! profiles' constant-row suites (estimated 16 s / 20 s for f32 / f64 on the H200, measured 18 s
//! / 20 s including the micro-benchmarks). The instrument's log gives the real wall time; the
//! estimate only orders and sizes.

use super::rowdist::{RowDist, RowLengths};
use super::suite::working_set_bytes;
use super::BenchmarkPoint;
use crate::backend::Variant;
use crate::Precision;
use serde::Serialize;

/// The rates of the estimate (see the module documentation).
#[derive(Clone, Copy, Debug)]
pub struct CostRates {
    /// Device memory bandwidth an SpMV reaches, bytes per second.
    pub dram_bytes_per_s: f64,
    /// How many times slower the one-thread-per-row CSR kernel is per byte.
    pub scalar_slowdown: f64,
    /// SpMVs per benchmark when one SpMV exceeds a batch (pilot, verification, ≥ 2 warm-up
    /// batches, 21 timed batches of 2).
    pub spmvs: f64,
    /// Fixed seconds per benchmark (warm-up in time, minimum batch length).
    pub per_benchmark_s: f64,
    /// Host seconds per non-zero to build a CSR.
    pub build_s_per_nnz: f64,
    /// Host seconds per non-zero to convert a CSR to ELL.
    pub ell_s_per_nnz: f64,
    /// Host seconds per non-zero to convert a CSR to JAD.
    pub jad_s_per_nnz: f64,
    /// Host-to-device bytes per second.
    pub upload_bytes_per_s: f64,
    /// Whether the statistical matrices are built on the host (`instrument --source host`, or
    /// a backend without a device generator) rather than generated on the device, whose few
    /// passes over the arrays the estimate leaves out.
    pub host_built: bool,
}

impl Default for CostRates {
    fn default() -> Self {
        CostRates {
            dram_bytes_per_s: 3.0e12,
            scalar_slowdown: 4.0,
            spmvs: 48.0,
            per_benchmark_s: 0.045,
            build_s_per_nnz: 8e-9 / 6.0,
            ell_s_per_nnz: 30e-9 / 6.0,
            jad_s_per_nnz: 30e-9 / 6.0,
            upload_bytes_per_s: 15e9,
            host_built: false,
        }
    }
}

/// The estimated cost of a list of benchmarks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Estimate {
    /// Benchmarks.
    pub benchmarks: usize,
    /// Non-zeros of all of them.
    pub nnz: f64,
    /// Seconds of SpMVs and timing protocol on the device.
    pub device_s: f64,
    /// Seconds of building, converting and uploading on the host.
    pub host_s: f64,
}

impl Estimate {
    /// Device plus host seconds.
    pub fn seconds(&self) -> f64 {
        self.device_s + self.host_s
    }
}

impl std::ops::Add for Estimate {
    type Output = Estimate;
    /// The sum of two estimates.
    fn add(self, o: Estimate) -> Estimate {
        Estimate {
            benchmarks: self.benchmarks + o.benchmarks,
            nnz: self.nnz + o.nnz,
            device_s: self.device_s + o.device_s,
            host_s: self.host_s + o.host_s,
        }
    }
}

/// Estimate `points` in `precision`, their matrices built on the device (`lengths` = `None`:
/// the constant-row suite, [`super::DeviceSource`]) or with `lengths` by
/// [`super::stat_source::DistributedSource`]: on the device, or on the host where
/// [`CostRates::host_built`] says so (constant rows on the device even then, except JAD).
pub fn estimate(
    points: &[BenchmarkPoint],
    lengths: Option<&RowLengths>,
    precision: Precision,
    r: &CostRates,
) -> Estimate {
    let val = precision.bytes() as u64;
    let mut e = Estimate::default();
    let mut last_built = None;
    for p in points {
        let width = lengths.map_or(p.pnz, |l| l.max_bound(p.pnz, p.cols));
        let bytes = match p.variant {
            // ELL stores the longest row's width; the others hold the mean per row.
            Variant::Ell => working_set_bytes(p.variant, p.rows, p.cols, width, val),
            _ => working_set_bytes(p.variant, p.rows, p.cols, p.pnz, val),
        } as f64;
        let nnz = (p.rows * p.pnz) as f64;
        let slow = match p.variant {
            Variant::Csr { threads_per_row: 1 } => r.scalar_slowdown,
            _ => 1.0,
        };
        e.benchmarks += 1;
        e.nnz += nnz;
        e.device_s += r.per_benchmark_s + r.spmvs * slow * bytes / r.dram_bytes_per_s;
        let on_host = r.host_built
            && match lengths.map(|l| l.dist) {
                None => false,
                Some(RowDist::Constant) => p.variant == Variant::Jad,
                Some(_) => true,
            };
        if on_host {
            let key = (p.rows, p.cols, p.pnz);
            if last_built != Some(key) {
                e.host_s += r.build_s_per_nnz * nnz;
                last_built = Some(key);
            }
            e.host_s += match p.variant {
                Variant::Ell => r.ell_s_per_nnz * nnz,
                Variant::Jad => r.jad_s_per_nnz * nnz,
                _ => 0.0,
            } + bytes / r.upload_bytes_per_s;
        }
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instrument::Spread;

    #[test]
    fn host_built_matrices_cost_more_and_are_built_once() {
        let r = CostRates {
            host_built: true,
            ..CostRates::default()
        };
        let pts: Vec<BenchmarkPoint> = [Variant::Csr { threads_per_row: 1 }, Variant::Ell]
            .into_iter()
            .map(|variant| BenchmarkPoint {
                variant,
                rows: 1 << 20,
                cols: 1 << 20,
                pnz: 64,
                strips: 1,
            })
            .collect();
        let device = estimate(&pts, None, Precision::F64, &r);
        assert_eq!(device.host_s, 0.0);
        let normal = RowLengths {
            dist: RowDist::Normal,
            spread: Spread::Sqrt,
        };
        let host = estimate(&pts, Some(&normal), Precision::F64, &r);
        assert!(
            host.device_s > device.device_s,
            "ELL pads to the longest row"
        );
        let nnz = 64.0 * (1u64 << 20) as f64;
        // One build for both kernels, one ELL conversion, two uploads.
        let n = 1u64 << 20;
        let bytes = working_set_bytes(pts[0].variant, n, n, 64, 8)
            + working_set_bytes(Variant::Ell, n, n, normal.max_bound(64, n), 8);
        let want =
            (r.build_s_per_nnz + r.ell_s_per_nnz) * nnz + bytes as f64 / r.upload_bytes_per_s;
        assert!(
            (host.host_s / want - 1.0).abs() < 1e-12,
            "{} {want}",
            host.host_s
        );
        let constant = RowLengths {
            dist: RowDist::Constant,
            spread: Spread::Sqrt,
        };
        assert_eq!(estimate(&pts, Some(&constant), Precision::F64, &r), device);
        // Generated on the device: no host time, the same device time.
        let gen = estimate(&pts, Some(&normal), Precision::F64, &CostRates::default());
        assert_eq!((gen.host_s, gen.device_s), (0.0, host.device_s));
        assert!(
            estimate(&pts, None, Precision::F32, &r).device_s < device.device_s,
            "f32 moves fewer bytes"
        );
    }
}
