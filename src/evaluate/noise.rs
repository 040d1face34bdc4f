//! The measurement noise floor: how well two independent evaluation runs of the same
//! configurations agree (`sparsecast noise RUN_A RUN_B`).
//!
//! Definitions (issue 10; the choice is written here):
//! * **Difference** of a configuration measured in both runs: `|a − b| / min(a, b)` of its
//!   measured time (median or the papers' warm-up-excluding mean), so a 2× disagreement reads
//!   100 % whichever run was slower. Summarized by median, mean, 90th percentile (nearest rank)
//!   and maximum — over all configurations, by matrix set (files vs generated), by
//!   configuration kind, and per configuration.
//! * **Best agreement**, per matrix × precision: the fastest configuration of each run (ours and
//!   cuSPARSE; plans excluded, as they depend on a model) is the same, or the two are a tie in
//!   run B (their times within their spreads, [`super::stats::tie`]); also the *regret*: how much
//!   slower run A's best is than run B's best when both are measured in run B.
//!
//! A model that predicts closer than this floor is fitting noise; no model can be judged better.

use super::record::{ConfigKind, Key, Record};
use super::stats::{matrix_set, median, percentile, tie};
use crate::instrument::Statistic;
use crate::Precision;
use serde::Serialize;
use std::collections::BTreeMap;

/// Summary of a set of differences.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Spread {
    /// Configurations compared.
    pub n: usize,
    pub median: f64,
    pub mean: f64,
    pub p90: f64,
    pub max: f64,
    /// The configuration (matrix, precision, configuration) with the largest difference.
    pub worst: String,
}

impl Spread {
    fn of(mut v: Vec<(f64, String)>) -> Option<Spread> {
        if v.is_empty() {
            return None;
        }
        v.sort_by(|a, b| a.0.total_cmp(&b.0));
        let d: Vec<f64> = v.iter().map(|x| x.0).collect();
        Some(Spread {
            n: d.len(),
            median: median(&d)?,
            mean: d.iter().sum::<f64>() / d.len() as f64,
            p90: percentile(&d, 0.9)?,
            max: d[d.len() - 1],
            worst: v[v.len() - 1].1.clone(),
        })
    }
}

/// Agreement of the two runs on the fastest configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BestAgreement {
    /// Matrix × precision pairs with a best configuration in both runs.
    pub pairs: usize,
    /// Pairs whose best configuration is the same.
    pub same: usize,
    /// Pairs whose best configurations differ but tie in run B (within their spreads).
    pub tie: usize,
    /// Mean over pairs of `t_B(best of A) / t_B(best of B) − 1`.
    pub mean_regret: f64,
    /// The largest such regret and its pair.
    pub max_regret: (f64, String),
}

/// The comparison of two runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NoiseReport {
    /// The statistic compared (`median` or `warm-mean`).
    pub statistic: Statistic,
    /// Every configuration measured in both runs.
    pub all: Option<Spread>,
    /// By matrix set: `files` (the corpus) and `generated`.
    pub by_set: BTreeMap<String, Spread>,
    /// By configuration kind: `ours`, `vendor`, `plan`.
    pub by_kind: BTreeMap<String, Spread>,
    /// By configuration name.
    pub by_config: BTreeMap<String, Spread>,
    /// Best-configuration agreement, by matrix set.
    pub best: BTreeMap<String, BestAgreement>,
    /// Median relative spread (interquartile range) within one measurement, run B.
    pub median_within_spread: Option<f64>,
}

fn kind_name(k: ConfigKind) -> &'static str {
    match k {
        ConfigKind::Ours => "ours",
        ConfigKind::Vendor => "vendor",
        ConfigKind::Plan => "plan",
    }
}

/// The fastest record of ours or the vendor's in a group, by `statistic`.
fn fastest<'a>(group: &[&'a Record], statistic: Statistic) -> Option<(&'a Record, f64)> {
    group
        .iter()
        .filter(|r| r.kind != ConfigKind::Plan)
        .filter_map(|r| r.measured(statistic).map(|t| (*r, t)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// Compare run `a` with run `b` on `statistic`.
pub fn compare(a: &[Record], b: &[Record], statistic: Statistic) -> NoiseReport {
    let index_b: BTreeMap<Key, &Record> = b.iter().map(|r| (r.key(), r)).collect();
    let mut all = Vec::new();
    let mut by_set: BTreeMap<String, Vec<(f64, String)>> = BTreeMap::new();
    let mut by_kind: BTreeMap<String, Vec<(f64, String)>> = BTreeMap::new();
    let mut by_config: BTreeMap<String, Vec<(f64, String)>> = BTreeMap::new();
    for ra in a {
        let Some(rb) = index_b.get(&ra.key()) else {
            continue;
        };
        let (Some(ta), Some(tb)) = (ra.measured(statistic), rb.measured(statistic)) else {
            continue;
        };
        let d = (ta - tb).abs() / ta.min(tb);
        let label = format!("{} {} {}", ra.matrix, ra.precision, ra.config);
        all.push((d, label.clone()));
        by_set
            .entry(matrix_set(&ra.matrix).into())
            .or_default()
            .push((d, label.clone()));
        by_kind
            .entry(kind_name(ra.kind).into())
            .or_default()
            .push((d, label.clone()));
        by_config
            .entry(ra.config.clone())
            .or_default()
            .push((d, label));
    }
    let summarize = |m: BTreeMap<String, Vec<(f64, String)>>| -> BTreeMap<String, Spread> {
        m.into_iter()
            .filter_map(|(k, v)| Spread::of(v).map(|s| (k, s)))
            .collect()
    };
    let mut spreads: Vec<f64> = b
        .iter()
        .filter(|r| r.measured(statistic).is_some())
        .filter_map(|r| r.spread)
        .filter(|s| s.is_finite())
        .collect();
    spreads.sort_by(|x, y| x.total_cmp(y));
    NoiseReport {
        statistic,
        all: Spread::of(all),
        by_set: summarize(by_set),
        by_kind: summarize(by_kind),
        by_config: summarize(by_config),
        best: best_agreement(a, b, statistic),
        median_within_spread: median(&spreads),
    }
}

type Groups<'a> = BTreeMap<(String, Precision), Vec<&'a Record>>;

fn groups(records: &[Record]) -> Groups<'_> {
    let mut g: Groups = BTreeMap::new();
    for r in records {
        g.entry((r.matrix.clone(), r.precision))
            .or_default()
            .push(r);
    }
    g
}

fn best_agreement(
    a: &[Record],
    b: &[Record],
    statistic: Statistic,
) -> BTreeMap<String, BestAgreement> {
    let (ga, gb) = (groups(a), groups(b));
    let mut acc: BTreeMap<String, (BestAgreement, Vec<f64>)> = BTreeMap::new();
    for (key, group_a) in &ga {
        let Some(group_b) = gb.get(key) else {
            continue;
        };
        let (Some((best_a, _)), Some((best_b, tb_best))) =
            (fastest(group_a, statistic), fastest(group_b, statistic))
        else {
            continue;
        };
        let entry = acc.entry(matrix_set(&key.0).into()).or_insert_with(|| {
            (
                BestAgreement {
                    pairs: 0,
                    same: 0,
                    tie: 0,
                    mean_regret: f64::NAN,
                    max_regret: (0.0, String::new()),
                },
                Vec::new(),
            )
        });
        entry.0.pairs += 1;
        if best_a.config == best_b.config {
            entry.0.same += 1;
            entry.1.push(0.0);
            continue;
        }
        // Run A's favourite as run B measured it.
        let Some(a_in_b) = group_b
            .iter()
            .find(|r| r.config == best_a.config)
            .and_then(|r| r.measured(statistic).map(|t| (*r, t)))
        else {
            continue;
        };
        if tie(a_in_b.1, a_in_b.0.spread(), tb_best, best_b.spread()) {
            entry.0.tie += 1;
        }
        let regret = a_in_b.1 / tb_best - 1.0;
        entry.1.push(regret);
        if regret > entry.0.max_regret.0 {
            entry.0.max_regret = (
                regret,
                format!(
                    "{} {}: {} vs {}",
                    key.0, key.1, best_a.config, best_b.config
                ),
            );
        }
    }
    acc.into_iter()
        .map(|(k, (mut s, regrets))| {
            if !regrets.is_empty() {
                s.mean_regret = regrets.iter().sum::<f64>() / regrets.len() as f64;
            }
            (k, s)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::record::test_record;

    fn rec(matrix: &str, config: &str, kind: ConfigKind, t: f64, spread: f64) -> Record {
        let mut r = test_record(matrix, Precision::F64, config, kind, Some(t));
        r.spread = Some(spread);
        r
    }

    #[test]
    fn differences_and_best_agreement() {
        use ConfigKind::*;
        let a = vec![
            rec("m1", "ell", Ours, 1.0, 0.01),
            rec("m1", "coo", Ours, 2.0, 0.01),
            rec("m1", "cusparse-csr-alg1", Vendor, 1.5, 0.01),
            rec("gen/m2", "ell", Ours, 1.0, 0.01),
            rec("gen/m2", "coo", Ours, 1.02, 0.01),
            rec("m3", "ell", Ours, 1.0, 0.0),
            rec("m3", "coo", Ours, 1.5, 0.0),
        ];
        let b = vec![
            rec("m1", "ell", Ours, 1.0, 0.01),
            rec("m1", "coo", Ours, 4.0, 0.01), // 100 % apart
            rec("m1", "cusparse-csr-alg1", Vendor, 1.5, 0.01),
            // The best flips, but within the spreads: a tie.
            rec("gen/m2", "ell", Ours, 1.02, 0.01),
            rec("gen/m2", "coo", Ours, 1.01, 0.01),
            // The best flips clearly: regret 20 %.
            rec("m3", "ell", Ours, 1.2, 0.0),
            rec("m3", "coo", Ours, 1.0, 0.0),
            rec("m4", "ell", Ours, 1.0, 0.0), // only in b
        ];
        let n = compare(&a, &b, Statistic::Median);
        let all = n.all.unwrap();
        assert_eq!(all.n, 7);
        assert_eq!(all.max, 1.0);
        assert!(all.worst.contains("m1") && all.worst.contains("coo"));
        assert_eq!(n.by_kind["vendor"].max, 0.0);
        assert_eq!(n.by_set["generated"].n, 2);
        let files = &n.best["files"];
        assert_eq!((files.pairs, files.same, files.tie), (2, 1, 0));
        assert!((files.max_regret.0 - 0.2).abs() < 1e-12);
        assert!((files.mean_regret - 0.1).abs() < 1e-12);
        let gen = &n.best["generated"];
        assert_eq!((gen.pairs, gen.same, gen.tie), (1, 0, 1));
        assert_eq!(n.median_within_spread, Some(0.01));
    }
}
