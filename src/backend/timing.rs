//! The timing protocol and statistics shared by every backend.
//!
//! # The protocol (default: [`TimingMode::Batched`])
//!
//! A kernel of a few microseconds cannot be timed one launch at a time: the host needs about as
//! long to queue a launch as the GPU needs to run it, so per-launch times measure the host's
//! pace, and two processes disagree by up to 2× (issue 10). The batched protocol times SpMV the
//! way an iterative solver runs it, back to back:
//!
//! 1. **One SpMV is captured** (every launch and memset of it) and replayed as a unit — a CUDA
//!    graph on the GPU; a plain call on the CPU. A *batch* is `n` consecutive SpMVs
//!    (on the GPU one graph holding `n` copies, so the GPU never waits for the host inside a
//!    batch); `n` is chosen from a pilot run so that one batch lasts about
//!    [`TimingProtocol::batch_ms`] (at least 2 SpMVs, at most [`MAX_PER_BATCH`]).
//! 2. **Warm-up in time**: batches are replayed until [`TimingProtocol::warmup_ms`] of wall time
//!    have passed (at least two batches), so that the SM clock has left its idle state and the
//!    matrix sits in the caches as it will while timed. Their per-SpMV times are kept in
//!    [`Timing::warmup_samples`] (that trace is how the default length was chosen: see
//!    docs/PERFORMANCE.md, "Measurement").
//! 3. **Timed batches**: [`TimingProtocol::runs`] batches (`β`) queued back to back behind one
//!    more, unmeasured warm-up batch (so the GPU is busy while the host queues them), each
//!    bracketed by its own pair of device events. A sample is a batch's time divided by `n`.
//! 4. **Statistics** over the samples after the first `α` ([`TimingProtocol::warmup`], 0 by
//!    default since the time warm-up precedes): the median (the reported time), the papers'
//!    warm-up-excluding mean `T = (Σ_{j≤β} φ_j − Σ_{j≤α} φ_j) / (β − α)`, and the *spread*, the
//!    interquartile range relative to the median — a difference between two configurations
//!    smaller than their spread is a tie.
//!
//! 5. **Placements** ([`TimingProtocol::placements`], 3 by default): the time of a kernel held
//!    up by a chain of dependent loads (one long row in one warp) depends on where its arrays
//!    land in device memory — which L2 partition serves them — so two processes could disagree
//!    by up to 17 % on such a configuration while each one repeats its own time to 0.05 %
//!    (docs/PERFORMANCE.md, "Measurement"). [`crate::backend::measure::measure_kernel`]
//!    therefore prepares a configuration that qualifies ([`TimingProtocol::wants_placements`])
//!    again, while the earlier copies stay allocated so the new arrays land elsewhere, checks
//!    and times each copy, and reports the statistics of all their samples together: the
//!    median over placements, with the placements' disagreement inside the spread.
//! 6. **Disturbed measurements are taken again**: a timing whose spread exceeds
//!    [`DISTURBED_SPREAD`] (a quarter of its batches 10 % off the median: something else ran on
//!    the device or the host for part of it — seen once in 2,880 configurations on an H100, one
//!    placement of a 4.6 µs kernel reading 11.7 µs with a spread of 118 %) is repeated up to
//!    [`DISTURBED_RETRIES`] times on the same prepared kernel, and the attempt with the smallest
//!    spread is kept ([`crate::backend::measure`]). An undisturbed kernel's spread is ≈ 0.05–0.5 %.
//!
//! 7. **Slow configurations are timed short** when [`TimingProtocol::slow_s`] is set (`collect`
//!    sets 1 ms, 5 ms before session 22): a configuration whose pilot SpMV takes longer — a thread-per-row kernel on a
//!    matrix with a row of 10⁵ entries takes 0.1–0.2 s — is timed in batches of one SpMV, after
//!    one warm-up batch, in [`SLOW_RUNS`] samples (at most `runs`). At that length one SpMV is
//!    its own warm-up and the samples agree closely; the full protocol (≥ 2 SpMVs a batch, ≥ 2
//!    warm-up batches, `runs` samples) spent 4–6 s on each such configuration and 40–90 s on
//!    one matrix of a corpus.
//!
//! 8. **Configurations far slower than the matrix's best are timed from their pilot** when
//!    [`TimingProtocol::far_factor`] is set (`collect` sets 10): a slow configuration (step 7)
//!    whose pilot SpMV takes more than that many times the fastest configuration measured so far
//!    on the same matrix ([`TimingProtocol::with_fastest`]) keeps its pilot as a sample and is
//!    timed once more — two samples, no warm-up (the check run before it, an SpMV over the slow limit,
//!    already warmed the clocks and caches). Step 7 spent six SpMVs on such a configuration (check,
//!    pilot, warm-up, three samples): on the seed-6 tables (10⁶–4·10⁷ non-zeros) those of ≥ 10×
//!    the best took ≈ 20 % of `collect`'s measuring time, and no ranking needs them to better
//!    than a few percent. Two samples that disagree by more than ≈ 22 % have a spread over
//!    [`DISTURBED_SPREAD`] and are taken again (step 6).
//!
//! [`TimingMode::Latency`] keeps the single-launch view: every SpMV is queued alone on an idle
//! device (the host waits for each before queueing the next) and bracketed by events, so a sample
//! includes the launch latency an isolated call sees. [`TimingProtocol::cold`] flushes the L2
//! before every SpMV (outside the timed region); it implies one SpMV per sample.

use serde::{Deserialize, Serialize};

/// The most SpMVs in one batch (one graph of that many copies).
pub const MAX_PER_BATCH: usize = 1000;

/// How samples are taken.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TimingMode {
    /// Captured SpMVs replayed back to back in timed batches (the default; see the module
    /// documentation).
    #[default]
    Batched,
    /// One SpMV per sample, each queued on an idle device: the latency of an isolated call.
    Latency,
}

impl TimingMode {
    /// `batched` or `latency`.
    pub fn name(self) -> &'static str {
        match self {
            TimingMode::Batched => "batched",
            TimingMode::Latency => "latency",
        }
    }
}

/// How to time a kernel. Fields missing from an older file take their defaults.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TimingProtocol {
    /// Sampling mode.
    pub mode: TimingMode,
    /// β: timed samples (batches in batched mode, SpMVs otherwise).
    pub runs: usize,
    /// α: leading samples excluded from the statistics (`α < β`).
    pub warmup: usize,
    /// Wall-clock milliseconds of warm-up before the timed samples.
    pub warmup_ms: f64,
    /// Target duration of one batch, milliseconds (batched mode).
    pub batch_ms: f64,
    /// Clear the L2 cache before every SpMV (CUDA only; one SpMV per sample); by default SpMVs
    /// repeat on the same matrix and x, as inside an iterative solver.
    pub cold: bool,
    /// Memory placements a qualifying configuration is timed in (module documentation, step
    /// 5); 1 times the first placement only. A file written before placements existed read
    /// 1, which is what it measured.
    #[serde(default = "one")]
    pub placements: usize,
    /// A configuration whose pilot SpMV takes longer than this many seconds is timed short
    /// (module documentation, step 7); `None` (the default of `bench` and `evaluate`) never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slow_s: Option<f64>,
    /// A slow configuration (step 7) whose pilot SpMV takes more than this many times the
    /// fastest configuration measured so far on the same matrix
    /// ([`TimingProtocol::with_fastest`]) is timed from its pilot and one more SpMV (module
    /// documentation, step 8); `None` (the default of `bench` and `evaluate`) never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub far_factor: Option<f64>,
    /// The fastest time (seconds per SpMV) measured so far on the matrix being measured, which
    /// step 8 compares a pilot with: set for each configuration by the caller that knows it
    /// ([`TimingProtocol::with_fastest`]); never stored.
    #[serde(skip)]
    pub fastest_s: Option<f64>,
}

/// Timed samples of a configuration timed short ([`TimingProtocol::slow_s`]).
pub const SLOW_RUNS: usize = 3;

/// Default β.
pub const DEFAULT_RUNS: usize = 20;
/// Default warm-up, milliseconds (chosen by measurement: docs/PERFORMANCE.md, "Measurement").
pub const DEFAULT_WARMUP_MS: f64 = 30.0;
/// Default batch duration, milliseconds.
pub const DEFAULT_BATCH_MS: f64 = 0.5;
/// Default placements (docs/PERFORMANCE.md, "Measurement": why three).
pub const DEFAULT_PLACEMENTS: usize = 3;
/// A configuration slower than this (seconds) streams a matrix far larger than the caches;
/// its time did not depend on placement (two processes agreed within 1 % on every generated
/// large matrix) and preparing it again is costly, so it is timed in one placement.
pub const PLACEMENT_MAX_S: f64 = 2e-3;
/// The copies of a configuration held at once must fit in this many bytes of device memory.
pub const PLACEMENT_MAX_BYTES: u64 = 1 << 30;
/// Warm-up of each further placement, milliseconds: the clocks are already up, only the new
/// arrays must reach the caches.
pub const PLACEMENT_WARMUP_MS: f64 = 5.0;

/// A timing whose spread (IQR / median) is above this was disturbed and is taken again
/// (protocol step 6).
pub const DISTURBED_SPREAD: f64 = 0.10;

/// How many times a disturbed timing is taken again at most (protocol step 6).
pub const DISTURBED_RETRIES: usize = 2;

impl Default for TimingProtocol {
    fn default() -> Self {
        TimingProtocol {
            mode: TimingMode::Batched,
            runs: DEFAULT_RUNS,
            warmup: 0,
            warmup_ms: DEFAULT_WARMUP_MS,
            batch_ms: DEFAULT_BATCH_MS,
            cold: false,
            placements: DEFAULT_PLACEMENTS,
            slow_s: None,
            far_factor: None,
            fastest_s: None,
        }
    }
}

impl TimingProtocol {
    /// The default protocol with `runs` samples of which the first `warmup` are excluded.
    pub fn with_runs(runs: usize, warmup: usize) -> Self {
        TimingProtocol {
            runs,
            warmup,
            ..Default::default()
        }
    }

    /// Whether a configuration measured at `median_s` with `footprint` bytes is timed in
    /// further placements: placements asked for, faster than [`PLACEMENT_MAX_S`], and every
    /// copy within [`PLACEMENT_MAX_BYTES`].
    pub fn wants_placements(&self, median_s: f64, footprint: u64) -> bool {
        self.placements > 1
            && median_s < PLACEMENT_MAX_S
            && footprint.saturating_mul(self.placements as u64) <= PLACEMENT_MAX_BYTES
    }

    /// The protocol of each placement after the first: a short warm-up and half the batches
    /// (at least 5), since the device is already warm.
    pub fn further_placement(&self) -> TimingProtocol {
        TimingProtocol {
            warmup_ms: self.warmup_ms.min(PLACEMENT_WARMUP_MS),
            runs: (self.runs / 2).max(5).max(self.warmup + 1),
            placements: 1,
            ..self.clone()
        }
    }

    /// Whether samples are batches of several SpMVs (batched mode, warm cache).
    pub fn batched(&self) -> bool {
        self.mode == TimingMode::Batched && !self.cold
    }

    /// Whether a kernel whose one SpMV took `pilot_s` seconds is timed short (step 7).
    pub fn is_slow(&self, pilot_s: f64) -> bool {
        self.batched() && self.slow_s.is_some_and(|s| pilot_s > s)
    }

    /// This protocol for a configuration of a matrix on which `fastest_s` seconds per SpMV is the
    /// fastest time measured so far (`None`: nothing measured yet), for step 8.
    pub fn with_fastest(&self, fastest_s: Option<f64>) -> TimingProtocol {
        TimingProtocol {
            fastest_s,
            ..self.clone()
        }
    }

    /// Whether a kernel whose one SpMV took `pilot_s` seconds is timed from its pilot and one
    /// more SpMV (step 8): slow (step 7) and over [`TimingProtocol::far_factor`] times the
    /// fastest configuration measured so far on the matrix.
    pub fn is_far(&self, pilot_s: f64) -> bool {
        self.is_slow(pilot_s)
            && matches!((self.far_factor, self.fastest_s),
                        (Some(f), Some(b)) if pilot_s > f * b)
    }

    /// Timed samples of a kernel whose one SpMV took `pilot_s` seconds: `runs`, or
    /// [`SLOW_RUNS`] (at most `runs`, more than `warmup`) for a slow one.
    pub fn timed_runs(&self, pilot_s: f64) -> usize {
        if self.is_slow(pilot_s) {
            SLOW_RUNS.min(self.runs).max(self.warmup + 1)
        } else {
            self.runs
        }
    }

    /// Whether the warm-up of a kernel whose one SpMV took `pilot_s` seconds is over after
    /// `batches` warm-up batches and `elapsed_ms`: at least 2 batches and `warmup_ms` of time, or
    /// one batch for a slow kernel (step 7: an SpMV that long is its own warm-up).
    pub fn warmup_done(&self, pilot_s: f64, batches: usize, elapsed_ms: f64) -> bool {
        if self.is_slow(pilot_s) {
            batches >= 1
        } else {
            batches >= 2 && elapsed_ms >= self.warmup_ms
        }
    }

    /// SpMVs per batch for a kernel whose one SpMV took about `pilot_s` seconds: enough to
    /// last [`TimingProtocol::batch_ms`], between 2 and [`MAX_PER_BATCH`]; 1 outside batched
    /// mode or for a slow kernel (step 7).
    pub fn per_batch(&self, pilot_s: f64) -> usize {
        if !self.batched() || self.is_slow(pilot_s) {
            return 1;
        }
        let n = if pilot_s > 0.0 && pilot_s.is_finite() {
            (self.batch_ms * 1e-3 / pilot_s).ceil()
        } else {
            MAX_PER_BATCH as f64
        };
        (n as usize).clamp(2, MAX_PER_BATCH)
    }

    /// A one-line description, e.g. `batched: 30 ms warm-up, 20 batches of ≈ 0.5 ms`.
    pub fn describe(&self) -> String {
        let warm = format!("{} ms warm-up", self.warmup_ms);
        let skip = if self.warmup > 0 {
            format!(", first {} excluded", self.warmup)
        } else {
            String::new()
        };
        let cold = if self.cold {
            ", L2 flushed before each"
        } else {
            ""
        };
        if self.batched() {
            let placed = if self.placements > 1 {
                format!(", {} placements", self.placements)
            } else {
                String::new()
            };
            let short = match self.slow_s {
                Some(s) => format!(
                    "; SpMVs over {} ms: {} single samples",
                    s * 1e3,
                    SLOW_RUNS.min(self.runs)
                ),
                None => String::new(),
            };
            let far = match (self.slow_s, self.far_factor) {
                (Some(_), Some(f)) => {
                    format!("; those over {f}× the matrix's fastest so far: pilot + 1 SpMV")
                }
                _ => String::new(),
            };
            format!(
                "batched: {warm}, {} batches of ≈ {} ms{skip}{placed}{short}{far}",
                self.runs, self.batch_ms
            )
        } else {
            format!(
                "{}: {warm}, {} single SpMVs{skip}{cold}",
                self.mode.name(),
                self.runs
            )
        }
    }

    /// Check the protocol's numbers.
    pub fn validate(&self) -> crate::Result<()> {
        let bad = |m: String| Err(crate::Error::Invalid(m));
        if self.runs == 0 {
            return bad("the timing protocol needs at least one timed sample (--runs)".into());
        }
        if self.warmup >= self.runs {
            return bad(format!(
                "--warmup ({}) must be less than --runs ({})",
                self.warmup, self.runs
            ));
        }
        if !(self.warmup_ms >= 0.0 && self.warmup_ms.is_finite()) {
            return bad(format!(
                "--warmup-ms must be a finite number ≥ 0, not {}",
                self.warmup_ms
            ));
        }
        if self.placements == 0 || self.placements > 16 {
            return bad(format!(
                "--placements must be between 1 and 16, not {}",
                self.placements
            ));
        }
        if self
            .far_factor
            .is_some_and(|f| !(f >= 1.0 && f.is_finite()))
        {
            return bad(format!(
                "--far-factor must be a finite number ≥ 1 (or 0 for never), not {}",
                self.far_factor.unwrap_or(f64::NAN)
            ));
        }
        if !(self.batch_ms > 0.0 && self.batch_ms.is_finite()) {
            return bad(format!(
                "--batch-ms must be a finite number > 0, not {}",
                self.batch_ms
            ));
        }
        Ok(())
    }
}

/// The samples of one kernel, in seconds per SpMV.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// Every timed sample φ_j (seconds per SpMV), the `α` excluded ones included.
    pub samples: Vec<f64>,
    /// α used for the statistics.
    pub warmup: usize,
    /// SpMVs per sample (1 outside batched mode).
    #[serde(default = "one")]
    pub per_batch: usize,
    /// Whether the SpMV was replayed as a captured graph (CUDA); `false` where the backend has
    /// none or the capture failed and launches were queued directly.
    #[serde(default)]
    pub graph: bool,
    /// Whether the SpMV's independent parts (a plan's blocks) ran as concurrent branches
    /// ([`crate::backend::Overlap::Concurrent`] on a backend that overlaps them); `false` for a
    /// single kernel, a serial plan, or a concurrent one that fell back to running in order.
    #[serde(default)]
    pub concurrent: bool,
    /// Seconds per SpMV of each warm-up batch, in order (the settling trace).
    #[serde(default)]
    pub warmup_samples: Vec<f64>,
}

fn one() -> usize {
    1
}

/// The `q`-quantile (0 ≤ q ≤ 1) of sorted values, interpolated linearly (NaN when empty).
pub fn quantile_sorted(v: &[f64], q: f64) -> f64 {
    match v.len() {
        0 => f64::NAN,
        1 => v[0],
        n => {
            let pos = q.clamp(0.0, 1.0) * (n - 1) as f64;
            let lo = pos.floor() as usize;
            let hi = (lo + 1).min(n - 1);
            v[lo] + (pos - lo as f64) * (v[hi] - v[lo])
        }
    }
}

/// The median of values in any order (NaN when empty).
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    quantile_sorted(&s, 0.5)
}

impl Timing {
    /// Samples with no warm-up trace, one SpMV each, no graph.
    pub fn from_samples(samples: Vec<f64>, warmup: usize) -> Self {
        Timing {
            samples,
            warmup,
            per_batch: 1,
            graph: false,
            concurrent: false,
            warmup_samples: Vec::new(),
        }
    }

    /// The timing of a configuration timed by step 8: its pilot SpMV and one more, both kept.
    pub fn far(pilot_s: f64, second_s: f64, graph: bool, concurrent: bool) -> Timing {
        Timing {
            samples: vec![pilot_s, second_s],
            warmup: 0,
            per_batch: 1,
            graph,
            concurrent,
            warmup_samples: Vec::new(),
        }
    }

    /// The samples after the warm-up (all of them if α ≥ β).
    pub fn kept(&self) -> &[f64] {
        if self.warmup < self.samples.len() {
            &self.samples[self.warmup..]
        } else {
            &self.samples
        }
    }

    fn sorted(&self) -> Vec<f64> {
        let mut k = self.kept().to_vec();
        k.sort_by(|a, b| a.total_cmp(b));
        k
    }

    /// The papers' warm-up-excluding mean `(Σ_{j≤β} φ_j − Σ_{j≤α} φ_j) / (β − α)`.
    pub fn warm_mean(&self) -> f64 {
        let k = self.kept();
        if k.is_empty() {
            return f64::NAN;
        }
        k.iter().sum::<f64>() / k.len() as f64
    }

    /// Median of the samples after the warm-up.
    pub fn median(&self) -> f64 {
        quantile_sorted(&self.sorted(), 0.5)
    }

    /// The spread: interquartile range of the kept samples relative to their median (0 for a
    /// single sample). Two times closer than their spread are a tie.
    pub fn spread(&self) -> f64 {
        let s = self.sorted();
        let m = quantile_sorted(&s, 0.5);
        if s.is_empty() || m <= 0.0 {
            return f64::NAN;
        }
        (quantile_sorted(&s, 0.75) - quantile_sorted(&s, 0.25)) / m
    }

    /// The timings of one configuration in several placements as one: the kept samples of
    /// every part (none excluded again), the first part's batch size and warm-up trace, a
    /// graph only if every part replayed one. `None` for no parts.
    pub fn pooled(parts: &[Timing]) -> Option<Timing> {
        let first = parts.first()?;
        Some(Timing {
            samples: parts
                .iter()
                .flat_map(|t| t.kept().iter().copied())
                .collect(),
            warmup: 0,
            per_batch: first.per_batch,
            graph: parts.iter().all(|t| t.graph),
            concurrent: parts.iter().all(|t| t.concurrent),
            warmup_samples: first.warmup_samples.clone(),
        })
    }

    /// Total SpMVs timed (samples × SpMVs per sample).
    pub fn spmvs(&self) -> usize {
        self.samples.len() * self.per_batch
    }
}

/// Time `enqueue` (one whole SpMV, run to completion on the host) with `protocol` on the host
/// clock: the CPU backend's implementation of the protocol. Batches of `n` calls are timed as a
/// whole; the warm-up runs batches until `warmup_ms` have passed.
pub fn time_on_host(
    protocol: &TimingProtocol,
    enqueue: &mut dyn FnMut() -> crate::Result<()>,
) -> crate::Result<Timing> {
    use std::time::Instant;
    protocol.validate()?;
    let t0 = Instant::now();
    enqueue()?;
    let pilot = t0.elapsed().as_secs_f64();
    if protocol.is_far(pilot) {
        let t = Instant::now();
        enqueue()?;
        return Ok(Timing::far(pilot, t.elapsed().as_secs_f64(), false, false));
    }
    let n = protocol.per_batch(pilot);
    let mut batch = |n: usize| -> crate::Result<f64> {
        let t = Instant::now();
        for _ in 0..n {
            enqueue()?;
        }
        Ok(t.elapsed().as_secs_f64() / n as f64)
    };
    let start = Instant::now();
    let mut warmup_samples = Vec::new();
    while !protocol.warmup_done(
        pilot,
        warmup_samples.len(),
        start.elapsed().as_secs_f64() * 1e3,
    ) {
        warmup_samples.push(batch(n)?);
        if warmup_samples.len() >= 10_000 {
            break;
        }
    }
    let samples = (0..protocol.timed_runs(pilot))
        .map(|_| batch(n))
        .collect::<crate::Result<Vec<f64>>>()?;
    Ok(Timing {
        samples,
        warmup: protocol.warmup,
        per_batch: n,
        graph: false,
        concurrent: false,
        warmup_samples,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warm_mean_matches_paper_formula() {
        let t = Timing::from_samples(vec![10.0, 4.0, 1.0, 2.0, 3.0], 2);
        // (Σ_{j≤5} − Σ_{j≤2}) / (5 − 2) = (20 − 14) / 3 = 2
        assert_eq!(t.warm_mean(), 2.0);
        assert_eq!(t.median(), 2.0);
        let t = Timing::from_samples(vec![9.0, 1.0, 4.0, 2.0, 3.0], 1);
        assert_eq!(t.median(), 2.5);
    }

    #[test]
    fn spread_is_the_relative_interquartile_range() {
        // kept 1..=9: q25 = 3, q75 = 7, median 5 → 4 / 5.
        let t = Timing::from_samples((0..10).map(f64::from).collect(), 1);
        assert!((t.spread() - 0.8).abs() < 1e-12, "{}", t.spread());
        assert_eq!(Timing::from_samples(vec![2.0; 7], 0).spread(), 0.0);
        assert_eq!(Timing::from_samples(vec![2.0], 0).spread(), 0.0);
        assert!(Timing::from_samples(vec![], 0).spread().is_nan());
    }

    #[test]
    fn quantiles_interpolate() {
        let v = [1.0, 2.0, 4.0, 8.0];
        assert_eq!(quantile_sorted(&v, 0.0), 1.0);
        assert_eq!(quantile_sorted(&v, 1.0), 8.0);
        assert_eq!(quantile_sorted(&v, 0.5), 3.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn batch_size_follows_the_pilot() {
        let p = TimingProtocol::default();
        // 0.5 ms batches: a 5 µs SpMV → 100 per batch; a 1 s SpMV → the minimum of 2.
        assert_eq!(p.per_batch(5e-6), 100);
        assert_eq!(p.per_batch(1.0), 2);
        assert_eq!(p.per_batch(1e-12), MAX_PER_BATCH);
        assert_eq!(p.per_batch(0.0), MAX_PER_BATCH);
        let lat = TimingProtocol {
            mode: TimingMode::Latency,
            ..p.clone()
        };
        assert_eq!(lat.per_batch(5e-6), 1);
        let cold = TimingProtocol { cold: true, ..p };
        assert_eq!(cold.per_batch(5e-6), 1);
    }

    #[test]
    fn validation_names_the_flag() {
        let mut p = TimingProtocol::default();
        assert!(p.validate().is_ok());
        p.warmup = p.runs;
        assert!(p.validate().unwrap_err().to_string().contains("--warmup"));
        let p = TimingProtocol {
            batch_ms: 0.0,
            ..Default::default()
        };
        assert!(p.validate().unwrap_err().to_string().contains("--batch-ms"));
        let p = TimingProtocol {
            runs: 0,
            ..Default::default()
        };
        assert!(p.validate().unwrap_err().to_string().contains("--runs"));
    }

    #[test]
    fn old_protocols_read_with_defaults() {
        let p: TimingProtocol =
            serde_json::from_str(r#"{"runs":30,"warmup":5,"cold":false}"#).unwrap();
        assert_eq!(p.runs, 30);
        assert_eq!(p.warmup, 5);
        assert_eq!(p.mode, TimingMode::Batched);
        assert_eq!(p.warmup_ms, DEFAULT_WARMUP_MS);
    }

    #[test]
    fn host_timing_batches_and_warms_up() {
        let mut calls = 0usize;
        let p = TimingProtocol {
            runs: 5,
            warmup_ms: 2.0,
            batch_ms: 0.05,
            ..Default::default()
        };
        let t = time_on_host(&p, &mut || {
            calls += 1;
            std::thread::sleep(std::time::Duration::from_micros(20));
            Ok(())
        })
        .unwrap();
        assert_eq!(t.samples.len(), 5);
        assert!(t.per_batch >= 2);
        assert!(t.warmup_samples.len() >= 2);
        assert_eq!(
            calls,
            1 + (t.warmup_samples.len() + t.samples.len()) * t.per_batch
        );
        assert!(t.samples.iter().all(|&s| s >= 20e-6), "{:?}", t.samples);
    }

    #[test]
    fn slow_kernels_are_timed_short_only_when_asked() {
        let slow = TimingProtocol {
            runs: 10,
            warmup_ms: 50.0,
            slow_s: Some(2e-3),
            ..Default::default()
        };
        assert!(slow.is_slow(3e-3) && !slow.is_slow(1e-3));
        assert_eq!(
            (slow.per_batch(3e-3), slow.timed_runs(3e-3)),
            (1, SLOW_RUNS)
        );
        assert_eq!((slow.per_batch(1e-3), slow.timed_runs(1e-3)), (2, 10));
        // Never below the excluded samples, never above runs; not in cold mode.
        let few = TimingProtocol {
            runs: 2,
            warmup: 1,
            ..slow.clone()
        };
        assert_eq!(few.timed_runs(1.0), 2);
        assert!(!TimingProtocol {
            cold: true,
            ..slow.clone()
        }
        .is_slow(1.0));
        assert!(!TimingProtocol::default().is_slow(1.0));
        let mut calls = 0usize;
        let t = time_on_host(&slow, &mut || {
            calls += 1;
            std::thread::sleep(std::time::Duration::from_millis(3));
            Ok(())
        })
        .unwrap();
        // Pilot, one warm-up SpMV (not 50 ms of them), SLOW_RUNS single-SpMV samples.
        assert_eq!((t.per_batch, t.warmup_samples.len()), (1, 1));
        assert_eq!(t.samples.len(), SLOW_RUNS);
        assert_eq!(calls, 2 + SLOW_RUNS);
        // Read back from a table row written before the field existed: never short.
        let old: TimingProtocol = serde_json::from_str(r#"{"runs":10}"#).unwrap();
        assert_eq!(old.slow_s, None);
    }

    #[test]
    fn far_kernels_are_timed_from_the_pilot_and_one_more() {
        let far = TimingProtocol {
            runs: 10,
            slow_s: Some(2e-3),
            far_factor: Some(10.0),
            ..Default::default()
        };
        // Nothing measured yet, under the factor, or not slow: not far.
        assert!(!far.is_far(1.0));
        assert!(!far.with_fastest(Some(0.2e-3)).is_far(1.9e-3));
        assert!(!far.with_fastest(Some(1e-3)).is_far(9e-3));
        assert!(far.with_fastest(Some(1e-3)).is_far(11e-3));
        let never = TimingProtocol {
            far_factor: None,
            ..far.clone()
        };
        assert!(!never.with_fastest(Some(1e-6)).is_far(1.0));
        // The fastest-so-far is the caller's, not the table's: never written.
        let json = serde_json::to_string(&far.with_fastest(Some(1e-3))).unwrap();
        assert!(
            json.contains("\"far_factor\":10") && !json.contains("fastest"),
            "{json}"
        );
        assert!(
            far.describe().contains("10× the matrix's fastest"),
            "{}",
            far.describe()
        );
        let bad = TimingProtocol {
            far_factor: Some(0.5),
            ..far.clone()
        };
        assert!(bad
            .validate()
            .unwrap_err()
            .to_string()
            .contains("--far-factor"));
        let mut calls = 0usize;
        let t = time_on_host(&far.with_fastest(Some(0.1e-3)), &mut || {
            calls += 1;
            std::thread::sleep(std::time::Duration::from_millis(3));
            Ok(())
        })
        .unwrap();
        // The pilot and one more SpMV, both kept: no warm-up, two samples.
        assert_eq!(calls, 2);
        assert_eq!((t.per_batch, t.warmup_samples.len()), (1, 0));
        assert_eq!(t.kept().len(), 2);
        assert!(t.samples.iter().all(|&s| s >= 3e-3), "{:?}", t.samples);
    }
}
