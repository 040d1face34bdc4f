//! `knn`: 002's distance-weighted k nearest neighbours — per configuration, the `ln(time)` of the
//! k training matrices nearest in the format's KNN features ([`super::select::neighbours`]),
//! averaged with weights `1 / distance`; k = 4, or 2 for SELL-C-σ ([`super::select::knn_k`]).
//!
//! Distance: Euclidean on the transformed features ([`super::select::Feature::value`])
//! normalised to 0–1 over the training matrices, each axis stretched by its weight
//! ([`super::select::Feature::knn_weight`]): `d = sqrt(Σ (w · Δu)²)`. A training matrix at
//! distance 0 (the same features) is taken alone (the mean of all such). A query outside the
//! training range is not clamped: it is simply far from everything.
//!
//! The model stores its training points: one transformed feature vector per training matrix
//! (`f32`, the union of the features any configuration reads) and, per configuration, the
//! matrices' `ln(time)` (`null` where that configuration was not measured). Prediction costs
//! O(matrices × features) per configuration (002 Table 4 reports it as the "modeling" cost).

use super::dataset;
use super::select::{self, Feature};
use super::Learner;
use crate::corpus::table::TableRow;
use crate::features::Features;
use crate::model::StoredModel;
use crate::{Error, Precision, Result};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// One configuration's neighbours.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KnnConfig {
    /// The configuration's label.
    pub config: String,
    /// Neighbours averaged.
    pub k: usize,
    /// The features it reads (indices into [`KnnModel::features`]).
    pub columns: Vec<usize>,
    /// `ln(seconds)` of each training matrix in this configuration (`None`: not measured).
    pub y: Vec<Option<f32>>,
}

/// The `knn` family: the training points and every configuration's times.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KnnModel {
    /// The value precision it predicts.
    pub precision: Precision,
    /// The features of [`KnnModel::points`].
    pub features: Vec<Feature>,
    /// Smallest value of each feature over the training matrices (the 0 of the normalisation).
    pub lo: Vec<f64>,
    /// Largest value of each feature (the 1).
    pub hi: Vec<f64>,
    /// One transformed feature vector per training matrix.
    pub points: Vec<Vec<f32>>,
    /// One entry per configuration, in display order.
    pub configs: Vec<KnnConfig>,
}

impl KnnModel {
    /// Predicted seconds of configuration `label`.
    pub fn predict_label(&self, f: &Features, label: &str) -> Result<f64> {
        let c = super::entry("knn", &self.configs, label)?;
        let norm = |j: usize, v: f64| {
            let span = self.hi[j] - self.lo[j];
            if span > 0.0 {
                (v - self.lo[j]) / span
            } else {
                0.0
            }
        };
        let q: Vec<(f64, f64)> = c
            .columns
            .iter()
            .map(|&j| {
                (
                    norm(j, self.features[j].value(f)),
                    self.features[j].knn_weight(),
                )
            })
            .collect();
        // The k nearest (distance², ln time), kept sorted.
        let mut near: Vec<(f64, f64)> = Vec::with_capacity(c.k + 1);
        for (p, y) in self.points.iter().zip(&c.y) {
            let Some(y) = y else { continue };
            let d2: f64 = c
                .columns
                .iter()
                .zip(&q)
                .map(|(&j, &(u, w))| (w * (u - norm(j, p[j] as f64))).powi(2))
                .sum();
            if near.len() == c.k && d2 >= near[c.k - 1].0 {
                continue;
            }
            let at = near.partition_point(|n| n.0 <= d2);
            near.insert(at, (d2, *y as f64));
            near.truncate(c.k);
        }
        if near.is_empty() {
            return Err(Error::Unsupported(format!(
                "the knn model has no training matrix measured in {label}"
            )));
        }
        let exact: Vec<f64> = near.iter().filter(|n| n.0 < 1e-24).map(|n| n.1).collect();
        let ln_s = if !exact.is_empty() {
            exact.iter().sum::<f64>() / exact.len() as f64
        } else {
            let (num, den) = near.iter().fold((0.0, 0.0), |(a, b), &(d2, y)| {
                let w = 1.0 / d2.sqrt();
                (a + w * y, b + w)
            });
            num / den
        };
        super::seconds("knn", label, ln_s)
    }

    /// Shapes agree and every number is finite.
    pub fn validate(&self) -> Result<()> {
        let d = self.features.len();
        let bad = |what: &str| Err(Error::Invalid(format!("knn model: {what}")));
        if self.lo.len() != d || self.hi.len() != d {
            return bad("normalisation does not match the features");
        }
        if self
            .points
            .iter()
            .any(|p| p.len() != d || p.iter().any(|v| !v.is_finite()))
        {
            return bad("a training point has the wrong length or a non-finite value");
        }
        for c in &self.configs {
            if c.k == 0
                || c.y.len() != self.points.len()
                || c.columns.iter().any(|&j| j >= d)
                || c.y.iter().flatten().any(|y| !y.is_finite())
            {
                return bad(&format!(
                    "configuration {} does not match its points",
                    c.config
                ));
            }
        }
        Ok(())
    }
}

impl super::ConfigEntry for KnnConfig {
    fn label(&self) -> &str {
        &self.config
    }
}

crate::learned_model!(KnnModel, "knn");

/// The `knn` learner.
pub struct Knn;

impl Learner for Knn {
    fn name(&self) -> &'static str {
        "knn"
    }
    fn fit(&self, rows: &[&TableRow], precision: Precision) -> Result<StoredModel> {
        let sets = dataset::per_config(rows, precision)?;
        super::check_any("knn", &sets, precision)?;
        let sets: Vec<_> = sets
            .into_iter()
            .filter(|s| !s.examples.is_empty())
            .collect();
        // The union of the features, in a fixed order.
        let mut features: Vec<Feature> = sets
            .iter()
            .flat_map(|s| select::neighbours(s.config.variant).iter().copied())
            .collect();
        features.sort();
        features.dedup();
        // One point per row that has any example.
        let mut index: HashMap<*const TableRow, usize> = HashMap::new();
        let mut points: Vec<Vec<f32>> = Vec::new();
        for (r, _) in sets.iter().flat_map(|s| &s.examples) {
            index.entry(*r as *const TableRow).or_insert_with(|| {
                points.push(
                    select::vector(&r.features, &features)
                        .into_iter()
                        .map(|v| v as f32)
                        .collect(),
                );
                points.len() - 1
            });
        }
        let range = |j: usize, pick: fn(f64, f64) -> f64, init: f64| {
            points.iter().map(|p| p[j] as f64).fold(init, pick)
        };
        let lo: Vec<f64> = (0..features.len())
            .map(|j| range(j, f64::min, f64::INFINITY))
            .collect();
        let hi: Vec<f64> = (0..features.len())
            .map(|j| range(j, f64::max, f64::NEG_INFINITY))
            .collect();
        let configs = sets
            .iter()
            .map(|s| {
                let mut y = vec![None; points.len()];
                for (r, t) in &s.examples {
                    y[index[&(*r as *const TableRow)]] = Some(*t as f32);
                }
                KnnConfig {
                    config: s.label.clone(),
                    k: select::knn_k(s.config.variant),
                    columns: select::neighbours(s.config.variant)
                        .iter()
                        .map(|f| features.iter().position(|g| g == f).unwrap_or(0))
                        .collect(),
                    y,
                }
            })
            .collect();
        Ok(StoredModel::Knn(KnnModel {
            precision,
            features,
            lo,
            hi,
            points,
            configs,
        }))
    }
}
