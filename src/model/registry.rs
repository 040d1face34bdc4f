//! The models a profile stores: every family, by name, serialized.
//!
//! A profile holds a list of [`NamedModel`]s; each is a name (what `--models` selects and
//! reports show) and a [`StoredModel`], a serde enum tagged by `family` whose variants are the
//! model families of this build. **Adding a family** means one variant here (with its
//! serialized type), one arm in [`StoredModel::model`], and, where the family is fitted from the
//! profile's own benchmark measurements, one arm in [`StoredModel::refit`] so a loaded profile is
//! checked against its measurements.

use super::{AnalyticalModel, CrossModel, Model, StatisticalModel};
use crate::instrument::{DeviceLimits, Measurement, Statistic};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// A serialized model of any family: an object whose key `family` names it (written first).
/// Read by [`StoredModel::deserialize`].
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "family", rename_all = "kebab-case")]
// A profile holds a handful of models: their size in memory does not matter.
#[allow(clippy::large_enum_variant)]
pub enum StoredModel {
    /// Guo & Wang's analytical model (004 §3), fitted to the profile's benchmark measurements.
    Analytical(AnalyticalModel),
    /// Wang, Gu & Li's statistical model (001), fitted to its own benchmark measurements.
    Statistical(StatisticalModel),
    /// Lehnert et al.'s linear regression on log features (002 §3.2), trained on a table.
    Lr(crate::learn::lr::LrModel),
    /// Gradient-boosted regression trees (002 §3.2), trained on a table.
    Gb(crate::learn::gb::GbModel),
    /// Distance-weighted k nearest neighbours (002 §3.3), trained on a table.
    Knn(crate::learn::knn::KnnModel),
    /// sparsecast's own model: bytes / bandwidth corrected by boosted trees, trained on a table.
    Sparsecast(crate::learn::own::OwnModel),
    /// Guo & Wang's cross-architecture model (003): a reference time carried to this device.
    Cross(CrossModel),
}

/// The families, as `family` names them.
const FAMILIES: &[&str] = &[
    "analytical",
    "statistical",
    "lr",
    "gb",
    "knn",
    "sparsecast",
    "cross",
];

/// Read a model as serde's internally tagged enum would, without its copy of the whole model
/// before parsing it: where `family` is the first key (as every profile writes it) the rest of
/// the object is read straight into the family's type. A `sparsecast` model is ≈ 20 MB of JSON;
/// the copy made loading a profile take 440 MB and ≈ 0.3 s more (session 53,
/// `/usr/bin/time sparsecast predict data/cage11.mtx.gz`). Elsewhere (`family` later in the
/// object) the object is read whole first.
impl<'de> Deserialize<'de> for StoredModel {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_map(StoredVisitor)
    }
}

struct StoredVisitor;

impl StoredVisitor {
    fn family<'de, D: serde::Deserializer<'de>>(
        family: &str,
        d: D,
    ) -> std::result::Result<StoredModel, D::Error> {
        Ok(match family {
            "analytical" => StoredModel::Analytical(Deserialize::deserialize(d)?),
            "statistical" => StoredModel::Statistical(Deserialize::deserialize(d)?),
            "lr" => StoredModel::Lr(Deserialize::deserialize(d)?),
            "gb" => StoredModel::Gb(Deserialize::deserialize(d)?),
            "knn" => StoredModel::Knn(Deserialize::deserialize(d)?),
            "sparsecast" => StoredModel::Sparsecast(Deserialize::deserialize(d)?),
            "cross" => StoredModel::Cross(Deserialize::deserialize(d)?),
            other => return Err(serde::de::Error::unknown_variant(other, FAMILIES)),
        })
    }
}

impl<'de> serde::de::Visitor<'de> for StoredVisitor {
    type Value = StoredModel;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a model: an object with a `family` key")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(
        self,
        mut map: A,
    ) -> std::result::Result<StoredModel, A::Error> {
        use serde::de::Error as _;
        let first: Option<String> = map.next_key()?;
        if first.as_deref() == Some("family") {
            let family: String = map.next_value()?;
            return StoredVisitor::family(
                &family,
                serde::de::value::MapAccessDeserializer::new(map),
            );
        }
        let mut obj = serde_json::Map::new();
        if let Some(k) = first {
            obj.insert(k, map.next_value()?);
        }
        while let Some((k, v)) = map.next_entry::<String, serde_json::Value>()? {
            obj.insert(k, v);
        }
        let family = match obj.remove("family") {
            Some(serde_json::Value::String(f)) => f,
            Some(_) => return Err(A::Error::custom("`family` is not a string")),
            None => return Err(A::Error::missing_field("family")),
        };
        StoredVisitor::family(&family, serde_json::Value::Object(obj)).map_err(A::Error::custom)
    }
}

impl StoredModel {
    /// The family name (`analytical`, …).
    pub fn family(&self) -> &'static str {
        match self {
            StoredModel::Analytical(_) => "analytical",
            StoredModel::Statistical(_) => "statistical",
            StoredModel::Lr(_) => "lr",
            StoredModel::Gb(_) => "gb",
            StoredModel::Knn(_) => "knn",
            StoredModel::Sparsecast(_) => "sparsecast",
            StoredModel::Cross(_) => "cross",
        }
    }

    /// The model behind the trait.
    pub fn model(&self) -> &dyn Model {
        match self {
            StoredModel::Analytical(m) => m,
            StoredModel::Statistical(m) => m,
            StoredModel::Lr(m) => m,
            StoredModel::Gb(m) => m,
            StoredModel::Knn(m) => m,
            StoredModel::Sparsecast(m) => m,
            StoredModel::Cross(m) => m,
        }
    }

    /// The analytical model, if this is one.
    pub fn analytical(&self) -> Option<&AnalyticalModel> {
        match self {
            StoredModel::Analytical(m) => Some(m),
            _ => None,
        }
    }

    /// The precision, device and statistic a model fitted to benchmarks was fitted for (its
    /// profile section must have the same); `None` for other families.
    pub fn fitted_for(&self) -> Option<(crate::Precision, &DeviceLimits, Statistic)> {
        match self {
            StoredModel::Analytical(m) => Some((m.precision, &m.limits, m.statistic)),
            StoredModel::Statistical(m) => Some((m.precision, &m.limits, m.statistic)),
            _ => None,
        }
    }

    /// The same family fitted again from `measurements`, for checking a loaded profile; `None`
    /// for families not fitted from the profile's benchmarks.
    pub fn refit(&self, measurements: &[Measurement]) -> Result<Option<StoredModel>> {
        match self {
            StoredModel::Analytical(m) => Ok(Some(StoredModel::Analytical(AnalyticalModel::fit(
                m.precision,
                &m.limits,
                m.statistic,
                measurements,
            )?))),
            StoredModel::Statistical(m) => Ok(Some(StoredModel::Statistical(m.refit()?))),
            StoredModel::Lr(_)
            | StoredModel::Gb(_)
            | StoredModel::Knn(_)
            | StoredModel::Sparsecast(_)
            | StoredModel::Cross(_) => Ok(None),
        }
    }

    /// Check every number is usable.
    pub fn validate(&self) -> Result<()> {
        match self {
            StoredModel::Analytical(m) if !m.is_valid() => Err(Error::Invalid(
                "fitted parameters are not finite positive numbers".into(),
            )),
            StoredModel::Statistical(m) if !m.is_valid() => Err(Error::Invalid(
                "fitted parameters or benchmark times are not finite positive numbers".into(),
            )),
            StoredModel::Lr(m) => m.validate(),
            StoredModel::Gb(m) => m.validate(),
            StoredModel::Knn(m) => m.validate(),
            StoredModel::Sparsecast(m) => m.validate(),
            StoredModel::Cross(m) if !m.is_valid() => Err(Error::Invalid(
                "cross-architecture factors are not finite numbers".into(),
            )),
            _ => Ok(()),
        }
    }
}

/// A stored model is a model (every call forwarded to its family's type).
impl Model for StoredModel {
    fn name(&self) -> &str {
        self.model().name()
    }
    fn precision(&self) -> crate::Precision {
        self.model().precision()
    }
    fn statistic(&self) -> crate::instrument::Statistic {
        self.model().statistic()
    }
    fn variants(&self) -> Vec<crate::backend::Variant> {
        self.model().variants()
    }
    fn predict_shape(
        &self,
        shape: &super::Shape,
        variant: crate::backend::Variant,
        params: &crate::formats::FormatParams,
    ) -> Result<f64> {
        self.model().predict_shape(shape, variant, params)
    }
    fn predict(
        &self,
        features: &crate::features::Features,
        variant: crate::backend::Variant,
        params: &crate::formats::FormatParams,
    ) -> Result<f64> {
        self.model().predict(features, variant, params)
    }
    fn uncertainty(
        &self,
        features: &crate::features::Features,
        variant: crate::backend::Variant,
        params: &crate::formats::FormatParams,
    ) -> Option<f64> {
        self.model().uncertainty(features, variant, params)
    }
    fn predict_detail(
        &self,
        features: &crate::features::Features,
        variant: crate::backend::Variant,
        params: &crate::formats::FormatParams,
    ) -> Result<super::Prediction> {
        self.model().predict_detail(features, variant, params)
    }
    fn explain(
        &self,
        features: &crate::features::Features,
        variant: crate::backend::Variant,
        params: &crate::formats::FormatParams,
    ) -> String {
        self.model().explain(features, variant, params)
    }
    fn configs(&self) -> Vec<crate::backend::KernelConfig> {
        self.model().configs()
    }
    fn predict_config(
        &self,
        features: &crate::features::Features,
        cfg: &crate::backend::KernelConfig,
    ) -> Result<f64> {
        self.model().predict_config(features, cfg)
    }
    fn uncertainty_config(
        &self,
        features: &crate::features::Features,
        cfg: &crate::backend::KernelConfig,
    ) -> Option<f64> {
        self.model().uncertainty_config(features, cfg)
    }
    fn predict_detail_config(
        &self,
        features: &crate::features::Features,
        cfg: &crate::backend::KernelConfig,
    ) -> Result<super::Prediction> {
        self.model().predict_detail_config(features, cfg)
    }
    fn predict_detail_configs(
        &self,
        features: &crate::features::Features,
        cfgs: &[crate::backend::KernelConfig],
    ) -> Vec<Result<super::Prediction>> {
        self.model().predict_detail_configs(features, cfgs)
    }
    fn pick(
        &self,
        features: &crate::features::Features,
        predicted: &[(String, f64)],
        family: Option<&str>,
    ) -> Option<usize> {
        self.model().pick(features, predicted, family)
    }
}

/// A model of a profile with its name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NamedModel {
    /// Name, unique in its profile section (`analytical`, `statistical-normal`, …).
    pub name: String,
    /// The model.
    pub model: StoredModel,
    /// The matrix families a learned model was trained on (`sparsecast train`: a real matrix and
    /// its Kronecker expansions are one family, named by the file's stem; a generated matrix is its
    /// own). A matrix of one of them is in-sample for this model: `evaluate` leaves such
    /// predictions out of its scores. Empty for the models fitted on benchmark matrices only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trained_families: Vec<String>,
}

impl NamedModel {
    /// A model with no training matrices of its own (fitted on benchmark matrices, or built).
    pub fn new(name: impl Into<String>, model: StoredModel) -> NamedModel {
        NamedModel {
            name: name.into(),
            model,
            trained_families: Vec::new(),
        }
    }

    /// Whether the matrix family `family` was among this model's training matrices.
    pub fn trained_on(&self, family: &str) -> bool {
        in_families(&self.trained_families, family)
    }
}

/// Whether `family` is in the sorted list `families` (a model's
/// [`NamedModel::trained_families`]). A generated matrix is named by its id where it is
/// evaluated (`gen/s11-00208-blockdiag-20732x10-s4058826902`, [`crate::evaluate::record::family_of`])
/// but by its draw's family in the training tables (`gen/s11-00208`,
/// `crate::corpus::draw`): such an id is in the list when its family — the id up to a `-` —
/// is. (Before session 26 only the exact name matched, so `evaluate` and `predict` scored
/// generated matrices a model had trained on as held out.)
pub fn in_families(families: &[String], family: &str) -> bool {
    match families.binary_search_by(|f| f.as_str().cmp(family)) {
        Ok(_) => true,
        // The greatest name below `family` is its draw family if any is: `-` sorts below
        // every digit and letter, so no other name falls between `gen/x-1` and `gen/x-1-…`.
        Err(i) => {
            family.starts_with("gen/")
                && i > 0
                && family
                    .strip_prefix(families[i - 1].as_str())
                    .is_some_and(|rest| rest.starts_with('-'))
        }
    }
}

/// Keep the models named in `names` (all when `None`), in the order given; an unknown name is an
/// error that lists the names there are.
pub fn select<'a>(
    models: &'a [NamedModel],
    names: Option<&[String]>,
) -> Result<Vec<&'a NamedModel>> {
    let Some(names) = names else {
        return Ok(models.iter().collect());
    };
    names
        .iter()
        .map(|n| {
            models.iter().find(|m| &m.name == n).ok_or_else(|| {
                Error::Invalid(format!(
                    "the profile has no model '{n}' (it has: {})",
                    models
                        .iter()
                        .map(|m| m.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::in_families;

    #[test]
    fn a_generated_matrix_is_in_the_families_of_its_draw() {
        let fams: Vec<String> = ["cage11", "gen/s11-00208", "gen/s11-m00012", "kron-x"]
            .map(String::from)
            .to_vec();
        assert!(in_families(&fams, "cage11"));
        assert!(in_families(&fams, "gen/s11-00208"));
        assert!(in_families(
            &fams,
            "gen/s11-00208-blockdiag-20732x10-s4058826902"
        ));
        assert!(in_families(
            &fams,
            "gen/s11-m00012-stack-random-3x3+banded-9-b1-s1"
        ));
        // Another draw index, a longer index, or a file are not.
        assert!(!in_families(&fams, "gen/s11-00209-blockdiag-20732x10-s1"));
        assert!(!in_families(&fams, "gen/s11-002080-random-1x1"));
        assert!(!in_families(&fams, "cage11-x"));
        assert!(!in_families(&fams, "gen/s10-00208-banded-9-b1-s1"));
    }

    /// A model reads back the same with `family` first (as written: read straight through) or
    /// last (read whole first); an unknown or missing family is an error that says so.
    #[test]
    fn a_model_reads_with_its_family_anywhere_in_the_object() {
        use super::StoredModel;
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let p = crate::profile::Profile::load(&root.join("profiles/cpu-example.json")).unwrap();
        let models: Vec<&StoredModel> = p
            .precisions
            .iter()
            .flat_map(|s| &s.models)
            .map(|m| &m.model)
            .collect();
        assert!(models.len() >= 2);
        for m in models {
            let text = serde_json::to_string(m).unwrap();
            let tag = format!("\"family\":\"{}\",", m.family());
            assert!(text.starts_with(&format!("{{{tag}")), "{text:.60}");
            let last = format!("{{{}{}}}", &text[1 + tag.len()..text.len() - 1], {
                format!(",{}", tag.trim_end_matches(','))
            });
            for t in [&text, &last] {
                let back: StoredModel = serde_json::from_str(t).unwrap();
                assert_eq!(&back, m);
            }
        }
        let e = serde_json::from_str::<StoredModel>(r#"{"family":"oracle","x":1}"#).unwrap_err();
        assert!(e.to_string().contains("unknown variant `oracle`"), "{e}");
        let e = serde_json::from_str::<StoredModel>(r#"{"x":1}"#).unwrap_err();
        assert!(e.to_string().contains("missing field `family`"), "{e}");
        let e = serde_json::from_str::<StoredModel>(r#"{"family":"lr","x":1}"#).unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
    }
}
