//! Family-grouped K-fold cross-validation of the learned models, beside the models of a base
//! profile that were not trained on the table.
//!
//! For each precision and fold, every [`Learner`] is trained on the rows of the other folds
//! ([`super::dataset::split`]: a family is never on both sides) and predicts every configuration
//! of each held-out row through [`Model::predict_config`]. Every row is held out exactly once, so
//! the result is one [`Record`] per row × configuration (the table's measurement) with the
//! held-out prediction of every learner and the prediction of every other model given; the
//! report's statistics ([`crate::evaluate::stats`]) then score them all alike. A model that does
//! not cover a configuration (the analytical model and the block-size variants, cuSPARSE) has
//! no prediction there and is left out of that configuration's column.
//!
//! Predictions go through [`Bounded`] with the base profile's device bounds, as every
//! prediction of a profile does.

use super::dataset::fold_of;
use super::Learner;
use crate::backend::KernelConfig;
use crate::corpus::table::{ConfigTime, TableRow};
use crate::evaluate::record::{self, ConfigKind, Prediction, Record};
use crate::model::{Bounded, DeviceBounds, Model, StoredModel};
use crate::{Precision, Result};
use std::collections::BTreeMap;
use std::time::Instant;

/// What the models of one precision are checked against.
pub struct Section {
    /// The precision.
    pub precision: Precision,
    /// The device bounds every prediction is clamped to.
    pub bounds: Option<DeviceBounds>,
    /// Models evaluated as they are (not trained on the table), by name.
    pub others: Vec<(String, StoredModel)>,
}

/// The cost of one model in one precision (002 Table 4).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Overhead {
    /// Model name.
    pub model: String,
    /// Precision.
    pub precision: Precision,
    /// Mean seconds to train on K − 1 folds (`None` for models not trained here).
    pub train_s: Option<f64>,
    /// Mean seconds to predict every configuration the model covers for one matrix.
    pub predict_s: f64,
    /// Configurations predicted per matrix (mean).
    pub configs: f64,
}

/// The cross-validation's records and costs.
pub struct Outcome {
    /// One record per held-out row × configuration.
    pub records: Vec<Record>,
    /// Per model and precision.
    pub overhead: Vec<Overhead>,
}

/// The record of one table entry (no predictions yet).
fn record_of(row: &TableRow, t: &ConfigTime, cfg: &KernelConfig, with_features: bool) -> Record {
    Record {
        schema: record::SCHEMA,
        matrix: row.matrix.clone(),
        source: row.source.clone(),
        precision: row.precision,
        config: t.config.clone(),
        kind: if cfg.variant.is_vendor() {
            ConfigKind::Vendor
        } else {
            ConfigKind::Ours
        },
        format: Some(cfg.variant.format().name().to_string()),
        status: t.status,
        reason: t.reason.clone(),
        backend: row.backend.clone(),
        device: row.device.clone(),
        runs: row.protocol.runs,
        warmup: row.protocol.warmup,
        median_s: t.median_s,
        warm_mean_s: t.warm_mean_s,
        protocol: Some(row.protocol.clone()),
        spread: t.spread,
        per_batch: None,
        graph: None,
        placement_medians: Vec::new(),
        retimed: 0,
        footprint_bytes: t.footprint_bytes,
        effective_bytes: None,
        max_rel_error: None,
        prepare_s: None,
        features: with_features.then(|| row.features.clone()),
        predictions: BTreeMap::new(),
        plan: None,
    }
}

/// Accumulates one model's prediction cost.
#[derive(Default)]
struct Cost {
    train: Vec<f64>,
    predict: Vec<f64>,
    configs: Vec<f64>,
}

/// Predict every entry of `row` with `model` into `recs` (one record per entry, in order),
/// with the uncertainty the model states where `uncertain` (not for a quick fit, whose
/// uncertainty is a placeholder: [`crate::learn::Learner::fit_prediction_only`]).
fn predict_row(
    name: &str,
    model: &dyn Model,
    row: &TableRow,
    cfgs: &[Option<KernelConfig>],
    recs: &mut [Record],
    cost: &mut Cost,
    uncertain: bool,
) {
    let start = Instant::now();
    let mut n = 0usize;
    for (cfg, rec) in cfgs.iter().zip(recs.iter_mut()) {
        let Some(cfg) = cfg else { continue };
        // The prediction and its uncertainty in one pass, as `predict` asks for them.
        if let Ok(p) = model.predict_detail_config(&row.features, cfg) {
            n += 1;
            rec.predictions.insert(
                name.to_string(),
                Prediction {
                    seconds: Some(p.seconds),
                    statistic: model.statistic(),
                    note: None,
                    // Held out: the fold's model never saw this family.
                    in_sample: false,
                    picked: false,
                    uncertainty_s: p.uncertainty.filter(|_| uncertain),
                },
            );
        }
    }
    cost.predict.push(start.elapsed().as_secs_f64());
    cost.configs.push(n as f64);
}

/// The steps [`run`] reports through `tick`: one per precision × fold × learner, plus one per
/// precision for the other models.
pub fn steps(rows: &[TableRow], folds: usize, learners: usize) -> u64 {
    let precisions = [Precision::F32, Precision::F64]
        .iter()
        .filter(|p| rows.iter().any(|r| r.precision == **p))
        .count();
    (precisions * (folds.max(1) * learners + 1)) as u64
}

/// Cross-validate `learners` with `folds` folds on `rows`, beside each section's other models;
/// `tick(what)` is called after each step ([`steps`]).
pub fn run(
    rows: &[TableRow],
    learners: &[&dyn Learner],
    sections: &[Section],
    folds: usize,
    quick: bool,
    tick: &dyn Fn(&str),
) -> Result<Outcome> {
    let folds = folds.max(2);
    let mut records = Vec::new();
    let mut overhead = Vec::new();
    for precision in [Precision::F32, Precision::F64] {
        let prow: Vec<&TableRow> = rows.iter().filter(|r| r.precision == precision).collect();
        if prow.is_empty() {
            continue;
        }
        let section = sections.iter().find(|s| s.precision == precision);
        let bounds = section.and_then(|s| s.bounds.clone());
        let mut costs: BTreeMap<String, Cost> = BTreeMap::new();
        // The records and parsed configurations of every row, in row order.
        let mut recs: Vec<Vec<Record>> = Vec::with_capacity(prow.len());
        let mut cfgs: Vec<Vec<Option<KernelConfig>>> = Vec::with_capacity(prow.len());
        for r in &prow {
            let parsed: Vec<Option<KernelConfig>> = r
                .times
                .iter()
                .map(|t| KernelConfig::parse_label(&t.config).ok())
                .collect();
            recs.push(
                r.times
                    .iter()
                    .zip(&parsed)
                    .enumerate()
                    .filter_map(|(i, (t, c))| c.as_ref().map(|c| (i, t, c)))
                    .map(|(i, t, c)| record_of(r, t, c, i == 0))
                    .collect(),
            );
            cfgs.push(parsed.into_iter().flatten().map(Some).collect());
        }
        for fold in 0..folds {
            let (train, test): (Vec<usize>, Vec<usize>) =
                (0..prow.len()).partition(|&i| fold_of(&prow[i].family, folds) != fold);
            for l in learners {
                tick(&format!(
                    "{precision} fold {}/{folds} {}",
                    fold + 1,
                    l.name()
                ));
                if test.is_empty() || train.is_empty() {
                    continue;
                }
                let rows_train: Vec<&TableRow> = train.iter().map(|&i| prow[i]).collect();
                let start = Instant::now();
                let fitted = if quick {
                    l.fit_prediction_only(&rows_train, precision)
                } else {
                    l.fit(&rows_train, precision)
                };
                let fitted = match fitted {
                    Ok(m) => m,
                    // A fold whose training rows measured nothing in this precision.
                    Err(_) if !rows_train.iter().any(|r| r.best().is_some()) => continue,
                    Err(e) => return Err(e),
                };
                let cost = costs.entry(l.name().to_string()).or_default();
                cost.train.push(start.elapsed().as_secs_f64());
                let model = Bounded {
                    model: fitted,
                    bounds: bounds.clone(),
                };
                for &i in &test {
                    predict_row(
                        l.name(),
                        &model,
                        prow[i],
                        &cfgs[i],
                        &mut recs[i],
                        cost,
                        !quick,
                    );
                }
            }
        }
        tick(&format!("{precision} other models"));
        for (name, m) in section.map_or(&[][..], |s| &s.others[..]) {
            let model = Bounded {
                model: m,
                bounds: bounds.clone(),
            };
            let cost = costs.entry(name.clone()).or_default();
            for (i, r) in prow.iter().enumerate() {
                predict_row(name, &model, r, &cfgs[i], &mut recs[i], cost, true);
            }
        }
        for (model, c) in costs {
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
            overhead.push(Overhead {
                train_s: (!c.train.is_empty()).then(|| mean(&c.train)),
                predict_s: mean(&c.predict),
                configs: mean(&c.configs),
                model,
                precision,
            });
        }
        records.extend(recs.into_iter().flatten());
    }
    Ok(Outcome { records, overhead })
}
