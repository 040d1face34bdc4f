//! Learned performance models (Lehnert et al., Euro-Par 2016, "002"): per configuration, a
//! model of `ln(time)` from the matrix features, trained on a measured training table
//! ([`crate::corpus::table`]) rather than derived from benchmark matrices.
//!
//! * [`lr`] — least squares on the logarithms of 002 Table 2's feature subset per format;
//! * [`gb`] — gradient-boosted regression trees on the same features;
//! * [`knn`] — distance-weighted k nearest neighbours on 0–1-normalised, weighted features;
//! * [`select`] — which features each configuration's model reads (002 Table 2 and ours);
//! * [`dataset`] — training sets per configuration, the family-grouped K-fold split;
//! * [`cv`] — cross-validation: every learner trained on K − 1 folds and scored on the held-out
//!   one, as evaluation records ([`crate::evaluate::record::Record`]) so that the report's
//!   statistics ([`crate::evaluate::stats`]) score them the same way as every other model.
//!
//! Each family is a [`crate::model::Model`] (it predicts from [`crate::features::Features`] alone, every
//! configuration of its table — block sizes and SELL-C-σ's parameter sets included, through
//! [`crate::model::Model::configs`] and [`crate::model::Model::predict_config`]) and a
//! [`StoredModel`] family (`lr`, `gb`, `knn`) that a profile stores.
//!
//! # Adding a learned family
//!
//! A [`Learner`] turns table rows into a [`StoredModel`]; cross-validation and `sparsecast
//! train` take every learner of [`learners`]. To add one (say `sparsecast`, our own model):
//!
//! 1. write `src/learn/<family>.rs`: the model type (serde, implementing `Model`, most simply
//!    with the [`learned_model!`](crate::learned_model) macro over its `configs` and an
//!    inherent `predict_label()`) and a unit struct implementing [`Learner`];
//! 2. add its variant to [`StoredModel`] (`src/model/registry.rs`: the variant and its arm in
//!    `family` and `model`);
//! 3. add the unit struct to [`learners`].
//!
//! `train --models <family>` and the cross-validation report then include it.

pub mod cross_bw;
pub mod cross_own;
pub mod cv;
pub mod dataset;
pub mod gb;
pub mod knn;
pub mod lr;
pub mod own;
pub mod report;
pub mod select;
pub mod stage;
pub mod transfer;

use crate::backend::{KernelConfig, Variant};
use crate::corpus::table::TableRow;
use crate::formats::FormatKind;
use crate::model::StoredModel;
use crate::{Error, Precision, Result};

/// A learned model family: fits a [`StoredModel`] on table rows.
pub trait Learner: Sync {
    /// The family's name (`lr`, `gb`, `knn`): what `--models` selects and the model's name in
    /// the profile.
    fn name(&self) -> &'static str;
    /// Fit one model of `precision` on the rows of that precision in `rows` (the others are
    /// ignored). Fails when no configuration has a training example.
    fn fit(&self, rows: &[&TableRow], precision: Precision) -> Result<StoredModel>;
    /// [`Learner::fit`] without what only a stored model needs (the `sparsecast` model's
    /// uncertainty and calibration matrices): what `train --quick-cv` fits per fold, since the
    /// cross-validation's accuracy and ranking read the prediction alone.
    fn fit_prediction_only(&self, rows: &[&TableRow], precision: Precision) -> Result<StoredModel> {
        self.fit(rows, precision)
    }
}

/// Every learned family of this build.
pub fn learners() -> Vec<&'static dyn Learner> {
    vec![&lr::Lr, &gb::Gb, &knn::Knn, &own::Own]
}

/// The learners named in `names`, in that order; an unknown name is an error listing the known.
pub fn select_learners(names: &[String]) -> Result<Vec<&'static dyn Learner>> {
    names
        .iter()
        .map(|n| {
            learners()
                .into_iter()
                .find(|l| l.name() == n)
                .ok_or_else(|| {
                    let known: Vec<&str> = learners().iter().map(|l| l.name()).collect();
                    Error::Invalid(format!(
                        "unknown learned model '{n}' (known: {})",
                        known.join(", ")
                    ))
                })
        })
        .collect()
}

/// The table label a learned model looks `cfg` up by. Learned models are trained on each
/// format's default parameters except SELL-C-σ's C and σ (part of the label): an explicit ELL or
/// HYB width or another BSR block size is [`Error::Unsupported`].
pub fn label_of(model: &str, cfg: &KernelConfig) -> Result<String> {
    let p = &cfg.params;
    let custom = match cfg.variant.format() {
        _ if cfg.variant.is_vendor() => None,
        FormatKind::Ell => p.ell.width.map(|w| format!("ELL width {w}")),
        FormatKind::Hyb => p.hyb.width.map(|w| format!("HYB width {w}")),
        FormatKind::Bsr if p.bsr != Default::default() => {
            Some(format!("BSR block {}", p.bsr.block))
        }
        _ => None,
    };
    match custom {
        Some(what) => Err(Error::Unsupported(format!(
            "the {model} model was trained on default format parameters, not {what}"
        ))),
        None => Ok(cfg.label()),
    }
}

/// One configuration's part of a learned model: it knows its label.
pub trait ConfigEntry {
    /// The configuration's label ([`KernelConfig::label`]).
    fn label(&self) -> &str;
}

/// The labels of `entries`, in order.
pub fn labels<C: ConfigEntry>(entries: &[C]) -> Vec<&str> {
    entries.iter().map(|c| c.label()).collect()
}

/// The entry of `label`; [`Error::Unsupported`] when the `model`'s table had no data for it.
pub fn entry<'a, C: ConfigEntry>(model: &str, entries: &'a [C], label: &str) -> Result<&'a C> {
    entries.iter().find(|c| c.label() == label).ok_or_else(|| {
        Error::Unsupported(format!(
            "the {model} model has no training data for {label}"
        ))
    })
}

/// The configurations of `labels` (labels this build cannot parse are left out).
pub fn configs_of<'a>(labels: impl IntoIterator<Item = &'a str>) -> Vec<KernelConfig> {
    labels
        .into_iter()
        .filter_map(|l| KernelConfig::parse_label(l).ok())
        .collect()
}

/// The distinct variants of `configs`, in order.
pub fn variants_of(configs: &[KernelConfig]) -> Vec<Variant> {
    let mut out: Vec<Variant> = Vec::new();
    for c in configs {
        if !out.contains(&c.variant) {
            out.push(c.variant);
        }
    }
    out
}

/// Seconds from a predicted `ln(seconds)`; a non-finite result is an error.
pub fn seconds(model: &str, label: &str, ln_s: f64) -> Result<f64> {
    let s = ln_s.exp();
    if s.is_finite() && s > 0.0 {
        Ok(s)
    } else {
        Err(Error::Invalid(format!(
            "the {model} model predicted {s} s for {label}"
        )))
    }
}

/// Implement [`crate::model::Model`] for a learned family's type from its `precision` field,
/// its `configs` field (a list of [`ConfigEntry`]) and its inherent
/// `predict_label(&self, &Features, &str) -> Result<f64>` (seconds).
#[macro_export]
macro_rules! learned_model {
    ($ty:ty, $family:literal) => {
        impl $crate::model::Model for $ty {
            fn name(&self) -> &str {
                $family
            }
            fn precision(&self) -> $crate::Precision {
                self.precision
            }
            fn statistic(&self) -> $crate::instrument::Statistic {
                $crate::learn::dataset::STATISTIC
            }
            fn variants(&self) -> Vec<$crate::backend::Variant> {
                $crate::learn::variants_of(&self.configs())
            }
            fn predict(
                &self,
                features: &$crate::features::Features,
                variant: $crate::backend::Variant,
                params: &$crate::formats::FormatParams,
            ) -> $crate::Result<f64> {
                let cfg = $crate::backend::KernelConfig {
                    variant,
                    params: params.clone(),
                    block_size: $crate::backend::KernelConfig::DEFAULT_BLOCK_SIZE,
                };
                self.predict_config(features, &cfg)
            }
            fn configs(&self) -> Vec<$crate::backend::KernelConfig> {
                $crate::learn::configs_of($crate::learn::labels(&self.configs))
            }
            fn predict_config(
                &self,
                features: &$crate::features::Features,
                cfg: &$crate::backend::KernelConfig,
            ) -> $crate::Result<f64> {
                let label = $crate::learn::label_of($family, cfg)?;
                self.predict_label(features, &label)
            }
            fn uncertainty_config(
                &self,
                features: &$crate::features::Features,
                cfg: &$crate::backend::KernelConfig,
            ) -> Option<f64> {
                let label = $crate::learn::label_of($family, cfg).ok()?;
                $crate::learn::Uncertain::uncertainty_label(self, features, &label)
            }
            fn predict_detail(
                &self,
                features: &$crate::features::Features,
                variant: $crate::backend::Variant,
                params: &$crate::formats::FormatParams,
            ) -> $crate::Result<$crate::model::Prediction> {
                let cfg = $crate::backend::KernelConfig {
                    variant,
                    params: params.clone(),
                    block_size: $crate::backend::KernelConfig::DEFAULT_BLOCK_SIZE,
                };
                self.predict_detail_config(features, &cfg)
            }
            fn pick(
                &self,
                features: &$crate::features::Features,
                predicted: &[(String, f64)],
                family: Option<&str>,
            ) -> Option<usize> {
                $crate::learn::Uncertain::pick(self, features, predicted, family)
            }
            fn predict_detail_configs(
                &self,
                features: &$crate::features::Features,
                cfgs: &[$crate::backend::KernelConfig],
            ) -> Vec<$crate::Result<$crate::model::Prediction>> {
                let labels: Vec<$crate::Result<String>> = cfgs
                    .iter()
                    .map(|c| $crate::learn::label_of($family, c))
                    .collect();
                let known: Vec<&str> = labels.iter().filter_map(|l| l.as_deref().ok()).collect();
                let mut shared = $crate::learn::Uncertain::detail_labels(self, features, &known)
                    .map(|d| d.into_iter());
                labels
                    .into_iter()
                    .map(|l| {
                        let label = l?;
                        match shared.as_mut() {
                            Some(d) => $crate::learn::prediction(d.next()),
                            None => $crate::learn::detail_one(self, features, &label, |l| {
                                self.predict_label(features, l)
                            }),
                        }
                    })
                    .collect()
            }
            fn predict_detail_config(
                &self,
                features: &$crate::features::Features,
                cfg: &$crate::backend::KernelConfig,
            ) -> $crate::Result<$crate::model::Prediction> {
                let label = $crate::learn::label_of($family, cfg)?;
                $crate::learn::detail_one(self, features, &label, |l| {
                    self.predict_label(features, l)
                })
            }
            fn uncertainty(
                &self,
                features: &$crate::features::Features,
                variant: $crate::backend::Variant,
                params: &$crate::formats::FormatParams,
            ) -> Option<f64> {
                let cfg = $crate::backend::KernelConfig {
                    variant,
                    params: params.clone(),
                    block_size: $crate::backend::KernelConfig::DEFAULT_BLOCK_SIZE,
                };
                let label = $crate::learn::label_of($family, &cfg).ok()?;
                $crate::learn::Uncertain::uncertainty_label(self, features, &label)
            }
        }
    };
}

/// The [`crate::model::Prediction`] of configuration `label` of a learned model `m`
/// ([`learned_model!`](crate::learned_model)'s `predict_detail_config`): its
/// [`Uncertain::detail_label`] where it has one, else `predict` (its `predict_label`) with
/// [`Uncertain::uncertainty_label`].
pub fn detail_one<M: Uncertain + ?Sized>(
    m: &M,
    f: &crate::features::Features,
    label: &str,
    predict: impl Fn(&str) -> Result<f64>,
) -> Result<crate::model::Prediction> {
    match m.detail_label(f, label) {
        Some(d) => prediction(Some(d)),
        None => Ok(crate::model::Prediction {
            seconds: predict(label)?,
            uncertainty: m.uncertainty_label(f, label),
            clamped: None,
        }),
    }
}

/// The prediction of a `(seconds, one-sigma seconds)` detail ([`Uncertain::detail_label`]);
/// `None` is a model error (no detail where one was promised: [`Uncertain::detail_labels`]
/// gives one per label).
pub fn prediction(detail: Option<Result<(f64, f64)>>) -> Result<crate::model::Prediction> {
    let (seconds, u) = detail.ok_or_else(|| Error::Invalid("a missing prediction".into()))??;
    Ok(crate::model::Prediction {
        seconds,
        uncertainty: Some(u),
        clamped: None,
    })
}

/// A learned model's own uncertainty of one configuration (one sigma, seconds); none by default.
pub trait Uncertain {
    /// One-sigma uncertainty of configuration `label`, seconds, if the model knows it.
    fn uncertainty_label(&self, f: &crate::features::Features, label: &str) -> Option<f64> {
        let _ = (f, label);
        None
    }
    /// Predicted seconds and their one-sigma uncertainty of configuration `label` in one pass,
    /// for a model whose uncertainty comes with its prediction (`None`: ask
    /// [`crate::model::Model::predict`] and [`Uncertain::uncertainty_label`] apart). `predict`
    /// and `rank` ask for both for every configuration; computing the model's inputs once
    /// halves the time of a ranking (`sparsecast` v2: ≈ 1.1 → 0.6 ms for a matrix).
    fn detail_label(
        &self,
        f: &crate::features::Features,
        label: &str,
    ) -> Option<crate::Result<(f64, f64)>> {
        let _ = (f, label);
        None
    }
    /// [`Uncertain::detail_label`] of every label of `labels`, all of one matrix (`None`:
    /// ask per label): what a model shares between the configurations of a matrix is then
    /// computed once ([`crate::model::Model::predict_detail_configs`]). One result per label,
    /// in order, the same as [`Uncertain::detail_label`]'s.
    fn detail_labels(
        &self,
        f: &crate::features::Features,
        labels: &[&str],
    ) -> Option<Vec<crate::Result<(f64, f64)>>> {
        let _ = (f, labels);
        None
    }
    /// The model's second-stage recommendation ([`crate::model::Model::pick`]); none by
    /// default.
    fn pick(
        &self,
        f: &crate::features::Features,
        predicted: &[(String, f64)],
        family: Option<&str>,
    ) -> Option<usize> {
        let _ = (f, predicted, family);
        None
    }
}

impl Uncertain for lr::LrModel {}
impl Uncertain for gb::GbModel {}
impl Uncertain for knn::KnnModel {}
impl Uncertain for own::OwnModel {
    fn uncertainty_label(&self, f: &crate::features::Features, label: &str) -> Option<f64> {
        own::OwnModel::uncertainty_label(self, f, label)
    }
    fn detail_label(
        &self,
        f: &crate::features::Features,
        label: &str,
    ) -> Option<crate::Result<(f64, f64)>> {
        Some(self.detail(f, label).map(|(t, s)| (t, t * s)))
    }
    fn detail_labels(
        &self,
        f: &crate::features::Features,
        labels: &[&str],
    ) -> Option<Vec<crate::Result<(f64, f64)>>> {
        let details = self.details(f, labels).into_iter();
        Some(details.map(|d| d.map(|(t, s)| (t, t * s))).collect())
    }
    fn pick(
        &self,
        f: &crate::features::Features,
        predicted: &[(String, f64)],
        family: Option<&str>,
    ) -> Option<usize> {
        self.pick.as_ref()?.pick(f, predicted, family)
    }
}

/// The row-major feature matrix and targets of one configuration's examples.
pub fn xy(set: &dataset::ConfigSet<'_>, features: &[select::Feature]) -> (Vec<Vec<f64>>, Vec<f64>) {
    set.examples
        .iter()
        .map(|(r, y)| (select::vector(&r.features, features), *y))
        .unzip()
}

/// Fail with a clear message when `precision` has no training example at all.
pub fn check_any(
    family: &str,
    sets: &[dataset::ConfigSet<'_>],
    precision: Precision,
) -> Result<()> {
    if sets.iter().all(|s| s.examples.is_empty()) {
        return Err(Error::Invalid(format!(
            "{family}: the table has no {precision} measurement to train on"
        )));
    }
    Ok(())
}
