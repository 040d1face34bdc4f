//! `sparsecast refeature`: measured training tables brought up to counts the features gained
//! after they were collected, without a GPU and without measuring again.

use super::common::progress;
use crate::corpus::{refeature, table};
use anyhow::{bail, Context};
use std::path::PathBuf;

/// Add the features' newer counts to measured training tables (no GPU; times unchanged).
///
/// Every distinct matrix of the tables is rebuilt once from its recorded source — the Matrix
/// Market file, or the generator spec that made it — and the counts the features gained since
/// the tables were collected are written into its rows: BSR's per-block-row counts (the most
/// blocks of one block row and the kernel's warp trips, which version 4 of the `sparsecast`
/// model reads), the histograms of the warps by their steps per thread mapping (version 6),
/// the row-per-thread warps' lane-alignment steps (version 9; from the row pointers alone where
/// a row already has the others), DIA's stored slots outside the columns, and the rows'
/// distinct `x` sectors by their length (the longest rows' gather locality, version 10).
/// Everything measured stays as it was. The rebuilt matrix is checked against the row (its
/// non-zeros, BSR blocks and summed warp steps); a matrix that cannot be rebuilt or does not
/// match is reported and its rows are written unchanged, and the command exits non-zero.
///
/// Sources recorded on another machine (e.g. `/root/mats/cage11.mtx.gz`) are found by file name
/// in --mats. Each table is written to --out-dir under its own name (atomically); a row that
/// already has the counts is kept, so an interrupted run can be resumed on its output.
///
/// Example (both GPUs' tables, the shared SuiteSparse files):
///   sparsecast refeature data/corpus/h100*.jsonl.gz data/corpus/h200*.jsonl.gz \
///     --mats ../shared/matrices/suitesparse --out-dir refeatured/
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Training tables (`sparsecast collect`, .jsonl or .jsonl.gz).
    #[arg(num_args = 1.., required = true)]
    tables: Vec<PathBuf>,
    /// Folder where the sources' Matrix Market files are found by name.
    #[arg(long)]
    mats: Option<PathBuf>,
    /// Folder the tables are written to (created; a table's own folder is refused, so that
    /// the measured originals are never overwritten by mistake).
    #[arg(long)]
    out_dir: PathBuf,
    /// Rebuild only matrices of at least this many non-zeros (to share the work out).
    #[arg(long, default_value_t = 0)]
    min_nnz: usize,
    /// Rebuild only matrices of at most this many non-zeros.
    #[arg(long, default_value_t = usize::MAX)]
    max_nnz: usize,
    /// Print what was done as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    std::fs::create_dir_all(&a.out_dir)
        .with_context(|| format!("cannot create {}", a.out_dir.display()))?;
    let out_dir = a.out_dir.canonicalize()?;
    let mut names = std::collections::BTreeSet::new();
    for t in &a.tables {
        let dir = t.parent().map(|p| {
            if p.as_os_str().is_empty() {
                ".".as_ref()
            } else {
                p
            }
        });
        if dir.and_then(|d| d.canonicalize().ok()).as_deref() == Some(out_dir.as_path()) {
            bail!(
                "{} is in --out-dir: write the refeatured tables elsewhere",
                t.display()
            );
        }
        if !names.insert(t.file_name().map(|n| n.to_os_string())) {
            bail!(
                "two tables named {}: their outputs would collide",
                t.display()
            );
        }
    }
    let mut rows = Vec::new();
    let mut spans = Vec::new();
    for t in &a.tables {
        let r = table::read(t).with_context(|| format!("reading {}", t.display()))?;
        spans.push((t, rows.len()..rows.len() + r.len()));
        rows.extend(r);
    }
    let pb = progress(0, "rebuilding (non-zeros)");
    let outcome = refeature::new_counts(
        &mut rows,
        a.mats.as_deref(),
        (a.min_nnz, a.max_nnz),
        |done, total, name| {
            pb.set_length(total);
            pb.set_position(done);
            pb.set_message(name.to_string());
        },
    );
    pb.finish_and_clear();
    for (t, span) in &spans {
        let out = out_dir.join(t.file_name().expect("a table is a file"));
        table::write_gz(&out, &rows[span.clone()])
            .with_context(|| format!("writing {}", out.display()))?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&outcome)?);
    } else {
        println!(
            "{} matrices in {} rows of {} tables: {} rows updated; {} matrices already had the \
             counts, {} outside the non-zero bounds, {} failed. Tables written to {}.",
            outcome.matrices,
            rows.len(),
            spans.len(),
            outcome.rows_updated,
            outcome.already,
            outcome.out_of_bounds,
            outcome.failed.len(),
            out_dir.display()
        );
        for (m, why) in &outcome.failed {
            println!("  failed: {m}: {why}");
        }
    }
    if !outcome.failed.is_empty() {
        bail!(
            "{} matrices could not be rebuilt (listed above); their rows are unchanged",
            outcome.failed.len()
        );
    }
    Ok(())
}
