//! The statistics of the report, computed from records alone.
//!
//! Definitions (where the papers leave room, the choice is written here):
//!
//! * **Measured time** of a configuration: for a model's accuracy and ranking, the statistic
//!   the model predicts ([`super::record::Prediction::statistic`]: the papers'
//!   warm-up-excluding mean, or the median for profiles fitted on noisy hosts); for the speed
//!   comparison, the median over the timed batches ([`Record::time`]). Only records with status
//!   `ok` have one.
//! * **Ties**: each record carries its *spread* (the interquartile range of its timed batches
//!   relative to their median). Two times `a ≤ b` whose difference `b − a` is at most
//!   `a·spread(a) + b·spread(b)` are a tie: the measurement cannot order them.
//! * **Difference rate** = `|predicted − measured| / measured` (004 §5.1). Per model ×
//!   precision × configuration: mean, median (mean of the two middle values for an even count),
//!   90th percentile (nearest rank: the `⌈0.9·n⌉`-th smallest), max, and the counts within 5 % and
//!   10 % (≤, inclusive).
//! * **Ranking quality** (002 §4.3, Fig. 2): per matrix and precision, the model's *pick* is the
//!   configuration of ours with the smallest prediction among those that were measured; its
//!   slowdown is `t(pick) / t(best) − 1`, where `t(best)` is the fastest of **all** our measured
//!   kernels (formats the model does not cover included, as 002 compares against the exhaustive
//!   search). Buckets: `< 5 %`, `5–20 %`, `> 20 %` (half-open: `[0, 5)`, `[5, 20]`, `(20, ∞)`).
//!   The *fraction of the best* is `t(best) / t(pick)`, averaged over matrices; the *coverage
//!   bound* is the same fraction for the best configuration the model covers (what a perfect
//!   model with the same coverage would reach). A matrix where the model's unrestricted pick
//!   was not measured (refused or failed) is counted in `pick not run`.
//! * **Tuned pick** (`sparsecast+tune`, our model only): of the model's shortlist — its
//!   [`crate::model::SHORTLIST`] fastest predictions among the measured configurations, its
//!   fastest-predicted cuSPARSE algorithm and the fastest-predicted configuration of each format
//!   those leave out within [`crate::model::SHORTLIST_BAND`] of the fastest
//!   ([`crate::model::shortlist`]) — the fastest measured: what `predict --tune` recommends. It
//!   is ranked and compared with cuSPARSE as a pick is.
//! * **Speed** (per precision): speed-up = `t(best cuSPARSE algorithm) / t(x)` for x = our best
//!   kernel, each plan, and each model's pick (> 1: faster than cuSPARSE); summarized by the
//!   geometric mean, the worst (smallest) and the best speed-up over the matrices where both were
//!   measured.

use super::record::{ConfigKind, Record};
use crate::backend::measure::Status;
use crate::backend::{KernelConfig, Variant};
use crate::instrument::Statistic;
use crate::Precision;
use std::collections::{BTreeMap, BTreeSet};

/// Order of configurations in every table: our kernels in [`Variant::ours`] order, then the
/// cuSPARSE algorithms, then plans and anything else by name.
pub fn config_order(name: &str) -> (usize, String) {
    Variant::ours()
        .into_iter()
        .chain(Variant::vendor())
        .position(|v| v.name() == name)
        .map_or((usize::MAX, name.to_string()), |i| (i, String::new()))
}

/// Nearest-rank percentile `q ∈ (0, 1]` of sorted values (`None` when empty).
pub fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// Median (mean of the two middle values for an even count).
pub fn median(sorted: &[f64]) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some(0.5 * (sorted[n / 2 - 1] + sorted[n / 2])),
    }
}

/// Geometric mean of positive values (`None` when empty).
pub fn geomean(v: &[f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    Some((v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp())
}

/// Every model name that predicted anything.
pub fn models(records: &[Record]) -> Vec<String> {
    let set: BTreeSet<&String> = records.iter().flat_map(|r| r.predictions.keys()).collect();
    set.into_iter().cloned().collect()
}

/// Every precision present, f32 first.
pub fn precisions(records: &[Record]) -> Vec<Precision> {
    [Precision::F32, Precision::F64]
        .into_iter()
        .filter(|p| records.iter().any(|r| r.precision == *p))
        .collect()
}

/// Records grouped by (matrix, precision), matrices in id order.
pub fn by_matrix(records: &[Record]) -> BTreeMap<(String, Precision), Vec<&Record>> {
    let mut g: BTreeMap<(String, Precision), Vec<&Record>> = BTreeMap::new();
    for r in records {
        g.entry((r.matrix.clone(), r.precision))
            .or_default()
            .push(r);
    }
    g
}

/// Difference-rate statistics of one model, precision and configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct AccuracyRow {
    pub model: String,
    pub precision: Precision,
    pub config: String,
    /// Matrices with both a measurement and a prediction.
    pub n: usize,
    pub mean: f64,
    pub median: f64,
    pub p90: f64,
    pub max: f64,
    pub within_5: usize,
    pub within_10: usize,
    /// Predictions stated with an uncertainty ([`Pair::uncertainty`]).
    pub with_sigma: usize,
    /// Of those, the measurements within it: `|predicted − measured| ≤ uncertainty`.
    pub within_sigma: usize,
}

/// One prediction beside its measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct Pair {
    pub matrix: String,
    pub predicted: f64,
    pub measured: f64,
    /// The one-sigma the model stated with the prediction, seconds, if it stated one.
    pub uncertainty: Option<f64>,
}

impl Pair {
    /// `|predicted − measured| / measured`.
    pub fn rate(&self) -> f64 {
        (self.predicted - self.measured).abs() / self.measured
    }
}

/// The (prediction, measurement) pairs of `model` by (precision, configuration), in matrix order.
pub fn pairs(records: &[Record], model: &str) -> BTreeMap<(Precision, (usize, String)), Vec<Pair>> {
    let mut out: BTreeMap<(Precision, (usize, String)), Vec<Pair>> = BTreeMap::new();
    for r in records {
        if let Some((p, m)) = r.prediction_pair(model) {
            out.entry((r.precision, config_order(&r.config)))
                .or_default()
                .push(Pair {
                    matrix: r.matrix.clone(),
                    predicted: p,
                    measured: m,
                    uncertainty: r.stated_uncertainty(model),
                });
        }
    }
    for v in out.values_mut() {
        v.sort_by(|a, b| a.matrix.cmp(&b.matrix));
    }
    out
}

/// The configuration name behind a [`config_order`] key.
pub fn config_name(key: &(usize, String)) -> String {
    if key.0 == usize::MAX {
        key.1.clone()
    } else {
        Variant::ours()
            .into_iter()
            .chain(Variant::vendor())
            .nth(key.0)
            .map(|v| v.name())
            .unwrap_or_default()
    }
}

/// Accuracy of every model, precision and configuration.
pub fn accuracy(records: &[Record]) -> Vec<AccuracyRow> {
    let mut rows = Vec::new();
    for model in models(records) {
        for ((precision, key), ps) in pairs(records, &model) {
            let mut d: Vec<f64> = ps.iter().map(Pair::rate).collect();
            d.sort_by(f64::total_cmp);
            let n = d.len();
            rows.push(AccuracyRow {
                with_sigma: ps.iter().filter(|p| p.uncertainty.is_some()).count(),
                within_sigma: ps
                    .iter()
                    .filter(|p| {
                        p.uncertainty
                            .is_some_and(|u| (p.predicted - p.measured).abs() <= u)
                    })
                    .count(),
                model: model.clone(),
                precision,
                config: config_name(&key),
                n,
                mean: d.iter().sum::<f64>() / n as f64,
                median: median(&d).unwrap_or(f64::NAN),
                p90: percentile(&d, 0.9).unwrap_or(f64::NAN),
                max: d[n - 1],
                within_5: d.iter().filter(|&&x| x <= 0.05).count(),
                within_10: d.iter().filter(|&&x| x <= 0.10).count(),
            });
        }
    }
    rows
}

/// Ranking quality of one model in one precision.
#[derive(Clone, Debug, PartialEq)]
pub struct RankingRow {
    pub model: String,
    pub precision: Precision,
    /// Matrices with a pick.
    pub n: usize,
    /// Slowdown of the pick `< 5 %`.
    pub below_5: usize,
    /// `5–20 %`.
    pub from_5_to_20: usize,
    /// `> 20 %`.
    pub above_20: usize,
    /// Mean of `t(best) / t(pick)`.
    pub mean_fraction: f64,
    /// Mean of `t(best) / t(best covered)`.
    pub coverage_bound: f64,
    /// Matrices whose unrestricted pick was not measured.
    pub pick_not_run: usize,
    /// Matrices whose pick is the best or ties with it (within the measured spreads).
    pub ties: usize,
}

/// Whether times `a` and `b` with relative spreads `sa` and `sb` are a tie (see the module
/// documentation).
pub fn tie(a: f64, sa: f64, b: f64, sb: f64) -> bool {
    (a - b).abs() <= a * sa.max(0.0) + b * sb.max(0.0)
}

/// The statistic `model`'s predictions are of (the papers' warm mean if it predicted nothing).
pub fn model_statistic(records: &[Record], model: &str) -> Statistic {
    records
        .iter()
        .find_map(|r| r.predictions.get(model).map(|p| p.statistic))
        .unwrap_or_default()
}

/// A model's pick for one matrix: the configuration its second stage recommends where it made
/// one ([`super::record::Prediction::picked`]), else the one it predicts fastest — among those
/// measured, ours or a cuSPARSE algorithm, whatever a user could call (a model that predicts no
/// cuSPARSE algorithm picks among ours).
pub fn pick<'a>(group: &[&'a Record], model: &str) -> Option<&'a Record> {
    let measured = || {
        group
            .iter()
            .filter(|r| r.kind != ConfigKind::Plan && r.status == Status::Ok)
            .filter_map(|r| r.predicted(model).map(|p| (p, *r)))
    };
    measured()
        .find(|(_, r)| r.predictions.get(model).is_some_and(|p| p.picked))
        .or_else(|| measured().min_by(|a, b| a.0.total_cmp(&b.0)))
        .map(|(_, r)| r)
}

/// The label of a model's *tuned* pick in the reports (`sparsecast+tune`): what `predict --tune`
/// recommends — of the model's [`crate::model::shortlist`] (its [`crate::model::SHORTLIST`]
/// fastest predictions, its fastest-predicted cuSPARSE algorithm and the band of formats those
/// leave out, among the configurations measured), the fastest measured.
pub fn tuned(model: &str) -> String {
    format!("{model}{TUNED_SUFFIX}")
}

/// What [`tuned`] appends to a model's name.
pub const TUNED_SUFFIX: &str = "+tune";

/// Whether a report row's label is a tuned pick ([`tuned`]).
pub fn is_tuned_label(label: &str) -> bool {
    label.ends_with(TUNED_SUFFIX)
}

/// The models whose tuned pick the reports show beside their pick: our own (the default of
/// `predict`, and the one `predict --tune` is documented with). The seed models' picks stay
/// as their papers define them.
pub fn is_tuned(model: &str) -> bool {
    model == "sparsecast"
}

/// A model's tuned pick for one matrix ([`tuned`]), the measured times by `statistic`: the
/// fastest measured of the shortlist, its second step's block sizes and the second stage's pick,
/// as `predict --tune` times them.
pub fn tuned_pick<'a>(
    group: &[&'a Record],
    model: &str,
    statistic: Statistic,
) -> Option<&'a Record> {
    let measured: Vec<&Record> = group
        .iter()
        .copied()
        .filter(|r| r.kind != ConfigKind::Plan && r.status == Status::Ok)
        .filter(|r| r.predicted(model).is_some() && r.measured(statistic).is_some())
        .collect();
    // The shortlist, and the second stage's pick where it made one (`predict --tune` times it
    // too).
    let picked = measured
        .iter()
        .copied()
        .filter(|r| r.predictions.get(model).is_some_and(|p| p.picked));
    let mut short = crate::model::shortlist(
        &measured,
        crate::model::SHORTLIST,
        |r| r.predicted(model),
        |r| r.kind == ConfigKind::Vendor,
        |r| r.format.clone(),
    );
    // The second step: the other block sizes of the shortlist's fastest measured of ours.
    short.extend(crate::model::block_size_siblings(
        &measured,
        &short,
        |i| measured[i].measured(statistic),
        |r| r.predicted(model),
        |r| r.kind == ConfigKind::Vendor,
        // A label that does not parse is a key of its own.
        |r| {
            KernelConfig::parse_label(&r.config)
                .map(|c| c.at_default_block_size())
                .map_err(|_| r.config.clone())
        },
    ));
    short
        .into_iter()
        .map(|i| measured[i])
        .chain(picked)
        .min_by(|a, b| {
            let t = |r: &Record| r.measured(statistic).unwrap_or(f64::INFINITY);
            t(a).total_cmp(&t(b))
        })
}

/// The pickers of the reports: each model's pick, and beside our model's its tuned pick —
/// `(label, model, tuned)`.
fn pickers(records: &[Record]) -> Vec<(String, String, bool)> {
    models(records)
        .into_iter()
        .flat_map(|m| {
            let tuned_row = is_tuned(&m).then(|| (tuned(&m), m.clone(), true));
            std::iter::once((m.clone(), m, false)).chain(tuned_row)
        })
        .collect()
}

/// The fastest measured record of `kind` in a group, by `statistic`.
pub fn best_of<'a>(
    group: &[&'a Record],
    kind: ConfigKind,
    statistic: Statistic,
) -> Option<&'a Record> {
    group
        .iter()
        .filter(|r| r.kind == kind)
        .filter_map(|r| r.measured(statistic).map(|t| (t, *r)))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, r)| r)
}

/// Ranking quality of every model and precision.
pub fn ranking(records: &[Record]) -> Vec<RankingRow> {
    let groups = by_matrix(records);
    let mut rows = Vec::new();
    for (label, model, tuned) in pickers(records) {
        let stat = model_statistic(records, &model);
        for precision in precisions(records) {
            let mut row = RankingRow {
                model: label.clone(),
                precision,
                n: 0,
                below_5: 0,
                from_5_to_20: 0,
                above_20: 0,
                mean_fraction: f64::NAN,
                coverage_bound: f64::NAN,
                pick_not_run: 0,
                ties: 0,
            };
            let (mut frac, mut bound) = (Vec::new(), Vec::new());
            for ((_, p), g) in &groups {
                if *p != precision {
                    continue;
                }
                // The best of everything a user could call: ours and cuSPARSE.
                let Some(best_rec) = [ConfigKind::Ours, ConfigKind::Vendor]
                    .into_iter()
                    .filter_map(|k| best_of(g, k, stat))
                    .filter(|r| r.measured(stat).is_some())
                    .min_by(|a, b| {
                        let t = |r: &&Record| r.measured(stat).unwrap_or(f64::INFINITY);
                        t(a).total_cmp(&t(b))
                    })
                else {
                    continue;
                };
                let Some(best) = best_rec.measured(stat) else {
                    continue;
                };
                let unrestricted = g
                    .iter()
                    .filter(|r| r.kind != ConfigKind::Plan)
                    .filter_map(|r| r.predicted(&model).map(|p| (p, *r)))
                    .min_by(|a, b| a.0.total_cmp(&b.0));
                if let Some((_, r)) = unrestricted {
                    if r.measured(stat).is_none() {
                        row.pick_not_run += 1;
                    }
                }
                let picked = match tuned {
                    true => tuned_pick(g, &model, stat),
                    false => pick(g, &model),
                };
                let Some(pick_rec) = picked else {
                    continue;
                };
                let Some(t) = pick_rec.measured(stat) else {
                    continue;
                };
                if tie(t, pick_rec.spread(), best, best_rec.spread()) {
                    row.ties += 1;
                }
                let covered = g
                    .iter()
                    .filter(|r| r.kind == ConfigKind::Ours && r.predicted(&model).is_some())
                    .filter_map(|r| r.measured(stat))
                    .fold(f64::INFINITY, f64::min);
                row.n += 1;
                let slowdown = t / best - 1.0;
                if slowdown < 0.05 {
                    row.below_5 += 1;
                } else if slowdown <= 0.20 {
                    row.from_5_to_20 += 1;
                } else {
                    row.above_20 += 1;
                }
                frac.push(best / t);
                bound.push(best / covered);
            }
            if row.n > 0 {
                row.mean_fraction = frac.iter().sum::<f64>() / frac.len() as f64;
                row.coverage_bound = bound.iter().sum::<f64>() / bound.len() as f64;
                rows.push(row);
            }
        }
    }
    rows
}

/// One matrix's speeds in one precision.
#[derive(Clone, Debug, PartialEq)]
pub struct SpeedRow {
    pub matrix: String,
    pub precision: Precision,
    pub nnz: Option<usize>,
    /// Our fastest kernel: (configuration, seconds).
    pub best_ours: Option<(String, f64)>,
    /// The fastest cuSPARSE algorithm.
    pub best_vendor: Option<(String, f64)>,
    /// Each plan configuration's time, by configuration name.
    pub plans: BTreeMap<String, f64>,
    /// Each model's pick: (configuration, seconds), by model.
    pub picks: BTreeMap<String, (String, f64)>,
    /// The spread of every measured configuration, by configuration name.
    pub spreads: BTreeMap<String, f64>,
}

/// Per-matrix speeds of every precision.
pub fn speed_rows(records: &[Record]) -> Vec<SpeedRow> {
    let pickers = pickers(records);
    by_matrix(records)
        .into_iter()
        .map(|((matrix, precision), g)| {
            let named = |r: &Record| (r.config.clone(), r.time().unwrap_or(f64::NAN));
            SpeedRow {
                nnz: g.iter().find_map(|r| r.features.as_ref().map(|f| f.nnz)),
                best_ours: best_of(&g, ConfigKind::Ours, Statistic::Median).map(named),
                best_vendor: best_of(&g, ConfigKind::Vendor, Statistic::Median).map(named),
                spreads: g
                    .iter()
                    .filter(|r| r.time().is_some())
                    .map(|r| (r.config.clone(), r.spread()))
                    .collect(),
                plans: g
                    .iter()
                    .filter(|r| r.kind == ConfigKind::Plan)
                    .filter_map(|r| r.time().map(|t| (r.config.clone(), t)))
                    .collect(),
                picks: pickers
                    .iter()
                    .filter_map(|(label, m, tuned)| {
                        let r = match tuned {
                            true => tuned_pick(&g, m, Statistic::Median),
                            false => pick(&g, m),
                        };
                        r.map(|r| (label.clone(), named(r)))
                    })
                    .collect(),
                matrix,
                precision,
            }
        })
        .collect()
}

/// Speed-up statistics of one contender against the best cuSPARSE algorithm.
#[derive(Clone, Debug, PartialEq)]
pub struct SpeedSummary {
    pub precision: Precision,
    /// The matrices summarized: `all`, or (where the results hold both) `files` (the corpus)
    /// or `generated`.
    pub set: &'static str,
    /// `best ours`, a plan configuration, or `<model> pick`.
    pub contender: String,
    pub n: usize,
    pub geomean: f64,
    /// Smallest speed-up and its matrix.
    pub worst: (f64, String),
    /// Largest speed-up and its matrix.
    pub best: (f64, String),
    /// Matrices where the contender is faster (speed-up > 1).
    pub faster: usize,
    /// Matrices where the contender and cuSPARSE tie (within their measured spreads).
    pub ties: usize,
}

/// The speed-up of `contender` in each row, where both it and cuSPARSE were measured.
pub fn speedups<'a>(
    rows: impl IntoIterator<Item = &'a SpeedRow>,
    precision: Precision,
    contender: &str,
) -> Vec<(&'a str, f64)> {
    rows.into_iter()
        .filter(|r| r.precision == precision)
        .filter_map(|r| {
            let v = r.best_vendor.as_ref()?.1;
            let t = contender_time(r, contender)?;
            Some((r.matrix.as_str(), v / t))
        })
        .filter(|(_, s)| s.is_finite() && *s > 0.0)
        .collect()
}

/// The configuration a contender stands for in a row.
fn contender_config<'a>(r: &'a SpeedRow, contender: &'a str) -> Option<&'a str> {
    if contender == "best ours" {
        return r.best_ours.as_ref().map(|x| x.0.as_str());
    }
    if let Some(model) = contender.strip_suffix(" pick") {
        return r.picks.get(model).map(|x| x.0.as_str());
    }
    r.plans.contains_key(contender).then_some(contender)
}

/// Whether `contender` ties with the best cuSPARSE algorithm in a row.
pub fn ties_vendor(r: &SpeedRow, contender: &str) -> bool {
    let spread = |c: Option<&str>| c.and_then(|c| r.spreads.get(c)).copied().unwrap_or(0.0);
    match (r.best_vendor.as_ref(), contender_time(r, contender)) {
        (Some((vc, v)), Some(t)) => tie(
            t,
            spread(contender_config(r, contender)),
            *v,
            spread(Some(vc)),
        ),
        _ => false,
    }
}

/// A contender's time in a row: `best ours`, a plan configuration name, or `<model> pick`.
pub fn contender_time(r: &SpeedRow, contender: &str) -> Option<f64> {
    if contender == "best ours" {
        return r.best_ours.as_ref().map(|x| x.1);
    }
    if let Some(model) = contender.strip_suffix(" pick") {
        return r.picks.get(model).map(|x| x.1);
    }
    r.plans.get(contender).copied()
}

/// Every contender present: `best ours`, then plans, then model picks.
pub fn contenders(rows: &[SpeedRow]) -> Vec<String> {
    let mut out = vec!["best ours".to_string()];
    let plans: BTreeSet<&String> = rows.iter().flat_map(|r| r.plans.keys()).collect();
    out.extend(plans.into_iter().cloned());
    let picks: BTreeSet<&String> = rows.iter().flat_map(|r| r.picks.keys()).collect();
    out.extend(picks.into_iter().map(|m| format!("{m} pick")));
    out
}

/// Which matrix set a matrix id belongs to: `generated` (`gen/…`) or `files`.
pub fn matrix_set(matrix: &str) -> &'static str {
    if matrix.starts_with("gen/") {
        "generated"
    } else {
        "files"
    }
}

/// Speed-up summaries per precision, contender and matrix set (`all`, then `files` and
/// `generated` separately where the results hold both), only where cuSPARSE was measured.
pub fn speed_summary(rows: &[SpeedRow]) -> Vec<SpeedSummary> {
    let mut out = Vec::new();
    let precisions: BTreeSet<Precision> = rows.iter().map(|r| r.precision).collect();
    let sets: BTreeSet<&str> = rows.iter().map(|r| matrix_set(&r.matrix)).collect();
    let mut choices = vec!["all"];
    if sets.len() > 1 {
        choices.extend(["files", "generated"]);
    }
    for precision in [Precision::F32, Precision::F64] {
        if !precisions.contains(&precision) {
            continue;
        }
        for c in contenders(rows) {
            for &set in &choices {
                let in_set = |r: &&SpeedRow| set == "all" || matrix_set(&r.matrix) == set;
                let subset: Vec<&SpeedRow> = rows.iter().filter(in_set).collect();
                out.extend(summarize(&subset, precision, &c, set));
            }
        }
    }
    out
}

fn summarize(
    rows: &[&SpeedRow],
    precision: Precision,
    c: &str,
    set: &'static str,
) -> Option<SpeedSummary> {
    let s = speedups(rows.iter().copied(), precision, c);
    let vals: Vec<f64> = s.iter().map(|x| x.1).collect();
    let worst = s.iter().min_by(|a, b| a.1.total_cmp(&b.1))?;
    let best = s.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
    Some(SpeedSummary {
        precision,
        set,
        contender: c.to_string(),
        n: s.len(),
        geomean: geomean(&vals).unwrap_or(f64::NAN),
        worst: (worst.1, worst.0.to_string()),
        best: (best.1, best.0.to_string()),
        faster: vals.iter().filter(|&&x| x > 1.0).count(),
        ties: rows
            .iter()
            .filter(|r| r.precision == precision && ties_vendor(r, c))
            .count(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::record::{test_record, Prediction};

    /// A record of `config` on `matrix` measured at `t` (None: skipped) with `analytical`
    /// predicting `p`.
    fn r(matrix: &str, config: &str, t: Option<f64>, p: Option<f64>) -> Record {
        let kind = if config.starts_with("cusparse") {
            ConfigKind::Vendor
        } else if config.starts_with("plan") {
            ConfigKind::Plan
        } else {
            ConfigKind::Ours
        };
        let mut predictions = BTreeMap::new();
        if let Some(p) = p {
            predictions.insert(
                "analytical".to_string(),
                Prediction {
                    seconds: Some(p),
                    statistic: Statistic::WarmMean,
                    note: None,
                    in_sample: false,
                    picked: false,
                    uncertainty_s: None,
                },
            );
        }
        let mut r = test_record(matrix, Precision::F64, config, kind, t);
        r.backend = "cpu".into();
        r.predictions = predictions;
        r
    }

    #[test]
    fn a_second_stage_pick_is_the_models_pick_where_it_was_measured() {
        let mut g = vec![
            r("m", "csr-scalar", Some(3.0), Some(1.0)),
            r("m", "ell", Some(1.0), Some(2.0)),
            r("m", "coo", None, Some(1.5)),
        ];
        fn refs(g: &[Record]) -> Vec<&Record> {
            g.iter().collect()
        }
        assert_eq!(pick(&refs(&g), "analytical").unwrap().config, "csr-scalar");
        g[1].predictions.get_mut("analytical").unwrap().picked = true;
        assert_eq!(pick(&refs(&g), "analytical").unwrap().config, "ell");
        // A picked configuration that was not measured leaves the argmin of the measured.
        g[1].predictions.get_mut("analytical").unwrap().picked = false;
        g[2].predictions.get_mut("analytical").unwrap().picked = true;
        assert_eq!(pick(&refs(&g), "analytical").unwrap().config, "csr-scalar");
    }

    #[test]
    fn order_percentile_median_geomean() {
        assert!(config_order("csr-scalar") < config_order("csr-vector"));
        assert!(config_order("bsr") < config_order("cusparse-csr-alg1"));
        assert!(config_order("cusparse-sell") < config_order("plan-analytical"));
        assert_eq!(config_name(&config_order("csr-t4")), "csr-t4");
        assert_eq!(config_name(&config_order("plan-x")), "plan-x");
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.9), Some(9.0));
        assert_eq!(percentile(&v[..1], 0.9), Some(1.0));
        assert_eq!(percentile(&[], 0.9), None);
        assert_eq!(median(&v), Some(5.5));
        assert_eq!(median(&v[..3]), Some(2.0));
        assert!((geomean(&[1.0, 4.0]).unwrap() - 2.0).abs() < 1e-12);
    }

    #[test]
    fn accuracy_per_configuration() {
        let recs = vec![
            r("a", "ell", Some(1.0), Some(1.02)), // 2 %
            r("b", "ell", Some(1.0), Some(0.92)), // 8 %
            r("c", "ell", Some(2.0), Some(3.0)),  // 50 %
            r("d", "ell", None, Some(3.0)),       // not measured: ignored
            r("a", "coo", Some(2.5), Some(2.25)), // 10 %
            r("a", "cusparse-csr-alg1", Some(1.0), None),
        ];
        let rows = accuracy(&recs);
        assert_eq!(rows.len(), 2);
        let coo = &rows[0];
        assert_eq!(
            (coo.config.as_str(), coo.n, coo.within_5, coo.within_10),
            ("coo", 1, 0, 1)
        );
        let ell = &rows[1];
        assert_eq!(
            (ell.config.as_str(), ell.n, ell.within_5, ell.within_10),
            ("ell", 3, 1, 2)
        );
        assert!((ell.mean - 0.2).abs() < 1e-12);
        assert!((ell.median - 0.08).abs() < 1e-12);
        assert!((ell.p90 - 0.5).abs() < 1e-12);
        assert!((ell.max - 0.5).abs() < 1e-12);
    }

    #[test]
    fn a_median_model_is_compared_with_medians() {
        let mut a = r("a", "ell", Some(1.0), Some(1.1));
        a.median_s = Some(1.1);
        let mut b = r("a", "coo", Some(1.0), Some(2.0));
        b.median_s = Some(0.5);
        for x in [&mut a, &mut b] {
            x.predictions.get_mut("analytical").unwrap().statistic = Statistic::Median;
        }
        let recs = [a, b];
        let acc = accuracy(&recs);
        assert_eq!(acc[0].config, "coo");
        assert!((acc[0].mean - 3.0).abs() < 1e-12, "2.0 vs median 0.5");
        assert!(acc[1].mean.abs() < 1e-12, "1.1 vs median 1.1");
        // By medians coo is the best (0.5) and the model picks ell (1.1): 120 % slower.
        let rk = ranking(&recs);
        assert_eq!((rk[0].above_20, rk[0].below_5), (1, 0));
        assert!((rk[0].mean_fraction - 0.5 / 1.1).abs() < 1e-12);
        // The speed comparison uses medians (the time the protocol reports): coo at 0.5.
        assert_eq!(speed_rows(&recs)[0].best_ours.as_ref().unwrap().1, 0.5);
    }

    #[test]
    fn ranking_buckets_and_fractions() {
        let recs = vec![
            // a: the model picks ell (pred 1), measured 1.0; best overall sell 1.0 → 0 %.
            r("a", "ell", Some(1.0), Some(1.0)),
            r("a", "coo", Some(2.0), Some(2.0)),
            r("a", "sell", Some(1.0), None),
            // b: pick coo (1.1 s) while the best is sell (1.0 s) → 10 %; covered best is coo.
            r("b", "ell", Some(1.5), Some(2.0)),
            r("b", "coo", Some(1.1), Some(1.0)),
            r("b", "sell", Some(1.0), None),
            // c: the unrestricted pick (hyb) was refused; among measured, ell (3 s) vs best 1 s.
            r("c", "hyb", None, Some(0.1)),
            r("c", "ell", Some(3.0), Some(1.0)),
            r("c", "csr-vector", Some(1.0), Some(5.0)),
        ];
        let rows = ranking(&recs);
        assert_eq!(rows.len(), 1);
        let x = &rows[0];
        assert_eq!(
            (x.n, x.below_5, x.from_5_to_20, x.above_20, x.pick_not_run),
            (3, 1, 1, 1, 1)
        );
        let want = (1.0 + 1.0 / 1.1 + 1.0 / 3.0) / 3.0;
        assert!((x.mean_fraction - want).abs() < 1e-12);
        let bound = (1.0 + 1.0 / 1.1 + 1.0) / 3.0;
        assert!((x.coverage_bound - bound).abs() < 1e-12);
    }

    /// Our model's tuned pick: of its [`crate::model::SHORTLIST`] fastest predictions and its
    /// fastest-predicted cuSPARSE algorithm, the fastest measured; ranked and compared with
    /// cuSPARSE beside its pick.
    #[test]
    fn our_models_tuned_pick_is_the_fastest_measured_of_its_shortlist() {
        let ours = |mut x: Record| {
            let p = x.predictions.remove("analytical");
            if let Some(p) = p {
                x.predictions.insert("sparsecast".into(), p);
            }
            x
        };
        // (measured, predicted), one format each and predictions 1, 2, 3, … (none within the
        // band of the fastest): the SHORTLIST fastest predicted run 4.0, 3.0, 2.5, 2.4, …, the
        // next one (hyb) is the fastest measured and not shortlisted; then cuSPARSE.
        let k = crate::model::SHORTLIST;
        let formats = [
            "ell",
            "coo",
            "csr-vector",
            "dia",
            "sell",
            "jad",
            "bsr",
            "ell-bro",
        ];
        assert!(
            k < formats.len(),
            "the test needs more formats than the shortlist"
        );
        let mut recs: Vec<Record> = formats[..k]
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let measured = [4.0, 3.0, 2.5][..]
                    .get(i)
                    .copied()
                    .unwrap_or(2.5 - 0.1 * i as f64);
                r("a", f, Some(measured), Some(1.0 + i as f64))
            })
            .collect();
        let p = 1.0 + k as f64;
        recs.extend([
            r("a", "hyb", Some(0.5), Some(p)), // the fastest, not shortlisted
            r("a", "cusparse-csr-alg1", Some(2.0), Some(p + 2.0)),
            r("a", "cusparse-coo-alg1", Some(1.0), Some(p + 1.0)), // the vendor on the shortlist
        ]);
        let recs: Vec<Record> = recs.into_iter().map(ours).collect();
        let g: Vec<&Record> = recs.iter().collect();
        assert_eq!(pick(&g, "sparsecast").unwrap().config, "ell");
        let t = tuned_pick(&g, "sparsecast", Statistic::Median).unwrap();
        assert_eq!(t.config, "cusparse-coo-alg1");
        let rows = ranking(&recs);
        let labels: Vec<&str> = rows.iter().map(|x| x.model.as_str()).collect();
        assert_eq!(labels, ["sparsecast", "sparsecast+tune"]);
        // Best 0.5 (hyb): the pick 4.0 is > 20 % slower, so is the tuned 1.0.
        assert!((rows[1].mean_fraction - 0.5).abs() < 1e-12);
        assert!((rows[0].mean_fraction - 0.125).abs() < 1e-12);
        let speed = speed_rows(&recs);
        assert_eq!(speed[0].picks["sparsecast+tune"].0, "cusparse-coo-alg1");
        assert!(contenders(&speed).contains(&"sparsecast+tune pick".to_string()));
        // Other models keep their pick only.
        assert_eq!(
            ranking(
                &g.iter()
                    .map(|x| (*x).clone())
                    .map(|mut x| {
                        let p = x.predictions.remove("sparsecast").unwrap();
                        x.predictions.insert("gb".into(), p);
                        x
                    })
                    .collect::<Vec<_>>()
            )
            .len(),
            1
        );
    }

    #[test]
    fn speedups_against_the_best_vendor_algorithm() {
        let recs = vec![
            r("a", "ell", Some(1.0), Some(1.0)),
            r("a", "coo", Some(0.5), Some(2.0)),
            r("a", "cusparse-csr-alg1", Some(2.0), None),
            r("a", "cusparse-coo-alg1", Some(1.0), None),
            r("a", "plan-analytical", Some(0.25), Some(0.3)),
            r("b", "ell", Some(4.0), Some(1.0)),
            r("b", "cusparse-csr-alg1", Some(2.0), None),
            r("c", "ell", Some(4.0), Some(1.0)), // no vendor: not compared
        ];
        let rows = speed_rows(&recs);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0].best_ours, Some(("coo".into(), 0.5)));
        assert_eq!(rows[0].best_vendor, Some(("cusparse-coo-alg1".into(), 1.0)));
        assert_eq!(rows[0].picks["analytical"], ("ell".into(), 1.0));
        let s = speed_summary(&rows);
        let names: Vec<&str> = s.iter().map(|x| x.contender.as_str()).collect();
        assert_eq!(names, ["best ours", "plan-analytical", "analytical pick"]);
        let ours = &s[0];
        // a: 1.0 / 0.5 = 2; b: 2 / 4 = 0.5 → geomean 1.
        assert_eq!(ours.n, 2);
        assert!((ours.geomean - 1.0).abs() < 1e-12);
        assert_eq!(ours.worst, (0.5, "b".into()));
        assert_eq!(ours.best, (2.0, "a".into()));
        assert_eq!(ours.faster, 1);
        assert_eq!((s[1].n, s[1].geomean), (1, 4.0));
    }
}
