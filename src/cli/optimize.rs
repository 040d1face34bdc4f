//! `sparsecast optimize`: the optimization analysis of 004 §4 — partition a matrix by rows, pick a
//! format per block with a model, report the optimal strategy beside every single format, save it
//! as a plan, and optionally run and time it.

use super::common;
use crate::backend::{
    Backend, BackendKind, BackendScalar, KernelConfig, PreparedSpmv, TimingProtocol, Variant,
};
use crate::formats::FormatParams;
use crate::matrix::generate::GeneratorSpec;
use crate::model::accuracy::difference_rate;
use crate::model::Ranked;
use crate::optimize::{
    block_model, optimize, MatrixIdentity, OptimizeOptions, Optimum, Plan, PreparedPlan,
    Provenance, StackSpec, StripLayout, DEFAULT_MAX_STRIPS,
};
use crate::profile::Profile;
use crate::{Csr, Precision, Scalar};
use anyhow::{bail, Context};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// Find the fastest storage strategy for a matrix: cut it by rows into strips, predict every
/// block of consecutive strips in every format the model covers, and choose blocks and formats
/// with the dynamic program of Guo, Wang & Chen (TPDS 2014, Fig. 8 and 11). Prints the optimal
/// strategy (blocks as strip and row ranges, a format per block, the predicted total) beside every
/// single format's prediction, as the paper's Table 3. Where splitting does not pay, the answer is
/// the single best format.
///
/// Strips hold S_CSR rows of the profile's device by default (--strip-rows overrides). A matrix
/// with more than --max-strips strips gets taller strips (a multiple of the height), and the
/// output says so.
///
/// --save-plan writes the strategy as an executable plan (JSON) that `sparsecast spmv --plan`
/// runs. --measure builds the plan on the backend, checks y against the f64 reference, and prints
/// measured against predicted times for the plan, every single format and the best cuSPARSE
/// algorithm (CUDA only).
///
/// The input is a Matrix Market file (plain or gzip) or a JSON generator spec: one spec as written
/// by `sparsecast generate`, or {"stack": [spec, spec, …]} for a heterogeneous matrix made of
/// generated parts stacked by rows.
///
/// Examples:
///   sparsecast optimize matrix.mtx.gz --profile profiles/h200.json
///   sparsecast optimize matrix.mtx.gz --strip-rows 672 --save-plan plan.json
///   sparsecast spmv matrix.mtx.gz --plan plan.json --out y.mtx
///   sparsecast optimize hetero.json --measure --backend cuda --json > result.json
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Matrix Market file, or generator-spec JSON (one spec, or {"stack": [specs]}).
    input: PathBuf,
    /// Device profile (JSON from `sparsecast instrument`); default: the embedded one.
    #[arg(long)]
    profile: Option<PathBuf>,
    /// The performance model that predicts every block.
    #[arg(long, default_value = "analytical")]
    model: String,
    /// Value precision to optimize for (the profile must have it).
    #[arg(long, value_enum, default_value_t = Precision::F64)]
    precision: Precision,
    /// Rows per strip (default: S_CSR of the profile's device).
    #[arg(long)]
    strip_rows: Option<u64>,
    /// Most strips; taller matrices get taller strips.
    #[arg(long, default_value_t = DEFAULT_MAX_STRIPS)]
    max_strips: u64,
    /// Width of HYB's ELL part in every block (default: Bell & Garland's rule per block).
    #[arg(long)]
    hyb_width: Option<usize>,
    /// ELL width in every block (default: the block's longest row).
    #[arg(long)]
    ell_width: Option<usize>,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// Write the plan here (JSON, atomically).
    #[arg(long)]
    save_plan: Option<PathBuf>,
    /// Build and time the plan, every single format and the cuSPARSE algorithms.
    #[arg(long)]
    measure: bool,
    /// Backend for --measure; default: the profile's (a profile of another backend is refused).
    #[arg(long, value_enum)]
    backend: Option<BackendKind>,
    /// β for --measure (default: the profile's).
    #[arg(long)]
    runs: Option<usize>,
    /// α for --measure (default: the profile's).
    #[arg(long)]
    warmup: Option<usize>,
    /// Seed of x for --measure (uniform in [-1, 1)).
    #[arg(long, default_value_t = 42)]
    seed: u64,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let (profile_name, profile) = load_profile(a.profile.as_deref())?;
    let section = profile.precision(a.precision)?;
    let model = block_model(&a.model, section)?;
    let (source, m) = load_input(&a.input)?;
    let by = Provenance {
        model: a.model.clone(),
        profile: profile_name,
        device: profile.device_name.clone(),
        precision: a.precision,
    };
    let opts = OptimizeOptions {
        strip_rows: a.strip_rows,
        max_strips: a.max_strips,
        params: FormatParams {
            ell_width: a.ell_width,
            hyb_width: a.hyb_width,
            ..FormatParams::default()
        },
    };
    let measure = if a.measure {
        let kind = match a.backend {
            Some(k) => k,
            None if profile.backend == "cuda" => BackendKind::Cuda,
            None => BackendKind::Cpu,
        };
        profile.check_backend(kind.name())?;
        let protocol = TimingProtocol {
            runs: a.runs.unwrap_or(profile.timing.runs),
            warmup: a.warmup.unwrap_or(profile.timing.warmup),
            cold: profile.timing.cold,
        };
        if protocol.runs == 0 || protocol.warmup >= protocol.runs {
            bail!(
                "--warmup {} leaves none of --runs {} to time",
                protocol.warmup,
                protocol.runs
            );
        }
        Some((kind, protocol))
    } else {
        None
    };
    match a.precision {
        Precision::F32 => {
            run_typed::<f32>(&a, &source, &m.cast(), model.as_ref(), &opts, &by, measure)
        }
        Precision::F64 => run_typed::<f64>(&a, &source, &m, model.as_ref(), &opts, &by, measure),
    }
}

fn run_typed<T: BackendScalar>(
    a: &Args,
    source: &str,
    m: &Csr<T>,
    model: &dyn crate::optimize::BlockModel,
    opts: &OptimizeOptions,
    by: &Provenance,
    measure: Option<(BackendKind, TimingProtocol)>,
) -> anyhow::Result<()> {
    let opt = optimize(m, model, opts)?;
    let plan = Plan::from_optimum(&opt, MatrixIdentity::of(source, m), by);
    if let Some(p) = &a.save_plan {
        plan.save(p)
            .with_context(|| format!("writing the plan to {}", p.display()))?;
    }
    let measured = match measure {
        Some((kind, protocol)) => Some(measure_all(
            m,
            &plan,
            &opt,
            &opts.params,
            kind,
            &protocol,
            a.seed,
        )?),
        None => None,
    };
    let report = Report::new(source, m, by, opts, &opt, plan, measured);
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_report(&report);
        if let Some(p) = &a.save_plan {
            println!("plan written to {}", p.display());
        }
    }
    if let Some(ms) = &report.measured {
        anyhow::ensure!(
            ms.max_relative_error <= ms.tolerance,
            "the plan's y differs from the f64 reference by {:.2e} (tolerance {:.0e})",
            ms.max_relative_error,
            ms.tolerance
        );
    }
    Ok(())
}

/// The profile of `--profile`, or the embedded one (say which).
fn load_profile(path: Option<&Path>) -> anyhow::Result<(String, Profile)> {
    if let Some(p) = path {
        return Ok((p.display().to_string(), Profile::load(p)?));
    }
    match Profile::load_embedded()? {
        Some((name, p)) => {
            eprintln!("no --profile given: using the profile built into this binary ({name})");
            Ok((format!("embedded {name}"), p))
        }
        None => bail!(
            "no --profile given, and this build embeds no device profile yet. Pass --profile FILE \
             (create one with `sparsecast instrument`)."
        ),
    }
}

/// A Matrix Market file, a generator spec, or a stack of generator specs.
fn load_input(path: &Path) -> anyhow::Result<(String, Csr<f64>)> {
    if path.extension().is_some_and(|e| e == "json") {
        let text = std::fs::read_to_string(path).map_err(|e| crate::Error::io(path, e))?;
        if let Ok(s) = serde_json::from_str::<StackSpec>(&text) {
            return Ok((s.name(), s.generate()?));
        }
        let spec: GeneratorSpec = serde_json::from_str(&text).map_err(|e| {
            crate::Error::parse(
                path.display().to_string(),
                // Internally tagged specs are buffered before parsing, and serde_json then
                // reports line 0: name the document's first line instead.
                e.line().max(1) as u64,
                format!("expected a generator spec or {{\"stack\": [specs]}}: {e}"),
            )
        })?;
        return Ok((spec.name(), spec.generate()?));
    }
    let m = common::load_matrix(path).with_context(|| format!("reading {}", path.display()))?;
    Ok((path.display().to_string(), m))
}

/// Measured times of one kernel (or the plan).
#[derive(Debug, Serialize)]
struct MeasuredKernel {
    kernel: String,
    predicted_seconds: Option<f64>,
    /// The papers' warm-up-excluding mean.
    measured_seconds: Option<f64>,
    median_seconds: Option<f64>,
    difference_rate: Option<f64>,
    /// (t_kernel − t_plan) / t_kernel, measured.
    plan_improvement: Option<f64>,
    /// (t_kernel − t_plan) / t_kernel, predicted.
    predicted_plan_improvement: Option<f64>,
    error: Option<String>,
}

/// Everything --measure found.
#[derive(Debug, Serialize)]
struct Measured {
    backend: String,
    device: String,
    protocol: TimingProtocol,
    max_relative_error: f64,
    tolerance: f64,
    plan: MeasuredKernel,
    /// Each block's measured mean and median (seconds), in row order.
    plan_blocks: Vec<(f64, f64)>,
    singles: Vec<MeasuredKernel>,
    vendor: Vec<MeasuredKernel>,
    /// The fastest cuSPARSE algorithm measured.
    best_vendor: Option<String>,
}

fn improvement(other: Option<f64>, plan: Option<f64>) -> Option<f64> {
    match (other, plan) {
        (Some(o), Some(p)) if o > 0.0 => Some((o - p) / o),
        _ => None,
    }
}

/// Time one whole-matrix kernel.
fn time_single<T: Scalar>(
    be: &dyn Backend<T>,
    m: &Csr<T>,
    variant: Variant,
    params: &FormatParams,
    x: &[T],
    protocol: &TimingProtocol,
) -> crate::Result<(f64, f64)> {
    let cfg = KernelConfig {
        params: params.clone(),
        ..KernelConfig::new(variant)
    };
    let mut k = be.prepare(m, &cfg)?;
    k.set_x(x)?;
    let t = k.time(protocol)?;
    Ok((t.warm_mean(), t.median()))
}

fn measure_all<T: BackendScalar>(
    m: &Csr<T>,
    plan: &Plan,
    opt: &Optimum,
    params: &FormatParams,
    kind: BackendKind,
    protocol: &TimingProtocol,
    seed: u64,
) -> anyhow::Result<Measured> {
    let be = T::open_backend(kind)?;
    let x: Vec<T> = common::random_vector(m.ncols, seed);
    let (max_relative_error, timing) = {
        let mut p = PreparedPlan::new(be.as_ref(), m, plan, "the plan")?;
        p.set_x(&x)?;
        p.poison_y()?;
        p.run()?;
        let y = p.y()?;
        (
            common::max_relative_error(m, &x, &y),
            p.time_blocks(protocol)?,
        )
    };
    let plan_t = timing.total.warm_mean();
    let kernel = |name: String, predicted: Option<f64>, r: crate::Result<(f64, f64)>| {
        let (mean, median, error) = match r {
            Ok((a, b)) => (Some(a), Some(b), None),
            Err(e) => (None, None, Some(e.to_string())),
        };
        MeasuredKernel {
            kernel: name,
            predicted_seconds: predicted,
            difference_rate: predicted.zip(mean).map(|(p, m)| difference_rate(p, m)),
            plan_improvement: improvement(mean, Some(plan_t)),
            predicted_plan_improvement: improvement(predicted, Some(opt.predicted)),
            measured_seconds: mean,
            median_seconds: median,
            error,
        }
    };
    let singles = opt
        .singles
        .iter()
        .map(|r| {
            let t = match r.seconds {
                // Not run where the model refuses (e.g. beyond the device memory).
                None => Err(crate::Error::Unsupported("refused by the model".into())),
                Some(_) => time_single(be.as_ref(), m, r.variant, params, &x, protocol),
            };
            kernel(r.variant.name(), r.seconds, t)
        })
        .collect();
    let vendor: Vec<MeasuredKernel> = Variant::vendor()
        .into_iter()
        .filter(|&v| be.supports(v))
        .map(|v| {
            kernel(
                v.name(),
                None,
                time_single(be.as_ref(), m, v, params, &x, protocol),
            )
        })
        .collect();
    let best_vendor = vendor
        .iter()
        .filter_map(|k| k.measured_seconds.map(|t| (t, &k.kernel)))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| n.clone());
    let mut plan_k = kernel(
        format!("plan ({} blocks)", plan.blocks.len()),
        Some(opt.predicted),
        Ok((plan_t, timing.total.median())),
    );
    plan_k.plan_improvement = None;
    plan_k.predicted_plan_improvement = None;
    Ok(Measured {
        backend: be.name().to_string(),
        device: be.device_name(),
        protocol: protocol.clone(),
        max_relative_error,
        tolerance: common::tolerance::<T>(),
        plan: plan_k,
        plan_blocks: timing
            .blocks
            .iter()
            .map(|t| (t.warm_mean(), t.median()))
            .collect(),
        singles,
        vendor,
        best_vendor,
    })
}

/// One block as reported.
#[derive(Debug, Serialize)]
struct BlockReport {
    /// 1-based, inclusive.
    strips: [usize; 2],
    /// `[start, end)`.
    rows: [usize; 2],
    kernel: String,
    predicted_seconds: f64,
    /// Every candidate on this block (`null`: refused).
    candidates: Vec<(String, Option<f64>)>,
}

/// Everything `optimize` prints.
#[derive(Debug, Serialize)]
struct Report {
    input: String,
    precision: Precision,
    nrows: usize,
    ncols: usize,
    nnz: usize,
    model: String,
    profile: String,
    device: String,
    layout: StripLayout,
    strip_source: String,
    max_strips: u64,
    blocks_evaluated: u64,
    kernels: usize,
    distinct_row_lengths: usize,
    histogram_entries: usize,
    seconds_strip_table: f64,
    seconds_dp: f64,
    /// The paper's "Optimal Strategy" and "Optimal Format(s)".
    strategy: String,
    formats: String,
    predicted_seconds: f64,
    blocks: Vec<BlockReport>,
    singles: Vec<Ranked>,
    plan: Plan,
    measured: Option<Measured>,
}

impl Report {
    fn new<T: Scalar>(
        source: &str,
        m: &Csr<T>,
        by: &Provenance,
        opts: &OptimizeOptions,
        opt: &Optimum,
        plan: Plan,
        measured: Option<Measured>,
    ) -> Report {
        let (strategy, formats) = plan.strategy();
        Report {
            input: source.to_string(),
            precision: T::PRECISION,
            nrows: m.nrows,
            ncols: m.ncols,
            nnz: m.nnz(),
            model: by.model.clone(),
            profile: by.profile.clone(),
            device: by.device.clone(),
            layout: opt.layout.clone(),
            strip_source: opt.strip_source.clone(),
            max_strips: opts.max_strips,
            blocks_evaluated: opt.blocks_evaluated,
            kernels: opt.variants.len(),
            distinct_row_lengths: opt.distinct_lengths,
            histogram_entries: opt.histogram_entries,
            seconds_strip_table: opt.seconds_table,
            seconds_dp: opt.seconds_dp,
            strategy,
            formats,
            predicted_seconds: opt.predicted,
            blocks: opt
                .blocks
                .iter()
                .map(|b| BlockReport {
                    strips: [b.strips.0 + 1, b.strips.1 + 1],
                    rows: [b.rows.start, b.rows.end],
                    kernel: b.variant.name(),
                    predicted_seconds: b.predicted,
                    candidates: b.candidates.iter().map(|(v, t)| (v.name(), *t)).collect(),
                })
                .collect(),
            singles: opt.singles.clone(),
            plan,
            measured,
        }
    }
}

fn opt_seconds(t: Option<f64>) -> String {
    t.map_or("—".into(), common::fmt_seconds)
}

fn percent(x: Option<f64>) -> String {
    x.map_or("—".into(), |x| format!("{:.1} %", 100.0 * x))
}

fn print_report(r: &Report) {
    println!(
        "{} — {} × {}, {} non-zeros — {}",
        r.input, r.nrows, r.ncols, r.nnz, r.precision
    );
    println!("model: {} (profile {}, {})", r.model, r.profile, r.device);
    println!(
        "strips: {} — requested {} rows ({})",
        r.layout.describe(r.max_strips),
        r.layout.requested_rows,
        r.strip_source
    );
    if r.layout.is_coarsened() {
        println!(
            "note: the matrix has more than {} strips of {} rows, so strips were made {}× taller",
            r.max_strips, r.layout.requested_rows, r.layout.coarsening
        );
    }
    println!(
        "evaluated {} blocks × {} kernels in {:.3} s (strip table {:.3} s; {} distinct row lengths, {} histogram entries)",
        r.blocks_evaluated,
        r.kernels,
        r.seconds_dp,
        r.seconds_strip_table,
        r.distinct_row_lengths,
        r.histogram_entries
    );
    println!();
    println!("Optimal strategy:  {}", r.strategy);
    println!("Optimal format(s): {}", r.formats);
    let best = r.singles.first().filter(|s| s.seconds.is_some());
    match best {
        Some(b) if r.blocks.len() == 1 => println!(
            "Optimal time:      {} — splitting does not pay: the single best format, {}",
            common::fmt_seconds(r.predicted_seconds),
            b.variant
        ),
        Some(b) => println!(
            "Optimal time:      {} — {:.1} % below the best single format ({}, {})",
            common::fmt_seconds(r.predicted_seconds),
            100.0 * (1.0 - r.predicted_seconds / b.seconds.unwrap_or(f64::NAN)),
            b.variant,
            opt_seconds(b.seconds)
        ),
        None => println!(
            "Optimal time:      {}",
            common::fmt_seconds(r.predicted_seconds)
        ),
    }
    let mut header = vec![
        "block".to_string(),
        "strips".into(),
        "rows".into(),
        "kernel".into(),
        "predicted".into(),
    ];
    if let Some(b) = r.blocks.first() {
        header.extend(b.candidates.iter().map(|(k, _)| k.clone()));
    }
    let mut t = common::table(&header.iter().map(String::as_str).collect::<Vec<_>>());
    for (k, b) in r.blocks.iter().enumerate() {
        let mut row = vec![
            (k + 1).to_string(),
            format!("[{}, {}]", b.strips[0], b.strips[1]),
            format!("{}..{}", b.rows[0], b.rows[1]),
            b.kernel.clone(),
            common::fmt_seconds(b.predicted_seconds),
        ];
        row.extend(b.candidates.iter().map(|(_, t)| opt_seconds(*t)));
        t.add_row(row);
    }
    println!("{t}");
    println!("single formats on the whole matrix:");
    let mut t = common::table(&["rank", "kernel", "predicted", "plan saves", "model input"]);
    for s in &r.singles {
        t.add_row(vec![
            s.rank.map_or("—".into(), |k| k.to_string()),
            s.variant.name(),
            opt_seconds(s.seconds),
            percent(improvement(s.seconds, Some(r.predicted_seconds))),
            s.note.clone(),
        ]);
    }
    println!("{t}");
    if let Some(ms) = &r.measured {
        print_measured(ms);
    }
}

fn print_measured(ms: &Measured) {
    println!(
        "measured on {} ({}), {} runs, {} warm-up; the plan's y vs the f64 reference: max relative error {:.2e}",
        ms.backend, ms.device, ms.protocol.runs, ms.protocol.warmup, ms.max_relative_error
    );
    println!("plan time = the sum of its blocks' kernel times, run by run (launch overlap and gaps excluded)");
    let mut t = common::table(&[
        "kernel",
        "predicted",
        "measured",
        "median",
        "difference",
        "plan saves (measured)",
        "plan saves (predicted)",
    ]);
    let best_vendor = ms
        .vendor
        .iter()
        .find(|k| Some(&k.kernel) == ms.best_vendor.as_ref());
    let rows = std::iter::once(&ms.plan)
        .chain(&ms.singles)
        .chain(best_vendor);
    for k in rows {
        let name = if Some(&k.kernel) == ms.best_vendor.as_ref() {
            format!("best cuSPARSE: {}", k.kernel)
        } else {
            k.kernel.clone()
        };
        t.add_row(vec![
            name,
            opt_seconds(k.predicted_seconds),
            k.error.as_ref().map_or_else(
                || opt_seconds(k.measured_seconds),
                |e| format!("failed: {e}"),
            ),
            opt_seconds(k.median_seconds),
            percent(k.difference_rate),
            percent(k.plan_improvement),
            percent(k.predicted_plan_improvement),
        ]);
    }
    println!("{t}");
    if ms.vendor.is_empty() {
        println!("(no cuSPARSE algorithm on the {} backend)", ms.backend);
    }
}
