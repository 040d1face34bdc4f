//! Plans on the GPU, both execution modes: the blocks of a plan run one after another (a chain)
//! or concurrently (a fork/join graph); either way y equals the f64 reference, and the timing
//! says how the blocks ran. Without a CUDA device (CI) each test prints "skipped: no CUDA
//! device" and checks nothing else.

use crate::common::{cuda as backend, gpu_serial as serial};
use sparsecast::backend::{Backend, KernelConfig, Overlap, PreparedSpmv, TimingMode};
use sparsecast::backend::{TimingProtocol, Variant, VendorAlg};
use sparsecast::matrix::generate::{GeneratorSpec, RowLength};
use sparsecast::optimize::{MatrixIdentity, Plan, PreparedPlan, StackSpec};
use sparsecast::Csr;
use std::ops::Range;

fn stacked() -> Csr<f64> {
    StackSpec {
        stack: vec![
            GeneratorSpec::Banded {
                n: 20_000,
                half_bandwidth: 4,
                seed: 1,
            },
            GeneratorSpec::PowerLaw {
                n: 20_000,
                mean: 12.0,
                exponent: 2.0,
                seed: 2,
            },
            GeneratorSpec::Random {
                rows: 20_000,
                cols: 20_000,
                row_len: RowLength::Uniform { min: 0, max: 60 },
                seed: 3,
            },
        ],
    }
    .generate()
    .unwrap()
}

fn max_error(a: &Csr<f64>, x: &[f64], y: &[f64]) -> f64 {
    let r = a.spmv_reference(x);
    (0..a.nrows)
        .map(|i| {
            let (c, v) = a.row(i);
            let scale: f64 = c
                .iter()
                .zip(v)
                .map(|(&c, &v)| (v * x[c as usize]).abs())
                .sum::<f64>()
                .max(f64::MIN_POSITIVE);
            if y[i].is_nan() {
                f64::INFINITY
            } else {
                (y[i] - r[i]).abs() / scale
            }
        })
        .fold(0.0, f64::max)
}

#[test]
fn cuda_plans_run_serially_and_concurrently_and_equal_the_reference() {
    let _serial = serial();
    let Some(be) = backend() else { return };
    let a = stacked();
    let n = a.nrows;
    // Every launch sequence in one plan: a memset + kernel (COO), two kernels (HYB), the
    // merge-path look-back, DIA, ELL, and cuSPARSE where present.
    let mut variants = vec![
        Variant::Dia,
        Variant::Coo,
        Variant::Hyb,
        Variant::CsrMerge,
        Variant::Ell,
        Variant::Csr { threads_per_row: 8 },
    ];
    if Backend::<f64>::supports(&be, Variant::Vendor(VendorAlg::CsrAlg2)) {
        variants.push(Variant::Vendor(VendorAlg::CsrAlg2));
    }
    let k = variants.len();
    let blocks: Vec<(Range<usize>, KernelConfig)> = variants
        .iter()
        .enumerate()
        .map(|(i, &v)| (i * n / k..(i + 1) * n / k, KernelConfig::new(v)))
        .collect();
    let mut plan = Plan::by_rows(
        MatrixIdentity::of("stack", &a),
        sparsecast::Precision::F64,
        &blocks,
    )
    .unwrap();
    let x: Vec<f64> = (0..a.ncols)
        .map(|j| ((j * 7919) % 2000) as f64 / 1000.0 - 1.0)
        .collect();
    for overlap in [Overlap::Serial, Overlap::Concurrent] {
        plan.overlap = overlap;
        let mut p = PreparedPlan::new(&be as &dyn Backend<f64>, &a, &plan, "plan").unwrap();
        p.set_x(&x).unwrap();
        for round in 0..3 {
            p.poison_y().unwrap();
            p.run().unwrap();
            let err = max_error(&a, &x, &p.y().unwrap());
            assert!(err < 1e-12, "{overlap}, run {round}: error {err}");
        }
        for (mode, cold) in [
            (TimingMode::Batched, false),
            (TimingMode::Batched, true),
            (TimingMode::Latency, false),
        ] {
            let proto = TimingProtocol {
                mode,
                cold,
                runs: 8,
                warmup_ms: 2.0,
                batch_ms: 0.2,
                ..TimingProtocol::default()
            };
            let t = p.time(&proto).unwrap();
            assert_eq!(t.samples.len(), 8);
            assert!(
                t.samples.iter().all(|&s| s > 0.0 && s < 1.0),
                "{:?}",
                t.samples
            );
            assert_eq!(
                t.concurrent,
                overlap == Overlap::Concurrent,
                "{overlap} {mode:?} {cold}"
            );
            println!(
                "{overlap} {mode:?} cold={cold}: median {:.2} us (graph {}, concurrent {})",
                t.median() * 1e6,
                t.graph,
                t.concurrent
            );
        }
        // Replayed graphs leave a correct y behind too.
        p.poison_y().unwrap();
        p.run().unwrap();
        assert!(
            max_error(&a, &x, &p.y().unwrap()) < 1e-12,
            "{overlap} after timing"
        );
    }
}
