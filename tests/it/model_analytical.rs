//! The analytical model's math on synthetic benchmark times that follow the papers' linear
//! relationships exactly: fitting must recover them, and every prediction — of a benchmark
//! configuration or of any other matrix — must equal the generating formula.

use sparsecast::backend::{Timing, Variant};
use sparsecast::formats::FormatParams;
use sparsecast::instrument::{plan, strip_size, DeviceLimits, Measurement, Statistic, SuiteConfig};
use sparsecast::model::{AnalyticalModel, Shape};
use sparsecast::Precision;

const VECTOR: Variant = Variant::Csr {
    threads_per_row: 32,
};

/// Ground truth that satisfies every relationship of 004 §3.5 exactly.
struct Truth {
    threshold: f64,
}

impl Truth {
    /// CSR Relationship-1 shape: piecewise linear in P_NZ, continuous at the threshold.
    fn csr_e(&self, x: f64) -> f64 {
        let (a1, b1, a2) = (2.0e-9, 3.0e-6, 5.0e-9);
        if x <= self.threshold {
            a1 * x + b1
        } else {
            a1 * self.threshold + b1 + a2 * (x - self.threshold)
        }
    }
    /// CSR: separable, T = E(x) · (c·y + d) — linear in x at fixed y, linear in y at fixed x.
    fn csr(&self, x: f64, y: f64) -> f64 {
        self.csr_e(x) * (0.7 * y + 0.5)
    }
    /// ELL: T = f(y)·x + g(y) with f, g linear in y.
    fn ell(&self, x: f64, y: f64) -> f64 {
        (1.5e-9 * y + 0.2e-9) * x + (0.8e-6 * y + 4.0e-6)
    }
    /// COO: T = a·strips + b.
    fn coo(&self, strips: f64) -> f64 {
        2.5e-6 * strips + 6.0e-6
    }
    fn time(&self, v: Variant, pnz: u64, strips: u64) -> f64 {
        let (x, y) = (pnz as f64, strips as f64);
        match v {
            Variant::Ell => self.ell(x, y),
            Variant::Coo => self.coo(y),
            _ => self.csr(x, y),
        }
    }
}

fn measurement(v: Variant, rows: u64, cols: u64, pnz: u64, strips: u64, t: f64) -> Measurement {
    let timing = Timing::from_samples(vec![t; 10], 2);
    Measurement {
        kernel: v,
        rows,
        cols,
        pnz,
        strips,
        warm_mean: timing.warm_mean(),
        median: timing.median(),
        samples: timing.samples,
    }
}

fn synthetic_suite(limits: &DeviceLimits, truth: &Truth) -> Vec<Measurement> {
    let p = plan(limits, &SuiteConfig::default(), Precision::F32).unwrap();
    p.points
        .iter()
        .map(|q| {
            measurement(
                q.variant,
                q.rows,
                q.cols,
                q.pnz,
                q.strips,
                truth.time(q.variant, q.pnz, q.strips),
            )
        })
        .collect()
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs()
}

fn setup() -> (DeviceLimits, Truth, AnalyticalModel, Vec<Measurement>) {
    let limits = DeviceLimits::tesla_c2050();
    let truth = Truth {
        threshold: limits.max_threads_per_block as f64,
    };
    let ms = synthetic_suite(&limits, &truth);
    let m = AnalyticalModel::fit(Precision::F32, &limits, Statistic::WarmMean, &ms).unwrap();
    (limits, truth, m, ms)
}

#[test]
fn fitted_relationships_are_the_generating_lines() {
    let (_, truth, m, _) = setup();
    let csr = &m.csr[0];
    // Relationship-1 at the middle strip count (5 of 1…10, the papers' Fig. 4).
    assert_eq!(csr.fixed_strips, 5);
    let scale = 0.7 * 5.0 + 0.5;
    assert!(rel(csr.rel1.low.slope, 2.0e-9 * scale) < 1e-9);
    assert!(rel(csr.rel1.high.unwrap().slope, 5.0e-9 * scale) < 1e-9);
    // Relationship-2 lines at P_NZ = 4 and at the threshold (the papers' Fig. 5a, 5b).
    assert_eq!(csr.rel2_low.pnz, 4);
    assert_eq!(csr.rel2_high.as_ref().unwrap().pnz, 1024);
    assert!(rel(csr.rel2_low.line.slope, truth.csr_e(4.0) * 0.7) < 1e-9);
    assert!(rel(csr.rel2_low.t2, truth.csr(4.0, 5.0)) < 1e-12);
    // ELL: f(y) and e(y) at x1 = 4.
    assert!(rel(m.ell.f.slope, 1.5e-9) < 1e-9 && rel(m.ell.f.intercept, 0.2e-9) < 1e-9);
    assert_eq!(m.ell.x1, 4);
    assert!(rel(m.ell.e.slope, 1.5e-9 * 4.0 + 0.8e-6) < 1e-9);
    // COO.
    assert!(rel(m.coo.line.slope, 2.5e-6) < 1e-9 && rel(m.coo.line.intercept, 6.0e-6) < 1e-9);
}

#[test]
fn benchmark_configurations_predict_their_measured_time() {
    let (_, _, m, ms) = setup();
    let p = FormatParams::default();
    for q in &ms {
        let lens = vec![q.pnz as usize; q.rows as usize];
        let shape = Shape::from_row_lengths(q.cols, &lens, None);
        let got = m.predict_shape(&shape, q.kernel, &p).unwrap();
        assert!(
            rel(got, q.warm_mean) < 1e-9,
            "{} R={} P_NZ={}: predicted {got}, measured {}",
            q.kernel,
            q.rows,
            q.pnz,
            q.warm_mean
        );
    }
}

#[test]
fn arbitrary_matrices_follow_the_generating_formula() {
    let (limits, truth, m, _) = setup();
    let p = FormatParams::default();
    let s_csr = strip_size(&limits, VECTOR).unwrap() as f64;
    let s_ell = strip_size(&limits, Variant::Ell).unwrap() as f64;
    let s_coo = strip_size(&limits, Variant::Coo).unwrap() as f64;
    // Irregular matrices far outside the benchmark grid (up to 500 strips, modes on both sides
    // of the threshold), built from a row-length histogram.
    let cases: &[(u64, &[(u64, u64)])] = &[
        (50_000, &[(7, 30_000), (3, 15_000), (40, 5_000)]),
        (336_000, &[(1500, 2_000), (9, 500), (2000, 10)]),
        (1_000_000, &[(5, 900_000), (12, 99_000), (200, 1_000)]),
    ];
    for &(ncols, hist) in cases {
        let lens: Vec<usize> = hist
            .iter()
            .flat_map(|&(l, c)| std::iter::repeat(l as usize).take(c as usize))
            .collect();
        let shape = Shape::from_row_lengths(ncols, &lens, None);
        let y_csr = (shape.nrows as f64 / s_csr).ceil();
        let y_ell = (shape.nrows as f64 / s_ell).ceil();
        let mode = shape.mode_row_len as f64;
        let max = shape.max_row_len as f64;

        let csr = m.predict_shape(&shape, VECTOR, &p).unwrap();
        assert!(rel(csr, truth.csr(mode, y_csr)) < 1e-9, "csr {csr}");
        let ell = m.predict_shape(&shape, Variant::Ell, &p).unwrap();
        assert!(rel(ell, truth.ell(max, y_ell)) < 1e-9, "ell {ell}");
        let coo = m.predict_shape(&shape, Variant::Coo, &p).unwrap();
        let y_coo = (shape.nnz as f64 / s_coo).ceil();
        assert!(rel(coo, truth.coo(y_coo)) < 1e-9, "coo {coo}");

        let (k, over) = (shape.hyb_width, shape.hyb_coo_nnz);
        let want = if k > 0 {
            truth.ell(k as f64, y_ell)
        } else {
            0.0
        } + if over > 0 {
            truth.coo((over as f64 / s_coo).ceil())
        } else {
            0.0
        };
        let hyb = m.predict_shape(&shape, Variant::Hyb, &p).unwrap();
        assert!(rel(hyb, want) < 1e-9, "hyb {hyb} want {want} (K = {k})");
    }
}

#[test]
fn estimates_never_fall_below_the_fastest_benchmark() {
    let (_, truth, m, ms) = setup();
    let p = FormatParams::default();
    let fastest = ms.iter().map(|q| q.warm_mean).fold(f64::INFINITY, f64::min);
    // One row with one entry: below every benchmark. The CSR truth there is below the fastest
    // benchmark (CSR, one strip, P_NZ 4), so the estimate is the floor; the others stay above.
    let tiny = Shape::from_row_lengths(1, &[1], None);
    assert!(truth.csr(1.0, 1.0) < fastest);
    assert_eq!(m.predict_shape(&tiny, VECTOR, &p).unwrap(), fastest);
    for (v, want) in [
        (Variant::Ell, truth.ell(1.0, 1.0)),
        (Variant::Coo, truth.coo(1.0)),
    ] {
        let t = m.predict_shape(&tiny, v, &p).unwrap();
        assert!(want > fastest && rel(t, want) < 1e-9, "{v}: {t} vs {want}");
    }
}

#[test]
fn formats_beyond_device_memory_are_refused() {
    let (_, _, m, _) = setup();
    // One 100,000-entry row among 1M short rows: ELL would need 1M × 100,000 × 8 B.
    let lens: Vec<usize> = std::iter::once(100_000)
        .chain(std::iter::repeat(4).take(1_000_000))
        .collect();
    let shape = Shape::from_row_lengths(1_000_000, &lens, None);
    let e = m
        .predict_shape(&shape, Variant::Ell, &FormatParams::default())
        .unwrap_err();
    assert!(e.to_string().contains("bytes"), "{e}");
    assert!(m
        .predict_shape(&shape, VECTOR, &FormatParams::default())
        .is_ok());
    assert!(m
        .predict_shape(&shape, Variant::Jad, &FormatParams::default())
        .is_err());
}

#[test]
fn missing_relationships_are_reported() {
    let (limits, _, _, ms) = setup();
    // Without ELL measurements the model cannot be fitted.
    let no_ell: Vec<Measurement> = ms
        .iter()
        .filter(|q| q.kernel != Variant::Ell)
        .cloned()
        .collect();
    let e =
        AnalyticalModel::fit(Precision::F32, &limits, Statistic::WarmMean, &no_ell).unwrap_err();
    assert!(e.to_string().contains("ell"), "{e}");
    // CSR measured at a single P_NZ: Relationship-1 is impossible.
    let one_pnz: Vec<Measurement> = ms
        .iter()
        .filter(|q| q.kernel != VECTOR || q.pnz == 16)
        .cloned()
        .collect();
    let e =
        AnalyticalModel::fit(Precision::F32, &limits, Statistic::WarmMean, &one_pnz).unwrap_err();
    assert!(e.to_string().contains("Relationship-1"), "{e}");
}

#[test]
fn the_median_statistic_ignores_preemption_spikes() {
    let (limits, truth, _, ms) = setup();
    // Same true times, but one run in five is preempted for 50× as long.
    let spiky: Vec<Measurement> = ms
        .iter()
        .map(|q| {
            let t = q.warm_mean;
            let timing = Timing::from_samples(vec![10.0 * t, t, t, 50.0 * t, t, t], 1);
            Measurement {
                warm_mean: timing.warm_mean(),
                median: timing.median(),
                samples: timing.samples,
                ..q.clone()
            }
        })
        .collect();
    let by_median =
        AnalyticalModel::fit(Precision::F32, &limits, Statistic::Median, &spiky).unwrap();
    let by_mean =
        AnalyticalModel::fit(Precision::F32, &limits, Statistic::WarmMean, &spiky).unwrap();
    let shape = Shape::constant(100_000, 1 << 20, 20);
    let s_ell = strip_size(&limits, Variant::Ell).unwrap() as f64;
    let want = truth.ell(20.0, (100_000.0 / s_ell).ceil());
    let p = FormatParams::default();
    assert!(
        rel(
            by_median.predict_shape(&shape, Variant::Ell, &p).unwrap(),
            want
        ) < 1e-9
    );
    // The mean carries the spike: every time is (1 + 1 + 50 + 1 + 1) / 5 = 10.8× the truth.
    assert!(
        rel(
            by_mean.predict_shape(&shape, Variant::Ell, &p).unwrap(),
            10.8 * want
        ) < 1e-9
    );
}
