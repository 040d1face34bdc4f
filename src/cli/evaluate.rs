//! `sparsecast evaluate`: measure, predict and compare on a corpus; write results.jsonl and a
//! report with plots.

use super::instrument::PrecisionArg;
use crate::backend::BackendKind;
use crate::evaluate::{self, GeneratedSet, Options};
use crate::formats::FormatParams;
use crate::profile::Profile;
use anyhow::bail;
use std::path::PathBuf;

/// Evaluate accuracy, ranking quality and speed against cuSPARSE on real and generated matrices.
///
/// For every matrix (all .mtx / .mtx.gz files under the --corpus directories, plus the
/// --generated set, built on the fly and never stored), in each precision: every format and
/// thread mapping of ours and every cuSPARSE algorithm the backend has is checked against the
/// f64 reference and timed; every model of the profile predicts it; the optimizer's plan is one
/// more configuration where the build has the optimizer. Each result is appended to
/// OUT/results.jsonl at once (flushed and synced), so a killed run continues where it stopped when
/// started again with the same --out. Configurations that do not fit (a format that refuses the
/// matrix, one over --max-format-bytes) are recorded as skipped with the reason.
///
/// At the end OUT/report.md is written with SVG plots beside it: accuracy per model and
/// configuration (mean, median, 90th percentile, max difference rate; counts within 5 % and
/// 10 %; measured-vs-predicted bars; error CDFs), ranking quality (share of matrices whose
/// predicted-best configuration is within 5 %, 5–20 %, > 20 % of the measured best; fraction of
/// the best reached), and speed against the best cuSPARSE algorithm (geometric mean, worst case,
/// per-matrix bars). --report-only regenerates the report from OUT/results.jsonl alone.
///
/// Examples:
///   sparsecast evaluate --corpus ../shared/matrices/suitesparse --generated default \
///       --backend cuda --profile profiles/h200.json.gz --out eval-h200
///   sparsecast evaluate --corpus data --generated small --backend cpu --profile cpu.json \
///       --runs 5 --warmup-ms 5 --out eval-cpu
///   sparsecast evaluate --report-only --out eval-h200
///   sparsecast evaluate --report-only --repredict --profile new.json --out eval-h200
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Directories searched recursively for .mtx / .mtx.gz files (repeat or give several).
    #[arg(long, num_args = 1..)]
    corpus: Vec<PathBuf>,
    /// Generated matrices to add: none; small (~10^4–10^5 non-zeros, for CI); default
    /// (10^7–10^8, for a GPU).
    #[arg(long, value_enum, default_value_t = GeneratedSet::None)]
    generated: GeneratedSet,
    /// Where to run.
    #[arg(long, value_enum, default_value_t = BackendKind::Cpu)]
    backend: BackendKind,
    /// Device profile whose models predict (default: the one built into the binary).
    #[arg(long, conflicts_with = "no_profile")]
    profile: Option<PathBuf>,
    /// Measure only, without any model (when no profile is available).
    #[arg(long)]
    no_profile: bool,
    /// Output directory (created if needed; an existing results.jsonl is resumed).
    #[arg(long)]
    out: PathBuf,
    /// Precision(s).
    #[arg(long, value_enum, default_value_t = PrecisionArg::Both)]
    precision: PrecisionArg,
    #[command(flatten)]
    timing: super::common::TimingArgs,
    /// Skip a format whose footprint would exceed this many bytes (default: 4 GiB or half the
    /// memory, whichever is smaller).
    #[arg(long)]
    max_format_bytes: Option<u64>,
    /// Threads per CUDA block.
    #[arg(long, default_value_t = 256)]
    block_size: u32,
    /// Seed of x (uniform in [-1, 1)).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Measure again the configurations recorded as failed (a backend error); the new records
    /// replace them.
    #[arg(long)]
    retry_failed: bool,
    /// Only regenerate report.md and the plots from OUT/results.jsonl.
    #[arg(long)]
    report_only: bool,
    /// With --report-only: predict every record again with the models of --profile (or of the
    /// embedded profile of --gpu), replacing the stored predictions, so that a new profile is
    /// scored on times measured earlier (results.jsonl is not changed).
    #[arg(long, requires = "report_only")]
    repredict: bool,
    /// With --repredict and no --profile: the embedded profile of this GPU (h200, h100).
    #[arg(long, requires = "repredict", conflicts_with = "profile")]
    gpu: Option<String>,
    /// The profile's models to evaluate, comma-separated (default: every model of the profile).
    #[arg(long, value_delimiter = ',')]
    models: Option<Vec<String>>,
    #[command(flatten)]
    partition: super::common::PartitionArgs,
}

fn load_profile(a: &Args) -> anyhow::Result<Option<(String, Profile)>> {
    if a.no_profile {
        return Ok(None);
    }
    if let Some(p) = &a.profile {
        return Ok(Some((p.display().to_string(), Profile::load(p)?)));
    }
    match Profile::load_embedded()? {
        // The default profile is of another backend (the embedded one is a GPU's; the default
        // backend is the CPU): its predictions are no estimate of these times. Measure anyway.
        Some((name, p)) if p.backend != a.backend.name() => {
            eprintln!(
                "note: the profile built into this binary ({name}) was measured with the {} \
                 backend ({}), not {}: measuring without predictions (pass --profile with a \
                 profile of this backend, from `sparsecast instrument --backend {}`, to \
                 evaluate the models)",
                p.backend,
                p.device_name,
                a.backend.name(),
                a.backend.name()
            );
            Ok(None)
        }
        Some((name, p)) => Ok(Some((format!("embedded {name}"), p))),
        None => bail!(
            "no --profile given and this build embeds no device profile: pass --profile FILE \
             (from `sparsecast instrument`), or --no-profile to measure without models"
        ),
    }
}

pub fn run(a: Args) -> anyhow::Result<()> {
    if a.report_only {
        let profile = if a.repredict {
            Some(super::common::load_profile_for(
                a.profile.as_deref(),
                a.gpu.as_deref(),
                false,
                0,
            )?)
        } else {
            None
        };
        let n = evaluate::report_again(
            &a.out,
            profile.as_ref().map(|(_, p)| (p, a.models.as_deref())),
        )?;
        eprintln!(
            "wrote {} from {n} records",
            a.out.join(evaluate::REPORT).display()
        );
        return Ok(());
    }
    if a.corpus.is_empty() && a.generated == GeneratedSet::None {
        bail!("nothing to evaluate: give --corpus DIR and/or --generated small|default");
    }
    a.partition.check(a.backend)?;
    let protocol = a.timing.protocol()?;
    let profile = load_profile(&a)?;
    let params = FormatParams {
        max_bytes: a
            .max_format_bytes
            .unwrap_or_else(|| crate::formats::default_max_bytes().min(4 << 30)),
        ..FormatParams::default()
    };
    let opts = Options {
        corpus: a.corpus.clone(),
        generated: a.generated,
        backend: a.backend,
        out: a.out.clone(),
        precisions: a.precision.list(),
        protocol,
        params,
        block_size: a.block_size,
        seed: a.seed,
        retry_failed: a.retry_failed,
        models: a.models.clone(),
        sms: a.partition.sms,
    };
    let command: Vec<String> = std::env::args().collect();
    let started = std::time::Instant::now();
    let o = evaluate::run(
        &opts,
        profile.as_ref().map(|(n, p)| (n.as_str(), p)),
        &command,
    )?;
    eprintln!(
        "{} matrices: {} records ({} kept from before, {} measured now) in {:.1} s; wrote {} and {}",
        o.matrices,
        o.total,
        o.resumed,
        o.written,
        started.elapsed().as_secs_f64(),
        a.out.join(evaluate::RESULTS).display(),
        a.out.join(evaluate::REPORT).display()
    );
    // Like `predict`: everything readable was measured and reported; then the command fails,
    // naming what could not be read (measured again by the next run once the file changes).
    if !o.unreadable.is_empty() {
        for (id, why) in &o.unreadable {
            eprintln!("could not read {id}: {why}");
        }
        bail!(
            "{} of {} matrices could not be read: {}",
            o.unreadable.len(),
            o.matrices,
            o.unreadable
                .iter()
                .map(|(id, _)| id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(())
}
