//! `sparsecast selftest`: run every kernel against the f64 CPU reference and print a table.

use crate::backend::cuda::{convert_check, rowdist_check, CudaBackend};
use crate::backend::selftest::{self, CaseResult, Outcome, SelftestConfig};
use crate::backend::Variant;
use crate::Error;
use anyhow::Context;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Cell, CellAlignment, Table};
use std::path::PathBuf;

/// Which backend to test.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SelftestBackend {
    /// The CUDA kernels and cuSPARSE.
    Cuda,
    /// The CPU kernels.
    Cpu,
}

/// Check every kernel against the f64 CPU reference (poisoned output, fresh random x).
///
/// Check every kernel × f32/f64 × block size on random matrices and edge cases (empty rows, one
/// very long row, rectangular, no rows, …) against the f64 CPU reference. The output is poisoned
/// (NaN) before each run and x is fresh random data each time. Exits non-zero on any mismatch.
///
/// On CUDA the "gen …" rows check the statistical models' benchmark matrices generated on the
/// device (normal, uniform and constant row lengths; csr-t16, csr-scalar, ell, jad) against the
/// host-built ones: every array equal, and the SpMV against the f64 reference.
/// --generation-timing then times host build + upload against device generation for the
/// largest of them.
///
/// Examples:
///   sparsecast selftest --backend cuda
///   sparsecast selftest --backend cuda --share-arrays
///   sparsecast selftest --backend cuda --generation-only --generation-timing
///   sparsecast selftest --backend cuda --formats csr-merge,coo --block-sizes 128
///   sparsecast selftest --backend cpu --scale 1
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Backend to test.
    #[arg(long, value_enum, default_value = "cuda")]
    backend: SelftestBackend,
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    device: usize,
    /// CUDA block sizes to test (comma-separated).
    #[arg(long, value_delimiter = ',', default_values_t = [64u32, 256, 1024])]
    block_sizes: Vec<u32>,
    /// Only these kernels (comma-separated names as in every table: csr-vector, csr-t4,
    /// csr-merge, coo, ell, …, cusparse-csr-alg2). Default: all.
    #[arg(long, value_delimiter = ',')]
    formats: Vec<String>,
    /// Size multiplier of the test matrices (default: 8 for cuda, 1 for cpu).
    #[arg(long)]
    scale: Option<usize>,
    /// Seed of the random matrices and vectors.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Also write every case as JSON to this file (`--out` is another name of it).
    #[arg(long, visible_alias = "out", value_name = "FILE")]
    json: Option<PathBuf>,
    /// List every failing case (default: the first 20).
    #[arg(long)]
    verbose: bool,
    /// Run each matrix's kernels together, sharing its converted and uploaded arrays as
    /// `collect` does (CUDA; the CPU backend shares nothing): kernels reading shared arrays
    /// must pass as fresh ones do.
    #[arg(long)]
    share_arrays: bool,
    /// CUDA: only the "gen …" cases (benchmark matrices generated on the device).
    #[arg(long)]
    generation_only: bool,
    /// CUDA: after the cases, time host build + upload against device generation for the
    /// largest statistical benchmark matrices (f64) and print a table.
    #[arg(long)]
    generation_timing: bool,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let variants = if a.formats.is_empty() {
        Variant::ours()
            .into_iter()
            .chain(Variant::vendor())
            .collect()
    } else {
        a.formats
            .iter()
            .map(|s| Variant::parse(s))
            .collect::<crate::Result<Vec<_>>>()?
    };
    let cfg = SelftestConfig {
        variants,
        block_sizes: a.block_sizes.clone(),
        seed: a.seed,
        max_format_bytes: selftest::MAX_FORMAT_BYTES,
        share_arrays: a.share_arrays,
    };
    match a.backend {
        SelftestBackend::Cuda => {
            let be = match CudaBackend::new(a.device) {
                Ok(b) => b,
                Err(Error::NoCuda(msg)) => {
                    // A self-test that tested nothing has not passed.
                    anyhow::bail!(
                        "no CUDA device ({msg}): nothing was tested (`sparsecast selftest \
                         --backend cpu` tests the CPU kernels)"
                    );
                }
                Err(e) => return Err(e.into()),
            };
            let info = be.info();
            // HYB as users run it: the sequence the embedded profile of this GPU models
            // (SPARSECAST_PDL=0/1/merge chooses one).
            let device = crate::backend::Backend::<f64>::device_name(&be);
            let hyb = be.follow_hyb_launch(crate::profile::Profile::embedded_hyb_launch(&device)?);
            println!(
                "selftest on {} ({}, {} SMs), block sizes {:?}, HYB's launch sequence {hyb:?} \
                 (SPARSECAST_PDL=0/1/merge chooses; SPARSECAST_MERGE_FROM=0 merges every COO part)",
                info.name, info.arch, info.sm_count, cfg.block_sizes
            );
            let matrices = if a.generation_only {
                Vec::new()
            } else {
                selftest::test_matrices(a.seed, a.scale.unwrap_or(8))
            };
            let total = selftest::count_cases(&matrices, &cfg)
                + rowdist_check::count(&cfg.variants)
                + convert_check::count(&matrices, &cfg.variants);
            let mut progress = progress(total);
            let (mut results, mut secs) = selftest::run_all(&be, &matrices, &cfg, &mut progress);
            let t0 = std::time::Instant::now();
            results.extend(rowdist_check::run(&be, &cfg.variants, &mut progress));
            results.extend(convert_check::run(
                &be,
                &matrices,
                &cfg.variants,
                cfg.max_format_bytes,
                &mut progress,
            ));
            secs += t0.elapsed().as_secs_f64();
            let checked = report(&results, secs, &a);
            if a.generation_timing {
                generation_timing(&be)?;
            }
            checked
        }
        SelftestBackend::Cpu => {
            // The CPU backend ignores block sizes: test one.
            let cfg = SelftestConfig {
                block_sizes: vec![cfg.block_sizes.first().copied().unwrap_or(256)],
                ..cfg
            };
            if a.generation_only || a.generation_timing {
                anyhow::bail!("--generation-only and --generation-timing need --backend cuda");
            }
            let be = crate::backend::cpu::CpuBackend::new();
            let matrices = selftest::test_matrices(a.seed, a.scale.unwrap_or(1));
            let mut progress = progress(selftest::count_cases(&matrices, &cfg));
            let (results, secs) = selftest::run_all(&be, &matrices, &cfg, &mut progress);
            report(&results, secs, &a)
        }
    }
}

/// The per-case callback: failures as they happen, a count every 200 cases.
fn progress(total: usize) -> impl FnMut(&CaseResult) {
    let mut done = 0usize;
    move |r: &CaseResult| {
        done += 1;
        if let Outcome::Fail { reason } = &r.outcome {
            eprintln!(
                "FAIL {} {} block {} on {}: {reason}",
                r.variant, r.precision, r.block_size, r.matrix
            );
        }
        if done % 200 == 0 {
            eprintln!("  … {done} of {total} cases");
        }
    }
}

/// `--generation-timing`: the table of [`rowdist_check::time_largest`].
fn generation_timing(be: &CudaBackend) -> anyhow::Result<()> {
    println!("host build + upload vs device generation (f64, σ = √P_NZ):");
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "lengths",
        "kernel",
        "R",
        "P_NZ",
        "nnz",
        "host build s",
        "host prepare s",
        "device s",
        "speed-up",
    ]);
    let timings = rowdist_check::time_largest(be, &mut |g| {
        eprintln!(
            "  {} {} R={} P_NZ={}: host {:.3} + {:.3} s, device {:.3} s",
            g.dist.name(),
            g.kernel,
            g.rows,
            g.pnz,
            g.host_build_s,
            g.host_prepare_s,
            g.device_s
        );
    })?;
    for g in &timings {
        let right = |v: String| Cell::new(v).set_alignment(CellAlignment::Right);
        let host = g.host_build_s + g.host_prepare_s;
        t.add_row(vec![
            Cell::new(g.dist.name()),
            Cell::new(&g.kernel),
            right(g.rows.to_string()),
            right(g.pnz.to_string()),
            right(g.nnz.to_string()),
            right(format!("{:.3}", g.host_build_s)),
            right(format!("{:.3}", g.host_prepare_s)),
            right(format!("{:.3}", g.device_s)),
            right(format!("{:.1}×", host / g.device_s)),
        ]);
    }
    println!("{t}");
    println!("GENTIMING {}", serde_json::to_string(&timings)?);
    Ok(())
}

fn report(results: &[CaseResult], secs: f64, a: &Args) -> anyhow::Result<()> {
    let summary = selftest::summarize(results);
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED).set_header(vec![
        "kernel",
        "prec",
        "block",
        "pass",
        "fail",
        "skip",
        "worst err/tol",
        "max rel err",
    ]);
    for s in &summary {
        let right = |v: String| Cell::new(v).set_alignment(CellAlignment::Right);
        t.add_row(vec![
            Cell::new(&s.variant),
            Cell::new(s.precision),
            right(if s.block_size == 0 {
                "-".into()
            } else {
                s.block_size.to_string()
            }),
            right(s.passed.to_string()),
            right(s.failed.to_string()),
            right(s.skipped.to_string()),
            right(format!("{:.3}", s.worst)),
            right(format!("{:.1e}", s.max_rel)),
        ]);
    }
    println!("{t}");
    let failed: Vec<&CaseResult> = results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Fail { .. }))
        .collect();
    let skipped = results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Skip { .. }))
        .count();
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(results)?;
        crate::util::write_atomic(path, |w| w.write_all(text.as_bytes()))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let limit = if a.verbose { usize::MAX } else { 20 };
    for r in failed.iter().take(limit) {
        if let Outcome::Fail { reason } = &r.outcome {
            println!(
                "FAIL {} {} block {} on {}: {reason}",
                r.variant, r.precision, r.block_size, r.matrix
            );
        }
    }
    println!(
        "{} cases: {} passed, {} failed, {} skipped (format refused or unsupported) in {:.1} s",
        results.len(),
        results.len() - failed.len() - skipped,
        failed.len(),
        skipped,
        secs
    );
    if !failed.is_empty() {
        anyhow::bail!(
            "{} of {} selftest cases failed",
            failed.len(),
            results.len()
        );
    }
    Ok(())
}
