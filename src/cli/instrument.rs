//! `sparsecast instrument`: the instrumenting phase of the analytical model — time the papers'
//! benchmark matrices on a backend, fit the model, write a device profile.

use super::common;
use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::CudaBackend;
use crate::backend::{Backend, BackendKind, TimingProtocol};
use crate::instrument::{
    run_precision, AutoSource, BenchmarkSource, DeviceLimits, DeviceSource, HostSource,
    MeasureOptions, Statistic, SuiteConfig,
};
use crate::model::accuracy::{benchmark_samples, summarize};
use crate::profile::{PrecisionProfile, Profile, SCHEMA_VERSION};
use crate::{Precision, Scalar};
use anyhow::Context;
use indicatif::ProgressBar;
use std::path::PathBuf;
use std::time::Instant;

/// Run the instrumenting phase and write a device profile (fitted analytical models).
///
/// Time the benchmark matrices of the analytical model (Guo & Wang) on a backend, fit the CSR,
/// ELL, COO and HYB models, and write the device profile that `sparsecast predict` uses.
///
/// The suite follows the papers: strip sizes from the device (S_CSR = SMs × warps/SM,
/// S_ELL = S_COO = SMs × threads/SM), R = S × I rows for I = 1…10, constant non-zeros per row
/// P_NZ = 4, 16, 64, 256, 1024, 2048, 4096, 8192 (CSR, ELL; both sides of the 1,024 threshold)
/// and 10, 20, … 100 (COO, one strip of rows), within the device's memory. With the default
/// --source auto the matrices are generated on the device where the backend can
/// (`Backend::prepare_synthetic`), and built on the host and uploaded otherwise.
///
/// The same run fits the statistical models of Wang, Gu & Li (`statistical-normal`,
/// `statistical-uniform`; --statistical, --no-statistical): CSR-V (csr-t16), CSR-S
/// (csr-scalar), ELL and JAD on R = S × I rows whose lengths are drawn from a normal or uniform
/// distribution of mean P_NZ (I = 1…10, 15…50 and P_NZ = 4 … 3072 for CSR-V; I = 1…10 and
/// P_NZ = 4 … 1024 for the others), generated on the device where the backend can
/// (`Backend::prepare_distributed`; built on the host with --source host or on the CPU
/// backend). `--statistical constant,normal,uniform` adds `statistical-constant`, the same fit
/// on constant rows (001's "Guo's model" column). A GPU session uses --stat-grid small, a
/// --budget-s and --base (see scripts/device_statistical.sh); --plan-only prints the plan and
/// its estimated cost for the device of a profile without measuring.
///
/// Examples:
///   sparsecast instrument --backend cuda --out profiles/h200.json.gz
///   sparsecast instrument --backend cpu --precision f64 --quick --out cpu.json
///   sparsecast instrument --backend cpu --strips 1,2,4,8,16,32 --out cpu.json
///   sparsecast instrument --backend cpu --quick --stat-spread 0.25 --out cpu.json
///   sparsecast instrument --backend cuda --stat-grid small --statistical constant,normal,uniform \
///       --csr-threads 16,32 --budget-s 330 --base profiles/h200.json.gz --out h200.json
///   sparsecast instrument --backend cuda --stat-grid small --plan-only profiles/h200.json.gz
///   sparsecast instrument --backend cuda --sms 32 --cross-from profiles/h200.json.gz --out sms32.json
///   sparsecast instrument --backend cuda --bounds-only --base profiles/h200.json.gz --out h200.json
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Backend that runs the benchmarks.
    #[arg(long, value_enum)]
    backend: BackendKind,
    /// Precision(s) to instrument.
    #[arg(long, value_enum, default_value = "both")]
    precision: PrecisionArg,
    /// Where to write the profile (JSON, written atomically).
    #[arg(long, short, required_unless_present = "plan_only")]
    out: Option<PathBuf>,
    /// A tiny suite (3 strip counts, a few P_NZ, 5 short batches) for tests and smoke checks.
    #[arg(long)]
    quick: bool,
    /// Strip counts I for CSR and ELL (comma-separated; default 1…10).
    #[arg(long, value_delimiter = ',', conflicts_with = "max_strips")]
    strips: Option<Vec<u64>>,
    /// Strip counts 1…N for CSR and ELL.
    #[arg(long)]
    max_strips: Option<u64>,
    /// P_NZ grid for CSR (comma-separated).
    #[arg(long, value_delimiter = ',')]
    csr_pnz: Option<Vec<u64>>,
    /// P_NZ grid for ELL (comma-separated).
    #[arg(long, value_delimiter = ',')]
    ell_pnz: Option<Vec<u64>>,
    /// P_NZ grid for COO (comma-separated).
    #[arg(long, value_delimiter = ',')]
    coo_pnz: Option<Vec<u64>>,
    /// CSR thread mappings to instrument, threads per row (default 32, the vector kernel).
    #[arg(long, value_delimiter = ',')]
    csr_threads: Option<Vec<u32>>,
    /// Fraction of global memory one benchmark may use.
    #[arg(long)]
    memory_fraction: Option<f64>,
    /// β: timed batches per benchmark (default 20; 5 with --quick; see `bench --help`).
    #[arg(long)]
    runs: Option<usize>,
    /// α: leading timed batches excluded from the statistics (default 0: a warm-up in time
    /// precedes them).
    #[arg(long)]
    warmup: Option<usize>,
    /// Where benchmark matrices are built: on the device where the backend can (auto), always
    /// on the host (the statistical suites' too), or only on the device (the statistical
    /// suites still fall back to the host for what the device cannot generate).
    #[arg(long, value_enum, default_value = "auto")]
    source: SourceArg,
    /// Statistic of the timed runs to fit: the papers' warm-up-excluding mean, or the median
    /// (robust to preemption spikes on a shared machine).
    #[arg(long, value_enum, default_value = "warm-mean")]
    statistic: Statistic,
    /// Skip checking each kernel's first result against the f64 reference.
    #[arg(long)]
    no_verify: bool,
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    device: usize,
    /// CUDA threads per block.
    #[arg(long, default_value_t = 256)]
    block_size: u32,
    /// Row-length distributions of the statistical models (Wang, Gu & Li): one model each,
    /// `statistical-normal` and `statistical-uniform`, fitted to their own benchmark matrices
    /// (CSR-V = csr-t16, CSR-S = csr-scalar, ELL, JAD; generated on the device where the
    /// backend can, see --source); `constant` adds `statistical-constant`, the same fit on
    /// constant rows.
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        default_value = "normal,uniform"
    )]
    statistical: Vec<crate::instrument::RowDist>,
    /// Measure no statistical model (the analytical model only).
    #[arg(long, conflicts_with = "statistical")]
    no_statistical: bool,
    /// Standard deviation of the statistical benchmarks' row lengths: `sqrt` (σ = √P_NZ, the
    /// spread of Matlab's sprand at density P_NZ / R) or a coefficient of variation (`0.25`:
    /// σ = P_NZ / 4).
    #[arg(long, default_value = "sqrt", value_parser = parse_spread)]
    stat_spread: crate::instrument::Spread,
    /// The statistical models' grids of I and P_NZ: the paper's, or those thinned to about a
    /// quarter of its non-zeros (a GPU session's time; the matrices are built on the host).
    /// --quick takes a tiny grid.
    #[arg(long, value_enum, default_value = "paper")]
    stat_grid: StatGrid,
    /// Cross-architecture (003): measure only the 17 benchmark matrices of Guo & Wang's
    /// cross-architecture model (9 CSR, 5 ELL, 3 COO, chosen from this reference profile's
    /// suite) and write a profile whose `cross` model carries times of the reference here
    /// (`predict --profile OUT`, with the reference's analytical model, or with times measured
    /// on the reference: `--measured-on`). Where the reference's `sparsecast` models carry
    /// calibration matrices (profiles written by `train`), also rebuild those 17 matrices,
    /// measure every configuration of them here and store our model transferred to this device
    /// (the `sparsecast` model of OUT: from a matrix's features, or from its times measured on
    /// the reference with `predict --measured-on`). ≈ 30 s on an H100 or H200.
    #[arg(long, value_name = "REFERENCE_PROFILE")]
    cross_from: Option<PathBuf>,
    /// Wall-time budget in seconds: statistical benchmarks not started within it are skipped
    /// (cheapest are measured first; each precision gets an equal share of what is left when it
    /// starts), and a model that then lacks the points of a fit is left out with a note. The
    /// constant-row suite of the analytical model is always measured whole.
    #[arg(long)]
    budget_s: Option<f64>,
    /// Keep the models of this profile that the run does not fit (learned models, …): for each
    /// precision they are added to the new profile after its own (same device required; a base
    /// of another device is reported and left out, the profile is written).
    #[arg(long)]
    base: Option<PathBuf>,
    /// Print the planned benchmarks and their estimated cost for the device and precisions of
    /// this profile, and exit without measuring (--out is not written).
    #[arg(long, value_name = "PROFILE")]
    plan_only: Option<PathBuf>,
    /// Measure only the device's sanity bounds (launch floor, DRAM and L2 bandwidth: seconds)
    /// and write the --base profile with them, its models and benchmarks unchanged (same device
    /// required).
    #[arg(long, requires = "base", conflicts_with_all = ["cross_from", "plan_only"])]
    bounds_only: bool,
    #[command(flatten)]
    partition: common::PartitionArgs,
}

/// `--stat-grid`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum StatGrid {
    /// 001's grids.
    Paper,
    /// Thinned to about a quarter of the paper's non-zeros.
    Reduced,
    /// One GPU session's: the fitted lines' points only (StatSuite::small).
    Small,
}

fn parse_spread(s: &str) -> Result<crate::instrument::Spread, String> {
    crate::instrument::Spread::parse(s).map_err(|e| e.to_string())
}

/// In-sample difference rate above which `instrument` warns.
pub const IN_SAMPLE_WARNING: f64 = 0.25;

/// `--precision`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PrecisionArg {
    F32,
    F64,
    Both,
}

impl PrecisionArg {
    /// The precisions selected.
    pub fn list(self) -> Vec<Precision> {
        match self {
            PrecisionArg::F32 => vec![Precision::F32],
            PrecisionArg::F64 => vec![Precision::F64],
            PrecisionArg::Both => vec![Precision::F32, Precision::F64],
        }
    }
}

/// `--source`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum SourceArg {
    Auto,
    Host,
    Device,
}

impl Args {
    fn suite(&self) -> anyhow::Result<SuiteConfig> {
        let mut s = if self.quick {
            SuiteConfig::quick()
        } else {
            SuiteConfig::default()
        };
        if let Some(v) = &self.strips {
            s.strips = v.clone();
        }
        if let Some(n) = self.max_strips {
            s.strips = (1..=n).collect();
        }
        for (dst, src) in [
            (&mut s.csr_pnz, &self.csr_pnz),
            (&mut s.ell_pnz, &self.ell_pnz),
            (&mut s.coo_pnz, &self.coo_pnz),
        ] {
            if let Some(v) = src {
                *dst = v.clone();
            }
        }
        if let Some(v) = &self.csr_threads {
            s.csr_threads = v.clone();
        }
        if let Some(f) = self.memory_fraction {
            s.memory_fraction = f;
        }
        if self.no_statistical {
            s.statistical = None;
        }
        if let (Some(st), false) = (&mut s.statistical, self.quick) {
            match self.stat_grid {
                StatGrid::Paper => {}
                StatGrid::Reduced => *st = crate::instrument::StatSuite::reduced(),
                StatGrid::Small => *st = crate::instrument::StatSuite::small(),
            }
        }
        if let Some(st) = &mut s.statistical {
            st.distributions = self.statistical.clone();
            st.spread = self.stat_spread;
        }
        s.validate()?;
        Ok(s)
    }

    fn protocol(&self) -> TimingProtocol {
        // --quick: 5 batches after 5 ms of warm-up, for tests and smoke checks.
        let base = if self.quick {
            TimingProtocol {
                runs: 5,
                warmup_ms: 5.0,
                batch_ms: 0.2,
                ..Default::default()
            }
        } else {
            TimingProtocol::default()
        };
        TimingProtocol {
            runs: self.runs.unwrap_or(base.runs),
            warmup: self.warmup.unwrap_or(base.warmup),
            ..base
        }
    }
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let suite = a.suite()?;
    if let Some(like) = &a.plan_only {
        let p = Profile::load(like).with_context(|| format!("reading {}", like.display()))?;
        let host_built = a.source == SourceArg::Host;
        return super::instrument_plan::print_plan(
            &p,
            &suite,
            &a.precision.list(),
            a.budget_s,
            host_built,
        );
    }
    let out = a.out.clone().context("--out is required")?;
    a.partition.check(a.backend)?;
    // Before any measurement: a run of minutes must not end in a path that cannot be written.
    crate::util::check_writable(&out)?;
    let base = match &a.base {
        Some(b) => Some(Profile::load(b).with_context(|| format!("reading {}", b.display()))?),
        None => None,
    };
    if let Some(b) = a.budget_s.filter(|b| !(b.is_finite() && *b > 0.0)) {
        anyhow::bail!("--budget-s {b}: expected a positive number of seconds");
    }
    let opts = MeasureOptions {
        protocol: a.protocol(),
        block_size: a.block_size,
        verify: !a.no_verify,
        deadline: None,
    };
    let start = Instant::now();
    let sources = SourceSet {
        choice: a.source,
        host: HostSource::default(),
        auto: AutoSource::default(),
    };
    if a.bounds_only {
        let base = base.context("--bounds-only needs --base")?;
        let profile = match a.backend {
            BackendKind::Cpu => {
                let be = CpuBackend::new();
                super::instrument_bounds::refresh(&be, base, sources.get(), sources.get(), &opts)?
            }
            BackendKind::Cuda => {
                let be = CudaBackend::open_on(a.device, a.partition.sms)?;
                super::instrument_bounds::refresh(&be, base, sources.get(), sources.get(), &opts)?
            }
        };
        profile
            .save(&out)
            .with_context(|| format!("writing {}", out.display()))?;
        println!(
            "wrote {} in {:.1} s (bounds only)",
            out.display(),
            start.elapsed().as_secs_f64()
        );
        return Ok(());
    }
    let pb = common::progress(0, "instrument");
    let reference = match &a.cross_from {
        Some(p) => Some(Profile::load(p).with_context(|| format!("reading {}", p.display()))?),
        None => None,
    };
    let refp = reference.as_ref();
    let (device_name, device_info, sections) = match a.backend {
        BackendKind::Cpu => {
            let be = CpuBackend::new();
            let sections = run_all(
                &be,
                DeviceLimits::cpu,
                &sources,
                &a,
                &suite,
                &opts,
                &pb,
                refp,
            )?;
            (Backend::<f64>::device_name(&be), None, sections)
        }
        BackendKind::Cuda => {
            let be = CudaBackend::open_on(a.device, a.partition.sms)?;
            let info = be.describe();
            let limits = DeviceLimits::from(&info);
            let sections = run_all(
                &be,
                |_| limits.clone(),
                &sources,
                &a,
                &suite,
                &opts,
                &pb,
                refp,
            )?;
            (
                Backend::<f64>::device_name(&be),
                Some(serde_json::to_value(&info)?),
                sections,
            )
        }
    };
    let mut sections = sections;
    // Our model's half of a cross-architecture profile: the reference's calibration matrices.
    let own_note = match refp {
        Some(r) => {
            super::instrument_own::transfer(r, &mut sections, a.backend, a.partition.sms, &pb)?
        }
        None => None,
    };
    pb.finish_and_clear();
    let source = sources.used();
    if a.source == SourceArg::Auto && a.backend == BackendKind::Cuda && source == "host" {
        eprintln!(
            "note: the CUDA backend cannot generate benchmark matrices on the device yet; they \
             were built on the host and uploaded (slower)"
        );
    }
    let mut profile = Profile {
        schema_version: SCHEMA_VERSION,
        sparsecast_version: env!("CARGO_PKG_VERSION").into(),
        backend: a.backend.name().into(),
        device_name,
        device_info,
        created_unix: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        timing: opts.protocol.clone(),
        suite,
        source: source.into(),
        precisions: sections,
    };
    // After minutes of measuring, a base of another device costs its models, not the profile.
    if let Some(b) = &base {
        // The models this run was to fit are its own, fitted or not: never the base's.
        let mut own = vec!["analytical".to_string()];
        if let Some(st) = &profile.suite.statistical {
            own.extend(
                st.distributions
                    .iter()
                    .map(|&d| crate::model::StatisticalModel::name_of(d).to_string()),
            );
        }
        if let Err(e) = super::instrument_plan::keep_base_models(&mut profile, b, &own) {
            eprintln!("warning: --base not applied: {e:#}");
        }
    }
    profile
        .save(&out)
        .with_context(|| format!("writing {}", out.display()))?;
    match &reference {
        Some(r) => super::instrument_cross::print_summary(&profile, r),
        None => print_summary(&profile)?,
    }
    if let Some(n) = own_note {
        println!("{n}");
    }
    println!(
        "wrote {} in {:.1} s (benchmark matrices built on the {source})",
        out.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The benchmark sources and the user's choice among them.
struct SourceSet {
    choice: SourceArg,
    host: HostSource,
    auto: AutoSource,
}

impl SourceSet {
    fn get<T: Scalar>(&self) -> &dyn BenchmarkSource<T> {
        match self.choice {
            SourceArg::Auto => &self.auto,
            SourceArg::Host => &self.host,
            SourceArg::Device => &DeviceSource,
        }
    }
    /// Where the matrices were built in the end.
    fn used(&self) -> &'static str {
        match self.choice {
            SourceArg::Auto if !self.auto.fell_back() => "device",
            SourceArg::Device => "device",
            _ => "host",
        }
    }
}

/// Instrument every requested precision (only 003's benchmarks with a `reference`).
#[allow(clippy::too_many_arguments)]
fn run_all<B: Backend<f32> + Backend<f64>>(
    be: &B,
    limits: impl Fn(Precision) -> DeviceLimits,
    sources: &SourceSet,
    a: &Args,
    suite: &SuiteConfig,
    opts: &MeasureOptions,
    pb: &ProgressBar,
    reference: Option<&Profile>,
) -> anyhow::Result<Vec<PrecisionProfile>> {
    use super::instrument_cross as cross;
    let mut out = Vec::new();
    if let Some(r) = reference {
        for p in cross::precisions(r, &a.precision.list()) {
            let l = limits(p);
            let st = a.statistic;
            let section = match p {
                Precision::F32 => {
                    cross::run_precision::<f32>(be, sources.get(), r, &l, opts, st, pb)
                }
                Precision::F64 => {
                    cross::run_precision::<f64>(be, sources.get(), r, &l, opts, st, pb)
                }
            }
            .with_context(|| format!("instrumenting {p} (cross-architecture)"))?;
            out.push(section);
        }
        if out.is_empty() {
            anyhow::bail!("the reference profile has none of the precisions asked for");
        }
        return Ok(out);
    }
    let precisions = a.precision.list();
    let end = a
        .budget_s
        .map(|b| Instant::now() + std::time::Duration::from_secs_f64(b));
    for (i, &p) in precisions.iter().enumerate() {
        let l = limits(p);
        // An equal share of the time left to each precision still to come.
        let opts = &MeasureOptions {
            deadline: end.map(|e| {
                let now = Instant::now();
                now + e.saturating_duration_since(now) / (precisions.len() - i) as u32
            }),
            ..opts.clone()
        };
        let section = match p {
            Precision::F32 => {
                run_precision::<f32>(be, sources.get(), &l, suite, opts, a.statistic, pb)
            }
            Precision::F64 => {
                run_precision::<f64>(be, sources.get(), &l, suite, opts, a.statistic, pb)
            }
        }
        .with_context(|| format!("instrumenting {p}"))?;
        out.push(section);
    }
    Ok(out)
}

/// Per precision and kernel: benchmarks, time range, and how well the fitted model reproduces
/// its own benchmarks.
fn print_summary(p: &Profile) -> anyhow::Result<()> {
    let mut t = common::table(&[
        "precision",
        "kernel",
        "strip size",
        "benchmarks",
        "fastest",
        "slowest",
        "in-sample diff. (median / max)",
    ]);
    let mut warnings = Vec::new();
    for s in &p.precisions {
        let model = s.analytical()?;
        let samples = benchmark_samples(model, &s.measurements, s.statistic)?;
        for sum in summarize(&samples) {
            let ms: Vec<f64> = s
                .measurements
                .iter()
                .filter(|m| m.kernel == sum.variant)
                .map(|m| m.time(s.statistic))
                .collect();
            let lo = ms.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = ms.iter().copied().fold(0.0, f64::max);
            t.add_row(vec![
                s.precision().to_string(),
                sum.variant.name(),
                crate::instrument::strip_size(s.limits(), sum.variant)?.to_string(),
                sum.count.to_string(),
                common::fmt_seconds(lo),
                common::fmt_seconds(hi),
                format!("{:.1} % / {:.1} %", 100.0 * sum.median, 100.0 * sum.max),
            ]);
        }
        for x in samples
            .iter()
            .filter(|x| x.difference_rate() > IN_SAMPLE_WARNING)
        {
            warnings.push(format!(
                "{} {}: the fit misses its own benchmark {} by {:.0} % (predicted {}, measured {})",
                s.precision(),
                x.variant,
                x.input,
                100.0 * x.difference_rate(),
                common::fmt_seconds(x.predicted),
                common::fmt_seconds(x.measured)
            ));
        }
        for m in &s.models {
            if let crate::model::StoredModel::Statistical(st) = &m.model {
                eprintln!(
                    "{}: {}: {} benchmarks ({}), fitted",
                    s.precision(),
                    m.name,
                    st.measurements.len(),
                    match st.distribution {
                        crate::instrument::RowDist::Constant => "constant rows".to_string(),
                        _ => st.spread.to_string(),
                    }
                );
                for r in st.rejected_fits() {
                    eprintln!(
                        "note: {} {}: {r}: the least-squares fit made time fall with more work \
                         and was replaced by the constrained fit",
                        s.precision(),
                        m.name
                    );
                }
            }
        }
        for r in model.rejected_fits() {
            eprintln!(
                "note: {}: {r}: the least-squares fit made time fall with more work and was \
                 replaced by the constrained fit",
                s.precision()
            );
        }
        if let Some(b) = &s.bounds {
            eprintln!(
                "{}: launch floor {}, DRAM {:.0} GB/s, L2 {:.0} GB/s ({} MiB)",
                s.precision(),
                common::fmt_seconds(b.launch_floor_s),
                b.dram_gbs,
                b.l2_gbs,
                b.l2_bytes >> 20
            );
        }
        let budget = crate::instrument::measure::TIME_BUDGET;
        let (cut, other): (Vec<&String>, Vec<&String>) =
            s.skipped_notes.iter().partition(|n| n.ends_with(budget));
        let (unfitted, other): (Vec<&String>, Vec<&String>) = other
            .into_iter()
            .partition(|n| n.contains(": not fitted ("));
        for n in &unfitted {
            eprintln!("note: {}: {n}", s.precision());
        }
        if !cut.is_empty() {
            eprintln!(
                "note: {}: {} statistical benchmarks not measured: time budget spent (the \
                 largest; see the profile's skipped_notes)",
                s.precision(),
                cut.len()
            );
        }
        if !other.is_empty() || s.skipped > cut.len() + unfitted.len() + other.len() {
            eprintln!(
                "note: {}: {} planned benchmarks exceed the memory bound and were skipped",
                s.precision(),
                s.skipped - cut.len() - unfitted.len()
            );
            for n in other {
                eprintln!("  skipped: {n}");
            }
        }
    }
    if !warnings.is_empty() {
        eprintln!(
            "warning: {} in-sample fits miss by more than {:.0} %:",
            warnings.len(),
            100.0 * IN_SAMPLE_WARNING
        );
        for w in &warnings {
            eprintln!("  {w}");
        }
    }
    println!("{} — {}", p.backend, p.device_name);
    println!("{t}");
    Ok(())
}
