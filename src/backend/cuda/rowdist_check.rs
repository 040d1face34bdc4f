//! The proof that the statistical models' benchmark matrices generated on the device
//! ([`super::CudaBackend`]'s `Backend::prepare_distributed`) are the host-built ones, and the
//! timing of both ways (`sparsecast selftest --backend cuda`, its "gen …" rows, and
//! `--generation-timing`).
//!
//! Each case ([`cases`]: normal, uniform and constant rows; lengths clamped at 0 and at the
//! columns; rows not a multiple of any block; three levels of scan) is generated on the device
//! for each kernel (`csr-t16`, `csr-scalar`, `ell`, `jad`) and each precision, and compared with
//! the host build ([`RowLengths::build_csr`]) converted and uploaded by [`CudaPrepared::new`]:
//! * every array the kernel reads (row pointers, ELL slots with their padding, JAD's permutation
//!   and diagonal offsets, columns, values) equal, element for element, and the same footprint;
//! * one SpMV with the device-generated x, y poisoned (NaN) first, within the self-test's
//!   tolerance of the f64 reference of the host-built matrix ([`selftest::check`]).

use super::prepared::{CudaPrepared, Dumped};
use super::{CudaBackend, CudaScalar};
use crate::backend::selftest::{self, CaseResult, Outcome};
use crate::backend::{KernelConfig, Variant};
use crate::instrument::{synthetic, RowDist, RowLengths, Spread, STAT_KERNELS};
use crate::{Csr, Error, Result};
use std::time::Instant;

/// One benchmark matrix of the check.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GenCase {
    /// Rows.
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    /// Mean row length.
    pub pnz: usize,
    /// Spread of the lengths.
    pub spread: Spread,
}

impl GenCase {
    /// The name in the report, e.g. `normal R=1000 C=1000 P=4 σ = √P_NZ`.
    pub fn name(&self, dist: RowDist) -> String {
        format!(
            "{} R={} C={} P={} {}",
            dist.name(),
            self.rows,
            self.cols,
            self.pnz,
            self.spread
        )
    }
}

/// The matrices of the check (each in the three distributions): one row; lengths clamped at 0
/// (mean 1 and 4); lengths clamped at the columns (mean 60 of 64); wide spreads; row counts
/// that are no multiple of 32, 256 or 1024; and 1,100,003 rows, whose scan has three levels.
pub fn cases() -> Vec<GenCase> {
    let c = |rows, cols, pnz, spread| GenCase {
        rows,
        cols,
        pnz,
        spread,
    };
    let cv = |cv| Spread::Relative { cv };
    vec![
        c(1, 1, 1, Spread::Sqrt),
        c(777, 777, 1, Spread::Sqrt),
        c(1000, 1000, 4, Spread::Sqrt),
        c(500, 64, 60, Spread::Sqrt),
        c(10_007, 10_007, 33, cv(0.5)),
        c(65_537, 65_537, 50, cv(1.0)),
        c(100_003, 100_003, 256, Spread::Sqrt),
        c(1_100_003, 1_100_003, 4, Spread::Sqrt),
    ]
}

/// The distributions of the check.
pub const DISTS: [RowDist; 3] = [RowDist::Normal, RowDist::Uniform, RowDist::Constant];

/// How many cases [`run`] runs for `variants` (both precisions).
pub fn count(variants: &[Variant]) -> usize {
    2 * cases().len() * DISTS.len() * kernels(variants).len()
}

/// The statistical kernels among `variants`.
fn kernels(variants: &[Variant]) -> Vec<Variant> {
    STAT_KERNELS
        .into_iter()
        .filter(|v| variants.contains(v))
        .collect()
}

/// Run the check for the statistical kernels among `variants` in f32 and f64; `progress` gets
/// every case. A case's variant is `gen <kernel>`.
pub fn run(
    be: &CudaBackend,
    variants: &[Variant],
    progress: &mut dyn FnMut(&CaseResult),
) -> Vec<CaseResult> {
    let mut out = run_precision::<f32>(be, variants, progress);
    out.extend(run_precision::<f64>(be, variants, progress));
    out
}

fn run_precision<T: CudaScalar>(
    be: &CudaBackend,
    variants: &[Variant],
    progress: &mut dyn FnMut(&CaseResult),
) -> Vec<CaseResult> {
    let kernels = kernels(variants);
    let mut out = Vec::new();
    if kernels.is_empty() {
        return out;
    }
    for case in cases() {
        for dist in DISTS {
            let lengths = RowLengths {
                dist,
                spread: case.spread,
            };
            let csr = lengths.build_csr::<T>(case.rows, case.cols, case.pnz, u64::MAX);
            for &v in &kernels {
                let outcome = match &csr {
                    Ok(csr) => check_case(be, csr, &lengths, case, v),
                    Err(e) => Outcome::Fail {
                        reason: format!("host build: {e}"),
                    },
                };
                let r = CaseResult {
                    variant: format!("gen {}", v.name()),
                    precision: T::PRECISION,
                    block_size: KernelConfig::DEFAULT_BLOCK_SIZE,
                    matrix: case.name(dist),
                    outcome,
                };
                progress(&r);
                out.push(r);
            }
        }
    }
    out
}

/// One case: generate, compare the arrays, run.
fn check_case<T: CudaScalar>(
    be: &CudaBackend,
    csr: &Csr<T>,
    lengths: &RowLengths,
    case: GenCase,
    variant: Variant,
) -> Outcome {
    let fail = |reason: String| Outcome::Fail { reason };
    let cfg = KernelConfig::new(variant);
    let dev = CudaPrepared::<T>::new_distributed(be, case.rows, case.cols, case.pnz, lengths, &cfg);
    let mut dev = match dev {
        Ok(d) => d,
        Err(e) => return fail(format!("device generation: {e}")),
    };
    let host = match CudaPrepared::<T>::new(be, csr, &cfg) {
        Ok(h) => h,
        Err(e) => return fail(format!("host prepare: {e}")),
    };
    use crate::backend::PreparedSpmv;
    if dev.footprint_bytes() != host.footprint_bytes()
        || dev.effective_bytes() != host.effective_bytes()
    {
        return fail(format!(
            "footprint {} / effective {} bytes on the device, {} / {} from the host",
            dev.footprint_bytes(),
            dev.effective_bytes(),
            host.footprint_bytes(),
            host.effective_bytes()
        ));
    }
    match (dev.arrays(), host.arrays()) {
        (Ok(d), Ok(h)) => {
            if let Err(e) = compare(&d, &h) {
                return fail(e);
            }
        }
        (Err(e), _) | (_, Err(e)) => return fail(format!("reading arrays back: {e}")),
    }
    drop(host);
    // x as the device generated it: the contract's input vector.
    let x = synthetic::x_vector::<T>(case.cols);
    let y = dev.poison_y().and_then(|_| dev.run()).and_then(|_| dev.y());
    match y {
        Ok(y) => match selftest::check(csr, &x, &y) {
            Ok((worst, rel)) => Outcome::Pass { worst, rel },
            Err(e) => fail(format!("SpMV: {e}")),
        },
        Err(e) => fail(format!("SpMV: {e}")),
    }
}

/// The first difference between the device's and the host's kernel arguments, if any (values
/// compared bit for bit).
pub fn compare<T: CudaScalar>(
    dev: &[Dumped<T>],
    host: &[Dumped<T>],
) -> std::result::Result<(), String> {
    if dev.len() != host.len() {
        return Err(format!(
            "{} kernel arguments on the device, {} from the host",
            dev.len(),
            host.len()
        ));
    }
    for (a, (d, h)) in dev.iter().zip(host).enumerate() {
        let first = |n: usize, m: usize, eq: &dyn Fn(usize) -> bool| -> Option<String> {
            if n != m {
                return Some(format!(
                    "argument {a}: {n} elements on the device, {m} from the host"
                ));
            }
            (0..n)
                .find(|&i| !eq(i))
                .map(|i| format!("argument {a}: first difference at element {i} of {n}"))
        };
        let diff = match (d, h) {
            (Dumped::U32(x), Dumped::U32(y)) => {
                (x != y).then(|| format!("argument {a}: {x} on the device, {y} from the host"))
            }
            (Dumped::Idx(x), Dumped::Idx(y)) => first(x.len(), y.len(), &|i| x[i] == y[i]),
            (Dumped::Val(x), Dumped::Val(y)) => first(x.len(), y.len(), &|i| {
                x[i].as_f64().to_bits() == y[i].as_f64().to_bits()
            }),
            (Dumped::Offsets(x), Dumped::Offsets(y)) => first(x.len(), y.len(), &|i| x[i] == y[i]),
            (Dumped::Bytes(x), Dumped::Bytes(y)) => first(x.len(), y.len(), &|i| x[i] == y[i]),
            (Dumped::Words(x), Dumped::Words(y)) => first(x.len(), y.len(), &|i| x[i] == y[i]),
            _ => Some(format!("argument {a}: of another kind on the device")),
        };
        if let Some(d) = diff {
            return Err(d);
        }
    }
    Ok(())
}

/// Host build versus device generation of one benchmark matrix ([`time_largest`]).
#[derive(Clone, Debug, serde::Serialize)]
pub struct GenTiming {
    /// Distribution.
    pub dist: RowDist,
    /// Kernel.
    pub kernel: String,
    /// Rows.
    pub rows: usize,
    /// Mean row length.
    pub pnz: usize,
    /// Non-zeros.
    pub nnz: usize,
    /// Seconds to build the CSR on the host ([`RowLengths::build_csr`]).
    pub host_build_s: f64,
    /// Seconds to convert and upload it ([`CudaPrepared::new`]).
    pub host_prepare_s: f64,
    /// Seconds to generate it on the device ([`CudaPrepared::new_distributed`]).
    pub device_s: f64,
}

/// Time host build + prepare and device generation, in f64, of the largest statistical
/// benchmark matrices of the `small` grid on this device (`I = 3` strips of `S = N_SM × threads
/// per SM` rows for CSR-S, ELL and JAD at `P_NZ` = 256 and 1,024; CSR-V at `I = 50` strips of
/// half-warps and `P_NZ` = 1,024), normal and uniform rows with `σ = √P_NZ`. Fails if the two
/// footprints differ.
pub fn time_largest(
    be: &CudaBackend,
    progress: &mut dyn FnMut(&GenTiming),
) -> Result<Vec<GenTiming>> {
    let info = be.info();
    let s = info.sm_count as usize * info.max_threads_per_sm as usize;
    let scalar = Variant::Csr { threads_per_row: 1 };
    let t16 = Variant::Csr {
        threads_per_row: 16,
    };
    let points: [(usize, usize, &[Variant]); 3] = [
        (3 * s, 256, &[scalar, Variant::Ell, Variant::Jad]),
        (3 * s, 1024, &[Variant::Ell, Variant::Jad]),
        (50 * (s / 16), 1024, &[t16]),
    ];
    let mut out = Vec::new();
    for dist in [RowDist::Normal, RowDist::Uniform] {
        let lengths = RowLengths {
            dist,
            spread: Spread::Sqrt,
        };
        for &(rows, pnz, kernels) in &points {
            let cols = rows.max(2 * pnz);
            for &v in kernels {
                let cfg = KernelConfig::new(v);
                let t0 = Instant::now();
                let csr = lengths.build_csr::<f64>(rows, cols, pnz, u64::MAX)?;
                let t1 = Instant::now();
                let host = CudaPrepared::<f64>::new(be, &csr, &cfg)?;
                let t2 = Instant::now();
                let footprint = crate::backend::PreparedSpmv::footprint_bytes(&host);
                let nnz = csr.nnz();
                drop((host, csr));
                let t3 = Instant::now();
                let dev =
                    CudaPrepared::<f64>::new_distributed(be, rows, cols, pnz, &lengths, &cfg)?;
                let t4 = Instant::now();
                if crate::backend::PreparedSpmv::footprint_bytes(&dev) != footprint {
                    return Err(Error::Invalid(format!(
                        "{v} {}: device footprint differs from the host's",
                        dist.name()
                    )));
                }
                drop(dev);
                let t = GenTiming {
                    dist,
                    kernel: v.name(),
                    rows,
                    pnz,
                    nnz,
                    host_build_s: (t1 - t0).as_secs_f64(),
                    host_prepare_s: (t2 - t1).as_secs_f64(),
                    device_s: (t4 - t3).as_secs_f64(),
                };
                progress(&t);
                out.push(t);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_cover_the_edges() {
        let cs = cases();
        let lens = |c: &GenCase, dist| {
            RowLengths {
                dist,
                spread: c.spread,
            }
            .lengths(c.rows as u64, c.pnz as u64, c.cols as u64)
        };
        for dist in [RowDist::Normal, RowDist::Uniform] {
            assert!(
                cs.iter().any(|c| lens(c, dist).contains(&0)),
                "{dist:?}: no empty row"
            );
            assert!(
                cs.iter()
                    .any(|c| c.pnz < c.cols && lens(c, dist).contains(&c.cols)),
                "{dist:?}: no row clamped at the columns"
            );
        }
        assert!(cs.iter().any(|c| c.rows % 32 != 0 && c.rows > 1024));
        // Three levels of scan: more than 1024 tiles of 1024 values.
        assert!(cs.iter().any(|c| (c.rows as u64 + 1).div_ceil(1024) > 1024));
        assert_eq!(count(&STAT_KERNELS), 2 * cs.len() * 3 * 4);
        assert_eq!(count(&[Variant::Coo]), 0);
    }
}
