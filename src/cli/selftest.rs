//! `sparsecast selftest`: run every kernel against the f64 CPU reference and print a table.

use crate::backend::cuda::CudaBackend;
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
/// Examples:
///   sparsecast selftest --backend cuda
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
            println!(
                "selftest on {} ({}, {} SMs), block sizes {:?}",
                info.name, info.arch, info.sm_count, cfg.block_sizes
            );
            let matrices = selftest::test_matrices(a.seed, a.scale.unwrap_or(8));
            report(&be, &matrices, &cfg, &a)
        }
        SelftestBackend::Cpu => {
            // The CPU backend ignores block sizes: test one.
            let cfg = SelftestConfig {
                block_sizes: vec![cfg.block_sizes.first().copied().unwrap_or(256)],
                ..cfg
            };
            let be = crate::backend::cpu::CpuBackend::new();
            let matrices = selftest::test_matrices(a.seed, a.scale.unwrap_or(1));
            report(&be, &matrices, &cfg, &a)
        }
    }
}

fn report<B>(
    be: &B,
    matrices: &[selftest::TestMatrix],
    cfg: &SelftestConfig,
    a: &Args,
) -> anyhow::Result<()>
where
    B: crate::backend::Backend<f32> + crate::backend::Backend<f64>,
{
    let mut done = 0usize;
    let total = selftest::count_cases(matrices, cfg);
    let (results, secs) = selftest::run_all(be, matrices, cfg, &mut |r: &CaseResult| {
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
    });
    let summary = selftest::summarize(&results);
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
        let text = serde_json::to_string_pretty(&results)?;
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
