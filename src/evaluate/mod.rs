//! The evaluation harness behind `sparsecast evaluate`: accuracy, ranking quality and speed
//! against the vendor library, side by side, on real and generated matrices.
//!
//! For every matrix ([`corpus`], [`generated`]) and precision, every configuration — each of our
//! formats and thread mappings, each cuSPARSE algorithm the backend has, and the optimizer's plan
//! per model ([`models`]) — is measured (checked against the f64 reference, then timed), every
//! model in the build predicts it, and one [`record::Record`] is appended to `results.jsonl`
//! ([`store`]). A killed run continues where it stopped: finished (matrix, precision,
//! configuration) keys are not measured again. The [`report`] (`report.md` + SVG [`plots`]) is
//! computed from the records alone ([`stats`]).
//!
//! Output directory:
//!
//! | file | content |
//! |---|---|
//! | `results.jsonl` | one record per line, appended, flushed and synced per record |
//! | `run.json` | every invocation that wrote to `results.jsonl` (command, device, profile, models) |
//! | `report.md` | the report |
//! | `*.svg` | its plots |

pub mod corpus;
pub mod crossarch;
pub mod generated;
pub mod inputs;
pub mod models;
pub mod noise;
pub mod plots;
pub mod record;
pub mod report;
pub mod run;
pub mod stats;
pub mod store;

use crate::backend::TimingProtocol;
use crate::profile::Profile;
use crate::{Error, Precision, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub use generated::GeneratedSet;
pub use run::{run, Options, Outcome};

/// Name of the results file in the output directory.
pub const RESULTS: &str = "results.jsonl";
/// Name of the report in the output directory.
pub const REPORT: &str = "report.md";
/// Name of the invocation log in the output directory.
pub const RUN_INFO: &str = "run.json";

/// One invocation of `sparsecast evaluate` that wrote to the output directory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Invocation {
    pub sparsecast_version: String,
    /// The command line.
    pub command: Vec<String>,
    pub backend: String,
    pub device: String,
    /// Name of the profile the models came from.
    pub profile: Option<String>,
    /// Models, as `name (precision)`.
    pub models: Vec<String>,
    /// Plan configurations.
    pub plans: Vec<String>,
    /// Whether the build had the optimizer.
    pub has_optimizer: bool,
    pub precisions: Vec<Precision>,
    pub protocol: TimingProtocol,
    /// Cap on each format's footprint (bytes).
    pub max_format_bytes: u64,
    /// Generated set (`none`, `small`, `default`).
    pub generated: String,
    pub corpus: Vec<PathBuf>,
    pub started_unix: u64,
    /// `None` while running or if the run was killed.
    pub finished_unix: Option<u64>,
    /// Records kept from earlier runs.
    pub resumed: usize,
    /// Records this invocation wrote.
    pub written: usize,
}

/// The content of `run.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    /// Oldest first.
    pub invocations: Vec<Invocation>,
}

impl RunInfo {
    /// Read `dir/run.json`; a missing or unreadable file gives an empty log (with a warning on
    /// stderr for an unreadable one: it is informational, the results do not depend on it).
    pub fn load_or_default(dir: &Path) -> RunInfo {
        let path = dir.join(RUN_INFO);
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text).unwrap_or_else(|e| {
                eprintln!(
                    "warning: {}: not a valid run log ({e}); starting a new one",
                    path.display()
                );
                RunInfo::default()
            }),
            Err(_) => RunInfo::default(),
        }
    }

    /// Write `dir/run.json` atomically.
    pub fn save(&self, dir: &Path) -> Result<()> {
        crate::util::write_atomic(&dir.join(RUN_INFO), |w| {
            serde_json::to_writer_pretty(&mut *w, self).map_err(std::io::Error::other)?;
            w.write_all(b"\n")
        })
    }
}

/// Regenerate `report.md` and the plots of `dir` from `dir/results.jsonl` (and `run.json` if
/// present). Returns the number of records.
pub fn report_only(dir: &Path) -> Result<usize> {
    report_again(dir, None)
}

/// Like [`report_only`], but when `repredict` names a profile (and optionally some of its
/// models), every record of one of our kernels that carries its matrix's features is predicted
/// again by those models (default format parameters, as `evaluate` runs them), replacing the
/// predictions it was written with; plan records keep theirs. `results.jsonl` is not changed:
/// the report shows how the profile's models fare on measurements taken earlier, so models are
/// compared on the very same times.
pub fn report_again(dir: &Path, repredict: Option<(&Profile, Option<&[String]>)>) -> Result<usize> {
    let path = dir.join(RESULTS);
    if !path.exists() {
        return Err(Error::Invalid(format!(
            "{}: no results to report on (run `sparsecast evaluate` first)",
            path.display()
        )));
    }
    let loaded = store::load(&path)?;
    for w in &loaded.warnings {
        eprintln!("warning: {w}");
    }
    if loaded.records.is_empty() {
        return Err(Error::Invalid(format!(
            "{}: holds no records",
            path.display()
        )));
    }
    let mut records = loaded.records;
    if let Some((profile, names)) = repredict {
        let mut by_precision = std::collections::BTreeMap::new();
        for p in [Precision::F32, Precision::F64] {
            by_precision.insert(p, models::models(Some(profile), p, names)?);
        }
        let params = crate::formats::FormatParams::default();
        let mut picks = std::collections::BTreeMap::new();
        for r in records
            .iter_mut()
            .filter(|r| r.kind != record::ConfigKind::Plan)
        {
            let (Some(f), Ok(v)) = (&r.features, crate::backend::Variant::parse(&r.config)) else {
                continue;
            };
            r.predictions.clear();
            let family = record::family_of(&r.matrix, &r.source);
            for m in &by_precision[&r.precision] {
                if let Some(mut pr) = run::predict(m, &family, f, v, &params) {
                    // The second stage's pick, from this record's features (every record of a
                    // matrix holds the same): computed once per matrix, model and precision.
                    let key = (r.matrix.clone(), r.precision, m.model.name().to_string());
                    let pick = picks
                        .entry(key)
                        .or_insert_with(|| run::stage_pick(m, &family, f, &params));
                    pr.picked = pick.as_deref() == Some(r.config.as_str());
                    r.predictions.insert(m.model.name().to_string(), pr);
                }
            }
        }
    }
    let info = dir
        .join(RUN_INFO)
        .exists()
        .then(|| RunInfo::load_or_default(dir));
    report::write(dir, &records, info.as_ref())?;
    Ok(records.len())
}
