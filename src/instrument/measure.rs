//! Timing the benchmark suite (004 §3.3): every benchmark matrix is prepared on the backend,
//! given the benchmark input vector, and timed with the backend's [`TimingProtocol`]. The time a
//! model is fitted to is, by default, the papers' warm-up-excluding mean ([`Statistic`]); the
//! median and every run are kept in the profile as evidence.

use super::source::BenchmarkSource;
use super::{synthetic, BenchmarkPoint};
use crate::backend::{Backend, KernelConfig, TimingProtocol, Variant};
use crate::{Error, Result, Scalar};
use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};

/// One timed benchmark matrix.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Kernel, by its command-line name (`csr-vector`, `ell`, `coo`, …).
    #[serde(with = "variant_name")]
    pub kernel: Variant,
    /// `R`.
    pub rows: u64,
    /// `C`.
    pub cols: u64,
    /// `P_NZ`.
    pub pnz: u64,
    /// Strip count (`I` for CSR/ELL, non-zero strips for COO).
    pub strips: u64,
    /// The papers' `T`: mean of the runs after the warm-up, seconds.
    pub warm_mean: f64,
    /// Median of the runs after the warm-up, seconds.
    pub median: f64,
    /// Every run, warm-up included, seconds.
    pub samples: Vec<f64>,
}

impl Measurement {
    /// The strip count the models use ([`super::strip_count`]) for a strip size `s`: of the rows
    /// (CSR, ELL) or of the non-zeros (COO); a fraction for a sub-strip benchmark.
    pub fn strip_count(&self, s: u64) -> f64 {
        match self.kernel {
            Variant::Coo => super::strip_count(self.rows * self.pnz, s),
            _ => super::strip_count(self.rows, s),
        }
    }

    /// Whether this is a sub-strip benchmark (fewer rows, or for COO non-zeros, than a strip).
    pub fn is_sub_strip(&self, s: u64) -> bool {
        self.strip_count(s) < 1.0
    }

    /// The time of this benchmark by `statistic`.
    #[inline]
    pub fn time(&self, statistic: Statistic) -> f64 {
        match statistic {
            Statistic::WarmMean => self.warm_mean,
            Statistic::Median => self.median,
        }
    }
}

/// Which statistic of the timed runs the models are fitted to and compared with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Statistic {
    /// The papers' formula: the mean of the runs after the warm-up (default).
    #[default]
    WarmMean,
    /// The median of the runs after the warm-up: robust to the preemption spikes of a shared
    /// machine (a deviation from the papers, for noisy hosts such as a loaded CPU).
    Median,
}

impl Statistic {
    /// The statistic of a timing.
    pub fn of(self, t: &crate::backend::Timing) -> f64 {
        match self {
            Statistic::WarmMean => t.warm_mean(),
            Statistic::Median => t.median(),
        }
    }
}

/// Serialize a [`Variant`] as its command-line name.
pub mod variant_name {
    use crate::backend::Variant;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Write the name.
    pub fn serialize<S: Serializer>(v: &Variant, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&v.name())
    }
    /// Parse the name.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Variant, D::Error> {
        let s = String::deserialize(d)?;
        Variant::parse(&s).map_err(serde::de::Error::custom)
    }
}

/// Options of a measuring run.
#[derive(Clone, Debug)]
pub struct MeasureOptions {
    /// β runs, α warm-up.
    pub protocol: TimingProtocol,
    /// CUDA threads per block.
    pub block_size: u32,
    /// Check the result of the first (smallest) matrix of every kernel against the f64 reference.
    pub verify: bool,
    /// A time limit: benchmarks not started by then are skipped with a note (the statistical
    /// suites of a GPU session with a hard wall-time limit; `None`: no limit).
    pub deadline: Option<std::time::Instant>,
}

impl Default for MeasureOptions {
    fn default() -> Self {
        MeasureOptions {
            protocol: TimingProtocol::default(),
            block_size: KernelConfig::new(Variant::Ell).block_size,
            verify: true,
            deadline: None,
        }
    }
}

/// Time every point, in order, advancing `progress` by one per point. Fails on the first error;
/// [`measure_fitting`] skips what does not fit in device memory instead.
pub fn measure<T: Scalar>(
    backend: &dyn Backend<T>,
    source: &dyn BenchmarkSource<T>,
    points: &[BenchmarkPoint],
    opts: &MeasureOptions,
    progress: &ProgressBar,
) -> Result<Vec<Measurement>> {
    let (ms, skipped) = measure_fitting(backend, source, points, opts, progress, false)?;
    debug_assert!(skipped.is_empty());
    Ok(ms)
}

/// Time every point, in order, advancing `progress` by one per point. With `skip_unfit`, a point
/// whose working set does not fit in the device memory that is free when it is prepared (after
/// the previous benchmark's buffers were released; [`Backend::free_device_bytes`]) is skipped
/// with a note (the second value) instead of failing the run.
pub fn measure_fitting<T: Scalar>(
    backend: &dyn Backend<T>,
    source: &dyn BenchmarkSource<T>,
    points: &[BenchmarkPoint],
    opts: &MeasureOptions,
    progress: &ProgressBar,
    skip_unfit: bool,
) -> Result<(Vec<Measurement>, Vec<String>)> {
    if opts.protocol.warmup >= opts.protocol.runs {
        return Err(Error::Invalid(format!(
            "timing protocol: {} warm-up runs leave none of {} runs to time",
            opts.protocol.warmup, opts.protocol.runs
        )));
    }
    for v in points.iter().map(|p| p.variant) {
        if !backend.supports(v) {
            return Err(Error::Unsupported(format!(
                "backend {} cannot run kernel {v}, which the analytical model needs",
                backend.name()
            )));
        }
    }
    let mut out = Vec::with_capacity(points.len());
    let mut skipped = Vec::new();
    let mut verified: Vec<Variant> = Vec::new();
    for p in points {
        if opts
            .deadline
            .is_some_and(|d| std::time::Instant::now() >= d)
        {
            skipped.push(format!(
                "{} R={} P_NZ={}: {TIME_BUDGET}",
                p.variant, p.rows, p.pnz
            ));
            progress.inc(1);
            continue;
        }
        if skip_unfit {
            if let Some(free) = backend.free_device_bytes() {
                let need = source
                    .summary(p)
                    .working_set(
                        p.variant.format(),
                        &crate::formats::FormatParams::default(),
                        T::PRECISION.bytes() as u64,
                    )
                    .unwrap_or(u64::MAX);
                if need > free {
                    skipped.push(format!(
                        "{} R={} P_NZ={}: needs {:.2} GiB, {:.2} GiB free",
                        p.variant,
                        p.rows,
                        p.pnz,
                        need as f64 / (1u64 << 30) as f64,
                        free as f64 / (1u64 << 30) as f64
                    ));
                    progress.inc(1);
                    continue;
                }
            }
        }
        progress.set_message(format!(
            "{} R={} P_NZ={} ({})",
            p.variant,
            p.rows,
            p.pnz,
            source.name()
        ));
        let ctx = |e: Error| in_context(p, e);
        let cfg = KernelConfig {
            block_size: opts.block_size,
            ..KernelConfig::new(p.variant)
        };
        let mut k = source.prepare(backend, p, &cfg).map_err(ctx)?;
        let x = synthetic::x_vector::<T>(p.cols as usize);
        k.set_x(&x).map_err(ctx)?;
        if opts.verify && !verified.contains(&p.variant) {
            k.poison_y().map_err(ctx)?;
            k.run().map_err(ctx)?;
            let y = k.y().map_err(ctx)?;
            verify(&source.reference(p).map_err(ctx)?, &x, &y).map_err(ctx)?;
            verified.push(p.variant);
        }
        let t = k.time(&opts.protocol).map_err(ctx)?;
        let (warm_mean, median) = (t.warm_mean(), t.median());
        if !(warm_mean.is_finite() && warm_mean > 0.0 && median.is_finite() && median > 0.0) {
            return Err(ctx(Error::Invalid(format!(
                "timing gave mean {warm_mean} s, median {median} s"
            ))));
        }
        out.push(Measurement {
            kernel: p.variant,
            rows: p.rows,
            cols: p.cols,
            pnz: p.pnz,
            strips: p.strips,
            warm_mean,
            median,
            samples: t.samples,
        });
        progress.inc(1);
    }
    Ok((out, skipped))
}

/// The note of a benchmark skipped because the time budget ran out.
pub const TIME_BUDGET: &str = "not measured: time budget spent";

/// Compare a kernel's `y` with the f64 reference `a` of the same benchmark matrix (built on the
/// host).
fn verify<T: Scalar>(a: &crate::Csr<f64>, x: &[T], y: &[T]) -> Result<()> {
    let rows = a.nrows;
    let xf: Vec<f64> = x.iter().map(|v| v.as_f64()).collect();
    let want = a.spmv_reference(&xf);
    if y.len() != rows {
        return Err(Error::Invalid(format!(
            "kernel returned {} values of y, expected {rows}",
            y.len()
        )));
    }
    let eps = T::epsilon().as_f64();
    for i in 0..rows {
        let (c, v) = a.row(i);
        let mag: f64 = c
            .iter()
            .zip(v)
            .map(|(&c, v)| (v * xf[c as usize]).abs())
            .sum();
        let got = y[i].as_f64();
        let tol = (c.len() as f64 + 4.0) * eps * mag.max(f64::MIN_POSITIVE);
        let err = (got - want[i]).abs();
        if err.is_nan() || err > tol {
            return Err(Error::Invalid(format!(
                "wrong result: y[{i}] = {got}, reference {} (tolerance {tol:.3e})",
                want[i]
            )));
        }
    }
    Ok(())
}

/// Prefix an error with the benchmark it concerns, keeping its kind.
fn in_context(p: &BenchmarkPoint, e: Error) -> Error {
    let ctx = format!(
        "benchmark {} ({} rows, {} columns, P_NZ {})",
        p.variant, p.rows, p.cols, p.pnz
    );
    match e {
        Error::Unsupported(m) => Error::Unsupported(format!("{ctx}: {m}")),
        Error::NoCuda(m) => Error::NoCuda(format!("{ctx}: {m}")),
        Error::Cuda(m) => Error::Cuda(format!("{ctx}: {m}")),
        other => Error::Invalid(format!("{ctx}: {other}")),
    }
}
