//! Measuring one kernel: prepare it on a backend, check its result against the f64 reference,
//! then time it. Shared by `sparsecast bench` and `sparsecast evaluate`.
//!
//! The reference (`y = A·x` in f64 and each row's scale `Σ|a_ij·x_j|`) is computed once per
//! matrix and x ([`Reference`]) and reused for every kernel, so checking a kernel costs one pass
//! over the rows rather than one SpMV.

use super::timing::{Timing, DISTURBED_RETRIES, DISTURBED_SPREAD};
use super::{Backend, KernelConfig, PreparedSpmv, TimingProtocol};
use crate::{Csr, Error, Precision, Scalar};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// The f64 reference result of one matrix and x, and each row's scale.
#[derive(Clone, Debug)]
pub struct Reference {
    y: Vec<f64>,
    scale: Vec<f64>,
    /// Unique to this reference (a backend that keeps a copy on its device knows it by this).
    id: u64,
}

impl Reference {
    /// `y = A·x` by [`Csr::spmv_reference`] and the scale `Σ_j |a_ij · x_j|` of every row.
    pub fn new<T: Scalar>(a: &Csr<T>, x: &[T]) -> Reference {
        let xf: Vec<f64> = x.iter().map(|v| v.as_f64()).collect();
        let y = a.spmv_reference(&xf);
        let scale = (0..a.nrows)
            .into_par_iter()
            .map(|i| {
                let (c, v) = a.row(i);
                c.iter()
                    .zip(v)
                    .map(|(&c, &v)| (v.as_f64() * xf[c as usize]).abs())
                    .sum::<f64>()
                    .max(f64::MIN_POSITIVE)
            })
            .collect();
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Reference { y, scale, id }
    }

    /// The reference result, one value per row.
    pub fn y(&self) -> &[f64] {
        &self.y
    }

    /// Each row's scale `Σ_j |a_ij · x_j|` (at least the smallest positive f64).
    pub fn scale(&self) -> &[f64] {
        &self.scale
    }

    /// An identifier no other reference of this process has.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Largest error of `y` against the reference, relative to each row's scale (so rows that
    /// cancel do not inflate it). NaN (an element the kernel did not write over the poison) or a
    /// wrong length gives +∞.
    pub fn max_relative_error<T: Scalar>(&self, y: &[T]) -> f64 {
        if y.len() != self.y.len() {
            return f64::INFINITY;
        }
        y.par_iter()
            .zip(self.y.par_iter().zip(self.scale.par_iter()))
            .map(|(yi, (r, s))| {
                let yi = yi.as_f64();
                if !r.is_finite() {
                    // NaN or ±Inf in the row (or x): a correct kernel gives the same class.
                    let same = (yi.is_nan() && r.is_nan()) || yi == *r;
                    return if same { 0.0 } else { f64::INFINITY };
                }
                if yi.is_nan() {
                    f64::INFINITY
                } else {
                    (yi - r).abs() / s
                }
            })
            .reduce(|| 0.0, f64::max)
    }
}

/// The largest [`Reference::max_relative_error`] a correct kernel may show, by precision.
pub fn tolerance(precision: Precision) -> f64 {
    match precision {
        Precision::F32 => 1e-4,
        Precision::F64 => 1e-10,
    }
}

/// What became of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Measured.
    Ok,
    /// Not run: the backend does not support it or the format refused the matrix.
    Skipped,
    /// Ran, but its result differs from the reference beyond [`tolerance`]; not timed.
    Mismatch,
    /// A backend error (CUDA driver, launch …) while preparing, running or timing.
    Failed,
}

impl Status {
    /// `ok`, `skipped`, `mismatch`, `failed`.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Skipped => "skipped",
            Status::Mismatch => "mismatch",
            Status::Failed => "failed",
        }
    }
}

/// The outcome of measuring one kernel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelMeasurement {
    /// What happened.
    pub status: Status,
    /// Why it was skipped, mismatched or failed.
    pub reason: Option<String>,
    /// Median of the runs after the warm-up (seconds).
    pub median_s: Option<f64>,
    /// The papers' warm-up-excluding mean (seconds).
    pub warm_mean_s: Option<f64>,
    /// The spread of the timed samples: interquartile range relative to the median. Two
    /// configurations whose times differ by less than their spread are a tie.
    pub spread: Option<f64>,
    /// Timed samples (batches) the statistics were taken over.
    pub samples: Option<usize>,
    /// SpMVs per timed sample.
    pub per_batch: Option<usize>,
    /// Whether the SpMV was replayed as a CUDA graph.
    pub graph: Option<bool>,
    /// Seconds per SpMV of each warm-up batch, in order (how the time settled).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warmup_trace: Vec<f64>,
    /// Bytes of the format's arrays on the device.
    pub footprint_bytes: Option<u64>,
    /// The minimum bytes one SpMV moves (arrays + x + y).
    pub effective_bytes: Option<u64>,
    /// Largest error against the reference.
    pub max_rel_error: Option<f64>,
    /// Wall-clock seconds of preparing (conversion, upload, setup).
    pub prepare_s: Option<f64>,
    /// The median of each memory placement the configuration was timed in, first placement
    /// first (empty when it was timed in one): the statistics above pool all their samples.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placement_medians: Vec<f64>,
    /// How many times the (last) timing was taken again because its spread exceeded
    /// [`DISTURBED_SPREAD`] (protocol step 6 of [`crate::backend::timing`]).
    #[serde(default, skip_serializing_if = "crate::util::is_zero")]
    pub retimed: usize,
}

impl KernelMeasurement {
    /// A kernel that was not run, with the reason.
    pub fn skipped(reason: impl Into<String>) -> Self {
        KernelMeasurement {
            status: Status::Skipped,
            reason: Some(reason.into()),
            median_s: None,
            warm_mean_s: None,
            spread: None,
            samples: None,
            per_batch: None,
            graph: None,
            warmup_trace: Vec::new(),
            footprint_bytes: None,
            effective_bytes: None,
            max_rel_error: None,
            prepare_s: None,
            placement_medians: Vec::new(),
            retimed: 0,
        }
    }

    /// Effective bandwidth `effective_bytes / median / 1e9`, when measured.
    pub fn effective_gbs(&self) -> Option<f64> {
        Some(self.effective_bytes? as f64 / self.median_s? / 1e9)
    }
}

/// Whether an error means "this kernel does not apply here" rather than "something broke".
fn is_refusal(e: &Error) -> bool {
    matches!(e, Error::FormatRefused { .. } | Error::Unsupported(_))
}

/// Prepare `cfg` on `backend`, then [`measure_prepared`]. An unsupported variant or a format
/// that refuses the matrix gives [`Status::Skipped`] with the reason; nothing panics.
///
/// A configuration that [`TimingProtocol::wants_placements`] is prepared again, up to
/// [`TimingProtocol::placements`] copies in all, each while the earlier ones stay allocated (so
/// its arrays land elsewhere in device memory); every copy is checked against the reference and
/// timed ([`TimingProtocol::further_placement`]), and the statistics pool all their samples
/// ([`Timing::pooled`]). A further copy that cannot be prepared (memory) ends the placements
/// quietly; one that computes a wrong result makes the whole measurement a mismatch.
pub fn measure_kernel<T: Scalar>(
    backend: &dyn Backend<T>,
    a: &Csr<T>,
    x: &[T],
    reference: &Reference,
    cfg: &KernelConfig,
    protocol: &TimingProtocol,
) -> KernelMeasurement {
    if !backend.supports(cfg.variant) {
        return KernelMeasurement::skipped(format!(
            "not supported by the {} backend",
            backend.name()
        ));
    }
    let start = Instant::now();
    let mut first = match backend.prepare(a, cfg) {
        Ok(k) => k,
        Err(e) => {
            let mut m = KernelMeasurement::skipped(e.to_string());
            if !is_refusal(&e) {
                m.status = Status::Failed;
            }
            return m;
        }
    };
    let prepare_s = start.elapsed().as_secs_f64();
    crate::util::trace(|| format!("prepare {}", cfg.label()), start);
    let (mut m, timing) = check_and_time(first.as_mut(), x, reference, protocol);
    m.prepare_s = Some(prepare_s);
    let Some(timing) = timing else { return m };
    let footprint = m.footprint_bytes.unwrap_or(0);
    if !protocol.wants_placements(timing.median(), footprint) {
        return m;
    }
    let further = protocol.further_placement();
    let mut held = vec![first];
    let mut parts = vec![timing];
    while parts.len() < protocol.placements {
        let Ok(mut k) = backend.prepare(a, cfg) else {
            break;
        };
        let (mk, t) = check_and_time(k.as_mut(), x, reference, &further);
        m.retimed += mk.retimed;
        match t {
            Some(t) => parts.push(t),
            None if mk.status == Status::Mismatch => return mk,
            None => break,
        }
        held.push(k);
    }
    if parts.len() > 1 {
        m.placement_medians = parts.iter().map(Timing::median).collect();
        let pooled = Timing::pooled(&parts).expect("at least one part");
        set_timing(&mut m, &pooled);
    }
    m
}

/// Check a prepared kernel against `reference` (x set, y poisoned, one run, y read back), then
/// time it with `protocol` if the result is within [`tolerance`].
pub fn measure_prepared<T: Scalar>(
    k: &mut dyn PreparedSpmv<T>,
    x: &[T],
    reference: &Reference,
    protocol: &TimingProtocol,
) -> KernelMeasurement {
    check_and_time(k, x, reference, protocol).0
}

/// The statistics of `t` into `m`.
fn set_timing(m: &mut KernelMeasurement, t: &Timing) {
    m.median_s = Some(t.median());
    m.warm_mean_s = Some(t.warm_mean());
    m.spread = Some(t.spread());
    m.samples = Some(t.kept().len());
    m.per_batch = Some(t.per_batch);
    m.graph = Some(t.graph);
    m.warmup_trace = t.warmup_samples.clone();
}

/// [`measure_prepared`], also returning the samples when the kernel was timed.
fn check_and_time<T: Scalar>(
    k: &mut dyn PreparedSpmv<T>,
    x: &[T],
    reference: &Reference,
    protocol: &TimingProtocol,
) -> (KernelMeasurement, Option<Timing>) {
    let mut m = KernelMeasurement::skipped("");
    m.reason = None;
    m.footprint_bytes = Some(k.footprint_bytes());
    m.effective_bytes = Some(k.effective_bytes());
    let res = (|| -> crate::Result<Option<Timing>> {
        let checked = Instant::now();
        let err = k.check(x, reference)?;
        crate::util::trace(|| "check".into(), checked);
        let timed = Instant::now();
        m.max_rel_error = Some(err);
        let tol = tolerance(T::PRECISION);
        if err > tol {
            m.status = Status::Mismatch;
            m.reason = Some(format!(
                "max relative error {err:.2e} exceeds the {} tolerance {tol:.0e}",
                T::PRECISION
            ));
            return Ok(None);
        }
        let mut t = k.time(protocol)?;
        // Protocol step 6: a disturbed timing is taken again; the calmest attempt is kept.
        let mut retries = 0;
        // NaN (one sample, a zero median) counts as disturbed too.
        let disturbed = |t: &Timing| t.spread().is_nan() || t.spread() > DISTURBED_SPREAD;
        while disturbed(&t) && retries < DISTURBED_RETRIES {
            retries += 1;
            let again = k.time(protocol)?;
            if again.spread() < t.spread() || t.spread().is_nan() {
                t = again;
            }
        }
        m.retimed = retries;
        crate::util::trace(|| format!("time ({retries} retimed)"), timed);
        set_timing(&mut m, &t);
        m.status = Status::Ok;
        Ok(Some(t))
    })();
    match res {
        Ok(t) => (m, t),
        Err(e) => {
            m.status = if is_refusal(&e) {
                Status::Skipped
            } else {
                Status::Failed
            };
            m.reason = Some(e.to_string());
            (m, None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::CpuBackend;
    use crate::backend::Variant;

    fn small() -> Csr<f64> {
        Csr::from_triplets(
            3,
            3,
            &[0, 0, 1, 2, 2],
            &[0, 2, 1, 0, 2],
            &[2.0, -1.0, 3.0, 1.0, 4.0],
        )
        .unwrap()
    }

    /// A real CPU kernel whose `time` returns scripted timings (to test protocol step 6).
    struct Scripted<'a> {
        inner: Box<dyn PreparedSpmv<f64> + 'a>,
        timings: Vec<Timing>,
        calls: usize,
    }

    impl PreparedSpmv<f64> for Scripted<'_> {
        fn config(&self) -> &KernelConfig {
            self.inner.config()
        }
        fn footprint_bytes(&self) -> u64 {
            self.inner.footprint_bytes()
        }
        fn effective_bytes(&self) -> u64 {
            self.inner.effective_bytes()
        }
        fn set_x(&mut self, x: &[f64]) -> crate::Result<()> {
            self.inner.set_x(x)
        }
        fn poison_y(&mut self) -> crate::Result<()> {
            self.inner.poison_y()
        }
        fn run(&mut self) -> crate::Result<()> {
            self.inner.run()
        }
        fn y(&mut self) -> crate::Result<Vec<f64>> {
            self.inner.y()
        }
        fn time(&mut self, _: &TimingProtocol) -> crate::Result<Timing> {
            let t = self.timings[self.calls.min(self.timings.len() - 1)].clone();
            self.calls += 1;
            Ok(t)
        }
    }

    fn timing(samples: &[f64]) -> Timing {
        Timing {
            samples: samples.to_vec(),
            warmup: 0,
            per_batch: 1,
            graph: false,
            concurrent: false,
            warmup_samples: Vec::new(),
        }
    }

    #[test]
    fn a_disturbed_timing_is_taken_again_and_the_calmest_kept() {
        let a = small();
        let x = vec![1.0, 2.0, 3.0];
        let reference = Reference::new(&a, &x);
        let cfg = KernelConfig::new(Variant::Ell);
        let p = TimingProtocol::default();
        let calm = timing(&[5.0e-6, 5.0e-6, 5.01e-6, 4.99e-6]);
        let disturbed = timing(&[5.0e-6, 11.0e-6, 12.0e-6, 5.0e-6, 11.5e-6]);
        assert!(disturbed.spread() > DISTURBED_SPREAD && calm.spread() < DISTURBED_SPREAD);
        let backend = CpuBackend::new();
        let run = |timings: Vec<Timing>| {
            let inner = backend.prepare(&a, &cfg).unwrap();
            let mut k = Scripted {
                inner,
                timings,
                calls: 0,
            };
            let m = measure_prepared(&mut k, &x, &reference, &p);
            (m, k.calls)
        };
        // Disturbed, then calm: one retry, the calm median is reported.
        let (m, calls) = run(vec![disturbed.clone(), calm.clone()]);
        assert_eq!((m.retimed, calls), (1, 2));
        assert_eq!(m.median_s, Some(calm.median()));
        // Calm at once: no retry.
        let (m, calls) = run(vec![calm.clone()]);
        assert_eq!((m.retimed, calls), (0, 1));
        // Always disturbed: DISTURBED_RETRIES retries, then the least disturbed attempt.
        let worse = timing(&[5.0e-6, 20.0e-6, 21.0e-6, 5.0e-6, 22.0e-6]);
        let (m, calls) = run(vec![worse, disturbed.clone(), disturbed.clone()]);
        assert_eq!(
            (m.retimed, calls),
            (DISTURBED_RETRIES, 1 + DISTURBED_RETRIES)
        );
        assert_eq!(m.spread, Some(disturbed.spread()));
    }

    #[test]
    fn reference_errors_are_relative_to_row_scale() {
        let a = small();
        let x = [1.0, 2.0, 3.0];
        let r = Reference::new(&a, &x);
        // y = (2 − 3, 6, 1 + 12) = (−1, 6, 13); row scales 5, 6, 13.
        assert_eq!(r.max_relative_error(&[-1.0, 6.0, 13.0]), 0.0);
        assert!((r.max_relative_error(&[-1.5, 6.0, 13.0]) - 0.1).abs() < 1e-15);
        assert_eq!(r.max_relative_error(&[-1.0, f64::NAN, 13.0]), f64::INFINITY);
        assert_eq!(r.max_relative_error(&[-1.0, 6.0]), f64::INFINITY);
    }

    #[test]
    fn cpu_kernel_is_checked_and_timed() {
        let a = small();
        let x = [1.0, 2.0, 3.0];
        let r = Reference::new(&a, &x);
        let p = TimingProtocol {
            runs: 4,
            warmup: 1,
            warmup_ms: 1.0,
            batch_ms: 0.01,
            placements: 1,
            ..Default::default()
        };
        let m = measure_kernel(
            &CpuBackend::new(),
            &a,
            &x,
            &r,
            &KernelConfig::new(Variant::Ell),
            &p,
        );
        assert_eq!(m.status, Status::Ok, "{m:?}");
        assert!(m.median_s.unwrap() > 0.0 && m.warm_mean_s.unwrap() > 0.0);
        assert_eq!(m.samples, Some(3));
        assert!(
            m.per_batch.unwrap() >= 2 && m.spread.unwrap() >= 0.0,
            "{m:?}"
        );
        assert_eq!(m.max_rel_error, Some(0.0));
        let v = measure_kernel(
            &CpuBackend::new(),
            &a,
            &x,
            &r,
            &KernelConfig::new(Variant::vendor()[0]),
            &p,
        );
        assert_eq!(v.status, Status::Skipped);
        assert!(v.reason.unwrap().contains("cpu backend"));
    }

    #[test]
    fn a_fast_kernel_is_timed_in_every_placement_and_pooled() {
        let a = small();
        let x = [1.0, 2.0, 3.0];
        let r = Reference::new(&a, &x);
        let p = TimingProtocol {
            runs: 6,
            warmup_ms: 0.5,
            batch_ms: 0.01,
            placements: 3,
            ..Default::default()
        };
        let further = p.further_placement().runs;
        let m = measure_kernel(
            &CpuBackend::new(),
            &a,
            &x,
            &r,
            &KernelConfig::new(Variant::Csr { threads_per_row: 1 }),
            &p,
        );
        assert_eq!(m.status, Status::Ok, "{m:?}");
        assert_eq!(m.placement_medians.len(), 3, "{m:?}");
        assert_eq!(m.samples, Some(6 + 2 * further));
        let (lo, hi) = m
            .placement_medians
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(l, h), &t| (l.min(t), h.max(t)));
        let t = m.median_s.unwrap();
        assert!(lo <= t && t <= hi, "pooled median {t} outside [{lo}, {hi}]");
        // One placement: nothing pooled.
        let one = TimingProtocol { placements: 1, ..p };
        let m1 = measure_kernel(
            &CpuBackend::new(),
            &a,
            &x,
            &r,
            &KernelConfig::new(Variant::Coo),
            &one,
        );
        assert!(m1.placement_medians.is_empty());
        assert_eq!(m1.samples, Some(6));
    }

    #[test]
    fn placements_are_for_fast_kernels_that_fit_several_times() {
        let p = TimingProtocol::default();
        assert_eq!(p.placements, 3);
        assert!(p.wants_placements(5e-6, 1 << 20));
        assert!(
            !p.wants_placements(5e-3, 1 << 20),
            "a slow, streaming kernel"
        );
        assert!(
            !p.wants_placements(5e-6, 1 << 29),
            "three copies exceed 1 GiB"
        );
        let one = TimingProtocol {
            placements: 1,
            ..TimingProtocol::default()
        };
        assert!(!one.wants_placements(5e-6, 1 << 20));
        assert!(TimingProtocol {
            placements: 0,
            ..TimingProtocol::default()
        }
        .validate()
        .is_err());
        // A protocol saved before placements existed reads as one placement.
        let old: TimingProtocol =
            serde_json::from_str(r#"{"mode":"batched","runs":20,"warmup":0}"#).unwrap();
        assert_eq!(old.placements, 1);
    }

    #[test]
    fn a_wrong_reference_is_a_mismatch_not_timed() {
        let a = small();
        let x = [1.0, 2.0, 3.0];
        // The reference of another x: every kernel must disagree with it.
        let r = Reference::new(&a, &[1.0, 1.0, 1.0]);
        let m = measure_kernel(
            &CpuBackend::new(),
            &a,
            &x,
            &r,
            &KernelConfig::new(Variant::Coo),
            &TimingProtocol::default(),
        );
        assert_eq!(m.status, Status::Mismatch);
        assert!(m.median_s.is_none());
        assert!(m.reason.unwrap().contains("tolerance"));
    }
}
