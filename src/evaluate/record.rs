//! The schema of `results.jsonl`: one [`Record`] per line, one per matrix × configuration ×
//! precision.
//!
//! Every record is self-contained (matrix features, backend, device and timing protocol are
//! repeated), so the report can be regenerated from `results.jsonl` alone and a record can be
//! read without its neighbours. Times are seconds. Example (one line, wrapped here):
//!
//! ```json
//! {"schema":1,"matrix":"suitesparse/cage11.mtx.gz","source":{"file":"/…/cage11.mtx.gz"},
//!  "precision":"f64","config":"ell","kind":"ours","format":"ell","status":"ok","reason":null,
//!  "backend":"cuda","device":"NVIDIA H200 …","runs":30,"warmup":5,
//!  "median_s":1.1e-5,"warm_mean_s":1.2e-5,"footprint_bytes":…,"effective_bytes":…,
//!  "max_rel_error":3e-16,"prepare_s":0.004,"features":{…},
//!  "predictions":{"analytical":{"seconds":1.3e-5,"statistic":"warm-mean"}},"plan":null}
//! ```

use crate::backend::measure::{KernelMeasurement, Status};
use crate::backend::TimingProtocol;
use crate::features::Features;
use crate::instrument::Statistic;
use crate::matrix::generate::GeneratorSpec;
use crate::Precision;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// The schema version written in every record.
pub const SCHEMA: u32 = 1;

/// Where a record's matrix came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceInfo {
    /// A Matrix Market file (the path as it was read).
    File(PathBuf),
    /// A generated matrix: the spec that rebuilds it (`sparsecast generate`).
    Generated(GeneratorSpec),
    /// A generated matrix whose spec could not be resolved (its build failed): the recipe in words.
    Recipe(String),
}

/// What kind of configuration a record measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConfigKind {
    /// One of our kernels (a format and thread mapping).
    Ours,
    /// A cuSPARSE algorithm.
    Vendor,
    /// The optimizer's plan (row blocks, one format each) chosen with one model.
    Plan,
}

/// One model's prediction for a record's configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    /// Predicted seconds, `None` if the model refused (the reason is in `note`).
    pub seconds: Option<f64>,
    /// The statistic of the timed runs the model predicts, and is compared with
    /// (`warm-mean` or `median`).
    #[serde(default)]
    pub statistic: Statistic,
    /// Why the model refused, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The matrix's family was among the model's training matrices
    /// ([`crate::model::registry::NamedModel::trained_families`]): kept in the record, left out
    /// of every score ([`Record::predicted`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_sample: bool,
    /// The model's second stage recommends this configuration of the matrix over its
    /// predicted-fastest ([`crate::model::Model::pick`]); the reports' pick of the model is then
    /// this one ([`crate::evaluate::stats::pick`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub picked: bool,
    /// The uncertainty the model states with this prediction ([`crate::model::Model::
    /// uncertainty_config`], seconds: the one-sigma `predict` prints as `± x %`), where it
    /// states one; the reports count how often the measurement falls within it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uncertainty_s: Option<f64>,
}

/// The matrix family of a record's matrix, as the training tables name it
/// (`corpus::table::TableRow::family`): a file's stem, the stem of a Kronecker expansion's file,
/// else the matrix id (a generated matrix is its own family).
pub fn family_of(matrix: &str, source: &SourceInfo) -> String {
    use crate::matrix::generate::GeneratorSpec;
    match source {
        SourceInfo::File(p) => super::corpus::short_name(&p.to_string_lossy()),
        SourceInfo::Generated(GeneratorSpec::Kronecker { matrix: m, .. }) => {
            super::corpus::short_name(&m.to_string_lossy())
        }
        _ => matrix.to_string(),
    }
}

/// One block of a measured plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanBlockInfo {
    /// First row.
    pub row_start: usize,
    /// One past the last row.
    pub row_end: usize,
    /// Kernel name.
    pub kernel: String,
}

/// What the optimizer chose, for plan records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanInfo {
    /// The model the plan was optimized with.
    pub model: String,
    /// The blocks, in row order.
    pub blocks: Vec<PlanBlockInfo>,
    /// Wall-clock seconds the optimization took.
    pub optimize_s: f64,
}

/// One line of `results.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// [`SCHEMA`].
    pub schema: u32,
    /// The matrix id ([`super::corpus`]).
    pub matrix: String,
    /// Where the matrix came from.
    pub source: SourceInfo,
    /// Value precision.
    pub precision: Precision,
    /// Configuration name: a kernel (`csr-vector`, `cusparse-csr-alg2`) or `plan-<model>`.
    pub config: String,
    /// Ours, vendor or plan.
    pub kind: ConfigKind,
    /// Storage format (`csr`, `ell` …); `None` for a plan.
    pub format: Option<String>,
    /// `ok`, `skipped`, `mismatch` or `failed`.
    pub status: Status,
    /// Why it was not measured.
    pub reason: Option<String>,
    /// Backend name (`cpu`, `cuda`).
    pub backend: String,
    /// Device description.
    pub device: String,
    /// β: timed runs.
    pub runs: usize,
    /// α: warm-up runs excluded.
    pub warmup: usize,
    /// Median of the kept runs, seconds.
    pub median_s: Option<f64>,
    /// The papers' warm-up-excluding mean, seconds: the measured time of the speed comparison,
    /// and of the accuracy of models fitted to it (see [`Prediction::statistic`]).
    pub warm_mean_s: Option<f64>,
    /// The timing protocol (absent in records of the old per-launch protocol).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<TimingProtocol>,
    /// Interquartile range of the timed samples relative to their median: a difference smaller
    /// than the spread is a tie.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<f64>,
    /// SpMVs per timed sample (batch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_batch: Option<usize>,
    /// Whether the SpMV was replayed as a CUDA graph.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph: Option<bool>,
    /// The median of each memory placement (empty when timed in one; the statistics above pool
    /// them: [`crate::backend::measure::measure_kernel`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub placement_medians: Vec<f64>,
    /// Timings taken again because they were disturbed (spread above 10 %; see
    /// `backend::timing`, step 6).
    #[serde(default, skip_serializing_if = "crate::util::is_zero")]
    pub retimed: usize,
    /// Bytes of the format's arrays on the device.
    pub footprint_bytes: Option<u64>,
    /// Minimum bytes one SpMV moves (arrays + x + y).
    pub effective_bytes: Option<u64>,
    /// Largest error against the f64 reference.
    pub max_rel_error: Option<f64>,
    /// Seconds spent preparing (conversion, upload).
    pub prepare_s: Option<f64>,
    /// The matrix's features in this precision; `None` if the matrix could not be built.
    pub features: Option<Features>,
    /// Every model's prediction for this configuration, by model name (models that do not cover
    /// the configuration are absent).
    pub predictions: BTreeMap<String, Prediction>,
    /// The plan, for plan records.
    pub plan: Option<PlanInfo>,
}

/// A measured record for unit tests: `config` of `kind` on `matrix` in `precision`, median and
/// warm mean `t` (status `ok`; `skipped` for `None`), everything else empty.
#[cfg(test)]
pub(crate) fn test_record(
    matrix: &str,
    precision: Precision,
    config: &str,
    kind: ConfigKind,
    t: Option<f64>,
) -> Record {
    Record {
        schema: SCHEMA,
        matrix: matrix.into(),
        source: SourceInfo::Recipe("test".into()),
        placement_medians: Vec::new(),
        precision,
        config: config.into(),
        kind,
        format: None,
        status: if t.is_some() {
            Status::Ok
        } else {
            Status::Skipped
        },
        reason: None,
        backend: "cuda".into(),
        device: "test GPU".into(),
        runs: 20,
        warmup: 0,
        median_s: t,
        warm_mean_s: t,
        protocol: None,
        spread: None,
        per_batch: None,
        graph: None,
        retimed: 0,
        footprint_bytes: None,
        effective_bytes: None,
        max_rel_error: None,
        prepare_s: None,
        features: None,
        predictions: BTreeMap::new(),
        plan: None,
    }
}

/// The resume key: matrix id, precision, configuration.
pub type Key = (String, Precision, String);

impl Record {
    /// The resume key of this record.
    pub fn key(&self) -> Key {
        (self.matrix.clone(), self.precision, self.config.clone())
    }

    /// The measured time of the speed comparison (the median over the timed batches, the time
    /// the protocol reports), if measured.
    pub fn time(&self) -> Option<f64> {
        self.measured(Statistic::Median)
    }

    /// The relative spread of the measurement (0 where the record carries none).
    pub fn spread(&self) -> f64 {
        self.spread
            .filter(|s| s.is_finite() && *s >= 0.0)
            .unwrap_or(0.0)
    }

    /// The measured `statistic` (positive and finite), if measured.
    pub fn measured(&self, statistic: Statistic) -> Option<f64> {
        if self.status != Status::Ok {
            return None;
        }
        match statistic {
            Statistic::WarmMean => self.warm_mean_s,
            Statistic::Median => self.median_s,
        }
        .filter(|t| t.is_finite() && *t > 0.0)
    }

    /// A model's predicted seconds, if it predicted this configuration on a matrix it did not
    /// train on (in-sample predictions are not scored).
    pub fn predicted(&self, model: &str) -> Option<f64> {
        self.predictions
            .get(model)
            .filter(|p| !p.in_sample)
            .and_then(|p| p.seconds)
            .filter(|t| t.is_finite() && *t > 0.0)
    }

    /// A model's prediction beside the measurement of the statistic it predicts:
    /// `(predicted, measured)`.
    pub fn prediction_pair(&self, model: &str) -> Option<(f64, f64)> {
        let p = self.predictions.get(model)?;
        Some((self.predicted(model)?, self.measured(p.statistic)?))
    }

    /// The uncertainty `model` stated with its prediction, seconds (finite and positive).
    pub fn stated_uncertainty(&self, model: &str) -> Option<f64> {
        self.predictions
            .get(model)
            .and_then(|p| p.uncertainty_s)
            .filter(|u| u.is_finite() && *u > 0.0)
    }

    /// Copy a kernel measurement's fields into this record.
    pub fn set_measurement(&mut self, m: KernelMeasurement) {
        self.status = m.status;
        self.reason = m.reason;
        self.median_s = m.median_s;
        self.warm_mean_s = m.warm_mean_s;
        self.spread = m.spread;
        self.per_batch = m.per_batch;
        self.graph = m.graph;
        self.placement_medians = m.placement_medians;
        self.retimed = m.retimed;
        self.footprint_bytes = m.footprint_bytes;
        self.effective_bytes = m.effective_bytes;
        self.max_rel_error = m.max_rel_error;
        self.prepare_s = m.prepare_s;
    }
}
