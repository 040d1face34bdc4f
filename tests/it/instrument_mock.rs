//! The instrument driver against a scripted backend whose "kernel times" follow a known formula:
//! the right matrices are built and checked, every source path works, errors name the benchmark,
//! and the fitted model reproduces the formula.

use indicatif::ProgressBar;
use sparsecast::backend::{Backend, KernelConfig, PreparedSpmv, Timing, TimingProtocol, Variant};
use sparsecast::instrument::{
    measure, plan, run_precision, synthetic, AutoSource, BenchmarkPoint, BenchmarkSource,
    DeviceLimits, DeviceSource, HostSource, MeasureOptions, RowDist, StatSuite, Statistic,
    SuiteConfig,
};
use sparsecast::model::Shape;
use sparsecast::model::{Model, StoredModel};
use sparsecast::{Csr, Error, Result, Scalar};
use std::cell::RefCell;

/// A backend that computes y exactly (through the f64 reference) and reports times from a
/// formula linear in rows and non-zeros, so the analytical relationships hold exactly.
struct Scripted {
    /// Offer on-device generation.
    device_gen: bool,
    /// Return a wrong y (to check verification).
    wrong: bool,
    /// Refuse the sub-warp CSR mappings.
    vector_only: bool,
    /// Matrices the backend was asked to prepare: (rows, cols, pnz, via device).
    log: RefCell<Vec<(usize, usize, usize, bool)>>,
}

impl Scripted {
    fn new(device_gen: bool) -> Self {
        Scripted {
            device_gen,
            wrong: false,
            vector_only: false,
            log: RefCell::new(Vec::new()),
        }
    }
}

struct Prepared<T> {
    cfg: KernelConfig,
    a: Csr<T>,
    x: Vec<T>,
    y: Vec<T>,
    wrong: bool,
}

/// Seconds of one run. The shapes are the ones the papers' relationships describe exactly:
/// CSR separable in rows and row length, `(1 + x/100)·(2 µs + c·rows)`; ELL linear in rows and
/// non-zeros; COO linear in non-zeros.
fn formula(v: Variant, rows: usize, nnz: usize) -> f64 {
    let (r, n) = (rows as f64, nnz as f64);
    match v {
        Variant::Ell | Variant::Jad => 4e-6 + 2e-10 * r + 1e-10 * n,
        Variant::Coo => 5e-6 + 3e-10 * n,
        _ => (1.0 + n / r.max(1.0) / 100.0) * (2e-6 + 5e-10 * r),
    }
}

impl<T: Scalar> PreparedSpmv<T> for Prepared<T> {
    fn config(&self) -> &KernelConfig {
        &self.cfg
    }
    fn footprint_bytes(&self) -> u64 {
        0
    }
    fn effective_bytes(&self) -> u64 {
        0
    }
    fn set_x(&mut self, x: &[T]) -> Result<()> {
        self.x = x.to_vec();
        Ok(())
    }
    fn poison_y(&mut self) -> Result<()> {
        self.y = vec![T::nan(); self.a.nrows];
        Ok(())
    }
    fn run(&mut self) -> Result<()> {
        let x: Vec<f64> = self.x.iter().map(|v| v.as_f64()).collect();
        let mut y = self.a.spmv_reference(&x);
        if self.wrong {
            let mid = y.len() / 2;
            y[mid] += 1.0;
        }
        self.y = y.into_iter().map(T::cast_f64).collect();
        Ok(())
    }
    fn y(&mut self) -> Result<Vec<T>> {
        Ok(self.y.clone())
    }
    fn time(&mut self, p: &TimingProtocol) -> Result<Timing> {
        let t = formula(self.cfg.variant, self.a.nrows, self.a.nnz());
        // Warm-up runs are slower; the papers' formula must drop them.
        let samples = (0..p.runs)
            .map(|j| if j < p.warmup { 10.0 * t } else { t })
            .collect();
        Ok(Timing::from_samples(samples, p.warmup))
    }
}

impl<T: Scalar> Backend<T> for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    fn device_name(&self) -> String {
        "scripted test device".into()
    }
    fn supports(&self, v: Variant) -> bool {
        match v {
            Variant::Csr { threads_per_row } => !self.vector_only || threads_per_row == 32,
            Variant::Ell | Variant::Coo | Variant::Jad => true,
            _ => false,
        }
    }
    fn prepare<'a>(
        &'a self,
        csr: &Csr<T>,
        cfg: &KernelConfig,
    ) -> Result<Box<dyn PreparedSpmv<T> + 'a>> {
        self.log
            .borrow_mut()
            .push((csr.nrows, csr.ncols, csr.nnz() / csr.nrows.max(1), false));
        Ok(Box::new(Prepared {
            cfg: cfg.clone(),
            a: csr.clone(),
            x: Vec::new(),
            y: Vec::new(),
            wrong: self.wrong,
        }))
    }
    fn prepare_synthetic<'a>(
        &'a self,
        rows: usize,
        cols: usize,
        pnz: usize,
        cfg: &KernelConfig,
    ) -> Result<Box<dyn PreparedSpmv<T> + 'a>> {
        if !self.device_gen {
            return Err(Error::Unsupported("no device generation".into()));
        }
        self.log.borrow_mut().push((rows, cols, pnz, true));
        // "Generate on the device": the contract is the synthetic layout.
        let a = synthetic::build_csr::<T>(rows, cols, pnz, u64::MAX)?;
        Ok(Box::new(Prepared {
            cfg: cfg.clone(),
            a,
            x: Vec::new(),
            y: Vec::new(),
            wrong: self.wrong,
        }))
    }
}

fn small_device() -> DeviceLimits {
    DeviceLimits {
        name: "small".into(),
        n_sm: 2,
        warps_per_sm: 4,
        threads_per_sm: 128,
        max_threads_per_block: 64,
        warp_size: 32,
        global_mem_bytes: 1 << 30,
    }
}

fn quick() -> SuiteConfig {
    SuiteConfig {
        strips: vec![1, 2, 3, 4],
        csr_pnz: vec![4, 16, 64, 128, 256],
        ell_pnz: vec![4, 8, 16],
        coo_pnz: vec![10, 20, 30],
        statistical: None,
        ..SuiteConfig::default()
    }
}

fn opts() -> MeasureOptions {
    MeasureOptions {
        protocol: TimingProtocol {
            runs: 8,
            warmup: 3,
            cold: false,
            warmup_ms: 1.0,
            batch_ms: 0.05,
            ..TimingProtocol::default()
        },
        ..MeasureOptions::default()
    }
}

#[test]
fn pipeline_fits_the_scripted_times() {
    let backend = Scripted::new(false);
    let limits = small_device();
    let pp = run_precision::<f64>(
        &backend,
        &HostSource::default(),
        &limits,
        &quick(),
        &opts(),
        Statistic::WarmMean,
        &ProgressBar::hidden(),
    )
    .unwrap();
    let planned = plan(&limits, &quick(), sparsecast::Precision::F64).unwrap();
    assert_eq!(pp.measurements.len(), planned.points.len());
    // Every prepared matrix is the benchmark the plan asked for, built on the host (after the
    // micro-benchmarks of the device bounds, which come first).
    let log = backend.log.borrow();
    assert_eq!(log.len(), pp.micro.len() + planned.points.len());
    for (q, &(r, c, p, dev)) in planned.points.iter().zip(log.iter().skip(pp.micro.len())) {
        assert_eq!(
            (q.rows, q.cols, q.pnz, false),
            (r as u64, c as u64, p as u64, dev)
        );
    }
    // Warm-up runs were excluded: the time is the formula's.
    for m in &pp.measurements {
        let want = formula(m.kernel, m.rows as usize, (m.rows * m.pnz) as usize);
        assert!((m.warm_mean - want).abs() < 1e-15, "{m:?}");
    }
    // The relationships hold exactly, so matrices far outside the suite (rows a multiple of the
    // strip size, so that ⌈rows / S⌉ loses nothing) are predicted exactly.
    for (v, s) in [
        (
            Variant::Csr {
                threads_per_row: 32,
            },
            8u64,
        ),
        (Variant::Ell, 256),
        (Variant::Coo, 256),
    ] {
        for &(strips, pnz) in &[(7u64, 12u64), (40, 100), (2, 300)] {
            let rows = strips * s;
            let shape = Shape::constant(rows, 4096, pnz);
            let got = pp
                .analytical()
                .unwrap()
                .predict_shape(&shape, v, &Default::default())
                .unwrap();
            let want = formula(v, rows as usize, (rows * pnz) as usize);
            assert!(
                ((got - want) / want).abs() < 1e-9,
                "{v} {strips}×{pnz}: {got} vs {want}"
            );
        }
    }
}

#[test]
fn device_generation_is_used_when_offered_and_falls_back_otherwise() {
    let limits = small_device();
    let points = plan(&limits, &quick(), sparsecast::Precision::F32)
        .unwrap()
        .points;
    let pb = ProgressBar::hidden();

    let on_device = Scripted::new(true);
    let a = measure::<f32>(&on_device, &DeviceSource, &points, &opts(), &pb).unwrap();
    assert!(on_device.log.borrow().iter().all(|e| e.3));

    let host_only = Scripted::new(false);
    let e = measure::<f32>(&host_only, &DeviceSource, &points[..1], &opts(), &pb).unwrap_err();
    assert!(matches!(e, Error::Unsupported(_)), "{e}");

    let auto = AutoSource::default();
    let b = measure::<f32>(&host_only, &auto, &points, &opts(), &pb).unwrap();
    assert!(auto.fell_back());
    assert_eq!(BenchmarkSource::<f32>::name(&auto), "host");
    // Same matrices, same times, whichever way they were built.
    assert_eq!(a, b);
}

#[test]
fn a_wrong_kernel_result_is_caught_and_named() {
    let mut backend = Scripted::new(true);
    backend.wrong = true;
    let limits = small_device();
    let points = plan(&limits, &quick(), sparsecast::Precision::F64)
        .unwrap()
        .points;
    let e = measure::<f64>(
        &backend,
        &DeviceSource,
        &points,
        &opts(),
        &ProgressBar::hidden(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("wrong result") && e.contains("benchmark csr-vector"),
        "{e}"
    );
}

#[test]
fn unsupported_kernels_and_bad_protocols_are_refused() {
    let mut backend = Scripted::new(false);
    backend.vector_only = true;
    let limits = small_device();
    let mut suite = quick();
    suite.csr_threads = vec![4, 32];
    let points = plan(&limits, &suite, sparsecast::Precision::F64)
        .unwrap()
        .points;
    let pb = ProgressBar::hidden();
    let e = measure::<f64>(&backend, &HostSource::default(), &points, &opts(), &pb)
        .unwrap_err()
        .to_string();
    assert!(e.contains("cannot run kernel csr-t4"), "{e}");
    assert!(
        backend.log.borrow().is_empty(),
        "nothing may run before the check"
    );
    let mut bad = opts();
    bad.protocol.warmup = bad.protocol.runs;
    let e = measure::<f64>(&backend, &HostSource::default(), &points, &bad, &pb)
        .unwrap_err()
        .to_string();
    assert!(e.contains("warm-up"), "{e}");
}

#[test]
fn statistical_models_fit_the_scripted_times() {
    let backend = Scripted::new(false);
    let limits = small_device();
    let suite = SuiteConfig {
        statistical: Some(StatSuite::quick()),
        ..quick()
    };
    let pp = run_precision::<f64>(
        &backend,
        &HostSource::default(),
        &limits,
        &suite,
        &opts(),
        Statistic::WarmMean,
        &ProgressBar::hidden(),
    )
    .unwrap();
    let names: Vec<&str> = pp.models.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        ["analytical", "statistical-normal", "statistical-uniform"]
    );
    let stat = StatSuite::quick();
    let mut fits = Vec::new();
    for (m, dist) in pp.models[1..].iter().zip(RowDist::ALL) {
        let StoredModel::Statistical(st) = &m.model else {
            panic!("{} is not statistical", m.name)
        };
        // Every planned benchmark was measured, on the kernels of 001.
        let planned = stat
            .plan(
                &limits,
                dist,
                sparsecast::Precision::F64,
                suite.memory_fraction,
            )
            .unwrap();
        assert_eq!(st.measurements.len(), planned.points.len());
        // The row lengths vary: the times are the formula's for the drawn non-zeros, not for
        // R × P_NZ.
        let off = st
            .measurements
            .iter()
            .filter(|m| {
                m.warm_mean != formula(m.kernel, m.rows as usize, (m.rows * m.pnz) as usize)
            })
            .count();
        assert!(off > st.measurements.len() / 2, "{dist:?}: {off}");
        // The relationships hold up to the sampling of the row lengths: constant-row matrices
        // inside the grid are predicted within a few per cent.
        for (v, s, pnz) in [
            (
                Variant::Csr {
                    threads_per_row: 16,
                },
                16u64,
                64u64,
            ),
            (Variant::Csr { threads_per_row: 1 }, 256, 16),
            (Variant::Ell, 256, 16),
            (Variant::Jad, 256, 16),
        ] {
            let rows = 2 * s;
            let got = m
                .model
                .predict_shape(&Shape::constant(rows, 4096, pnz), v, &Default::default())
                .unwrap();
            let want = formula(v, rows as usize, (rows * pnz) as usize);
            assert!(
                ((got - want) / want).abs() < 0.05,
                "{dist:?} {v}: {got} vs {want}"
            );
        }
        // A kernel outside 001's four is not covered.
        let e = m
            .model
            .predict_shape(
                &Shape::constant(64, 64, 4),
                Variant::Coo,
                &Default::default(),
            )
            .unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)), "{e}");
        // The stored fit follows from the stored measurements.
        assert_eq!(m.model.refit(&[]).unwrap().as_ref(), Some(&m.model));
        fits.push(st.csr_v.clone());
    }
    // Two distributions, two different sets of matrices, two fits.
    assert_ne!(fits[0], fits[1]);
}

/// The host for the analytical suite, while the statistical suites may generate on the device
/// (a plain [`HostSource`] makes them host-only too, as `instrument --source host` does).
struct HostForAnalytical(HostSource);

impl<T: Scalar> BenchmarkSource<T> for HostForAnalytical {
    fn name(&self) -> &'static str {
        "host"
    }
    fn prepare<'a>(
        &self,
        backend: &'a dyn Backend<T>,
        point: &BenchmarkPoint,
        cfg: &KernelConfig,
    ) -> Result<Box<dyn PreparedSpmv<T> + 'a>> {
        self.0.prepare(backend, point, cfg)
    }
}

#[test]
fn constant_rows_are_generated_on_the_device_and_fit_the_formula_exactly() {
    let backend = Scripted::new(true);
    let limits = small_device();
    let suite = SuiteConfig {
        statistical: Some(StatSuite {
            distributions: vec![RowDist::Constant],
            ..StatSuite::quick()
        }),
        ..quick()
    };
    let pp = run_precision::<f64>(
        &backend,
        &HostForAnalytical(HostSource::default()),
        &limits,
        &suite,
        &opts(),
        Statistic::WarmMean,
        &ProgressBar::hidden(),
    )
    .unwrap();
    // A host-only source (`--source host`) builds the statistical matrices on the host too.
    let host_only = Scripted::new(true);
    run_precision::<f64>(
        &host_only,
        &HostSource::default(),
        &limits,
        &suite,
        &opts(),
        Statistic::WarmMean,
        &ProgressBar::hidden(),
    )
    .unwrap();
    assert!(host_only.log.borrow().iter().all(|e| !e.3));
    let m = pp
        .models
        .iter()
        .find(|m| m.name == "statistical-constant")
        .expect("the constant-row model");
    let StoredModel::Statistical(st) = &m.model else {
        panic!("not statistical")
    };
    // Constant rows: every time is the formula's for R × P_NZ, and every matrix of the
    // statistical suite was generated on the device (the analytical suite's come from the host
    // source given).
    assert!(st.measurements.iter().all(|q| {
        let want = formula(q.kernel, q.rows as usize, (q.rows * q.pnz) as usize);
        (q.warm_mean / want - 1.0).abs() < 1e-12
    }));
    let log = backend.log.borrow();
    assert_eq!(log.iter().filter(|e| e.3).count(), st.measurements.len());
    // Inside the grid the constant-row model reproduces the formula (ELL form: exact lines).
    let got = m
        .model
        .predict_shape(
            &Shape::constant(512, 4096, 16),
            Variant::Ell,
            &Default::default(),
        )
        .unwrap();
    let want = formula(Variant::Ell, 512, 512 * 16);
    assert!(((got - want) / want).abs() < 1e-6, "{got} vs {want}");
}

#[test]
fn a_spent_budget_skips_the_statistical_suites_and_keeps_the_analytical_model() {
    let backend = Scripted::new(false);
    let limits = small_device();
    let suite = SuiteConfig {
        statistical: Some(StatSuite::quick()),
        ..quick()
    };
    let spent = MeasureOptions {
        deadline: Some(std::time::Instant::now()),
        ..opts()
    };
    let pp = run_precision::<f64>(
        &backend,
        &HostSource::default(),
        &limits,
        &suite,
        &spent,
        Statistic::WarmMean,
        &ProgressBar::hidden(),
    )
    .unwrap();
    let names: Vec<&str> = pp.models.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["analytical"]);
    let planned = plan(&limits, &suite, sparsecast::Precision::F64).unwrap();
    assert_eq!(pp.measurements.len(), planned.points.len());
    let cut = pp
        .skipped_notes
        .iter()
        .filter(|n| n.ends_with(sparsecast::instrument::measure::TIME_BUDGET))
        .count();
    let stat = StatSuite::quick();
    let per_dist = |d| {
        stat.plan(
            &limits,
            d,
            sparsecast::Precision::F64,
            suite.memory_fraction,
        )
        .unwrap()
        .points
        .len()
    };
    assert_eq!(cut, per_dist(RowDist::Normal) + per_dist(RowDist::Uniform));
    for name in ["statistical-normal", "statistical-uniform"] {
        assert!(
            pp.skipped_notes
                .iter()
                .any(|n| n.starts_with(&format!("{name}: not fitted"))),
            "{:?}",
            pp.skipped_notes
        );
    }
}
