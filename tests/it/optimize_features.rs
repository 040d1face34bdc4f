//! Block features from the prefix structures over strips equal a direct recomputation from the
//! rows, the analytical model's block predictions equal its own `predict` on the block's shape,
//! and `optimize` equals a naive optimizer that builds every block from its rows.

use proptest::prelude::*;
use sparsecast::backend::cpu::CpuBackend;
use sparsecast::backend::{TimingProtocol, Variant};
use sparsecast::formats::{EllParams, FormatParams, HybParams};
use sparsecast::instrument::{
    run_precision, DeviceLimits, HostSource, MeasureOptions, Statistic, SuiteConfig,
};
use sparsecast::model::{Model, Shape};
use sparsecast::optimize::dp::solve_table;
use sparsecast::optimize::{
    features_for, optimize, AnalyticalBlocks, BlockModel, OptimizeOptions, StripLayout, StripTable,
    Sweep,
};
use sparsecast::profile::PrecisionProfile;
use sparsecast::{Csr, Precision};
use std::sync::OnceLock;

/// The analytical model measured on this CPU with the quick suite (as `sparsecast instrument
/// --backend cpu --quick` measures it), once per test binary.
fn cpu_model() -> &'static PrecisionProfile {
    static P: OnceLock<PrecisionProfile> = OnceLock::new();
    P.get_or_init(|| {
        let opts = MeasureOptions {
            protocol: TimingProtocol {
                runs: 10,
                warmup: 2,
                cold: false,
                warmup_ms: 1.0,
                batch_ms: 0.05,
                ..TimingProtocol::default()
            },
            ..MeasureOptions::default()
        };
        run_precision::<f64>(
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
        .expect("quick CPU instrumenting")
    })
}

fn row_ptr(lens: &[u64]) -> Vec<usize> {
    let mut p = Vec::with_capacity(lens.len() + 1);
    p.push(0usize);
    for &l in lens {
        p.push(p.last().unwrap() + l as usize);
    }
    p
}

/// Row lengths with the variety that matters: runs of one length (modes, ties), zeros, a heavy
/// tail, and enough rows (> 4096 per block) for Bell & Garland's HYB width to move.
fn row_lengths() -> impl Strategy<Value = Vec<u64>> {
    let segment = (0u64..6, 1usize..3000, 0u64..40).prop_map(|(kind, len, base)| match kind {
        0 => vec![base; len],
        1 => (0..len as u64).map(|r| base + r % 7).collect(),
        2 => (0..len as u64)
            .map(|r| if r % 97 == 0 { 500 + r } else { r % 3 })
            .collect(),
        3 => vec![0; len],
        4 => (0..len as u64)
            .map(|r| (r * 2_654_435_761) % (base + 1))
            .collect(),
        _ => (0..len as u64).map(|r| base * (1 + r % 2)).collect(),
    });
    prop::collection::vec(segment, 1..8).prop_map(|v| v.concat())
}

fn check_sweep(lens: &[u64], strip_rows: u64, hyb: Option<u64>) -> Result<(), TestCaseError> {
    let n = lens.len() as u64;
    let layout = StripLayout::new(n, strip_rows, 60).unwrap();
    let table = StripTable::new(&row_ptr(lens), 1 << 20, &layout, hyb).unwrap();
    let mut sweep = Sweep::new(&table);
    for j in 0..table.strips() {
        let mut err = None;
        sweep.column(j, |i, f| {
            if err.is_some() {
                return;
            }
            let rows: Vec<usize> = lens[layout.rows(i, j)]
                .iter()
                .map(|&l| l as usize)
                .collect();
            let want = Shape::from_row_lengths(1 << 20, &rows, hyb.map(|w| w as usize));
            if *f != want {
                err = Some(format!("block [{i}, {j}]: sweep {f:?}, rows {want:?}"));
            }
        });
        if let Some(e) = err {
            return Err(TestCaseError::fail(e));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn sweep_features_equal_the_rows(lens in row_lengths(), strip in 1u64..2500, hyb in prop::option::of(0u64..50)) {
        check_sweep(&lens, strip, hyb)?;
    }

    #[test]
    fn block_predictions_equal_the_model(lens in row_lengths(), ell in prop::option::of(0usize..600), hyb in prop::option::of(0usize..50), tiny_memory in any::<bool>()) {
        let mut model = cpu_model().analytical().unwrap().clone();
        let params = FormatParams { ell: EllParams { width: ell }, hyb: HybParams { width: hyb }, ..FormatParams::default() };
        // The rows as a matrix (columns 0…len−1), and its features as the model reads them.
        let a = with_row_lengths(&lens, 70_000);
        let features = features_for(&a, &params);
        let shape = Shape::from_row_lengths(70_000, &a.row_lengths(), hyb);
        if tiny_memory {
            // A device that holds exactly this matrix in CSR: some formats fit, others not.
            let csr = Variant::Csr { threads_per_row: 32 };
            model.limits.global_mem_bytes = shape.working_set_bytes(csr, &params, 8).unwrap();
        }
        let blocks = AnalyticalBlocks(&model);
        for v in Variant::ours() {
            let want = model.predict(&features, v, &params).unwrap_or(f64::INFINITY);
            let got = blocks.predict_block(&shape, v, &params);
            prop_assert_eq!(got.to_bits(), want.to_bits(), "{}: block {} vs model {}", v, got, want);
        }
    }
}

/// A matrix whose row `r` holds columns `0…lens[r]−1`.
fn with_row_lengths(lens: &[u64], ncols: usize) -> Csr<f64> {
    let ptr = row_ptr(lens);
    let cols: Vec<u32> = lens.iter().flat_map(|&l| 0..l as u32).collect();
    let vals = vec![1.0; cols.len()];
    Csr::new(lens.len(), ncols, ptr, cols, vals).unwrap()
}

#[test]
fn tall_runs_of_long_and_short_rows() {
    // The HYB pointer must walk far in both directions: 30k rows of 3, then 20k of 900, then a
    // mix.
    let mut lens = vec![3u64; 30_000];
    lens.extend(std::iter::repeat_n(900, 20_000));
    lens.extend((0..30_000u64).map(|r| r % 50));
    check_sweep(&lens, 4000, None).unwrap();
    // 1-row strips: coarsened to the cap of 60 strips.
    check_sweep(&lens, 1, None).unwrap();
}

/// A naive optimizer: every block's E from `Model::predict` on the block's own features,
/// computed from its rows.
fn naive(
    a: &Csr<f64>,
    model: &dyn Model,
    layout: &StripLayout,
    params: &FormatParams,
) -> (f64, Vec<(usize, usize, Variant)>) {
    let variants = model.variants();
    let p = solve_table(layout.strips as usize, |i, j| {
        let r = layout.rows(i, j);
        let features = features_for(&a.slice_rows(r.start, r.end), params);
        let mut best = (f64::INFINITY, 0u32);
        for (k, &v) in variants.iter().enumerate() {
            let t = model.predict(&features, v, params).unwrap_or(f64::INFINITY);
            if t < best.0 {
                best = (t, k as u32);
            }
        }
        best
    });
    (
        p.total,
        p.blocks
            .iter()
            .map(|b| (b.first, b.last, variants[b.format as usize]))
            .collect(),
    )
}

#[test]
fn optimize_equals_the_naive_optimizer() {
    use sparsecast::matrix::generate::{GeneratorSpec, RowLength, Stencil};
    use sparsecast::optimize::StackSpec;
    let section = cpu_model();
    let blocks = AnalyticalBlocks(section.analytical().unwrap());
    let stacks = [
        StackSpec {
            stack: vec![
                GeneratorSpec::PowerLaw {
                    n: 6000,
                    mean: 8.0,
                    exponent: 2.0,
                    seed: 3,
                },
                GeneratorSpec::Stencil {
                    stencil: Stencil::D2P5,
                    n: 90,
                },
                GeneratorSpec::Random {
                    rows: 5000,
                    cols: 9000,
                    row_len: RowLength::Uniform { min: 20, max: 60 },
                    seed: 5,
                },
            ],
        },
        StackSpec {
            stack: vec![
                GeneratorSpec::Stencil {
                    stencil: Stencil::D3P7,
                    n: 20,
                },
                GeneratorSpec::PowerLaw {
                    n: 9000,
                    mean: 20.0,
                    exponent: 1.8,
                    seed: 9,
                },
            ],
        },
    ];
    for spec in &stacks {
        let a = spec.generate().unwrap();
        for (strip_rows, hyb) in [(500u64, None), (1300, Some(6usize)), (97, None)] {
            let opts = OptimizeOptions {
                strip_rows: Some(strip_rows),
                max_strips: 40,
                params: FormatParams {
                    hyb: HybParams { width: hyb },
                    ..FormatParams::default()
                },
            };
            let got = optimize(&a, &blocks, &opts).unwrap();
            let (total, want) = naive(&a, section.analytical().unwrap(), &got.layout, &opts.params);
            let got_blocks: Vec<_> = got
                .blocks
                .iter()
                .map(|b| (b.strips.0, b.strips.1, b.variant))
                .collect();
            assert_eq!(got.predicted.to_bits(), total.to_bits(), "{}", spec.name());
            assert_eq!(got_blocks, want, "{} strips of {strip_rows}", spec.name());
            // The single-block answer is a candidate: the plan never predicts worse.
            let best_single = got.best_single().and_then(|r| r.seconds).unwrap();
            assert!(got.predicted <= best_single);
            if got.blocks.len() == 1 {
                assert_eq!(got.blocks[0].variant, got.singles[0].config.variant);
                assert_eq!(got.predicted, best_single);
            }
        }
    }
}

#[test]
fn optimize_reports_progress_in_candidate_blocks() {
    use std::sync::Mutex;
    let section = cpu_model();
    let blocks = AnalyticalBlocks(section.analytical().unwrap());
    let a = with_row_lengths(&[3; 5000], 800);
    let opts = OptimizeOptions {
        strip_rows: Some(10),
        max_strips: 1000,
        params: FormatParams::default(),
    };
    let calls = Mutex::new(Vec::new());
    let got = sparsecast::optimize::optimize_with_progress(&a, &blocks, &opts, &|d, t| {
        calls.lock().unwrap().push((d, t))
    })
    .unwrap();
    let calls = calls.into_inner().unwrap();
    // 500 strips: 500·501/2 candidate blocks, reported in chunks, never backwards.
    let total = 500 * 501 / 2;
    assert!(calls.len() > 1, "{calls:?}");
    assert!(calls.iter().all(|&(_, t)| t == total));
    assert!(calls.windows(2).all(|w| w[0].0 < w[1].0), "{calls:?}");
    assert_eq!(calls.last().unwrap().0, total);
    // The same answer as without progress.
    let plain = optimize(&a, &blocks, &opts).unwrap();
    assert_eq!(got.predicted.to_bits(), plain.predicted.to_bits());
}
