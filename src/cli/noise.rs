//! `sparsecast noise`: the measurement noise floor from two evaluation runs.

use super::common;
use crate::evaluate::noise::{self, NoiseReport, Spread};
use crate::evaluate::{store, RESULTS};
use crate::instrument::Statistic;
use anyhow::Context;
use std::path::{Path, PathBuf};

/// Compare two independent `evaluate` runs of the same corpus: the measurement noise floor.
///
/// For every configuration measured in both runs, the difference |a − b| / min(a, b) of its time
/// (the median over the timed batches, or --statistic warm-mean): median, mean, 90th percentile
/// and maximum, overall, by matrix set (files / generated), by kind (ours / vendor / plan) and,
/// with --per-config, by configuration. Then, per matrix and precision, whether the two runs agree
/// on the fastest configuration (the same one, or a tie within the measured spreads in run B) and
/// how much slower run A's favourite is in run B (regret).
///
/// No model can be judged more accurate than this floor, and no recommendation can be right more
/// often than the runs agree.
///
/// Examples:
///   sparsecast evaluate --corpus ../shared/matrices/suitesparse --backend cuda --no-profile --out a
///   sparsecast evaluate --corpus ../shared/matrices/suitesparse --backend cuda --no-profile --out b
///   sparsecast noise a b
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// First evaluation directory (holding results.jsonl), or a results.jsonl file.
    run_a: PathBuf,
    /// Second evaluation directory or results.jsonl.
    run_b: PathBuf,
    /// The measured time compared.
    #[arg(long, value_enum, default_value_t = StatArg::Median)]
    statistic: StatArg,
    /// Also list every configuration.
    #[arg(long)]
    per_config: bool,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum StatArg {
    Median,
    WarmMean,
}

fn load(path: &Path) -> anyhow::Result<Vec<crate::evaluate::record::Record>> {
    let file = if path.is_dir() {
        path.join(RESULTS)
    } else {
        path.to_path_buf()
    };
    anyhow::ensure!(
        file.is_file(),
        "{}: no such results file (expected an `evaluate --out` directory or its {RESULTS})",
        file.display()
    );
    let loaded = store::load(&file).with_context(|| format!("reading {}", file.display()))?;
    for w in loaded.warnings {
        eprintln!("warning: {}: {w}", file.display());
    }
    Ok(loaded.records)
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let statistic = match a.statistic {
        StatArg::Median => Statistic::Median,
        StatArg::WarmMean => Statistic::WarmMean,
    };
    let (ra, rb) = (load(&a.run_a)?, load(&a.run_b)?);
    let report = noise::compare(&ra, &rb, statistic);
    anyhow::ensure!(
        report.all.is_some(),
        "no configuration was measured in both runs ({} and {} records)",
        ra.len(),
        rb.len()
    );
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print(&report, a.per_config);
    }
    Ok(())
}

fn pct(v: f64) -> String {
    format!("{:.2} %", v * 100.0)
}

fn spread_table(title: &str, rows: Vec<(String, &Spread)>) {
    let mut t = common::table(&[title, "n", "median", "mean", "p90", "max", "worst"]);
    for (name, s) in rows {
        t.add_row(vec![
            name,
            s.n.to_string(),
            pct(s.median),
            pct(s.mean),
            pct(s.p90),
            pct(s.max),
            s.worst.clone(),
        ]);
    }
    println!("{t}");
}

fn print(r: &NoiseReport, per_config: bool) {
    let mut rows: Vec<(String, &Spread)> = Vec::new();
    if let Some(all) = &r.all {
        rows.push(("all".into(), all));
    }
    rows.extend(r.by_set.iter().map(|(k, v)| (format!("set: {k}"), v)));
    rows.extend(r.by_kind.iter().map(|(k, v)| (format!("kind: {k}"), v)));
    spread_table("configurations", rows);
    println!(
        "difference = |a − b| / min(a, b) of each configuration's {} between the two runs{}",
        match r.statistic {
            Statistic::Median => "median",
            Statistic::WarmMean => "warm-up-excluding mean",
        },
        r.median_within_spread
            .map(|s| format!("; median spread within one run (run B): {}", pct(s)))
            .unwrap_or_default()
    );
    if per_config {
        spread_table(
            "configuration",
            r.by_config.iter().map(|(k, v)| (k.clone(), v)).collect(),
        );
    }
    let mut t = common::table(&[
        "set",
        "matrix × precision",
        "same best",
        "tie",
        "same or tie",
        "mean regret",
        "max regret",
    ]);
    for (set, b) in &r.best {
        let share = |k: usize| format!("{k} ({:.1} %)", 100.0 * k as f64 / b.pairs.max(1) as f64);
        t.add_row(vec![
            set.clone(),
            b.pairs.to_string(),
            share(b.same),
            share(b.tie),
            share(b.same + b.tie),
            pct(b.mean_regret),
            format!("{} ({})", pct(b.max_regret.0), b.max_regret.1),
        ]);
    }
    println!("{t}");
    println!(
        "best = the fastest configuration (ours and cuSPARSE) of each run; tie = different but \
         within the spreads in run B; regret = how much slower run A's best is in run B"
    );
}
