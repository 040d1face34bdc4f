//! The optimizer's admission rules (`format_refusal`) agree with the format conversions: a block
//! is admitted exactly when converting it succeeds.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sparsecast::backend::cpu::CpuBackend;
use sparsecast::backend::Variant;
use sparsecast::backend::{PreparedSpmv, TimingProtocol};
use sparsecast::formats::{AnyFormat, EllParams, FormatParams, HybParams};
use sparsecast::instrument::{
    run_precision, DeviceLimits, HostSource, MeasureOptions, Statistic, SuiteConfig,
};
use sparsecast::matrix::generate::{GeneratorSpec, Stencil};
use sparsecast::model::Shape;
use sparsecast::optimize::format_refusal;
use sparsecast::optimize::{
    optimize, AnalyticalBlocks, MatrixIdentity, OptimizeOptions, Plan, PreparedPlan, Provenance,
    StackSpec,
};
use sparsecast::Csr;
use sparsecast::Precision;

/// A matrix whose row `r` holds `lens[r]` entries at columns 0, 1, ….
fn with_row_lengths(lens: &[usize], ncols: usize) -> Csr<f64> {
    let mut ptr = vec![0usize];
    for &l in lens {
        ptr.push(ptr.last().unwrap() + l);
    }
    let cols: Vec<u32> = lens.iter().flat_map(|&l| 0..l as u32).collect();
    let vals = vec![1.0; cols.len()];
    Csr::new(lens.len(), ncols, ptr, cols, vals).unwrap()
}

fn check(a: &Csr<f64>, params: &FormatParams) {
    let shape = Shape::from_row_lengths(a.ncols as u64, &a.row_lengths(), params.hyb.width);
    for v in [
        Variant::Csr {
            threads_per_row: 32,
        },
        Variant::Coo,
        Variant::Ell,
        Variant::Hyb,
    ] {
        let ours = format_refusal(&shape, v, params, 8);
        let conv = AnyFormat::convert(a, v.format(), params);
        assert_eq!(
            ours.is_some(),
            conv.is_err(),
            "{v} on {} rows ({params:?}): ours {ours:?}, conversion {:?}",
            a.nrows,
            conv.err()
        );
    }
}

#[test]
fn refusals_match_the_conversions() {
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    for _ in 0..300 {
        let n = rng.random_range(0..6000);
        let long = rng.random_range(1..300);
        let lens: Vec<usize> = (0..n)
            .map(|_| {
                if rng.random_bool(0.02) {
                    long
                } else {
                    rng.random_range(0..8)
                }
            })
            .collect();
        let a = with_row_lengths(&lens, 400);
        // Budgets around the formats' footprints (accepted conversions stay below 1 MiB).
        let params = FormatParams {
            max_bytes: rng.random_range(0..1u64 << 20),
            ell: EllParams {
                width: rng.random_bool(0.3).then(|| rng.random_range(0..400)),
            },
            hyb: HybParams {
                width: rng.random_bool(0.3).then(|| rng.random_range(0..20)),
            },
            ..FormatParams::default()
        };
        check(&a, &params);
    }
}

#[test]
fn slots_beyond_32_bits_are_refused_before_allocating() {
    // 70,000 rows and one row of 70,000 entries: ELL needs 4.9·10⁹ slots.
    let mut lens = vec![1usize; 70_000];
    lens[123] = 70_000;
    let a = with_row_lengths(&lens, 70_000);
    let params = FormatParams::default();
    let shape = Shape::from_row_lengths(70_000, &lens, None);
    assert!(format_refusal(&shape, Variant::Ell, &params, 8)
        .unwrap()
        .to_string()
        .contains("32-bit"));
    check(&a, &params);
    // A HYB width as wide: refused for its ELL part.
    let wide = FormatParams {
        hyb: HybParams {
            width: Some(70_000),
        },
        ..FormatParams::default()
    };
    let shape = Shape::from_row_lengths(70_000, &lens, Some(70_000));
    assert!(format_refusal(&shape, Variant::Hyb, &wide, 8).is_some());
    check(&a, &wide);
}

#[test]
fn plans_only_use_formats_that_hold_their_blocks() {
    let opts = MeasureOptions {
        protocol: TimingProtocol {
            runs: 6,
            warmup: 1,
            cold: false,
            warmup_ms: 1.0,
            batch_ms: 0.05,
            ..TimingProtocol::default()
        },
        ..MeasureOptions::default()
    };
    let section = run_precision::<f64>(
        &CpuBackend::new(),
        &HostSource::default(),
        &DeviceLimits::cpu(Precision::F64),
        &SuiteConfig {
            statistical: None,
            ..SuiteConfig::quick()
        },
        &opts,
        Statistic::default(),
        &indicatif::ProgressBar::hidden(),
    )
    .unwrap();
    let model = AnalyticalBlocks(section.analytical().unwrap());
    let a = StackSpec {
        stack: vec![
            GeneratorSpec::PowerLaw {
                n: 8000,
                mean: 6.0,
                exponent: 2.0,
                seed: 1,
            },
            GeneratorSpec::Stencil {
                stencil: Stencil::D2P5,
                n: 90,
            },
        ],
    }
    .generate()
    .unwrap();
    let csr_bytes = (a.nrows as u64 + 1) * 4 + a.nnz() as u64 * 12;
    let by = Provenance {
        model: "analytical".into(),
        profile: "quick CPU".into(),
        device: "cpu".into(),
        precision: Precision::F64,
    };
    let be = CpuBackend::new();
    // Budgets from generous to one that only small blocks fit in.
    for budget in [u64::MAX / 2, 4 * csr_bytes, csr_bytes, csr_bytes / 3] {
        let o = OptimizeOptions {
            strip_rows: Some(600),
            max_strips: 100,
            params: FormatParams {
                max_bytes: budget,
                ..FormatParams::default()
            },
        };
        let opt = match optimize(&a, &model, &o) {
            Ok(opt) => opt,
            Err(e) => {
                // Only when no format holds some strip at all.
                assert!(budget < csr_bytes, "budget {budget}: {e}");
                continue;
            }
        };
        for b in &opt.blocks {
            let lens: Vec<usize> = (b.rows.start..b.rows.end).map(|i| a.row_len(i)).collect();
            let shape = Shape::from_row_lengths(a.ncols as u64, &lens, None);
            assert_eq!(format_refusal(&shape, b.variant, &o.params, 8), None);
        }
        for s in &opt.singles {
            let shape = Shape::from_row_lengths(a.ncols as u64, &a.row_lengths(), None);
            let refused = format_refusal(&shape, s.config.variant, &o.params, 8).is_some();
            assert!(
                !refused || s.seconds.is_none(),
                "{}: {}",
                s.config.variant,
                s.note
            );
        }
        // The plan builds and runs.
        let plan = Plan::from_optimum(&opt, MatrixIdentity::of("stack", &a), &by);
        let mut p = PreparedPlan::new(&be, &a, &plan, "plan").unwrap_or_else(|e| {
            panic!("budget {budget}: {e}");
        });
        p.run().unwrap();
    }
}
