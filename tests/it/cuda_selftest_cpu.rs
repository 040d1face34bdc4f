//! The self-test harness that `sparsecast selftest --backend cuda` runs, exercised on the CPU
//! backend (so CI, which has no GPU, runs the same harness), and shown to catch broken kernels.

use sparsecast::backend::cpu::CpuBackend;
use sparsecast::backend::selftest::{self, Outcome, SelftestConfig};
use sparsecast::backend::{Backend, KernelConfig, PreparedSpmv, Timing, TimingProtocol, Variant};
use sparsecast::{Csr, Result, Scalar};

#[test]
fn cpu_backend_passes_the_selftest() {
    let be = CpuBackend::new();
    let matrices = selftest::test_matrices(11, 1);
    let cfg = SelftestConfig::all(vec![256], 11);
    let (results, secs) = selftest::run_all(&be, &matrices, &cfg, &mut |_| {});
    let summary = selftest::summarize(&results);
    let failed: Vec<_> = results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Fail { .. }))
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    // Every one of our formats ran on most matrices (DIA refuses the unstructured ones).
    for s in summary
        .iter()
        .filter(|s| !s.variant.starts_with("cusparse"))
    {
        assert!(
            s.passed >= matrices.len() / 3,
            "{} passed only {}",
            s.variant,
            s.passed
        );
    }
    println!("{} cases in {secs:.2} s", results.len());
}

/// What a broken kernel does wrong.
#[derive(Clone, Copy)]
enum Defect {
    /// Never writes y (the poison stays).
    NoWrite,
    /// Drops the last entry of the longest row.
    DropEntry,
    /// Keeps the previous run's result on the second run.
    Stale,
}

struct Broken(CpuBackend, Defect);

struct BrokenPrepared<'a, T: Scalar> {
    inner: Box<dyn PreparedSpmv<T> + 'a>,
    csr: Csr<T>,
    x: Vec<T>,
    defect: Defect,
    runs: usize,
    first_y: Option<Vec<T>>,
}

impl<T: Scalar> Backend<T> for Broken {
    fn name(&self) -> &str {
        "broken"
    }
    fn device_name(&self) -> String {
        "broken".into()
    }
    fn supports(&self, v: Variant) -> bool {
        v == Variant::Csr { threads_per_row: 1 }
    }
    fn prepare<'a>(
        &'a self,
        csr: &Csr<T>,
        cfg: &KernelConfig,
    ) -> Result<Box<dyn PreparedSpmv<T> + 'a>> {
        Ok(Box::new(BrokenPrepared {
            inner: Backend::<T>::prepare(&self.0, csr, cfg)?,
            csr: csr.clone(),
            x: vec![],
            defect: self.1,
            runs: 0,
            first_y: None,
        }))
    }
}

impl<T: Scalar> PreparedSpmv<T> for BrokenPrepared<'_, T> {
    fn config(&self) -> &KernelConfig {
        self.inner.config()
    }
    fn footprint_bytes(&self) -> u64 {
        self.inner.footprint_bytes()
    }
    fn effective_bytes(&self) -> u64 {
        self.inner.effective_bytes()
    }
    fn set_x(&mut self, x: &[T]) -> Result<()> {
        self.x = x.to_vec();
        self.inner.set_x(x)
    }
    fn poison_y(&mut self) -> Result<()> {
        self.inner.poison_y()
    }
    fn run(&mut self) -> Result<()> {
        self.runs += 1;
        match self.defect {
            Defect::NoWrite => Ok(()),
            _ => self.inner.run(),
        }
    }
    fn y(&mut self) -> Result<Vec<T>> {
        let mut y = self.inner.y()?;
        match self.defect {
            Defect::DropEntry => {
                if let Some(i) = (0..self.csr.nrows).max_by_key(|&i| self.csr.row_len(i)) {
                    let (c, v) = self.csr.row(i);
                    if let (Some(&c), Some(&v)) = (c.last(), v.last()) {
                        y[i] = y[i] - v * self.x[c as usize];
                    }
                }
            }
            Defect::Stale => {
                if self.runs == 1 {
                    self.first_y = Some(y.clone());
                } else if let Some(f) = &self.first_y {
                    y = f.clone();
                }
            }
            Defect::NoWrite => {}
        }
        Ok(y)
    }
    fn time(&mut self, p: &TimingProtocol) -> Result<Timing> {
        self.inner.time(p)
    }
}

#[test]
fn the_harness_catches_broken_kernels() {
    let matrices = selftest::test_matrices(5, 1);
    let cfg = SelftestConfig {
        variants: vec![Variant::Csr { threads_per_row: 1 }],
        block_sizes: vec![256],
        seed: 5,
        max_format_bytes: selftest::MAX_FORMAT_BYTES,
        share_arrays: false,
    };
    for (defect, name) in [
        (Defect::NoWrite, "no write"),
        (Defect::DropEntry, "dropped entry"),
        (Defect::Stale, "stale result"),
    ] {
        let be = Broken(CpuBackend::new(), defect);
        let res = selftest::run::<f64>(&be, &matrices, &cfg, &mut |_| {});
        let failed = res
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Fail { .. }))
            .count();
        // Every matrix with entries must expose the defect.
        let with_entries = matrices.iter().filter(|m| m.csr.nnz() > 0).count();
        assert!(
            failed >= with_entries,
            "{name}: only {failed} of {with_entries} matrices caught it"
        );
    }
}

#[test]
fn parameter_sets_and_format_only_matrices() {
    // 002's SELL-C-σ (C = 512, σ = 2048) and ELL-BRO's other slice heights run beside the
    // defaults, named by their options; a matrix made for ELL-BRO runs only with ELL-BRO, once
    // per precision (default parameters, first block size).
    use sparsecast::backend::selftest::TestMatrix;
    use sparsecast::formats::FormatKind;
    let mut matrices = selftest::test_matrices(9, 1);
    let gaps = Csr::from_triplets(
        2,
        1 << 20,
        &[0, 0, 1],
        &[0, (1 << 20) - 1, 77],
        &[1.0, 2.0, 3.0],
    )
    .unwrap();
    matrices.push(TestMatrix {
        name: "bro-only".into(),
        csr: gaps,
        only: Some(FormatKind::EllBro),
    });
    let cfg = SelftestConfig {
        variants: vec![Variant::Sell, Variant::EllBro, Variant::Coo],
        block_sizes: vec![64, 256],
        seed: 9,
        max_format_bytes: selftest::MAX_FORMAT_BYTES,
        share_arrays: false,
    };
    let (results, _) = selftest::run_all(&CpuBackend::new(), &matrices, &cfg, &mut |_| {});
    assert_eq!(results.len(), selftest::count_cases(&matrices, &cfg));
    let n = matrices.len() - 1;
    let count = |v: &str, suffix: &str| {
        results
            .iter()
            .filter(|r| r.variant == v && r.matrix.ends_with(suffix))
            .count()
    };
    // × 2 block sizes × 2 precisions.
    assert_eq!(count("sell", " [--sell-c 512 --sell-sigma 2048]"), n * 4);
    assert_eq!(count("ell-bro", " [--ell-bro-slice 32]"), n * 4);
    assert_eq!(count("ell-bro", " [--ell-bro-slice 1000]"), n * 4);
    assert_eq!(count("ell-bro", "bro-only"), 2);
    assert_eq!(count("coo", "bro-only") + count("sell", "bro-only"), 0);
    assert_eq!(count("coo", ""), n * 4);
    for r in &results {
        assert!(
            !matches!(r.outcome, Outcome::Fail { .. }),
            "{} on {}: {:?}",
            r.variant,
            r.matrix,
            r.outcome
        );
    }
    let passed = |v: &str, suffix: &str| {
        results
            .iter()
            .filter(|r| r.variant == v && r.matrix.ends_with(suffix))
            .filter(|r| matches!(r.outcome, Outcome::Pass { .. }))
            .count()
    };
    assert!(
        passed("sell", "2048]") >= n * 3,
        "C = 512 was refused too often"
    );
    assert_eq!(passed("ell-bro", "bro-only"), 2);
}

#[test]
fn sharing_runs_every_case_matrix_by_matrix() {
    // With --share-arrays the same cases run (each once), one matrix at a time; the CPU
    // backend shares nothing, so every case still passes or is skipped as before.
    let matrices = selftest::test_matrices(3, 1);
    let mut cfg = SelftestConfig {
        variants: vec![
            Variant::Csr { threads_per_row: 1 },
            Variant::Coo,
            Variant::Sell,
            Variant::Csr { threads_per_row: 4 },
        ],
        block_sizes: vec![64, 256],
        seed: 3,
        max_format_bytes: selftest::MAX_FORMAT_BYTES,
        share_arrays: false,
    };
    let key = |r: &selftest::CaseResult| {
        (
            r.variant.clone(),
            r.block_size,
            r.matrix.clone(),
            matches!(r.outcome, Outcome::Fail { .. }),
        )
    };
    let plain = selftest::run::<f64>(&CpuBackend::new(), &matrices, &cfg, &mut |_| {});
    cfg.share_arrays = true;
    let shared = selftest::run::<f64>(&CpuBackend::new(), &matrices, &cfg, &mut |_| {});
    let (mut a, mut b): (Vec<_>, Vec<_>) = (
        plain.iter().map(key).collect(),
        shared.iter().map(key).collect(),
    );
    // Matrix by matrix: the name (the matrix and its parameter set's label) changes at most
    // twice per parameter set of a matrix (into a set's cases and back), where case by case it
    // changes with nearly every case.
    let count = |run: &[selftest::CaseResult]| {
        run.windows(2)
            .filter(|w| w[0].matrix != w[1].matrix)
            .count()
    };
    let (changes, unshared) = (count(&shared), count(&plain));
    let sets = selftest::cases::param_sets(Variant::Sell).len();
    assert!(
        changes < matrices.len() * 2 * sets && changes * 3 < unshared,
        "{changes} changes shared, {unshared} unshared"
    );
    a.sort();
    b.sort();
    assert_eq!(a, b);
    assert!(a.iter().all(|k| !k.3), "a case failed");
}
