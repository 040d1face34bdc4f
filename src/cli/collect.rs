//! `sparsecast collect`: measure a training corpus into a training table.

use super::instrument::PrecisionArg;
use crate::backend::cuda::launch::HybLaunch;
use crate::backend::{BackendKind, TimingMode, TimingProtocol, Variant};
use crate::corpus::{self, CollectOptions, DrawOptions};
use std::path::PathBuf;

/// Measure a training corpus: every configuration of every matrix, f32 and f64, into a table.
///
/// The corpus is the Matrix Market files under --corpus, --kron-per-file Kronecker expansions of
/// each (real structure at 10^5–10^8 non-zeros; a file and its expansions are one family), and
/// --generated matrices whose families (random with constant / normal / uniform row lengths,
/// stencils, banded, block-diagonal, power law) and parameters are drawn from --seed, their sizes
/// spread evenly in log(nnz) between --min-nnz and --max-nnz, and --mixtures heterogeneous
/// matrices (generated parts stacked by rows: a bulk of one family with a few long rows or a
/// block of another family) over the same sizes, and --long-blocks blocks of a few long rows
/// over many columns (the row blocks `optimize` predicts for long rows). Every configuration (all our
/// kernels and thread mappings, SELL-C-σ also with C = 512 σ = 2048, --block-kernels again at each
/// --block-sizes, every cuSPARSE algorithm on CUDA) is checked against the f64 reference and
/// timed. One JSON line per matrix × precision is appended to --out at once: a run that is cut
/// (or stopped by --budget-s) continues where it stopped when started again. Compress the table
/// with gzip to commit it; `sparsecast train` reads both.
///
/// How long: on an H100 or H200, a draw spread evenly over 10^3–10^8 non-zeros takes 1.1 s a
/// matrix on average, both precisions (H100 282 matrices in 321 s, H200 274 in 301 s; ≈ 0.3 s
/// below 10^6 non-zeros, ≈ 3.3 s from 10^7 on): 1,000 matrices in about 19 minutes. On CUDA the
/// formats are converted and every result is checked on the device, and the next matrix is
/// built (with the passes over its entries that --max-blowup needs) while the current one is
/// measured.
///
/// Examples:
///   sparsecast collect --list --corpus ../shared/matrices/suitesparse --generated 400
///   sparsecast collect --backend cuda --corpus mats --generated 400 --out h200.jsonl
///   sparsecast collect --backend cuda --corpus mats --kron-per-file 2 --mixtures 200 \
///       --seed 3 --out h200-s3.jsonl
///   sparsecast collect --backend cuda --sms 32 --corpus mats --generated 400 \
///       --only scripts/partition-subset.txt --out h200-sms32.jsonl
///   sparsecast collect --backend cuda --kron-per-file 0 --long-blocks 300 --seed 21 \
///       --min-nnz 10000 --max-nnz 15000000 --out h200-s21.jsonl   # H200: 1.2 s a block of
///       # rows up to 2·10^5 entries, up to 53 s a block of longer rows (thread-per-row kernels)
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Directories searched recursively for .mtx / .mtx.gz files.
    #[arg(long, num_args = 1..)]
    corpus: Vec<PathBuf>,
    /// Generated matrices (families and parameters drawn from --seed).
    #[arg(long, default_value_t = 0)]
    generated: usize,
    /// Heterogeneous matrices: generated parts stacked by rows (drawn after --generated, so
    /// adding them leaves the other matrices of a seed unchanged).
    #[arg(long, default_value_t = 0)]
    mixtures: usize,
    /// Blocks of long rows: few rows (1–5,000) of 32 entries or more over many columns, the
    /// shape of the row blocks `optimize` predicts for a matrix's long rows (drawn after
    /// --mixtures, so adding them leaves the other matrices of a seed unchanged).
    #[arg(long, default_value_t = 0)]
    long_blocks: usize,
    /// Kronecker expansions of each corpus file.
    #[arg(long, default_value_t = 1)]
    kron_per_file: usize,
    /// Smallest generated matrix, non-zeros.
    #[arg(long, default_value_t = 1_000)]
    min_nnz: u64,
    /// Largest generated matrix, non-zeros.
    #[arg(long, default_value_t = 100_000_000)]
    max_nnz: u64,
    /// Largest Kronecker expansion, non-zeros.
    #[arg(long, default_value_t = 30_000_000)]
    max_kron_nnz: u64,
    /// Seed of the draw.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print the corpus (id, family, estimated non-zeros) and stop.
    #[arg(long)]
    list: bool,
    /// Only the matrices listed in this file (ids as --list prints them, one a line, `#`
    /// comments): a fixed subset of the draw, measured under the full draw's ids (a smaller
    /// target's table for `crossarch`). An id the draw lacks is an error.
    #[arg(long, value_name = "FILE")]
    only: Option<PathBuf>,
    /// Where to run.
    #[arg(long, value_enum, default_value_t = BackendKind::Cpu)]
    backend: BackendKind,
    /// HYB's launch sequence to time where HYB has a COO part (CUDA, sm_90 and later): `plain`
    /// (the COO kernel after the ELL kernel) or `programmatic` (the COO kernel as the ELL
    /// kernel's programmatic dependent, 0.4–0.8 µs faster below 10 µs) or `programmatic-merged`
    /// (that, with the COO walk merged per block where long rows crowd a line of y: 0.4–1.2×,
    /// geomean 0.84–0.88 there). Default: the one the embedded profile of this GPU models, plain
    /// without one; SPARSECAST_PDL=0/1/merge overrides both. The table names the sequence
    /// (`"kernel": "hyb-pdl"` / `"hyb-pdl-merge"`).
    #[arg(long, value_enum, value_name = "SEQUENCE")]
    hyb_launch: Option<HybLaunch>,
    /// The table (JSON Lines; appended, resumed).
    #[arg(long, required_unless_present = "list")]
    out: Option<PathBuf>,
    /// Precision(s).
    #[arg(long, value_enum, default_value_t = PrecisionArg::Both)]
    precision: PrecisionArg,
    /// Extra CUDA block sizes of --block-kernels (comma-separated; 256 is always measured).
    #[arg(long, value_delimiter = ',', default_value = "128,512")]
    block_sizes: Vec<u32>,
    /// Only these configurations (comma-separated labels as in the table, e.g. `ell-bro` or
    /// `csr-t4@128`), to fill in configurations another table lacks: write them to a separate
    /// table, and `train` / `score` / `crossarch` merge the rows of the same matrix and precision.
    #[arg(long, value_delimiter = ',')]
    configs: Vec<String>,
    /// Kernels measured again at each of --block-sizes (comma-separated). SEG-TILE is among them:
    /// at 512 threads it ran 1.2-1.4x faster than at 256 on blocks of long rows (session 37).
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "csr-scalar,csr-t4,csr-vector,ell,sell,segtile"
    )]
    block_kernels: Vec<String>,
    /// Timed batches per configuration.
    #[arg(long, default_value_t = corpus::collect::corpus_protocol().runs)]
    runs: usize,
    /// Warm-up per configuration, milliseconds (the GPU stays busy between configurations).
    #[arg(long, default_value_t = corpus::collect::corpus_protocol().warmup_ms)]
    warmup_ms: f64,
    /// Target duration of one batch, milliseconds.
    #[arg(long, default_value_t = corpus::collect::corpus_protocol().batch_ms)]
    batch_ms: f64,
    /// Memory placements per configuration (see `bench --help`); the committed tables were
    /// measured in one (more multiply the measuring time).
    #[arg(long, default_value_t = 1)]
    placements: usize,
    /// A configuration whose one SpMV takes longer than this many milliseconds is timed short:
    /// 3 single-SpMV samples after one warm-up SpMV (0: never). A thread-per-row kernel on a
    /// matrix with a row of 10^5 entries takes 0.1–0.2 s, and the full protocol spent 4–6 s on
    /// each such configuration. 1 ms since session 22 (5 ms before): configurations of 1–5 ms
    /// timed short agree with the full protocol's times as two full runs agree with each other
    /// (median ratio 1.001, 5–95 % 0.996–1.009 on 163 of them; docs/ACCURACY.md). Shorter
    /// limits do not: at 0.25 ms the configurations of 0.25–1 ms moved by 1.1 % median, p90
    /// 6.6 %, where the unchanged ones moved 0.4 %, p90 2.6 % (session 23).
    #[arg(long, default_value_t = 1.0)]
    slow_ms: f64,
    /// A configuration of ours whose arrays would exceed this many times the CSR arrays' bytes
    /// is recorded as skipped, not converted (0: measure all). ELL padded to one long row takes
    /// 10–20 GB where the CSR holds 40 MB; on the committed tables every configuration over 16×
    /// ran ≥ 3.8× slower than the matrix's best. cuSPARSE algorithms are always measured.
    #[arg(long, default_value_t = 16.0)]
    max_blowup: f64,
    /// A configuration slower than --slow-ms whose first SpMV takes over this many times the
    /// fastest configuration measured so far on the same matrix is timed from that SpMV and one
    /// more (0: never). On the seed-6 tables those configurations took ≈ 20 % of the measuring
    /// time; two samples of ≥ 5 ms agree within a few percent, and ones that disagree by more
    /// than ≈ 22 % are timed again.
    #[arg(long, default_value_t = 10.0)]
    far_factor: f64,
    /// Prepare every configuration from scratch: convert and upload its format again even
    /// where another configuration of the same matrix holds the same arrays (as the tables
    /// before session 13 were measured). By default each format is converted and uploaded once
    /// per matrix and precision and its kernels share it (with one placement only).
    #[arg(long)]
    fresh_arrays: bool,
    /// Stop after this many seconds (between matrices); run again to continue.
    #[arg(long)]
    budget_s: Option<f64>,
    /// Seed of x.
    #[arg(long, default_value_t = 42)]
    seed_x: u64,
    #[command(flatten)]
    partition: super::common::PartitionArgs,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    a.partition.check(a.backend)?;
    let items = corpus::draw(&DrawOptions {
        corpus: a.corpus.clone(),
        kron_per_file: a.kron_per_file,
        max_kron_nnz: a.max_kron_nnz,
        generated: a.generated,
        min_nnz: a.min_nnz,
        max_nnz: a.max_nnz,
        mixtures: a.mixtures,
        long_blocks: a.long_blocks,
        seed: a.seed,
    })?;
    let items = match &a.only {
        Some(f) => corpus::subset::keep(items, &corpus::subset::read_ids(f)?)?,
        None => items,
    };
    if items.is_empty() {
        anyhow::bail!(
            "nothing to collect: no .mtx/.mtx.gz file under --corpus, --generated 0, --mixtures 0 and --long-blocks 0"
        );
    }
    let total: u64 = items.iter().map(|i| i.est_nnz).sum();
    if a.list {
        println!("{:<48} {:<28} {:>12}", "matrix", "family", "~nnz");
        for i in &items {
            println!("{:<48} {:<28} {:>12}", i.id, i.family, i.est_nnz);
        }
        println!(
            "{} matrices, ~{:.2e} non-zeros in all (files counted by their compressed size)",
            items.len(),
            total as f64
        );
        return Ok(());
    }
    let ours = Variant::ours();
    let mut variants: Vec<Variant> = ours.clone();
    if a.backend == BackendKind::Cuda {
        variants.extend(Variant::vendor());
    }
    let block_kernels = a
        .block_kernels
        .iter()
        .map(|s| Variant::parse(s))
        .collect::<crate::Result<Vec<_>>>()?;
    let protocol = TimingProtocol {
        mode: TimingMode::Batched,
        runs: a.runs,
        warmup: 0,
        warmup_ms: a.warmup_ms,
        batch_ms: a.batch_ms,
        cold: false,
        placements: a.placements,
        slow_s: (a.slow_ms > 0.0).then_some(a.slow_ms * 1e-3),
        far_factor: (a.far_factor > 0.0).then_some(a.far_factor),
        fastest_s: None,
    };
    protocol.validate()?;
    let opts = CollectOptions {
        backend: a.backend,
        out: a.out.clone().expect("required unless --list"),
        precisions: a.precision.list(),
        protocol,
        configs: only_configs(
            corpus::configurations(&variants, &block_kernels, &a.block_sizes),
            &a.configs,
        )?,
        seed: a.seed_x,
        budget_s: a.budget_s,
        sms: a.partition.sms,
        max_blowup: (a.max_blowup > 0.0).then_some(a.max_blowup),
        share_arrays: !a.fresh_arrays,
        hyb_launch: a.hyb_launch,
    };
    let pb = super::common::progress(total.max(1), "collect");
    let start = std::time::Instant::now();
    let mut n = 0usize;
    let outcome = corpus::collect(&opts, &items, |item, what| {
        n += 1;
        pb.set_message(format!("{} ({what})", item.id));
        pb.inc(item.est_nnz);
        // Without a terminal the bar is hidden: a line every 25 matrices instead.
        if pb.is_hidden() && (n % 25 == 0 || n == items.len()) {
            eprintln!(
                "[{n}/{}] {} ({what}) after {:.0} s",
                items.len(),
                item.id,
                start.elapsed().as_secs_f64()
            );
        }
    })?;
    pb.finish_and_clear();
    eprintln!(
        "{} rows written, {} resumed, {} configurations each, {:.1} s; table: {}",
        outcome.written,
        outcome.resumed,
        opts.configs.len(),
        start.elapsed().as_secs_f64(),
        opts.out.display()
    );
    if outcome.left > 0 {
        eprintln!(
            "stopped by --budget-s with {} matrices left: run the same command again to continue",
            outcome.left
        );
    }
    for (id, why) in &outcome.failed {
        eprintln!("warning: {id}: {why}");
    }
    Ok(())
}

/// `all` restricted to the labels of `--configs` (all when none is given); an unknown label is
/// an error that lists the known ones.
fn only_configs(
    all: Vec<crate::backend::KernelConfig>,
    wanted: &[String],
) -> anyhow::Result<Vec<crate::backend::KernelConfig>> {
    if wanted.is_empty() {
        return Ok(all);
    }
    let labels: Vec<String> = all.iter().map(|k| k.label()).collect();
    if let Some(bad) = wanted.iter().find(|w| !labels.contains(w)) {
        anyhow::bail!(
            "--configs: no configuration '{bad}' (known: {})",
            labels.join(", ")
        );
    }
    Ok(all
        .into_iter()
        .filter(|k| wanted.contains(&k.label()))
        .collect())
}
