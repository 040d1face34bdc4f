//! `sparsecast score`: a profile's models, as they are, against the measured times of training
//! tables — 001's comparison of the statistical models without a second GPU session.

use crate::corpus::table::{self, TableRow};
use crate::evaluate::record::Record;
use crate::evaluate::stats::{self, AccuracyRow};
use crate::learn::{cv, dataset::matrix_set};
use crate::profile::Profile;
use anyhow::{bail, Context};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Score a profile's models on measured training tables, without training anything.
///
/// Every model of the profile (or of --models) predicts every configuration it covers of every
/// row of the tables (`sparsecast collect`, .jsonl or .jsonl.gz), and its prediction is compared
/// with the row's measured median: the difference rate |predicted − measured| / measured,
/// summarized per set of matrices, precision, configuration and model (mean, median, 90th
/// percentile, share within 5 % and 10 %). The sets: `files` (the real matrices), `large` (the
/// generated and Kronecker-expanded ones with at least --min-nnz non-zeros) and `all`.
/// The models were not fitted on the tables, so every row is held out. Learned models (lr, gb,
/// knn, sparsecast) named in --models are scored only on the rows of matrices they never
/// trained on (the others are left out and counted); `train --score` scores them with the
/// cross-validation report's figures (ranking, the second stage's pick, against cuSPARSE), and
/// `train --folds` cross-validates them on their own tables.
///
/// Example (001's comparison: constant-row vs normal vs uniform on its four kernels):
///   sparsecast score --profile h200.json --data data/corpus/h200.jsonl.gz \
///     --models analytical,statistical-constant,statistical-normal,statistical-uniform \
///     --configs csr-t16,csr-scalar,ell,jad --markdown
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// The profile whose models are scored.
    #[arg(long)]
    profile: PathBuf,
    /// Training tables of the profile's device.
    #[arg(long, num_args = 1.., required = true)]
    data: Vec<PathBuf>,
    /// Models to score (default: every model of the profile not trained on tables).
    #[arg(long, value_delimiter = ',')]
    models: Option<Vec<String>>,
    /// Configurations to score (table labels, e.g. csr-t16,ell; default: all).
    #[arg(long, value_delimiter = ',')]
    configs: Option<Vec<String>>,
    /// Non-zeros from which a generated matrix counts as `large`.
    #[arg(long, default_value_t = 1_000_000)]
    min_nnz: usize,
    /// Print a Markdown table (for docs/ACCURACY.md).
    #[arg(long, conflicts_with = "json")]
    markdown: bool,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// One line of the score: a model on one set, precision and configuration.
#[derive(serde::Serialize)]
struct Line {
    set: &'static str,
    #[serde(flatten)]
    acc: AccuracyRowJson,
}

#[derive(serde::Serialize)]
struct AccuracyRowJson {
    model: String,
    precision: crate::Precision,
    config: String,
    n: usize,
    mean: f64,
    median: f64,
    p90: f64,
    within_5: f64,
    within_10: f64,
}

impl From<AccuracyRow> for AccuracyRowJson {
    fn from(a: AccuracyRow) -> Self {
        let n = a.n.max(1) as f64;
        AccuracyRowJson {
            within_5: a.within_5 as f64 / n,
            within_10: a.within_10 as f64 / n,
            model: a.model,
            precision: a.precision,
            config: a.config,
            n: a.n,
            mean: a.mean,
            median: a.median,
            p90: a.p90,
        }
    }
}

/// One Markdown row per set, precision and configuration, one column per model:
/// mean / median / p90 of the difference rate, then the shares within 5 % and 10 %.
fn print_markdown(lines: &[Line]) {
    let mut models: Vec<&str> = lines.iter().map(|l| l.acc.model.as_str()).collect();
    models.dedup();
    let mut seen = std::collections::BTreeSet::new();
    models.retain(|m| seen.insert(*m));
    let mut rows: BTreeMap<(usize, String, String), BTreeMap<&str, String>> = BTreeMap::new();
    let order = |s: &str| {
        ["files", "large", "all"]
            .iter()
            .position(|x| *x == s)
            .unwrap_or(3)
    };
    for l in lines {
        let a = &l.acc;
        rows.entry((order(l.set), a.precision.to_string(), a.config.clone()))
            .or_default()
            .insert(
                &a.model,
                format!(
                    "{:.1} / {:.1} / {:.1} %, {:.0} / {:.0} % (n {})",
                    100.0 * a.mean,
                    100.0 * a.median,
                    100.0 * a.p90,
                    100.0 * a.within_5,
                    100.0 * a.within_10,
                    a.n
                ),
            );
    }
    println!(
        "| set | precision | kernel | {} |",
        models
            .iter()
            .map(|m| format!("{m} (mean / median / p90, ≤ 5 / ≤ 10 %)"))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!("|{}", "---|".repeat(3 + models.len()));
    for ((set, precision, config), by_model) in &rows {
        let cells: Vec<&str> = models
            .iter()
            .map(|m| by_model.get(m).map_or("n/a", |s| s.as_str()))
            .collect();
        let set = ["files", "large", "all"].get(*set).copied().unwrap_or("?");
        println!("| {set} | {precision} | {config} | {} |", cells.join(" | "));
    }
}

/// The set of a record's matrix: `files`, `large` or `None` (a small generated one).
fn set_of(r: &Record, nnz: &BTreeMap<&str, usize>, min_nnz: usize) -> Option<&'static str> {
    match matrix_set(&r.matrix) {
        "files" => Some("files"),
        _ if nnz.get(r.matrix.as_str()).is_some_and(|&n| n >= min_nnz) => Some("large"),
        _ => None,
    }
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let profile =
        Profile::load(&a.profile).with_context(|| format!("reading {}", a.profile.display()))?;
    let rows: Vec<TableRow> = table::read_all(&a.data)?;
    if let Some(r) = rows.iter().find(|r| !profile.matches_device(&r.device)) {
        bail!(
            "the profile was measured on {}, the table's {} on {}: score a profile on its own \
             device's tables",
            profile.device_name,
            r.matrix,
            r.device
        );
    }
    let learned: Vec<&str> = crate::learn::learners().iter().map(|l| l.name()).collect();
    let mut sections = Vec::new();
    for s in &profile.precisions {
        let others = s
            .models
            .iter()
            .filter(|m| match &a.models {
                Some(names) => names.contains(&m.name),
                None => !learned.contains(&m.model.family()),
            })
            .map(|m| (m.name.clone(), m.model.clone()))
            .collect();
        sections.push(cv::Section {
            precision: s.precision,
            bounds: s.bounds.clone(),
            others,
        });
    }
    if let Some(names) = &a.models {
        let has = |n: &String| {
            profile
                .precisions
                .iter()
                .any(|s| s.models.iter().any(|m| &m.name == n))
        };
        let (found, missing): (Vec<&String>, Vec<&String>) = names.iter().partition(|n| has(n));
        if found.is_empty() {
            bail!("the profile has none of the models {}", names.join(", "));
        }
        for n in missing {
            eprintln!("warning: the profile has no model {n}: not scored");
        }
    }
    // A learned model named in --models is scored only on matrices it never trained on.
    let trained = |r: &TableRow| {
        profile.trained_on(r.precision, &r.family, |m| {
            a.models.as_ref().is_some_and(|n| n.contains(&m.name))
        })
    };
    let total = rows.len();
    let rows: Vec<TableRow> = rows.into_iter().filter(|r| !trained(r)).collect();
    if rows.len() < total {
        eprintln!(
            "note: {} of {total} rows left out: the learned models scored trained on their \
             matrices (`train --score` gives their full report on the others)",
            total - rows.len()
        );
    }
    if rows.is_empty() {
        bail!("the models scored trained on every row: nothing held out to score them on");
    }
    let outcome = cv::run(&rows, &[], &sections, 2, false, &|_| {})?;
    let nnz: BTreeMap<&str, usize> = rows
        .iter()
        .map(|r| (r.matrix.as_str(), r.features.nnz))
        .collect();
    let keep = |r: &Record| a.configs.as_ref().map_or(true, |c| c.contains(&r.config));
    let mut lines = Vec::new();
    for set in ["files", "large", "all"] {
        let recs: Vec<Record> = outcome
            .records
            .iter()
            .filter(|r| keep(r))
            .filter(|r| set == "all" || set_of(r, &nnz, a.min_nnz) == Some(set))
            .cloned()
            .collect();
        lines.extend(stats::accuracy(&recs).into_iter().map(|acc| Line {
            set,
            acc: acc.into(),
        }));
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&lines)?);
        return Ok(());
    }
    let pct = |x: f64| format!("{:.1} %", 100.0 * x);
    let header = [
        "set",
        "precision",
        "config",
        "model",
        "n",
        "mean",
        "median",
        "p90",
        "≤ 5 %",
        "≤ 10 %",
    ];
    let cells = |l: &Line| {
        vec![
            l.set.to_string(),
            l.acc.precision.to_string(),
            l.acc.config.clone(),
            l.acc.model.clone(),
            l.acc.n.to_string(),
            pct(l.acc.mean),
            pct(l.acc.median),
            pct(l.acc.p90),
            pct(l.acc.within_5),
            pct(l.acc.within_10),
        ]
    };
    if a.markdown {
        print_markdown(&lines);
    } else {
        let mut t = super::common::table(&header);
        for l in &lines {
            t.add_row(cells(l));
        }
        println!("{t}");
    }
    println!(
        "{} rows of {}; sets: files = real matrices, large = generated or expanded with ≥ {} \
         non-zeros",
        rows.len(),
        profile.device_name,
        a.min_nnz
    );
    Ok(())
}
