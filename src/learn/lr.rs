//! `lr`: 002's linear regression — per configuration, least squares of `ln(time)` on the
//! logarithms of the format's feature subset ([`super::select::regression`]).
//!
//! The fit is [`LinearFit`] with a small ridge term ([`RIDGE`]): 002 Table 2's subsets hold
//! columns that are exactly collinear on many matrices (minNnz = modeNnz = medianNnz for every
//! matrix of constant row length), where plain least squares has no unique solution and
//! extrapolates wildly to the held-out matrices.

use super::dataset::{self, ConfigSet};
use super::select::{self, Feature};
use super::Learner;
use crate::corpus::table::TableRow;
use crate::features::Features;
use crate::model::fit::LinearFit;
use crate::model::StoredModel;
use crate::{Error, Precision, Result};
use serde::{Deserialize, Serialize};

/// Ridge penalty of the fits, relative to the standardized columns (see [`LinearFit::fit`]).
pub const RIDGE: f64 = 1e-3;

/// One configuration's linear model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LrConfig {
    /// The configuration's label.
    pub config: String,
    /// The features, in the order of the coefficients.
    pub features: Vec<Feature>,
    /// `ln(seconds) = intercept + Σ coef · feature`.
    pub fit: LinearFit,
    /// Training examples.
    pub n: usize,
}

/// The `lr` family: one [`LrConfig`] per configuration of the training table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LrModel {
    /// The value precision it predicts.
    pub precision: Precision,
    /// One model per configuration, in display order.
    pub configs: Vec<LrConfig>,
}

impl LrModel {
    /// Predicted seconds of configuration `label`.
    pub fn predict_label(&self, f: &Features, label: &str) -> Result<f64> {
        let c = super::entry("lr", &self.configs, label)?;
        super::seconds("lr", label, c.fit.eval(&select::vector(f, &c.features)))
    }

    /// Every coefficient finite, one per feature.
    pub fn validate(&self) -> Result<()> {
        for c in &self.configs {
            if !c.fit.is_finite() || c.fit.coef.len() != c.features.len() {
                return Err(Error::Invalid(format!(
                    "lr model of {}: coefficients are not finite or do not match its features",
                    c.config
                )));
            }
        }
        Ok(())
    }
}

impl super::ConfigEntry for LrConfig {
    fn label(&self) -> &str {
        &self.config
    }
}

crate::learned_model!(LrModel, "lr");

/// Fit one configuration.
fn fit_config(set: &ConfigSet<'_>) -> Result<LrConfig> {
    let features = select::regression(set.config.variant).to_vec();
    let (xs, ys) = super::xy(set, &features);
    Ok(LrConfig {
        config: set.label.clone(),
        fit: LinearFit::fit(&format!("lr of {}", set.label), &xs, &ys, RIDGE)?,
        features,
        n: ys.len(),
    })
}

/// The `lr` learner.
pub struct Lr;

impl Learner for Lr {
    fn name(&self) -> &'static str {
        "lr"
    }
    fn fit(&self, rows: &[&TableRow], precision: Precision) -> Result<StoredModel> {
        let sets = dataset::per_config(rows, precision)?;
        super::check_any("lr", &sets, precision)?;
        let configs = sets
            .iter()
            .filter(|s| !s.examples.is_empty())
            .map(fit_config)
            .collect::<Result<Vec<_>>>()?;
        Ok(StoredModel::Lr(LrModel { precision, configs }))
    }
}
