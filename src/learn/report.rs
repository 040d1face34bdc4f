//! The cross-validation report: accuracy (002 Fig. 1), ranking (002 Fig. 2), speed against
//! cuSPARSE and overhead (002 Table 4), from the held-out records of [`super::cv`], through the
//! evaluation's statistics ([`crate::evaluate::stats`], whose module documentation defines every
//! figure), overall and by matrix set (`files`, `kron/`, `gen/`).

use super::cv::{Outcome, Overhead};
use super::dataset::matrix_set;
use crate::evaluate::record::Record;
use crate::evaluate::stats;
use crate::Precision;
use serde::Serialize;

/// Difference-rate statistics of one model on one set of held-out predictions.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Accuracy {
    pub model: String,
    pub precision: Precision,
    /// `all`, `files`, `kron` or `gen`.
    pub set: String,
    /// A configuration label, or `all`.
    pub config: String,
    pub n: usize,
    pub median: f64,
    pub mean: f64,
    pub p90: f64,
    /// Share of predictions within 5 % of the measurement.
    pub within_5: f64,
    /// Share within 10 %.
    pub within_10: f64,
    /// Share of the predictions stated with an uncertainty whose measurement lies within it
    /// (`|pred − meas| ≤` the stated one-sigma); `None` where the model states none.
    pub within_sigma: Option<f64>,
}

/// Ranking quality of one model (002 Fig. 2).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ranking {
    pub model: String,
    pub precision: Precision,
    pub set: String,
    /// Matrices with a pick.
    pub n: usize,
    /// Shares of matrices whose pick is < 5 %, 5–20 %, > 20 % slower than the best.
    pub below_5: f64,
    pub from_5_to_20: f64,
    pub above_20: f64,
    /// Mean of `t(best) / t(pick)`.
    pub mean_fraction: f64,
    /// Matrices whose unrestricted pick was not measured.
    pub pick_not_run: usize,
}

/// The pick's speed against the best cuSPARSE algorithm.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Speed {
    /// `<model> pick` or `best ours`.
    pub contender: String,
    pub precision: Precision,
    pub n: usize,
    /// Geometric mean of `t(best cuSPARSE) / t(pick)`.
    pub geomean: f64,
    /// The smallest, and its matrix.
    pub min: f64,
    pub min_matrix: String,
}

/// Everything the cross-validation reports.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Report {
    pub folds: usize,
    pub accuracy: Vec<Accuracy>,
    pub accuracy_by_config: Vec<Accuracy>,
    pub ranking: Vec<Ranking>,
    pub speed: Vec<Speed>,
    pub overhead: Vec<Overhead>,
}

fn accuracy_of(records: &[Record], set: &str, pooled: bool) -> Vec<Accuracy> {
    let recs: Vec<Record> = records
        .iter()
        .filter(|r| set == "all" || matrix_set(&r.matrix) == set)
        .map(|r| {
            let mut r = r.clone();
            if pooled {
                r.config = "all".into();
            }
            r
        })
        .collect();
    stats::accuracy(&recs)
        .into_iter()
        .map(|a| Accuracy {
            within_sigma: (a.with_sigma > 0).then(|| a.within_sigma as f64 / a.with_sigma as f64),
            within_5: a.within_5 as f64 / a.n.max(1) as f64,
            within_10: a.within_10 as f64 / a.n.max(1) as f64,
            model: a.model,
            precision: a.precision,
            set: set.to_string(),
            config: a.config,
            n: a.n,
            median: a.median,
            mean: a.mean,
            p90: a.p90,
        })
        .collect()
}

fn ranking_of(records: &[Record], set: &str) -> Vec<Ranking> {
    let recs: Vec<Record> = records
        .iter()
        .filter(|r| set == "all" || matrix_set(&r.matrix) == set)
        .cloned()
        .collect();
    stats::ranking(&recs)
        .into_iter()
        .map(|r| {
            let n = r.n.max(1) as f64;
            Ranking {
                below_5: r.below_5 as f64 / n,
                from_5_to_20: r.from_5_to_20 as f64 / n,
                above_20: r.above_20 as f64 / n,
                model: r.model,
                precision: r.precision,
                set: set.to_string(),
                n: r.n,
                mean_fraction: r.mean_fraction,
                pick_not_run: r.pick_not_run,
            }
        })
        .collect()
}

/// The sets present among the records, `all` first.
fn sets(records: &[Record]) -> Vec<&'static str> {
    let mut out = vec!["all"];
    for s in ["files", "kron", "gen"] {
        if records.iter().any(|r| matrix_set(&r.matrix) == s) {
            out.push(s);
        }
    }
    out
}

/// Summarize a cross-validation (`folds` 0: the stored models scored as they are,
/// `train --score`).
pub fn summarize(outcome: &Outcome, folds: usize) -> Report {
    let records = &outcome.records;
    let sets = sets(records);
    let rows = stats::speed_rows(records);
    let mut speed = Vec::new();
    for precision in stats::precisions(records) {
        for c in stats::contenders(&rows) {
            let s = stats::speedups(&rows, precision, &c);
            let Some(g) = stats::geomean(&s.iter().map(|x| x.1).collect::<Vec<_>>()) else {
                continue;
            };
            let (m, v) = s
                .iter()
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map_or(("", f64::NAN), |x| (x.0, x.1));
            speed.push(Speed {
                contender: c.clone(),
                precision,
                n: s.len(),
                geomean: g,
                min: v,
                min_matrix: m.to_string(),
            });
        }
    }
    Report {
        folds,
        accuracy: sets
            .iter()
            .flat_map(|s| accuracy_of(records, s, true))
            .collect(),
        accuracy_by_config: accuracy_of(records, "all", false),
        ranking: sets.iter().flat_map(|s| ranking_of(records, s)).collect(),
        speed,
        overhead: outcome.overhead.clone(),
    }
}

fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1} %", 100.0 * x)
    } else {
        "-".into()
    }
}

fn table(out: &mut String, header: &[&str], rows: Vec<Vec<String>>) {
    out.push_str(&format!("| {} |\n", header.join(" | ")));
    out.push_str(&format!("|{}\n", "---|".repeat(header.len())));
    for r in rows {
        out.push_str(&format!("| {} |\n", r.join(" | ")));
    }
    out.push('\n');
}

fn accuracy_rows(a: &[Accuracy], key: fn(&Accuracy) -> String) -> Vec<Vec<String>> {
    a.iter()
        .map(|a| {
            vec![
                a.model.clone(),
                a.precision.to_string(),
                key(a),
                a.n.to_string(),
                pct(a.median),
                pct(a.mean),
                pct(a.p90),
                pct(a.within_5),
                pct(a.within_10),
                a.within_sigma.map_or_else(|| "—".to_string(), pct),
            ]
        })
        .collect()
}

/// The report as Markdown (what `train` prints and `--report` writes).
pub fn markdown(r: &Report) -> String {
    let mut out = String::new();
    if r.folds == 0 {
        out.push_str(
            "Figures of the profile's models as stored (`train --score`), on the rows of matrices \
             none of its learned models trained on (no family of their training tables); each \
             model only on the configurations it covers. Difference rate = |pred − meas| / \
             meas; within stated ±σ = share of the predictions whose measurement lies within the \
             uncertainty the model states with them (`predict`'s `± x %`).\n\n",
        );
    } else {
        out.push_str(&format!(
            "Held-out figures of {}-fold cross-validation grouped by matrix family (a real matrix \
             and its Kronecker expansions are one family); models not trained on the table are \
             scored on every row, and only on the configurations they cover. Difference rate = \
             |pred − meas| / meas; within stated ±σ = share of the predictions whose measurement \
             lies within the uncertainty the model states with them (`predict`'s `± x %`).\n\n",
            r.folds
        ));
    }
    out.push_str("## Accuracy (002 Fig. 1), every configuration pooled\n\n");
    let h = [
        "model",
        "precision",
        "set",
        "n",
        "median",
        "mean",
        "p90",
        "≤ 5 %",
        "≤ 10 %",
        "within stated ±σ",
    ];
    table(&mut out, &h, accuracy_rows(&r.accuracy, |a| a.set.clone()));
    out.push_str("## Ranking (002 Fig. 2): the pick's slowdown against the best measured\n\n");
    let rows = r
        .ranking
        .iter()
        .map(|x| {
            vec![
                x.model.clone(),
                x.precision.to_string(),
                x.set.clone(),
                x.n.to_string(),
                pct(x.below_5),
                pct(x.from_5_to_20),
                pct(x.above_20),
                pct(x.mean_fraction),
                x.pick_not_run.to_string(),
            ]
        })
        .collect();
    let h = [
        "model",
        "precision",
        "set",
        "matrices",
        "< 5 %",
        "5–20 %",
        "> 20 %",
        "fraction of best",
        "pick not run",
    ];
    table(&mut out, &h, rows);
    if !r.speed.is_empty() {
        out.push_str("## Speed against the best cuSPARSE algorithm (t(cuSPARSE) / t(x))\n\n");
        let rows = r
            .speed
            .iter()
            .map(|s| {
                vec![
                    s.contender.clone(),
                    s.precision.to_string(),
                    s.n.to_string(),
                    format!("{:.3}×", s.geomean),
                    format!("{:.3}× ({})", s.min, s.min_matrix),
                ]
            })
            .collect();
        table(
            &mut out,
            &["contender", "precision", "matrices", "geomean", "min"],
            rows,
        );
    }
    out.push_str("## Overhead (002 Table 4)\n\n");
    let rows = r
        .overhead
        .iter()
        .map(|o| {
            vec![
                o.model.clone(),
                o.precision.to_string(),
                o.train_s
                    .map_or("-".into(), |s| format!("{:.1} ms", 1e3 * s)),
                format!("{:.3} ms", 1e3 * o.predict_s),
                format!("{:.0}", o.configs),
            ]
        })
        .collect();
    table(
        &mut out,
        &[
            "model",
            "precision",
            "training (K − 1 folds)",
            "prediction per matrix",
            "configurations",
        ],
        rows,
    );
    out.push_str("## Accuracy per configuration\n\n");
    let h = [
        "model",
        "precision",
        "configuration",
        "n",
        "median",
        "mean",
        "p90",
        "≤ 5 %",
        "≤ 10 %",
        "within stated ±σ",
    ];
    table(
        &mut out,
        &h,
        accuracy_rows(&r.accuracy_by_config, |a| a.config.clone()),
    );
    out
}
