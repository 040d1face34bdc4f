//! Time hand-made row-block plans of one matrix (session 37: plans with SEG-TILE blocks, which no
//! profile predicts yet, beside the optimizer's plans and the best single configurations).
//!
//! For every plan: y checked against the f64 reference (poisoned first), then the plan timed
//! serially and concurrently (each block alone too), with the default timing protocol. A plan is
//! `a-b:config[,c-d:config…]` (rows `[a, b)`, the configuration as `bench` names it, `@block`
//! for a block size), or one configuration name (the whole matrix). One JSON line per plan.
//!
//! ```sh
//! cargo run --release --example plan_time -- MATRIX f32|f64 cpu|cuda PLAN [PLAN …]
//! ```
//! MATRIX is a Matrix Market file or a generator spec (JSON inline, or `@FILE`).

use anyhow::{bail, Context};
use sparsecast::backend::measure::{tolerance, Reference};
use sparsecast::backend::{
    BackendKind, BackendScalar, KernelConfig, Overlap, PreparedSpmv, TimingProtocol,
};
use sparsecast::matrix::generate::GeneratorSpec;
use sparsecast::optimize::{MatrixIdentity, Plan, PreparedPlan};
use sparsecast::{Csr, Precision};
use std::ops::Range;
use std::path::Path;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 4 {
        bail!("usage: plan_time MATRIX f32|f64 cpu|cuda PLAN [PLAN …]");
    }
    let a = load(&args[0])?;
    let backend = match args[2].as_str() {
        "cpu" => BackendKind::Cpu,
        "cuda" => BackendKind::Cuda,
        b => bail!("backend must be cpu or cuda, not {b}"),
    };
    match args[1].as_str() {
        "f32" => run::<f32>(&args[0], a.cast(), backend, &args[3..]),
        "f64" => run::<f64>(&args[0], a, backend, &args[3..]),
        p => bail!("precision must be f32 or f64, not {p}"),
    }
}

fn load(arg: &str) -> anyhow::Result<Csr<f64>> {
    let path = Path::new(arg);
    if path.exists() {
        return Ok(sparsecast::matrix::mm::read(path)?);
    }
    let text = match arg.strip_prefix('@') {
        Some(f) => std::fs::read_to_string(f).with_context(|| format!("reading {f}"))?,
        None => arg.to_string(),
    };
    let spec: GeneratorSpec =
        serde_json::from_str(&text).context("MATRIX: not a file, nor a generator spec")?;
    Ok(spec.generate_with_limit(sparsecast::formats::default_max_bytes())?)
}

/// `a-b:config,…` as row ranges and configurations (a bare configuration: the whole matrix).
fn parse_plan(s: &str, nrows: usize) -> anyhow::Result<Vec<(Range<usize>, KernelConfig)>> {
    if !s.contains(':') {
        return Ok(vec![(0..nrows, KernelConfig::parse_label(s)?)]);
    }
    s.split(',')
        .map(|b| {
            let (rows, cfg) = b.split_once(':').context("a block is a-b:config")?;
            let (x, y) = rows.split_once('-').context("rows are a-b")?;
            Ok((x.parse()?..y.parse()?, KernelConfig::parse_label(cfg)?))
        })
        .collect()
}

/// y of one SpMV in the plan's mode (poisoned first) against the f64 reference.
fn check<T: BackendScalar>(
    prepared: &mut PreparedPlan<'_, T>,
    x: &[T],
    reference: &Reference,
    p: &str,
) -> anyhow::Result<()> {
    let err = prepared.check(x, reference)?;
    let tol = tolerance(T::PRECISION);
    if err > tol {
        bail!("{p}: y off by {err:e} (tolerance {tol:e})");
    }
    Ok(())
}

fn run<T: BackendScalar>(
    name: &str,
    a: Csr<T>,
    kind: BackendKind,
    plans: &[String],
) -> anyhow::Result<()> {
    let backend = T::open_backend(kind)?;
    let protocol = TimingProtocol::default();
    let x: Vec<T> = (0..a.ncols)
        .map(|j| T::cast_f64(((j * 7919) % 2001) as f64 / 1000.0 - 1.0))
        .collect();
    let reference = Reference::new(&a, &x);
    let precision: Precision = T::PRECISION;
    for p in plans {
        let blocks = parse_plan(p, a.nrows)?;
        let plan = Plan::by_rows(MatrixIdentity::of(name, &a), precision, &blocks)?;
        let mut out = serde_json::json!({"plan": p, "nnz": a.nnz(), "rows": a.nrows});
        // Prepared once (the blocks converted and uploaded once): checked and timed serially
        // with every block alone, then checked and timed concurrently.
        let mut prepared = match PreparedPlan::new(backend.as_ref(), &a, &plan, p) {
            Ok(q) => q.with_overlap(Overlap::Serial),
            Err(e) => {
                out["error"] = e.to_string().into();
                println!("{out}");
                continue;
            }
        };
        check(&mut prepared, &x, &reference, p)?;
        let t = prepared.time_blocks(&protocol)?;
        out["serial"] = t.total.median().into();
        out["blocks"] = t
            .blocks
            .iter()
            .map(|b| b.median())
            .collect::<Vec<_>>()
            .into();
        if blocks.len() > 1 {
            let mut prepared = prepared.with_overlap(Overlap::Concurrent);
            check(&mut prepared, &x, &reference, p)?;
            out["concurrent"] = prepared.time(&protocol)?.median().into();
        }
        println!("{out}");
    }
    Ok(())
}
