//! `sparsecast bench`: time every storage format / thread mapping on one matrix.

use super::common::{self, KernelArgs, TimingArgs};
use crate::backend::measure::{measure_kernel, Reference};
use crate::backend::{Backend, BackendKind, BackendScalar, Variant, VendorAlg};
use crate::{Csr, Precision};
use serde::Serialize;
use std::path::PathBuf;

/// Time every storage format and thread mapping on one matrix.
///
/// Timing (docs/PERFORMANCE.md, "Measurement"): after a warm-up in time (--warmup-ms), each kernel
/// is timed in --runs batches of back-to-back SpMVs (on CUDA one SpMV is captured into a graph and a
/// batch replays it about --batch-ms long); a sample is a batch's time per SpMV. --latency times
/// single launches on an idle GPU instead.
///
/// For each kernel: the median and the papers' warm-up-excluding mean of the samples, their
/// spread (interquartile range relative to the median: kernels closer than that are a tie), the
/// effective bandwidth (the minimum bytes a kernel must move — the format's arrays once, x once,
/// y once — over the median time), the share of the measured copy bandwidth (CUDA), and the
/// speed relative to the best cuSPARSE CSR algorithm (CUDA). Every kernel's result is checked
/// against the f64 CPU reference first. Kernels whose format refuses the matrix are listed with the
/// reason.
///
/// Examples:
///   sparsecast bench data/cage11.mtx.gz
///   sparsecast bench data/cage11.mtx.gz --backend cuda --precision f32 \
///       --formats csr-vector,ell,cusparse-csr-alg2
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Matrix Market file (.mtx or .mtx.gz).
    pub file: PathBuf,
    /// Where to run.
    #[arg(long, value_enum, default_value_t = BackendKind::Cpu)]
    pub backend: BackendKind,
    /// Comma-separated kernels, or `all` (ours and cuSPARSE), `ours`, `vendor`.
    #[arg(long, value_delimiter = ',', default_value = "all")]
    pub formats: Vec<String>,
    /// Value precision.
    #[arg(long, value_enum, default_value_t = Precision::F64)]
    pub precision: Precision,
    /// Seed of the random x (uniform in [-1, 1)).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub timing: TimingArgs,
    #[command(flatten)]
    pub kernel: KernelArgs,
    #[command(flatten)]
    pub partition: common::PartitionArgs,
}

/// One kernel's result.
#[derive(Serialize, Debug, Clone)]
pub struct BenchRow {
    pub kernel: String,
    pub format: String,
    /// `ok`, `skipped` (format or backend refused), `mismatch` (wrong result) or `failed`
    /// (a backend error).
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub median_s: Option<f64>,
    pub warm_mean_s: Option<f64>,
    /// Interquartile range of the samples relative to the median.
    pub spread: Option<f64>,
    /// SpMVs per timed sample.
    pub per_batch: Option<usize>,
    /// Whether the SpMV was replayed as a CUDA graph.
    pub graph: Option<bool>,
    /// Within the spread of the fastest kernel (a tie with it).
    pub tie_with_best: bool,
    /// Seconds per SpMV of each warm-up batch, in order (how the time settled).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warmup_trace: Vec<f64>,
    /// The median of each memory placement, when timed in several (`--placements`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub placement_medians: Vec<f64>,
    /// Timings taken again because they were disturbed (spread above 10 %).
    #[serde(skip_serializing_if = "crate::util::is_zero")]
    pub retimed: usize,
    pub effective_gbs: Option<f64>,
    pub copy_bw_fraction: Option<f64>,
    pub speedup_vs_cusparse_csr: Option<f64>,
    pub footprint_bytes: Option<u64>,
    pub effective_bytes: Option<u64>,
    pub max_rel_error: Option<f64>,
}

#[derive(Serialize)]
struct Report<'a> {
    file: String,
    backend: &'a str,
    device: String,
    precision: Precision,
    nrows: usize,
    ncols: usize,
    nnz: usize,
    runs: usize,
    warmup: usize,
    protocol: crate::backend::TimingProtocol,
    cache: &'static str,
    copy_bandwidth_gbs: Option<f64>,
    results: Vec<BenchRow>,
}

/// Resolve `--formats` into variants.
pub fn select_variants(names: &[String]) -> anyhow::Result<Vec<Variant>> {
    let mut out = Vec::new();
    for n in names {
        match n.as_str() {
            "all" => {
                out.extend(Variant::ours());
                out.extend(Variant::vendor());
            }
            "ours" => out.extend(Variant::ours()),
            "vendor" => out.extend(Variant::vendor()),
            s => out.push(Variant::parse(s)?),
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|v| seen.insert(*v));
    Ok(out)
}

pub fn run(a: Args) -> anyhow::Result<()> {
    a.partition.check(a.backend)?;
    let variants = select_variants(&a.formats)?;
    let m = common::load_matrix(&a.file)?;
    match a.precision {
        Precision::F32 => run_typed::<f32>(&a, &variants, m.cast()),
        Precision::F64 => run_typed::<f64>(&a, &variants, m),
    }
}

fn run_typed<T: BackendScalar>(a: &Args, variants: &[Variant], m: Csr<T>) -> anyhow::Result<()> {
    let backend = T::open_backend_on(a.backend, a.partition.sms)?;
    let protocol = a.timing.protocol()?;
    let x: Vec<T> = common::random_vector(m.ncols, a.seed);
    let explicit = !a
        .formats
        .iter()
        .any(|f| matches!(f.as_str(), "all" | "ours" | "vendor"));
    let variants: Vec<Variant> = variants
        .iter()
        .copied()
        .filter(|v| explicit || backend.supports(*v))
        .collect();
    let reference = Reference::new(&m, &x);
    let pb = common::progress(variants.len() as u64, "bench");
    let mut rows = Vec::new();
    for &v in &variants {
        pb.set_message(v.name());
        rows.push(bench_one(
            backend.as_ref(),
            &m,
            &x,
            &reference,
            v,
            a,
            &protocol,
        ));
        pb.inc(1);
    }
    pb.finish_and_clear();
    let ceiling = backend.copy_bandwidth_gbs();
    finish_rows(&mut rows, ceiling);
    let report = Report {
        file: a.file.display().to_string(),
        backend: backend.name(),
        device: backend.device_name(),
        precision: T::PRECISION,
        nrows: m.nrows,
        ncols: m.ncols,
        nnz: m.nnz(),
        runs: protocol.runs,
        warmup: protocol.warmup,
        protocol: protocol.clone(),
        cache: if protocol.cold {
            "cold (L2 cleared before each run)"
        } else {
            "warm (same matrix and x each run)"
        },
        copy_bandwidth_gbs: ceiling,
        results: rows,
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_table(&report);
    }
    if report.results.iter().any(|r| r.status == "mismatch") {
        anyhow::bail!("at least one kernel produced a wrong result (see the table)");
    }
    Ok(())
}

fn bench_one<T: BackendScalar>(
    backend: &dyn Backend<T>,
    m: &Csr<T>,
    x: &[T],
    reference: &Reference,
    v: Variant,
    a: &Args,
    protocol: &crate::backend::TimingProtocol,
) -> BenchRow {
    let k = measure_kernel(backend, m, x, reference, &a.kernel.config(v), protocol);
    BenchRow {
        kernel: v.name(),
        format: v.format().name().into(),
        status: k.status.name().into(),
        reason: k.reason.clone(),
        median_s: k.median_s,
        warm_mean_s: k.warm_mean_s,
        spread: k.spread,
        per_batch: k.per_batch,
        graph: k.graph,
        tie_with_best: false,
        warmup_trace: k.warmup_trace.clone(),
        placement_medians: k.placement_medians.clone(),
        retimed: k.retimed,
        effective_gbs: k.effective_gbs(),
        copy_bw_fraction: None,
        speedup_vs_cusparse_csr: None,
        footprint_bytes: k.footprint_bytes,
        effective_bytes: k.effective_bytes,
        max_rel_error: k.max_rel_error,
    }
}

/// Fill the columns that compare kernels with each other and with the bandwidth ceiling.
pub fn finish_rows(rows: &mut [BenchRow], ceiling: Option<f64>) {
    let vendor_csr: Vec<String> = [VendorAlg::CsrAlg1, VendorAlg::CsrAlg2]
        .into_iter()
        .map(|a| Variant::Vendor(a).name())
        .collect();
    let best_vendor_csr = rows
        .iter()
        .filter(|r| vendor_csr.contains(&r.kernel))
        .filter_map(|r| r.median_s)
        .fold(f64::INFINITY, f64::min);
    let best = rows
        .iter()
        .filter_map(|r| Some((r.median_s?, r.spread.unwrap_or(0.0))))
        .min_by(|a, b| a.0.total_cmp(&b.0));
    for r in rows.iter_mut() {
        if let (Some((tb, sb)), Some(t)) = (best, r.median_s) {
            // A tie: the difference is within the two measurements' spreads.
            r.tie_with_best = crate::evaluate::stats::tie(t, r.spread.unwrap_or(0.0), tb, sb);
        }
        if let (Some(g), Some(c)) = (r.effective_gbs, ceiling) {
            r.copy_bw_fraction = Some(g / c);
        }
        if let Some(t) = r.median_s {
            if best_vendor_csr.is_finite() {
                r.speedup_vs_cusparse_csr = Some(best_vendor_csr / t);
            }
        }
    }
}

fn print_table(r: &Report) {
    println!(
        "{}: {} × {}, {} non-zeros, {} on {} ({})",
        r.file, r.nrows, r.ncols, r.nnz, r.precision, r.backend, r.device
    );
    println!(
        "timing: {}; cache {}{}",
        r.protocol.describe(),
        r.cache,
        r.copy_bandwidth_gbs
            .map(|c| format!("; copy bandwidth {c:.0} GB/s"))
            .unwrap_or_default()
    );
    let has_ceiling = r.copy_bandwidth_gbs.is_some();
    let has_vendor = r
        .results
        .iter()
        .any(|x| x.speedup_vs_cusparse_csr.is_some());
    let mut header = vec!["kernel", "median", "spread", "warm mean", "eff. GB/s"];
    if has_ceiling {
        header.push("% copy BW");
    }
    if has_vendor {
        header.push("vs cuSPARSE CSR");
    }
    header.extend(["footprint MB", "status"]);
    let mut t = common::table(&header);
    let opt = |v: Option<f64>, f: &dyn Fn(f64) -> String| v.map(f).unwrap_or_else(|| "-".into());
    let mut notes = Vec::new();
    for row in &r.results {
        let mark = if row.tie_with_best { " ≈best" } else { "" };
        let mut cells = vec![
            format!("{}{mark}", row.kernel),
            opt(row.median_s, &common::fmt_seconds),
            opt(row.spread, &|s| format!("±{:.1}%", s * 100.0)),
            opt(row.warm_mean_s, &common::fmt_seconds),
            opt(row.effective_gbs, &|g| format!("{g:.1}")),
        ];
        if has_ceiling {
            cells.push(opt(row.copy_bw_fraction, &|f| format!("{:.1}", f * 100.0)));
        }
        if has_vendor {
            cells.push(opt(row.speedup_vs_cusparse_csr, &|s| format!("{s:.2}×")));
        }
        cells.push(
            row.footprint_bytes
                .map(|b| format!("{:.2}", b as f64 / 1e6))
                .unwrap_or_else(|| "-".into()),
        );
        match &row.reason {
            Some(reason) => {
                notes.push(format!("[{}] {}: {}", notes.len() + 1, row.kernel, reason));
                cells.push(format!("{} [{}]", row.status, notes.len()));
            }
            None => cells.push(row.status.clone()),
        }
        t.add_row(cells);
    }
    println!("{t}");
    println!(
        "median: time per SpMV (median over the timed samples); spread: their interquartile \
         range relative to the median; ≈best: within the spread of the fastest (a tie); eff. \
         GB/s: the format's arrays + x + y once over the median"
    );
    for n in notes {
        println!("{n}");
    }
}
