//! Device profiles: everything the instrumenting phase measured on one device and the models
//! fitted from it, as one JSON file.
//!
//! A profile holds the schema version, the backend and device description (the
//! [`DeviceLimits`] the strip sizes come from and, for CUDA, the full device-info JSON), the timing
//! protocol, the suite, and per precision: the device's measured sanity bounds
//! ([`DeviceBounds`]: launch floor, DRAM and L2 bandwidth) with the micro-benchmarks they came
//! from, every raw benchmark measurement, and a list of named models of any family
//! ([`NamedModel`]). It is written atomically. Loading validates it and fails with a clear
//! error on a wrong schema version, a missing or malformed field (with its line), a non-finite or
//! non-positive time, fitted parameters that do not follow from the measurements (a corrupted or
//! hand-edited file), bounds that its own measurements contradict, or — through
//! [`Profile::check_backend`] — a profile of another backend.
//!
//! **Schema versions.** 2 (this build) holds a list of models and the device bounds. A version 1
//! profile (one analytical model per precision, no bounds) is still read: its analytical model
//! is fitted again from its measurements by this build's fitting code (so the fixes of schema 2
//! apply) and it has no bounds, so its predictions are not clamped until it is re-instrumented.
//!
//! Measured profiles are committed under `profiles/`; [`embedded`] lists those built into the
//! binary; [`Profile::load_embedded_for`] picks one by GPU name.

use crate::backend::{TimingProtocol, Variant};
use crate::instrument::micro::MicroMeasurement;
use crate::instrument::Statistic;
use crate::instrument::{DeviceLimits, Measurement, SuiteConfig};
use crate::model::{AnalyticalModel, Bounded, DeviceBounds, NamedModel, StoredModel};
use crate::{Error, Precision, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: u64 = 2;

/// The older schema versions this build still reads (see the module documentation).
pub const READABLE_VERSIONS: [u64; 2] = [1, 2];

/// Relative tolerance when checking stored fitted parameters against a refit.
const REFIT_TOLERANCE: f64 = 1e-9;

/// A device profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Always [`SCHEMA_VERSION`].
    pub schema_version: u64,
    /// Version of sparsecast that measured it.
    pub sparsecast_version: String,
    /// Backend that ran the benchmarks (`cpu`, `cuda`).
    pub backend: String,
    /// One-line device description from the backend.
    pub device_name: String,
    /// The backend's full device description (CUDA `DeviceInfo`) as JSON, if it has one.
    pub device_info: Option<serde_json::Value>,
    /// When it was measured, seconds since the Unix epoch.
    pub created_unix: u64,
    /// How every benchmark was timed.
    pub timing: TimingProtocol,
    /// Which benchmarks were planned.
    pub suite: SuiteConfig,
    /// Where benchmark matrices were built (`host` or `device`).
    pub source: String,
    /// One section per measured precision.
    pub precisions: Vec<PrecisionProfile>,
}

/// The bounds, measurements and models of one precision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrecisionProfile {
    /// The precision.
    pub precision: Precision,
    /// The device limits the strip sizes came from.
    pub limits: DeviceLimits,
    /// The statistic of the timed runs the models are fitted to (and predict).
    pub statistic: Statistic,
    /// The device's measured sanity bounds (`None` in a migrated schema-1 profile).
    #[serde(default)]
    pub bounds: Option<DeviceBounds>,
    /// The micro-benchmarks the bounds were measured with.
    #[serde(default)]
    pub micro: Vec<MicroMeasurement>,
    /// The models, each with its name.
    pub models: Vec<NamedModel>,
    /// Planned benchmarks left out by the memory bounds.
    pub skipped: usize,
    /// Why they were left out (one line each).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_notes: Vec<String>,
    /// Wall-clock seconds the measuring took (generation and timing).
    pub seconds: f64,
    /// Every benchmark measurement.
    pub measurements: Vec<Measurement>,
}

impl PrecisionProfile {
    /// The precision.
    pub fn precision(&self) -> Precision {
        self.precision
    }
    /// The device limits the strip sizes came from.
    pub fn limits(&self) -> &DeviceLimits {
        &self.limits
    }

    /// The first model of the analytical family.
    pub fn analytical(&self) -> Result<&AnalyticalModel> {
        self.models
            .iter()
            .find_map(|m| m.model.analytical())
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "the {} section of the profile has no analytical model",
                    self.precision
                ))
            })
    }

    /// [`PrecisionProfile::bounded_models`] borrowing the models instead of copying them: what
    /// `predict` asks per matrix and precision, where a copy of the `sparsecast` model (its
    /// ≈ 9,000 trees and the second stage's table) cost more than predicting every configuration.
    pub fn bounded_model_refs(
        &self,
        names: Option<&[String]>,
    ) -> Result<Vec<Bounded<&StoredModel>>> {
        Ok(crate::model::registry::select(&self.models, names)?
            .into_iter()
            .map(|m| Bounded {
                model: &m.model,
                bounds: self.bounds.clone(),
            })
            .collect())
    }

    /// The models named in `names` (every model when `None`), in that order, each checked against
    /// the device bounds ([`Bounded`]).
    pub fn bounded_models(&self, names: Option<&[String]>) -> Result<Vec<Bounded<StoredModel>>> {
        Ok(self
            .bounded_model_refs(names)?
            .into_iter()
            .map(|b| Bounded {
                model: b.model.clone(),
                bounds: b.bounds,
            })
            .collect())
    }
}

/// One profile built into the binary: its name and its gzip-compressed JSON, decompressed only
/// when asked ([`Embedded::text`]) — a profile is ≈ 40 MB of text, and a run reads one.
#[derive(Clone, Copy, Debug)]
pub struct Embedded {
    /// The file it was built from (`profiles/h200.json.gz`).
    pub name: &'static str,
    gz: &'static [u8],
}

impl Embedded {
    /// The profile's JSON text.
    pub fn text(&self) -> String {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::MultiGzDecoder::new(self.gz), &mut text)
            .expect("build.rs checked that every embedded profile decompresses to text");
        text
    }

    /// The profile, parsed and validated.
    pub fn profile(&self) -> Result<Profile> {
        Profile::from_json(self.name, &self.text())
    }
}

/// The profiles built into the binary: one per GPU measured with `sparsecast instrument
/// --backend cuda --precision both` and committed under `profiles/` (`h200.json.gz`;
/// `h100.json.gz` when that file exists at build time, see `build.rs`), still compressed.
pub fn embedded() -> Vec<Embedded> {
    let compressed: Vec<(&'static str, &'static [u8])> =
        include!(concat!(env!("OUT_DIR"), "/embedded_profiles.rs"));
    compressed
        .into_iter()
        .map(|(name, gz)| Embedded { name, gz })
        .collect()
}

impl Profile {
    /// Whether one of the models of `precision` that `which` selects was trained on the matrix
    /// family `family` ([`NamedModel::trained_on`]): a row of it is in-sample for them.
    pub fn trained_on(
        &self,
        precision: Precision,
        family: &str,
        which: impl Fn(&NamedModel) -> bool,
    ) -> bool {
        self.precisions
            .iter()
            .filter(|s| s.precision == precision)
            .flat_map(|s| &s.models)
            .any(|m| which(m) && m.trained_on(family))
    }

    /// Parse and validate a profile held in memory; `name` is used in error messages.
    pub fn from_json(name: &str, text: &str) -> Result<Profile> {
        let at = |e: &serde_json::Error, msg: String| Error::parse(name, e.line() as u64, msg);
        // A profile of this version, read once (the common case); anything else is read again
        // below for its version, to migrate it or say what is wrong.
        if let Ok(p) = serde_json::from_str::<Profile>(text) {
            if p.schema_version == SCHEMA_VERSION {
                p.validate()
                    .map_err(|e| Error::Invalid(format!("{name}: invalid profile: {e}")))?;
                return Ok(p);
            }
        }
        // The version first, every other field skipped unread (no tree of the whole text in
        // memory: a profile is ≈ 40 MB of JSON).
        #[derive(serde::Deserialize)]
        struct Versioned {
            schema_version: Option<serde_json::Value>,
        }
        let v: Versioned = serde_json::from_str(text).map_err(|e| {
            at(
                &e,
                format!("not a sparsecast profile: not valid JSON ({e})"),
            )
        })?;
        let version = v.schema_version.ok_or_else(|| {
            Error::parse(
                name,
                1,
                "not a sparsecast profile: no `schema_version` field",
            )
        })?;
        let p: Profile = match version.as_u64() {
            Some(SCHEMA_VERSION) => {
                serde_json::from_str(text).map_err(|e| at(&e, e.to_string()))?
            }
            Some(1) => serde_json::from_str::<v1::Profile>(text)
                .map_err(|e| at(&e, e.to_string()))?
                .migrate()
                .map_err(|e| Error::Invalid(format!("{name}: migrating schema 1: {e}")))?,
            _ => {
                return Err(Error::parse(
                    name,
                    1,
                    format!(
                        "profile schema version {version}; this sparsecast reads versions \
                         {READABLE_VERSIONS:?} (re-run `sparsecast instrument`)"
                    ),
                ))
            }
        };
        p.validate()
            .map_err(|e| Error::Invalid(format!("{name}: invalid profile: {e}")))?;
        Ok(p)
    }

    /// Read and validate a profile file (JSON, or gzip-compressed JSON by its content).
    pub fn load(path: &Path) -> Result<Profile> {
        let text = crate::util::read_json_text(path, "profile")?;
        Profile::from_json(&path.display().to_string(), &text)
    }

    /// Every embedded profile, parsed.
    pub fn load_embedded_all() -> Result<Vec<(&'static str, Profile)>> {
        embedded()
            .into_iter()
            .map(|e| e.profile().map(|p| (e.name, p)))
            .collect()
    }

    /// The embedded profile whose device name contains `gpu` (case-insensitive, `h200`, `h100`),
    /// or, without `gpu`, the first one (the H200).
    pub fn load_embedded_for(gpu: Option<&str>) -> Result<Option<(&'static str, Profile)>> {
        let all = embedded();
        let pick = match gpu {
            None => all.first(),
            Some(g) => {
                let g = g.to_lowercase();
                let hit = all.iter().find(|e| e.name.to_lowercase().contains(&g));
                match hit {
                    Some(h) => Some(h),
                    None => {
                        return Err(Error::Invalid(format!(
                            "no embedded profile for '{g}' (embedded: {})",
                            all.iter().map(|e| e.name).collect::<Vec<_>>().join(", ")
                        )))
                    }
                }
            }
        };
        pick.map(|e| e.profile().map(|p| (e.name, p))).transpose()
    }

    /// The embedded profile, if this build has one (the first, the H200).
    pub fn load_embedded() -> Result<Option<(&'static str, Profile)>> {
        Profile::load_embedded_for(None)
    }

    /// HYB's launch sequence the profile's `sparsecast` models predict (programmatic where any
    /// precision's does, merged where any's is; plain in profiles before session 83): what the CUDA backend runs while
    /// the profile is in use ([`crate::backend::Backend::follow_hyb_launch`]).
    pub fn hyb_launch(&self) -> crate::backend::cuda::launch::HybLaunch {
        use crate::backend::cuda::launch::HybLaunch;
        // The most elaborate sequence any model predicts (their order: plain, programmatic,
        // programmatic with merged carries).
        self.precisions
            .iter()
            .flat_map(|p| &p.models)
            .filter_map(|m| match &m.model {
                crate::model::StoredModel::Sparsecast(o) => Some(o.hyb_launch),
                _ => None,
            })
            .max_by_key(|l| l.code())
            .unwrap_or(HybLaunch::Plain)
    }

    /// The embedded profile measured on a device of `device_name`'s GPU model
    /// ([`Profile::matches_device`]), if this build embeds one. The profiles are parsed one after
    /// the other until one matches: each is tens of MB of JSON (≈ 0.4 s), and the H200's, the
    /// first, is usually the one.
    pub fn load_embedded_for_device(device_name: &str) -> Result<Option<(&'static str, Profile)>> {
        for e in embedded() {
            let p = e.profile()?;
            if p.matches_device(device_name) {
                return Ok(Some((e.name, p)));
            }
        }
        Ok(None)
    }

    /// The HYB launch sequence of the embedded profile of `device_name`'s GPU model
    /// ([`Profile::hyb_launch`]); plain where this build embeds none for it.
    pub fn embedded_hyb_launch(
        device_name: &str,
    ) -> Result<crate::backend::cuda::launch::HybLaunch> {
        Ok(Profile::load_embedded_for_device(device_name)?
            .map(|(_, p)| p.hyb_launch())
            .unwrap_or_default())
    }

    /// Whether the profile was measured on a device of this name (compares the GPU model, such
    /// as `NVIDIA H200`, that both descriptions start with).
    pub fn matches_device(&self, device_name: &str) -> bool {
        let model = |s: &str| s.split(" (").next().unwrap_or(s).trim().to_lowercase();
        model(&self.device_name) == model(device_name)
    }

    /// Write the profile as readable JSON ([`crate::json`]: one key a line, lists of numbers on
    /// one line), atomically; gzip-compressed when the path ends in `.gz` (the committed GPU
    /// profiles: their learned models are ≈ 13 MB of JSON, ≈ 2 MB compressed). [`Profile::load`]
    /// reads either.
    pub fn save(&self, path: &Path) -> Result<()> {
        self.validate()?;
        let json = |w: &mut dyn std::io::Write| {
            crate::json::to_writer(&mut *w, self).map_err(std::io::Error::other)?;
            w.write_all(b"\n")
        };
        crate::util::write_data(path, json)
    }

    /// The section of `precision`.
    pub fn precision(&self, precision: Precision) -> Result<&PrecisionProfile> {
        self.precisions
            .iter()
            .find(|p| p.precision() == precision)
            .ok_or_else(|| {
                let have: Vec<&str> = self
                    .precisions
                    .iter()
                    .map(|p| p.precision().name())
                    .collect();
                Error::Invalid(format!(
                    "the profile of {} has no {precision} measurements (it has: {})",
                    self.device_name,
                    have.join(", ")
                ))
            })
    }

    /// Fail unless the profile was measured with `backend`.
    pub fn check_backend(&self, backend: &str) -> Result<()> {
        if self.backend != backend {
            return Err(Error::Invalid(format!(
                "the profile was measured with the {} backend on {}, not with the {backend} backend",
                self.backend, self.device_name
            )));
        }
        Ok(())
    }

    /// Check every invariant (see the module documentation).
    pub fn validate(&self) -> Result<()> {
        if self.schema_version != SCHEMA_VERSION {
            return Err(Error::Invalid(format!(
                "schema version {} (expected {SCHEMA_VERSION})",
                self.schema_version
            )));
        }
        if !matches!(self.backend.as_str(), "cpu" | "cuda") {
            return Err(Error::Invalid(format!(
                "unknown backend '{}' (expected cpu or cuda)",
                self.backend
            )));
        }
        if self.timing.warmup >= self.timing.runs {
            return Err(Error::Invalid(format!(
                "timing protocol keeps no runs ({} warm-up of {})",
                self.timing.warmup, self.timing.runs
            )));
        }
        self.suite.validate()?;
        if self.precisions.is_empty() {
            return Err(Error::Invalid("no precision sections".into()));
        }
        for (i, p) in self.precisions.iter().enumerate() {
            if self.precisions[..i]
                .iter()
                .any(|q| q.precision() == p.precision())
            {
                return Err(Error::Invalid(format!(
                    "two sections for {}",
                    p.precision()
                )));
            }
            self.validate_section(p)
                .map_err(|e| Error::Invalid(format!("{} section: {e}", p.precision())))?;
        }
        Ok(())
    }

    fn validate_section(&self, p: &PrecisionProfile) -> Result<()> {
        p.limits().validate()?;
        if !(p.seconds.is_finite() && p.seconds >= 0.0) {
            return Err(Error::Invalid(format!("measuring time {} s", p.seconds)));
        }
        if let Some(b) = &p.bounds {
            b.validate()?;
        }
        for (i, m) in p.measurements.iter().enumerate() {
            let bad = |msg: String| {
                Err(Error::Invalid(format!(
                    "measurement {i} ({}): {msg}",
                    m.kernel
                )))
            };
            if m.samples.len() != self.timing.runs {
                return bad(format!(
                    "{} samples, the timing protocol has {} runs",
                    m.samples.len(),
                    self.timing.runs
                ));
            }
            if let Some(t) = m
                .samples
                .iter()
                .chain([&m.warm_mean, &m.median])
                .find(|t| !(t.is_finite() && **t > 0.0))
            {
                return bad(format!("time {t} s is not a positive number"));
            }
            let timing =
                crate::backend::Timing::from_samples(m.samples.clone(), self.timing.warmup);
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs();
            if !close(timing.warm_mean(), m.warm_mean) || !close(timing.median(), m.median) {
                return bad("mean or median does not match the samples".into());
            }
            if m.pnz == 0 || m.rows == 0 || m.strips == 0 || m.cols < m.pnz {
                return bad(format!(
                    "impossible benchmark: {} rows, {} columns, P_NZ {}, {} strips",
                    m.rows, m.cols, m.pnz, m.strips
                ));
            }
            // Strips follow from rows (CSR, ELL) or non-zeros (COO) and the strip size: whole
            // strips, or one for a sub-strip benchmark.
            let s = crate::instrument::strip_size(p.limits(), m.kernel)?;
            let n = match m.kernel {
                Variant::Coo => m.rows.checked_mul(m.pnz),
                _ => Some(m.rows),
            };
            let consistent =
                n.is_some_and(|n| (n % s == 0 && n / s == m.strips) || (n < s && m.strips == 1));
            if !consistent {
                return bad(format!(
                    "{} rows × P_NZ {} is not {} strips of {s}",
                    m.rows, m.pnz, m.strips
                ));
            }
            if let Some(b) = &p.bounds {
                let bytes = crate::instrument::suite::working_set_bytes(
                    m.kernel,
                    m.rows,
                    m.cols,
                    m.pnz,
                    p.precision.bytes() as u64,
                );
                b.check_measurement(
                    &format!("benchmark {i} ({})", m.kernel),
                    m.time(p.statistic),
                    bytes,
                )
                .map_err(|e| Error::Invalid(format!("the device bounds are wrong: {e}")))?;
            }
        }
        if p.models.is_empty() {
            return Err(Error::Invalid("no models".into()));
        }
        for (i, m) in p.models.iter().enumerate() {
            if p.models[..i].iter().any(|o| o.name == m.name) {
                return Err(Error::Invalid(format!("two models named '{}'", m.name)));
            }
            m.model
                .validate()
                .map_err(|e| Error::Invalid(format!("model '{}': {e}", m.name)))?;
            if let Some((precision, limits, statistic)) = m.model.fitted_for() {
                if precision != p.precision || *limits != p.limits || statistic != p.statistic {
                    return Err(Error::Invalid(format!(
                        "model '{}' was fitted for another precision, device or statistic than \
                         its section",
                        m.name
                    )));
                }
            }
            let Some(refit) = m.model.refit(&p.measurements)? else {
                continue;
            };
            let (a, b) = (
                serde_json::to_value(&refit).map_err(|e| Error::Invalid(e.to_string()))?,
                serde_json::to_value(&m.model).map_err(|e| Error::Invalid(e.to_string()))?,
            );
            if let Some(path) = first_difference(&a, &b, &m.name) {
                return Err(Error::Invalid(format!(
                    "fitted parameter {path} does not follow from the measurements (corrupted or \
                     edited profile?)"
                )));
            }
        }
        Ok(())
    }
}

/// Schema 1, read for migration.
mod v1 {
    use super::*;

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct Profile {
        #[allow(dead_code)]
        schema_version: u64,
        sparsecast_version: String,
        backend: String,
        device_name: String,
        device_info: Option<serde_json::Value>,
        created_unix: u64,
        timing: TimingProtocol,
        suite: SuiteConfig,
        source: String,
        precisions: Vec<PrecisionProfile>,
    }

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    pub struct PrecisionProfile {
        model: serde_json::Value,
        skipped: usize,
        seconds: f64,
        measurements: Vec<Measurement>,
    }

    #[derive(Deserialize)]
    struct ModelHead {
        precision: Precision,
        limits: DeviceLimits,
        statistic: Statistic,
    }

    impl Profile {
        /// The schema-2 profile: the analytical model fitted again from the measurements by this
        /// build, no device bounds.
        pub fn migrate(self) -> Result<super::Profile> {
            let precisions = self
                .precisions
                .into_iter()
                .map(|s| {
                    let head: ModelHead = serde_json::from_value(s.model)
                        .map_err(|e| Error::Invalid(format!("model: {e}")))?;
                    let model = AnalyticalModel::fit(
                        head.precision,
                        &head.limits,
                        head.statistic,
                        &s.measurements,
                    )?;
                    Ok(super::PrecisionProfile {
                        precision: head.precision,
                        limits: head.limits,
                        statistic: head.statistic,
                        bounds: None,
                        micro: Vec::new(),
                        models: vec![NamedModel::new(
                            "analytical",
                            StoredModel::Analytical(model),
                        )],
                        skipped: s.skipped,
                        skipped_notes: Vec::new(),
                        seconds: s.seconds,
                        measurements: s.measurements,
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            Ok(super::Profile {
                schema_version: SCHEMA_VERSION,
                sparsecast_version: self.sparsecast_version,
                backend: self.backend,
                device_name: self.device_name,
                device_info: self.device_info,
                created_unix: self.created_unix,
                timing: self.timing,
                suite: self.suite,
                source: self.source,
                precisions,
            })
        }
    }
}

/// The path of the first place two JSON values differ (numbers compared with a relative
/// tolerance), or `None`.
fn first_difference(a: &serde_json::Value, b: &serde_json::Value, path: &str) -> Option<String> {
    use serde_json::Value as V;
    match (a, b) {
        (V::Number(x), V::Number(y)) => {
            let (x, y) = (x.as_f64()?, y.as_f64()?);
            ((x - y).abs() > REFIT_TOLERANCE * x.abs().max(y.abs())).then(|| path.to_string())
        }
        (V::Array(x), V::Array(y)) => {
            if x.len() != y.len() {
                return Some(path.to_string());
            }
            x.iter()
                .zip(y)
                .enumerate()
                .find_map(|(i, (x, y))| first_difference(x, y, &format!("{path}[{i}]")))
        }
        (V::Object(x), V::Object(y)) => {
            if x.len() != y.len() {
                return Some(path.to_string());
            }
            x.iter().find_map(|(k, xv)| match y.get(k) {
                Some(yv) => first_difference(xv, yv, &format!("{path}.{k}")),
                None => Some(format!("{path}.{k}")),
            })
        }
        _ => (a != b).then(|| path.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A profile read and written again is the same text: what is read (the trees'
    /// pre-order arrays among it) is what is written, whatever form the models take in memory.
    #[test]
    fn an_embedded_profile_saves_to_the_text_it_was_read_from() {
        for e in embedded() {
            let (name, text) = (e.name, e.text());
            let p = Profile::from_json(name, &text).unwrap();
            let again = crate::json::to_string(&p).unwrap() + "\n";
            assert!(again == text, "{name} changed when saved again");
        }
    }
}
