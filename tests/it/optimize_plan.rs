//! Executable plans on the CPU backend: plans mixing every format equal the f64 reference, timing
//! adds up, the JSON round-trips, corrupted plans and plans of other matrices are rejected.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sparsecast::backend::cpu::CpuBackend;
use sparsecast::backend::{KernelConfig, PreparedSpmv, TimingProtocol, Variant};
use sparsecast::matrix::generate::{GeneratorSpec, RowLength, Stencil};
use sparsecast::optimize::{MatrixIdentity, Plan, PreparedPlan, StackSpec};
use sparsecast::{Csr, Scalar};
use std::ops::Range;

/// A matrix with parts of different character: banded (DIA-friendly), power-law, uniform random.
fn mixed() -> Csr<f64> {
    StackSpec {
        stack: vec![
            GeneratorSpec::Banded {
                n: 3000,
                half_bandwidth: 3,
                seed: 1,
            },
            GeneratorSpec::PowerLaw {
                n: 3000,
                mean: 10.0,
                exponent: 2.0,
                seed: 2,
            },
            GeneratorSpec::Random {
                rows: 2000,
                cols: 3000,
                row_len: RowLength::Uniform { min: 0, max: 40 },
                seed: 3,
            },
            GeneratorSpec::Stencil {
                stencil: Stencil::D2P5,
                n: 40,
            },
        ],
    }
    .generate()
    .unwrap()
}

/// Largest |y − reference| relative to Σ|a_ij·x_j| of the row (∞ for NaN).
fn max_error<T: Scalar>(a: &Csr<T>, x: &[T], y: &[T]) -> f64 {
    let xf: Vec<f64> = x.iter().map(|v| v.as_f64()).collect();
    let r = a.spmv_reference(&xf);
    (0..a.nrows)
        .map(|i| {
            let (c, v) = a.row(i);
            let scale: f64 = c
                .iter()
                .zip(v)
                .map(|(&c, &v)| (v.as_f64() * xf[c as usize]).abs())
                .sum::<f64>()
                .max(f64::MIN_POSITIVE);
            let yi = y[i].as_f64();
            if yi.is_nan() {
                f64::INFINITY
            } else {
                (yi - r[i]).abs() / scale
            }
        })
        .fold(0.0, f64::max)
}

fn run_plan<T: Scalar>(a: &Csr<T>, plan: &Plan, seed: u64) -> f64 {
    let be = CpuBackend::new();
    let mut p = PreparedPlan::new(&be, a, plan, "test plan").unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let x: Vec<T> = (0..a.ncols)
        .map(|_| T::cast_f64(rng.random_range(-1.0..1.0)))
        .collect();
    p.set_x(&x).unwrap();
    p.poison_y().unwrap();
    p.run().unwrap();
    let y = p.y().unwrap();
    assert_eq!(y.len(), a.nrows);
    max_error(a, &x, &y)
}

/// Cut `0..nrows` at the given rows, assigning variants in turn.
fn by_rows<T: Scalar>(a: &Csr<T>, cuts: &[usize], variants: &[Variant]) -> Plan {
    let mut bounds = vec![0];
    bounds.extend_from_slice(cuts);
    bounds.push(a.nrows);
    let blocks: Vec<(Range<usize>, KernelConfig)> = bounds
        .windows(2)
        .zip(variants.iter().cycle())
        .map(|(w, &v)| {
            let mut cfg = KernelConfig::new(v);
            cfg.params.segtile.min_segment = 0.0; // SEG-TILE on any block
            (w[0]..w[1], cfg)
        })
        .collect();
    Plan::by_rows(MatrixIdentity::of("mixed", a), T::PRECISION, &blocks).unwrap()
}

#[test]
fn plans_mixing_every_format_equal_the_reference() {
    let a = mixed();
    let ours = Variant::ours();
    // One block per kernel; DIA gets rows of the banded part, where it stores few diagonals.
    let dia = ours.iter().position(|&v| v == Variant::Dia).unwrap();
    let mut variants = ours.clone();
    variants.swap(0, dia);
    let n = a.nrows;
    let mut cuts: Vec<usize> = (1..variants.len())
        .map(|k| 700 + k * (n - 800) / variants.len())
        .collect();
    cuts.dedup();
    let plan = by_rows(&a, &cuts, &variants);
    assert_eq!(plan.blocks.len(), variants.len());
    let kinds: std::collections::BTreeSet<Variant> = plan.blocks.iter().map(|b| b.kernel).collect();
    assert_eq!(kinds.len(), ours.len(), "every kernel appears");
    assert!(run_plan(&a, &plan, 1) < 1e-12);
    let a32 = a.cast::<f32>();
    let plan32 = by_rows(&a32, &cuts, &variants);
    assert!(run_plan(&a32, &plan32, 2) < 1e-4);
}

#[test]
fn random_plans_equal_the_reference() {
    // Banded everywhere, so every block of every plan fits DIA too.
    let a = GeneratorSpec::Banded {
        n: 5000,
        half_bandwidth: 5,
        seed: 7,
    }
    .generate()
    .unwrap();
    let ours = Variant::ours();
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for case in 0..12 {
        let k = rng.random_range(0..8);
        let mut cuts: Vec<usize> = (0..k).map(|_| rng.random_range(1..a.nrows)).collect();
        cuts.sort_unstable();
        cuts.dedup();
        let variants: Vec<Variant> = (0..=cuts.len())
            .map(|_| ours[rng.random_range(0..ours.len())])
            .collect();
        let plan = by_rows(&a, &cuts, &variants);
        let err = run_plan(&a, &plan, case);
        assert!(
            err < 1e-12,
            "case {case}: {:?} error {err}",
            plan.strategy()
        );
    }
}

/// A short warm batched protocol for the CPU: `runs` samples after `warmup` runs.
fn quick_protocol(runs: usize, warmup: usize) -> TimingProtocol {
    TimingProtocol {
        runs,
        warmup,
        cold: false,
        warmup_ms: 1.0,
        batch_ms: 0.05,
        ..TimingProtocol::default()
    }
}

#[test]
fn plan_timing_times_the_whole_plan_and_each_block() {
    let a = mixed();
    let plan = by_rows(
        &a,
        &[2000, 6000],
        &[Variant::Ell, Variant::Coo, Variant::Hyb],
    );
    let be = CpuBackend::new();
    let mut p = PreparedPlan::new(&be, &a, &plan, "plan").unwrap();
    let protocol = quick_protocol(6, 2);
    let t = p.time_blocks(&protocol).unwrap();
    assert_eq!(t.blocks.len(), 3);
    assert_eq!(t.total.samples.len(), 6);
    for b in &t.blocks {
        assert_eq!(b.samples.len(), 6);
        assert!(b.per_batch >= 2 && b.samples.iter().all(|&s| s > 0.0));
    }
    // The whole plan is timed as one SpMV (every block queued in row order), in batches.
    assert!(t.total.per_batch >= 2 && t.total.samples.iter().all(|&s| s > 0.0));
    assert!(!t.total.warmup_samples.is_empty());
    assert_eq!(t.total.warmup, 2);
    assert!(t.total.warm_mean() > 0.0);
    // Bytes: the blocks' formats, with x and y once.
    let fp = p.footprint_bytes();
    assert!(fp > 0);
    assert_eq!(p.effective_bytes(), fp + (a.ncols + a.nrows) as u64 * 8);
    // The dominant block (most non-zeros) names the plan's configuration.
    let nnz = |r: Range<usize>| a.row_ptr[r.end] - a.row_ptr[r.start];
    let blocks = p.blocks();
    let dominant = blocks.iter().max_by_key(|(r, _)| nnz(r.clone())).unwrap();
    assert_eq!(p.config(), &dominant.1);
    assert!(p.set_x(&[1.0; 3]).is_err());
}

/// Issue 16: the plan timed with each block left out in turn (what a block costs inside the
/// plan is the plan's time less that), one timing per block under the same protocol; the
/// prepared plan still computes the whole y afterwards; a plan of one block has nothing to
/// leave out.
#[test]
fn plan_timing_leaves_each_block_out_in_turn() {
    let a = mixed();
    let be = CpuBackend::new();
    let protocol = quick_protocol(5, 1);
    let plan = by_rows(
        &a,
        &[2000, 6000],
        &[Variant::Ell, Variant::Coo, Variant::Hyb],
    );
    let mut p = PreparedPlan::new(&be, &a, &plan, "plan").unwrap();
    let without = p.time_left_out(&protocol).unwrap();
    assert_eq!(without.len(), 3);
    for t in &without {
        assert_eq!(t.samples.len(), 5);
        assert!(t.per_batch >= 2 && t.samples.iter().all(|&s| s > 0.0));
    }
    let x: Vec<f64> = (0..a.ncols).map(|j| (j % 7) as f64 - 3.0).collect();
    let reference = sparsecast::backend::measure::Reference::new(&a, &x);
    assert!(p.check(&x, &reference).unwrap() < 1e-12);
    let one = by_rows(&a, &[], &[Variant::Coo]);
    let mut q = PreparedPlan::new(&be, &a, &one, "plan").unwrap();
    assert!(q.time_left_out(&protocol).unwrap().is_empty());
}

#[test]
fn plan_json_round_trips() {
    let a = mixed();
    let mut plan = by_rows(
        &a,
        &[10, 4000],
        &[Variant::Sell, Variant::Bsr, Variant::CsrMerge],
    );
    plan.blocks[0].params.sell.c = 8;
    plan.blocks[0].params.sell.sigma = 64;
    plan.blocks[1].params.bsr.block = 2;
    plan.blocks[2].predicted_seconds = Some(1.5e-6);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plan.json");
    plan.save(&path).unwrap();
    let back = Plan::load(&path).unwrap();
    assert_eq!(back, plan);
    assert!(run_plan(&a, &back, 3) < 1e-12);
    // Row order is not written; another launch order is, and runs to the same y.
    assert!(!std::fs::read_to_string(&path)
        .unwrap()
        .contains("launch_order"));
    plan.launch_order = Some(vec![2, 0, 1]);
    plan.save(&path).unwrap();
    let back = Plan::load(&path).unwrap();
    assert_eq!(back.launch_order, Some(vec![2, 0, 1]));
    assert!(run_plan(&a, &back, 4) < 1e-12);
}

/// A change to a plan's JSON.
type Edit = dyn FnOnce(&mut serde_json::Value);

/// The plan's JSON with `edit` applied, loaded from memory.
fn load_edited(plan: &Plan, edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut v = serde_json::to_value(plan).unwrap();
    edit(&mut v);
    let text = serde_json::to_string_pretty(&v).unwrap();
    Plan::from_json("plan.json", &text).unwrap_err().to_string()
}

#[test]
fn corrupted_plans_are_rejected() {
    let a = mixed();
    let plan = by_rows(
        &a,
        &[100, 5000],
        &[Variant::Ell, Variant::Coo, Variant::Hyb],
    );
    let text = serde_json::to_string_pretty(&plan).unwrap();
    // Truncated: a parse error with the file and a line.
    let e = Plan::from_json("plan.json", &text[..text.len() / 2])
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("plan.json:") && e.contains("not valid JSON"),
        "{e}"
    );
    let cases: Vec<(&str, Box<Edit>)> = vec![
        (
            "schema version",
            Box::new(|v| v["schema_version"] = 7.into()),
        ),
        (
            "no `schema_version`",
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("schema_version");
            }),
        ),
        (
            "unknown field",
            Box::new(|v| v["blocks"][0]["colour"] = "red".into()),
        ),
        (
            "unknown format 'ellpack'",
            Box::new(|v| v["blocks"][1]["kernel"] = "ellpack".into()),
        ),
        (
            "starts at strip",
            Box::new(|v| {
                // A gap: the second block starts one strip late.
                v["blocks"][1]["strips"][0] = 102.into();
                v["blocks"][1]["rows"][0] = 101.into();
            }),
        ),
        (
            "starts at strip",
            Box::new(|v| {
                // An overlap.
                v["blocks"][1]["strips"][0] = 100.into();
            }),
        ),
        (
            "do not match its strips",
            Box::new(|v| v["blocks"][2]["rows"][1] = 7.into()),
        ),
        (
            "blocks end at strip",
            Box::new(|v| {
                v["blocks"].as_array_mut().unwrap().pop();
            }),
        ),
        (
            "no blocks",
            Box::new(|v| v["blocks"] = serde_json::json!([])),
        ),
        (
            "not a non-negative number",
            Box::new(|v| v["blocks"][0]["predicted_seconds"] = (-1.0).into()),
        ),
        ("do not cut", Box::new(|v| v["strips"] = 3.into())),
        (
            "is not an order of the plan's 3 blocks",
            Box::new(|v| v["launch_order"] = serde_json::json!([0, 0, 1])),
        ),
        (
            "is not an order of the plan's 3 blocks",
            Box::new(|v| v["launch_order"] = serde_json::json!([0, 1, 3])),
        ),
        (
            "names 2 of the plan's 3 blocks",
            Box::new(|v| v["launch_order"] = serde_json::json!([1, 0])),
        ),
        (
            "missing field",
            Box::new(|v| {
                v["matrix"].as_object_mut().unwrap().remove("nnz");
            }),
        ),
    ];
    for (want, edit) in cases {
        let e = load_edited(&plan, edit);
        assert!(
            e.contains("plan.json") && e.contains(want),
            "expected '{want}' in: {e}"
        );
    }
    // A missing file names the path.
    let e = Plan::load(std::path::Path::new("/nonexistent/plan.json")).unwrap_err();
    assert!(e.to_string().contains("/nonexistent/plan.json"), "{e}");
}

#[test]
fn plans_of_other_matrices_are_rejected() {
    let a = mixed();
    let plan = by_rows(
        &a,
        &[5000],
        &[
            Variant::Csr {
                threads_per_row: 32,
            },
            Variant::Coo,
        ],
    );
    let be = CpuBackend::new();
    // Another size.
    let b = a.slice_rows(0, a.nrows - 1);
    let e = PreparedPlan::new(&be, &b, &plan, "p.json")
        .err()
        .unwrap()
        .to_string();
    assert!(
        e.contains("p.json was made for a") && e.contains("not for this"),
        "{e}"
    );
    // The same size and non-zeros, another pattern: one entry of row 0 moved to a free column.
    let (row0, _) = a.row(0);
    let free = (0..a.ncols as u32).find(|k| !row0.contains(k)).unwrap();
    let mut rows = Vec::new();
    let mut cols = a.col_idx.clone();
    cols[0] = free;
    for i in 0..a.nrows {
        rows.extend(std::iter::repeat_n(i as u32, a.row_len(i)));
    }
    let c = Csr::from_triplets(a.nrows, a.ncols, &rows, &cols, &a.values).unwrap();
    assert_eq!((c.nrows, c.ncols, c.nnz()), (a.nrows, a.ncols, a.nnz()));
    let e = PreparedPlan::new(&be, &c, &plan, "p.json")
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("checksum"), "{e}");
    // The same pattern with other values is the same matrix for a plan.
    let mut d = a.clone();
    d.values.iter_mut().for_each(|v| *v *= -3.0);
    assert!(run_plan(&d, &plan, 4) < 1e-12);
}

#[test]
fn both_execution_modes_equal_the_reference_on_the_cpu() {
    use sparsecast::backend::Overlap;
    let a = mixed();
    let mut plan = by_rows(
        &a,
        &[2000, 3000, 6000],
        &[Variant::Dia, Variant::Coo, Variant::Hyb, Variant::CsrMerge],
    );
    for overlap in [Overlap::Serial, Overlap::Concurrent] {
        plan.overlap = overlap;
        assert!(run_plan(&a, &plan, 5) < 1e-12, "{overlap}");
        // The mode is stored with the plan and read back.
        let back: Plan = serde_json::from_str(&serde_json::to_string(&plan).unwrap()).unwrap();
        assert_eq!(back.overlap, overlap);
        let be = CpuBackend::new();
        let mut p = PreparedPlan::new(&be, &a, &plan, "plan").unwrap();
        assert_eq!(p.overlap(), overlap);
        let protocol = TimingProtocol {
            runs: 3,
            warmup_ms: 0.5,
            batch_ms: 0.05,
            ..TimingProtocol::default()
        };
        let t = p.time(&protocol).unwrap();
        // The CPU backend runs the blocks in order either way (each kernel uses every core).
        assert!(!t.concurrent && t.samples.len() == 3);
    }
    // A plan written before the mode existed runs serially, as it did.
    let mut v = serde_json::to_value(&plan).unwrap();
    v.as_object_mut().unwrap().remove("overlap");
    let old: Plan = serde_json::from_value(v).unwrap();
    assert_eq!(old.overlap, Overlap::Serial);
}
