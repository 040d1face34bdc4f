//! Device profiles: everything the instrumenting phase measured on one device and the models
//! fitted from it, as one JSON file.
//!
//! A profile holds the schema version, the backend and device description (the
//! [`DeviceLimits`] the strip sizes come from and, for CUDA, the full device-info JSON), the timing
//! protocol, the suite, and per precision every raw benchmark measurement and the fitted
//! [`AnalyticalModel`]. It is written atomically. Loading validates it and fails with a clear
//! error on a wrong schema version, a missing or malformed field (with its line), a non-finite or
//! non-positive time, fitted parameters that do not follow from the measurements (a corrupted or
//! hand-edited file), or — through [`Profile::check_backend`] — a profile of another backend.
//!
//! Measured profiles are committed under `profiles/`; [`embedded`] is the one built into the
//! binary and used when no profile is given.

use crate::backend::{TimingProtocol, Variant};
use crate::instrument::{DeviceLimits, Measurement, SuiteConfig};
use crate::model::AnalyticalModel;
use crate::{Error, Precision, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The schema version this build writes and reads.
pub const SCHEMA_VERSION: u64 = 1;

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

/// The measurements and model of one precision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrecisionProfile {
    /// The fitted model (holds the precision and the device limits).
    pub model: AnalyticalModel,
    /// Planned benchmarks left out by the memory bounds.
    pub skipped: usize,
    /// Wall-clock seconds the measuring took (generation and timing).
    pub seconds: f64,
    /// Every benchmark measurement.
    pub measurements: Vec<Measurement>,
}

impl PrecisionProfile {
    /// The precision.
    pub fn precision(&self) -> Precision {
        self.model.precision
    }
    /// The device limits the strip sizes came from.
    pub fn limits(&self) -> &DeviceLimits {
        &self.model.limits
    }
}

/// The profile built into the binary, as `(name, JSON)`: the NVIDIA H200 profile (f32 and f64)
/// measured with `sparsecast instrument --backend cuda --precision both` and committed as
/// `profiles/h200.json`. Returns an `Option` so a build without an embedded profile stays possible.
pub fn embedded() -> Option<(&'static str, &'static str)> {
    Some((
        "profiles/h200.json (NVIDIA H200)",
        include_str!("../profiles/h200.json"),
    ))
}

impl Profile {
    /// Parse and validate a profile held in memory; `name` is used in error messages.
    pub fn from_json(name: &str, text: &str) -> Result<Profile> {
        let at = |e: &serde_json::Error, msg: String| Error::parse(name, e.line() as u64, msg);
        let v: serde_json::Value = serde_json::from_str(text).map_err(|e| {
            at(
                &e,
                format!("not a sparsecast profile: not valid JSON ({e})"),
            )
        })?;
        let version = v.get("schema_version").ok_or_else(|| {
            Error::parse(
                name,
                1,
                "not a sparsecast profile: no `schema_version` field",
            )
        })?;
        if version.as_u64() != Some(SCHEMA_VERSION) {
            return Err(Error::parse(
                name,
                1,
                format!(
                    "profile schema version {version}; this sparsecast reads version \
                     {SCHEMA_VERSION} (re-run `sparsecast instrument`)"
                ),
            ));
        }
        let p: Profile = serde_json::from_str(text).map_err(|e| at(&e, e.to_string()))?;
        p.validate()
            .map_err(|e| Error::Invalid(format!("{name}: invalid profile: {e}")))?;
        Ok(p)
    }

    /// Read and validate a profile file.
    pub fn load(path: &Path) -> Result<Profile> {
        let text = crate::util::read_json_text(path, "profile")?;
        Profile::from_json(&path.display().to_string(), &text)
    }

    /// The embedded profile, if this build has one.
    pub fn load_embedded() -> Result<Option<(&'static str, Profile)>> {
        embedded()
            .map(|(name, text)| Profile::from_json(name, text).map(|p| (name, p)))
            .transpose()
    }

    /// Write the profile as pretty JSON, atomically.
    pub fn save(&self, path: &Path) -> Result<()> {
        self.validate()?;
        crate::util::write_atomic(path, |w| {
            serde_json::to_writer_pretty(&mut *w, self).map_err(std::io::Error::other)?;
            w.write_all(b"\n")
        })
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
            // Strips follow from rows (CSR, ELL) or non-zeros (COO) and the strip size.
            let s = crate::instrument::strip_size(p.limits(), m.kernel)?;
            let consistent = match m.kernel {
                Variant::Coo => m.rows.checked_mul(m.pnz) == m.strips.checked_mul(s),
                _ => m.strips.checked_mul(s) == Some(m.rows),
            };
            if !consistent {
                return bad(format!(
                    "{} rows × P_NZ {} is not {} strips of {s}",
                    m.rows, m.pnz, m.strips
                ));
            }
        }
        if !p.model.is_valid() {
            return Err(Error::Invalid(
                "fitted parameters are not finite positive numbers".into(),
            ));
        }
        let refit = AnalyticalModel::fit(
            p.precision(),
            p.limits(),
            p.model.statistic,
            &p.measurements,
        )?;
        let (a, b) = (
            serde_json::to_value(&refit).map_err(|e| Error::Invalid(e.to_string()))?,
            serde_json::to_value(&p.model).map_err(|e| Error::Invalid(e.to_string()))?,
        );
        if let Some(path) = first_difference(&a, &b, "model") {
            return Err(Error::Invalid(format!(
                "fitted parameter {path} does not follow from the measurements (corrupted or \
                 edited profile?)"
            )));
        }
        Ok(())
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
