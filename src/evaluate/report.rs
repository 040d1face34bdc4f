//! `report.md` and its SVG plots, from records alone (so `--report-only` can regenerate them).
//!
//! Sections, in order: Setup, Matrices, Accuracy, Ranking quality, Speed against cuSPARSE,
//! Skipped and failed configurations. Plots are written beside `report.md` and linked from it.

use super::corpus::short_name;
use super::plots;
use super::record::{ConfigKind, Record, SourceInfo};
use super::stats::{self, AccuracyRow, RankingRow, SpeedRow, SpeedSummary};
use super::RunInfo;
use crate::backend::measure::Status;
use crate::instrument::Statistic;
use crate::{Error, Precision, Result};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// Section headings, in order (tests check for them).
pub const SECTIONS: [&str; 7] = [
    "## Summary",
    "## Setup",
    "## Matrices",
    "## Accuracy",
    "## Ranking quality",
    "## Speed against cuSPARSE",
    "## Skipped and failed configurations",
];

/// Seconds in a readable unit, `–` when not finite.
pub fn fmt_s(s: f64) -> String {
    crate::util::fmt_seconds(s, "–")
}

fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1} %", x * 100.0)
    } else {
        "–".into()
    }
}

/// A file-name-safe slug.
fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Markdown table cell text (pipes escaped, newlines flattened).
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Write `report.md` and the plots into `dir`.
pub fn write(dir: &Path, records: &[Record], info: Option<&RunInfo>) -> Result<()> {
    let mut md = String::new();
    let w = &mut md;
    let fmt_err = |e: std::fmt::Error| Error::Invalid(format!("formatting the report: {e}"));
    (|| -> std::result::Result<(), std::fmt::Error> {
        writeln!(w, "# sparsecast evaluation report\n")?;
        writeln!(
            w,
            "Written by sparsecast {} from `results.jsonl` ({} records). Regenerate with \
             `sparsecast evaluate --report-only --out DIR`.\n",
            env!("CARGO_PKG_VERSION"),
            records.len()
        )?;
        Ok(())
    })()
    .map_err(fmt_err)?;
    let rank = stats::ranking(records);
    summary(w, records, &rank).map_err(fmt_err)?;
    setup(w, records, info).map_err(fmt_err)?;
    matrices(w, records).map_err(fmt_err)?;
    let acc = stats::accuracy(records);
    accuracy(w, dir, records, &acc)?;
    ranking(w, dir, &rank)?;
    let rows = stats::speed_rows(records);
    speed(w, dir, &rows)?;
    skipped(w, records).map_err(fmt_err)?;
    crate::util::write_atomic(&dir.join(super::REPORT), |f| f.write_all(md.as_bytes()))
}

/// The first section: which model is best, by how much, on what data — per precision, the model
/// with the lowest median difference rate over every prediction it made, and the one whose pick
/// is within 5 % of the best most often, each beside the runner-up.
fn summary(w: &mut String, records: &[Record], rank: &[stats::RankingRow]) -> std::fmt::Result {
    writeln!(w, "{}\n", SECTIONS[0])?;
    let matrices: std::collections::BTreeSet<&str> =
        records.iter().map(|r| r.matrix.as_str()).collect();
    let generated = matrices.iter().filter(|m| m.starts_with("gen/")).count();
    writeln!(
        w,
        "- Data: {} matrices ({} files, {generated} generated), {} records.",
        matrices.len(),
        matrices.len() - generated,
        records.len()
    )?;
    // Predictions of a learned model on a matrix of its training families are kept in the
    // records but scored nowhere (record::Record::predicted).
    let mut in_sample: std::collections::BTreeMap<&str, usize> = Default::default();
    for r in records {
        for (m, p) in &r.predictions {
            if p.in_sample {
                *in_sample.entry(m.as_str()).or_default() += 1;
            }
        }
    }
    if !in_sample.is_empty() {
        writeln!(
            w,
            "- Not scored: in-sample predictions (the matrix's family was among the model's \
             training matrices): {}. Every figure below is on matrices each model did not train \
             on; the learned models' cross-validated accuracy is `sparsecast train --folds 5`.",
            in_sample
                .iter()
                .map(|(m, n)| format!("{m} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        )?;
    }
    for precision in stats::precisions(records) {
        let mut acc: Vec<(f64, String, usize)> = stats::models(records)
            .into_iter()
            .filter_map(|m| {
                let mut d: Vec<f64> = stats::pairs(records, &m)
                    .into_iter()
                    .filter(|((p, _), _)| *p == precision)
                    .flat_map(|(_, ps)| ps.into_iter().map(|x| x.rate()))
                    .collect();
                d.sort_by(f64::total_cmp);
                (!d.is_empty()).then(|| (d[d.len() / 2], m, d.len()))
            })
            .collect();
        acc.sort_by(|a, b| a.0.total_cmp(&b.0));
        let line = |v: &[(f64, String, usize)], what: &str| match v {
            [] => format!("no model predicted {what}"),
            [(x, m, n)] => format!("**{m}** ({:.1} % over {n} predictions)", 100.0 * x),
            [(x, m, n), (y, m2, _), ..] => format!(
                "**{m}** ({:.1} % over {n} predictions; next {m2}, {:.1} %)",
                100.0 * x,
                100.0 * y
            ),
        };
        writeln!(
            w,
            "- {precision}, most accurate (median difference rate): {}",
            line(&acc, "anything")
        )?;
        let mut picks: Vec<(f64, String, usize)> = rank
            .iter()
            .filter(|r| r.precision == precision && r.n > 0)
            .filter(|r| !stats::is_tuned_label(&r.model))
            .map(|r| (-(r.below_5 as f64) / r.n as f64, r.model.clone(), r.n))
            .collect();
        picks.sort_by(|a, b| a.0.total_cmp(&b.0));
        let best = match picks.as_slice() {
            [] => "no model ranked any matrix".to_string(),
            [(x, m, n), rest @ ..] => format!(
                "**{m}** (pick within 5 % of the best on {:.1} % of {n} matrices{})",
                -100.0 * x,
                rest.first()
                    .map(|(y, m2, _)| format!("; next {m2}, {:.1} %", -100.0 * y))
                    .unwrap_or_default()
            ),
        };
        writeln!(w, "- {precision}, best ranking: {best}")?;
        // A tuned pick times a shortlist: not a model's ranking, so beside it.
        for r in rank
            .iter()
            .filter(|r| r.precision == precision && r.n > 0 && stats::is_tuned_label(&r.model))
        {
            writeln!(
                w,
                "- {precision}, {} (the fastest measured of the model's {} predicted fastest, \
                 its fastest-predicted cuSPARSE algorithm and the fastest-predicted of each \
                 format those leave out within {:.0} % of the fastest): within 5 % of the best \
                 on {:.1} % of {} matrices",
                r.model,
                crate::model::SHORTLIST,
                100.0 * crate::model::SHORTLIST_BAND,
                100.0 * r.below_5 as f64 / r.n as f64,
                r.n
            )?;
        }
    }
    writeln!(w)
}

fn setup(w: &mut String, records: &[Record], info: Option<&RunInfo>) -> std::fmt::Result {
    writeln!(w, "{}\n", SECTIONS[1])?;
    let mut devices: Vec<String> = records
        .iter()
        .map(|r| format!("{} backend on {}", r.backend, r.device))
        .collect();
    devices.sort();
    devices.dedup();
    for d in &devices {
        writeln!(w, "- Device: {d}")?;
    }
    let mut protocols: Vec<String> = records
        .iter()
        .map(|r| match &r.protocol {
            Some(p) => p.describe(),
            None => format!(
                "the old per-launch protocol: {} runs, the first {} excluded",
                r.runs, r.warmup
            ),
        })
        .collect();
    protocols.sort();
    protocols.dedup();
    for p in protocols {
        writeln!(
            w,
            "- Timing: {p}. The speed comparison uses the median over the timed samples; each \
             model is compared with the statistic it predicts (below). Both the mean and the \
             median, and each configuration's spread (interquartile range of its samples relative \
             to the median), are in `results.jsonl`; differences within the spreads are ties."
        )?;
    }
    let precisions: Vec<&str> = stats::precisions(records)
        .iter()
        .map(|p| p.name())
        .collect();
    writeln!(w, "- Precisions: {}", precisions.join(", "))?;
    let mut ids: Vec<(&str, bool)> = records
        .iter()
        .map(|r| (r.matrix.as_str(), r.matrix.starts_with("gen/")))
        .collect();
    ids.sort();
    ids.dedup();
    let generated = ids.iter().filter(|x| x.1).count();
    writeln!(
        w,
        "- Matrices: {} ({} from files, {} generated)",
        ids.len(),
        ids.len() - generated,
        generated
    )?;
    let models: Vec<String> = stats::models(records)
        .into_iter()
        .map(|m| {
            let what = match stats::model_statistic(records, &m) {
                Statistic::WarmMean => "the warm-up-excluding mean",
                Statistic::Median => "the median",
            };
            format!("`{m}` (predicts {what} of the kept runs)")
        })
        .collect();
    writeln!(
        w,
        "- Models: {}",
        if models.is_empty() {
            "none (no profile given and none embedded in the build)".to_string()
        } else {
            models.join(", ")
        }
    )?;
    let plans = records.iter().any(|r| r.kind == ConfigKind::Plan);
    let optimizer = info
        .and_then(|i| i.invocations.last())
        .map(|i| i.has_optimizer)
        .unwrap_or(plans);
    writeln!(
        w,
        "- Optimizer plans: {}",
        if plans {
            "measured (configurations `plan-<model>`)"
        } else if optimizer {
            "none measured"
        } else {
            "not measured: the optimizer is not part of this build"
        }
    )?;
    let mut by_status: BTreeMap<&str, usize> = BTreeMap::new();
    for r in records {
        *by_status.entry(r.status.name()).or_default() += 1;
    }
    let counts: Vec<String> = by_status.iter().map(|(k, v)| format!("{v} {k}")).collect();
    writeln!(w, "- Records: {}", counts.join(", "))?;
    if let Some(info) = info {
        writeln!(w, "\nRuns that wrote `results.jsonl`:\n")?;
        for inv in &info.invocations {
            writeln!(
                w,
                "- `{}` — {} records written, {} resumed; profile: {}",
                inv.command.join(" "),
                inv.written,
                inv.resumed,
                inv.profile.as_deref().unwrap_or("none")
            )?;
        }
    }
    writeln!(w)
}

fn matrices(w: &mut String, records: &[Record]) -> std::fmt::Result {
    writeln!(w, "{}\n", SECTIONS[2])?;
    writeln!(
        w,
        "| matrix | source | rows | columns | non-zeros | longest row | mean row |"
    )?;
    writeln!(w, "|---|---|---:|---:|---:|---:|---:|")?;
    let mut seen = std::collections::BTreeSet::new();
    let mut sorted: Vec<&Record> = records.iter().collect();
    sorted.sort_by(|a, b| a.matrix.cmp(&b.matrix));
    for r in sorted {
        if !seen.insert(&r.matrix) {
            continue;
        }
        let src = match &r.source {
            SourceInfo::File(p) => format!("file `{}`", p.display()),
            SourceInfo::Generated(spec) => format!(
                "`{}`",
                serde_json::to_string(spec).unwrap_or_else(|_| "?".into())
            ),
            SourceInfo::Recipe(s) => s.clone(),
        };
        // Features of any record of this matrix (f64 preferred: no f32 overflow).
        let f = records
            .iter()
            .filter(|x| x.matrix == r.matrix)
            .filter_map(|x| x.features.as_ref().map(|f| (x.precision, f)))
            .max_by_key(|(p, _)| *p == Precision::F64)
            .map(|x| x.1);
        match f {
            Some(f) => writeln!(
                w,
                "| {} | {} | {} | {} | {} | {} | {:.1} |",
                cell(&r.matrix),
                cell(&src),
                f.nrows,
                f.ncols,
                f.nnz,
                f.max_nnz,
                f.mean_nnz
            )?,
            None => writeln!(
                w,
                "| {} | {} | – | – | – | – | – |",
                cell(&r.matrix),
                cell(&src)
            )?,
        }
    }
    writeln!(w)
}

fn accuracy(w: &mut String, dir: &Path, records: &[Record], rows: &[AccuracyRow]) -> Result<()> {
    let mut s = String::new();
    writeln!(s, "{}\n", SECTIONS[3]).ok();
    writeln!(
        s,
        "Difference rate = |predicted − measured| / measured (004 §5.1), per model, precision and \
         configuration, over the matrices where the configuration was measured and the model \
         predicted it. p90 = the ⌈0.9·n⌉-th smallest. Bars: measured beside predicted time per \
         matrix (as 004 Figs. 13–16); CDF: share of matrices within a difference rate.\n"
    )
    .ok();
    if rows.is_empty() {
        writeln!(
            s,
            "No predictions to evaluate (no model in this evaluation).\n"
        )
        .ok();
        w.push_str(&s);
        return Ok(());
    }
    for model in stats::models(records) {
        writeln!(s, "### Model `{model}`\n").ok();
        writeln!(
            s,
            "| precision | configuration | matrices | mean | median | p90 | max | ≤ 5 % | ≤ 10 % | plot |"
        )
        .ok();
        writeln!(s, "|---|---|---:|---:|---:|---:|---:|---:|---:|---|").ok();
        let pairs = stats::pairs(records, &model);
        for r in rows.iter().filter(|r| r.model == model) {
            let file = format!(
                "accuracy-{}-{}-{}.svg",
                slug(&model),
                r.precision,
                slug(&r.config)
            );
            writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | [bars]({file}) |",
                r.precision,
                r.config,
                r.n,
                pct(r.mean),
                pct(r.median),
                pct(r.p90),
                pct(r.max),
                r.within_5,
                r.within_10
            )
            .ok();
        }
        writeln!(s).ok();
        for ((precision, key), ps) in &pairs {
            let config = stats::config_name(key);
            let file = format!(
                "accuracy-{}-{}-{}.svg",
                slug(&model),
                precision,
                slug(&config)
            );
            let names: Vec<String> = ps.iter().map(|p| short_name(&p.matrix)).collect();
            let m: Vec<f64> = ps.iter().map(|p| p.measured).collect();
            let p: Vec<f64> = ps.iter().map(|p| p.predicted).collect();
            plots::measured_vs_predicted(
                &dir.join(&file),
                &format!("{model}: {config}, {precision} — measured vs predicted"),
                &names,
                &m,
                &p,
            )?;
        }
        for precision in stats::precisions(records) {
            let series: Vec<(String, Vec<f64>)> = pairs
                .iter()
                .filter(|((p, _), _)| *p == precision)
                .map(|((_, key), ps)| {
                    (
                        stats::config_name(key),
                        ps.iter().map(|x| x.rate()).collect(),
                    )
                })
                .collect();
            if series.is_empty() {
                continue;
            }
            let file = format!("cdf-{}-{}.svg", slug(&model), precision);
            plots::error_cdf(
                &dir.join(&file),
                &format!("{model}, {precision}: difference-rate CDF"),
                &series,
            )?;
            writeln!(s, "![{model} {precision} error CDF]({file})\n").ok();
        }
    }
    w.push_str(&s);
    Ok(())
}

fn ranking(w: &mut String, dir: &Path, rows: &[RankingRow]) -> Result<()> {
    let mut s = String::new();
    writeln!(s, "{}\n", SECTIONS[4]).ok();
    writeln!(
        s,
        "Per matrix, the model's pick is the configuration of ours it predicts fastest (among those \
         measured); its slowdown against the fastest of all our measured kernels decides the \
         bucket (as 002 Fig. 2). *Fraction of best* = mean of t(best) / t(pick); *coverage bound* = \
         the same for the best configuration the model covers (a perfect model with this coverage); \
         *pick not run* = matrices where the model's overall favourite could not be measured; \
         *tie with best* = matrices whose pick is the best or within the measured spreads of it.\n"
    )
    .ok();
    if rows.is_empty() {
        writeln!(s, "No ranking to evaluate (no model in this evaluation).\n").ok();
        w.push_str(&s);
        return Ok(());
    }
    writeln!(
        s,
        "| model | precision | matrices | < 5 % | 5–20 % | > 20 % | fraction of best | coverage bound | pick not run | tie with best |"
    )
    .ok();
    writeln!(s, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|").ok();
    for r in rows {
        let share = |k: usize| format!("{k} ({:.0} %)", 100.0 * k as f64 / r.n as f64);
        writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            r.model,
            r.precision,
            r.n,
            share(r.below_5),
            share(r.from_5_to_20),
            share(r.above_20),
            pct(r.mean_fraction),
            pct(r.coverage_bound),
            r.pick_not_run,
            share(r.ties)
        )
        .ok();
    }
    let bars: Vec<(String, [usize; 3])> = rows
        .iter()
        .map(|r| {
            (
                format!("{} {}", r.model, r.precision),
                [r.below_5, r.from_5_to_20, r.above_20],
            )
        })
        .collect();
    plots::ranking_shares(
        &dir.join("ranking.svg"),
        "Predicted-best configuration vs the measured best",
        &bars,
    )?;
    writeln!(s, "\n![ranking quality](ranking.svg)\n").ok();
    w.push_str(&s);
    Ok(())
}

fn speed(w: &mut String, dir: &Path, rows: &[SpeedRow]) -> Result<()> {
    let mut s = String::new();
    writeln!(s, "{}\n", SECTIONS[5]).ok();
    writeln!(
        s,
        "Speed-up = t(best cuSPARSE algorithm) / t(contender), per matrix and precision (> 1: \
         faster than cuSPARSE). Contenders: our best kernel (the fastest of every format and \
         thread mapping, known only after measuring them all), each optimizer plan, and each \
         model's pick (what the tool recommends without measuring).\n"
    )
    .ok();
    let summary: Vec<SpeedSummary> = stats::speed_summary(rows);
    if summary.is_empty() {
        writeln!(
            s,
            "No cuSPARSE measurements in these results (they need `--backend cuda`), so there is \
             no speed-up to report; the per-matrix table lists our best kernel and each model's \
             pick.\n"
        )
        .ok();
    } else {
        writeln!(
            s,
            "| precision | contender | set | matrices | geometric mean | worst (matrix) | best (matrix) | faster on | tie (within spread) |"
        )
        .ok();
        writeln!(s, "|---|---|---|---:|---:|---|---|---:|---:|").ok();
        for x in &summary {
            writeln!(
                s,
                "| {} | {} | {} | {} | {:.2}× | {:.2}× ({}) | {:.2}× ({}) | {} | {} |",
                x.precision,
                x.contender,
                x.set,
                x.n,
                x.geomean,
                x.worst.0,
                short_name(&x.worst.1),
                x.best.0,
                short_name(&x.best.1),
                x.faster,
                x.ties
            )
            .ok();
        }
        writeln!(s).ok();
        for precision in [Precision::F32, Precision::F64] {
            let prow: Vec<&SpeedRow> = rows
                .iter()
                .filter(|r| r.precision == precision && r.best_vendor.is_some())
                .collect();
            if prow.is_empty() {
                continue;
            }
            let owned: Vec<SpeedRow> = prow.iter().map(|r| (*r).clone()).collect();
            let names: Vec<String> = owned.iter().map(|r| short_name(&r.matrix)).collect();
            let series: Vec<(String, Vec<Option<f64>>)> = stats::contenders(&owned)
                .into_iter()
                .map(|c| {
                    let v = owned
                        .iter()
                        .map(|r| {
                            let vendor = r.best_vendor.as_ref()?.1;
                            stats::contender_time(r, &c).map(|t| vendor / t)
                        })
                        .collect();
                    (c, v)
                })
                .collect();
            let file = format!("speed-{precision}.svg");
            plots::speedups(
                &dir.join(&file),
                &format!("Speed-up over the best cuSPARSE algorithm, {precision}"),
                &names,
                &series,
            )?;
            writeln!(s, "![speed-up {precision}]({file})\n").ok();
        }
    }
    writeln!(s, "### Per matrix\n").ok();
    let models: Vec<String> = {
        let set: std::collections::BTreeSet<&String> =
            rows.iter().flat_map(|r| r.picks.keys()).collect();
        set.into_iter().cloned().collect()
    };
    let plans: Vec<String> = {
        let set: std::collections::BTreeSet<&String> =
            rows.iter().flat_map(|r| r.plans.keys()).collect();
        set.into_iter().cloned().collect()
    };
    let mut header =
        "| matrix | precision | non-zeros | best ours | best cuSPARSE | speed-up".to_string();
    let mut align = "|---|---|---:|---|---|---:".to_string();
    for p in &plans {
        header.push_str(&format!(" | {p}"));
        align.push_str("|---:");
    }
    for m in &models {
        header.push_str(&format!(" | {m} pick"));
        align.push_str("|---");
    }
    writeln!(s, "{header} |\n{align}|").ok();
    let opt_named = |x: &Option<(String, f64)>| {
        x.as_ref()
            .map_or("–".to_string(), |(c, t)| format!("{c} {}", fmt_s(*t)))
    };
    for r in rows {
        let speedup = match (&r.best_vendor, &r.best_ours) {
            (Some(v), Some(o)) => format!("{:.2}×", v.1 / o.1),
            _ => "–".into(),
        };
        let mut line = format!(
            "| {} | {} | {} | {} | {} | {}",
            short_name(&r.matrix),
            r.precision,
            r.nnz.map_or("–".into(), |n| n.to_string()),
            opt_named(&r.best_ours),
            opt_named(&r.best_vendor),
            speedup
        );
        for p in &plans {
            line.push_str(&format!(
                " | {}",
                r.plans.get(p).map_or("–".into(), |t| fmt_s(*t))
            ));
        }
        for m in &models {
            line.push_str(&format!(" | {}", opt_named(&r.picks.get(m).cloned())));
        }
        writeln!(s, "{line} |").ok();
    }
    writeln!(s).ok();
    w.push_str(&s);
    Ok(())
}

fn skipped(w: &mut String, records: &[Record]) -> std::fmt::Result {
    writeln!(w, "{}\n", SECTIONS[6])?;
    let bad: Vec<&Record> = records.iter().filter(|r| r.status != Status::Ok).collect();
    if bad.is_empty() {
        return writeln!(w, "None: every configuration was measured.");
    }
    // Counts per configuration and status first, then every record with its reason.
    let mut counts: BTreeMap<((usize, String), &str), usize> = BTreeMap::new();
    for r in &bad {
        *counts
            .entry((stats::config_order(&r.config), r.status.name()))
            .or_default() += 1;
    }
    writeln!(w, "| configuration | status | records |")?;
    writeln!(w, "|---|---|---:|")?;
    for ((key, status), n) in &counts {
        writeln!(w, "| {} | {status} | {n} |", stats::config_name(key))?;
    }
    writeln!(
        w,
        "\n<details><summary>All {} records with their reasons</summary>\n",
        bad.len()
    )?;
    writeln!(
        w,
        "| matrix | precision | configuration | status | reason |"
    )?;
    writeln!(w, "|---|---|---|---|---|")?;
    for r in bad {
        writeln!(
            w,
            "| {} | {} | {} | {} | {} |",
            cell(&r.matrix),
            r.precision,
            r.config,
            r.status.name(),
            cell(r.reason.as_deref().unwrap_or(""))
        )?;
    }
    writeln!(w, "\n</details>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::record::{test_record, Prediction};
    use crate::evaluate::REPORT;

    fn rec(matrix: &str, precision: Precision, config: &str, t: f64, pred: Option<f64>) -> Record {
        let kind = if config.starts_with("cusparse") {
            ConfigKind::Vendor
        } else if config.starts_with("plan-") {
            ConfigKind::Plan
        } else {
            ConfigKind::Ours
        };
        let mut r = test_record(matrix, precision, config, kind, Some(t));
        r.max_rel_error = Some(0.0);
        r.predictions = pred
            .map(|p| {
                [(
                    "analytical".to_string(),
                    Prediction {
                        seconds: Some(p),
                        statistic: Statistic::WarmMean,
                        note: None,
                        in_sample: false,
                        picked: false,
                        uncertainty_s: None,
                    },
                )]
                .into()
            })
            .unwrap_or_default();
        r
    }

    #[test]
    fn a_gpu_report_compares_against_cusparse() {
        let mut recs = Vec::new();
        for (m, scale) in [("c/a.mtx", 1.0), ("c/b.mtx.gz", 2.0), ("gen/s", 4.0)] {
            for p in [Precision::F32, Precision::F64] {
                recs.push(rec(m, p, "csr-vector", 2e-5 * scale, Some(2.2e-5 * scale)));
                recs.push(rec(m, p, "ell", 1e-5 * scale, Some(1.5e-5 * scale)));
                recs.push(rec(m, p, "cusparse-csr-alg2", 1.6e-5 * scale, None));
                recs.push(rec(
                    m,
                    p,
                    "plan-analytical",
                    0.8e-5 * scale,
                    Some(0.9e-5 * scale),
                ));
            }
        }
        let mut refused = rec("gen/s", Precision::F64, "dia", 1.0, None);
        refused.status = Status::Skipped;
        refused.reason = Some("format dia: too many | diagonals".into());
        recs.push(refused);
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &recs, None).unwrap();
        let md = std::fs::read_to_string(dir.path().join(REPORT)).unwrap();
        for s in SECTIONS {
            assert!(md.contains(s), "{s}");
        }
        // The summary names the best model of each precision, with its figure.
        assert!(
            md.contains("- f64, most accurate (median difference rate): **analytical** ("),
            "{md}"
        );
        assert!(
            md.contains("- f64, best ranking: **analytical** (pick within 5 %"),
            "{md}"
        );
        // ell is 1.6× faster than cuSPARSE everywhere, the plan 2×.
        assert!(md.contains("| f64 | best ours | all | 3 | 1.60× |"), "{md}");
        assert!(
            md.contains("| f64 | plan-analytical | all | 3 | 2.00× |"),
            "{md}"
        );
        assert!(
            md.contains("| f32 | analytical pick | all | 3 | 1.60× |"),
            "{md}"
        );
        // Files and generated matrices are also summarized apart.
        assert!(
            md.contains("| f64 | best ours | files | 2 | 1.60× |"),
            "{md}"
        );
        assert!(
            md.contains("| f64 | best ours | generated | 1 | 1.60× |"),
            "{md}"
        );
        // Every configuration's accuracy row: ell is off by 50 %, csr-vector by 10 %.
        assert!(md.contains("| f64 | ell | 3 | 50.0 % | 50.0 % | 50.0 % | 50.0 % | 0 | 0 |"));
        assert!(
            md.contains("| f64 | plan-analytical | 3 | 12.5 % |"),
            "{md}"
        );
        assert!(md.contains("Optimizer plans: measured"));
        assert!(md.contains("too many \\| diagonals"), "pipes escaped");
        for f in [
            "speed-f32.svg",
            "speed-f64.svg",
            "ranking.svg",
            "cdf-analytical-f64.svg",
        ] {
            let s = std::fs::read_to_string(dir.path().join(f)).unwrap();
            assert!(s.starts_with("<svg"), "{f}");
            assert!(md.contains(&format!("({f})")), "{f} not linked");
        }
        assert!(dir
            .path()
            .join("accuracy-analytical-f64-plan-analytical.svg")
            .exists());
    }

    #[test]
    fn in_sample_predictions_are_kept_but_scored_nowhere() {
        let mut recs = Vec::new();
        for (m, good) in [("c/a.mtx", true), ("c/b.mtx", false)] {
            for p in [Precision::F32, Precision::F64] {
                // "a" is predicted exactly (as a model that saw it would), "b" 50 % off.
                let t = if good { 1e-5 } else { 1.5e-5 };
                let mut r = rec(m, p, "csr-vector", 1e-5, Some(t));
                r.predictions.get_mut("analytical").unwrap().in_sample = good;
                recs.push(r);
            }
        }
        assert_eq!(recs[0].predicted("analytical"), None);
        assert_eq!(recs[2].predicted("analytical"), Some(1.5e-5));
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &recs, None).unwrap();
        let md = std::fs::read_to_string(dir.path().join(REPORT)).unwrap();
        assert!(md.contains("Not scored: in-sample predictions"), "{md}");
        assert!(md.contains("analytical 2"), "{md}");
        // Only the held-out matrix is scored: 50 % over one prediction per precision.
        assert!(
            md.contains("**analytical** (50.0 % over 1 predictions)"),
            "{md}"
        );
    }

    #[test]
    fn a_family_is_a_files_stem_or_a_kronecker_expansions_base() {
        use crate::evaluate::record::{family_of, SourceInfo};
        let file = SourceInfo::File("/x/mats/cage11.mtx.gz".into());
        assert_eq!(family_of("mats/cage11.mtx.gz", &file), "cage11");
        let kron: crate::matrix::generate::GeneratorSpec = serde_json::from_str(
            r#"{"family":"kronecker","matrix":"/root/mats/G3_circuit.mtx.gz","pattern":{"kind":"dense","k":2},"seed":1}"#,
        )
        .unwrap();
        assert_eq!(
            family_of("gen/kron-G3_circuit-to3e7", &SourceInfo::Generated(kron)),
            "G3_circuit"
        );
        let gen: crate::matrix::generate::GeneratorSpec =
            serde_json::from_str(r#"{"family":"stencil","stencil":"2d5","n":2048}"#).unwrap();
        assert_eq!(
            family_of("gen/stencil2d5-2048", &SourceInfo::Generated(gen)),
            "gen/stencil2d5-2048"
        );
    }
}
