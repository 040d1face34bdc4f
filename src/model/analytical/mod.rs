//! The integrated analytical and profile-based model of Guo & Wang (004 §3, 000 §III): linear
//! relationships between strips, non-zeros per row and time, fitted to the benchmark matrices of
//! [`crate::instrument`], one file per kernel.
//!
//! * [`csr`] — CSR (`T0 = T1 / T2 × T3`, piecewise at the threshold);
//! * [`ell`] — ELL (`T0 = f(Y)·X + g(Y)`);
//! * [`coo`] — COO (`T0 = E(⌈N_NZ / S_COO⌉)`);
//! * [`hyb`] — HYB (ELL part + COO part).
//!
//! Target `P_NZ` (004 §3.4.2): the mode of the row lengths for CSR, the maximum for ELL.

pub mod coo;
pub mod csr;
pub mod ell;
pub mod hyb;

use super::{Model, Shape};
use crate::backend::Variant;
use crate::features::Features;
use crate::formats::FormatParams;
use crate::instrument::{strip_size, DeviceLimits, Measurement, Statistic};
use crate::{Error, Precision, Result};
use serde::{Deserialize, Serialize};

pub use coo::CooParams;
pub use csr::CsrParams;
pub use ell::EllParams;

/// The fitted analytical model of one device and precision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AnalyticalModel {
    /// Precision of the benchmark matrices it was fitted to.
    pub precision: Precision,
    /// The device it describes (strip sizes, threshold, memory bound).
    pub limits: DeviceLimits,
    /// The statistic of the timed runs it was fitted to (and predicts).
    pub statistic: Statistic,
    /// One CSR model per instrumented thread mapping.
    pub csr: Vec<CsrParams>,
    /// ELL model.
    pub ell: EllParams,
    /// COO model.
    pub coo: CooParams,
}

impl AnalyticalModel {
    /// Fit every relationship from the benchmark measurements of one precision.
    ///
    /// **Floor.** The lines extrapolate linearly beyond the benchmark range, which for a matrix
    /// smaller than every benchmark can reach zero or below. Every estimate is therefore floored
    /// at the fastest benchmark of the whole suite (any kernel): a near-empty kernel launch, which
    /// no SpMV beats. (A per-kernel floor would be wrong for COO, whose smallest benchmark already
    /// has ten strips of non-zeros.)
    pub fn fit(
        precision: Precision,
        limits: &DeviceLimits,
        statistic: Statistic,
        ms: &[Measurement],
    ) -> Result<AnalyticalModel> {
        limits.validate()?;
        let stat = statistic;
        let floor = floor_of("the suite", stat, &ms.iter().collect::<Vec<_>>())?;
        let of =
            |v: Variant| -> Vec<&Measurement> { ms.iter().filter(|m| m.kernel == v).collect() };
        let mut threads: Vec<u32> = ms
            .iter()
            .filter_map(|m| match m.kernel {
                Variant::Csr { threads_per_row } => Some(threads_per_row),
                _ => None,
            })
            .collect();
        threads.sort_unstable();
        threads.dedup();
        let mut csr = Vec::new();
        for t in threads {
            let v = Variant::Csr { threads_per_row: t };
            csr.push(CsrParams::fit(
                t,
                strip_size(limits, v)?,
                limits.max_threads_per_block,
                floor,
                stat,
                &of(v),
            )?);
        }
        Ok(AnalyticalModel {
            precision,
            limits: limits.clone(),
            statistic,
            csr,
            ell: EllParams::fit(
                strip_size(limits, Variant::Ell)?,
                floor,
                stat,
                &of(Variant::Ell),
            )?,
            coo: CooParams::fit(
                strip_size(limits, Variant::Coo)?,
                floor,
                stat,
                &of(Variant::Coo),
            )?,
        })
    }

    /// Every relationship whose free least-squares fit made time fall with more work and was
    /// rejected (replaced by the constrained fit), for `instrument` to report.
    pub fn rejected_fits(&self) -> Vec<String> {
        let mut v: Vec<String> = self.csr.iter().flat_map(|c| c.rejected.clone()).collect();
        v.extend(self.ell.rejected.iter().cloned());
        if self.coo.rejected {
            v.push("coo Relationship-1".into());
        }
        v
    }

    /// Whether every fitted number is finite and every floor positive.
    pub fn is_valid(&self) -> bool {
        self.csr.iter().all(|c| c.is_valid()) && self.ell.is_valid() && self.coo.is_valid()
    }

    /// The device-memory bound of the papers (004 §3.2.1), applied to a target: refuse a format
    /// whose working set (arrays + x + y) exceeds global memory.
    fn check_memory(&self, variant: Variant, bytes: u64) -> Result<()> {
        check_memory(&self.limits, variant, bytes)
    }
}

/// Refuse `variant` for a target whose working set of `bytes` exceeds the global memory of
/// `limits` (004 §3.2.1's bound, for every model fitted on a device).
pub(in crate::model) fn check_memory(
    limits: &DeviceLimits,
    variant: Variant,
    bytes: u64,
) -> Result<()> {
    if bytes > limits.global_mem_bytes {
        return Err(Error::refused(
            variant.name(),
            format!(
                "needs {bytes} bytes, more than the {} bytes of {}",
                limits.global_mem_bytes, limits.name
            ),
        ));
    }
    Ok(())
}

impl AnalyticalModel {
    /// Predicted seconds for the matrix summarized by `shape` (see [`Model::predict`]).
    pub fn predict_shape(
        &self,
        shape: &Shape,
        variant: Variant,
        params: &FormatParams,
    ) -> Result<f64> {
        let val = self.precision.bytes() as u64;
        self.check_memory(variant, shape.working_set_bytes(variant, params, val)?)?;
        Ok(match variant {
            Variant::Csr { threads_per_row } => {
                let c = self
                    .csr
                    .iter()
                    .find(|c| c.threads_per_row == threads_per_row)
                    .ok_or_else(|| {
                        Error::Unsupported(format!("the profile has no model for {variant}"))
                    })?;
                c.predict(shape.mode_row_len as f64, shape.nrows)
            }
            Variant::Ell => self
                .ell
                .predict(shape.ell_width(params)? as f64, shape.nrows),
            Variant::Coo => self.coo.predict(shape.nnz),
            Variant::Hyb => {
                let (w, over) = shape.hyb_split(params)?;
                hyb::predict(&self.ell, &self.coo, shape.nrows, w, over)
            }
            other => {
                return Err(Error::Unsupported(format!(
                    "the analytical model does not cover {other}"
                )))
            }
        })
    }

    /// What [`AnalyticalModel::predict_shape`] used: strip counts and `P_NZ`.
    pub fn explain_shape(&self, shape: &Shape, variant: Variant, params: &FormatParams) -> String {
        let strips = |n: u64, v: Variant| {
            let k = strip_size(&self.limits, v).map_or(0, |s| crate::instrument::strips(n, s));
            crate::util::count(k, "strip", "strips")
        };
        match variant {
            Variant::Csr { .. } => format!(
                "P_NZ {} (mode), {}",
                shape.mode_row_len,
                strips(shape.nrows, variant)
            ),
            Variant::Ell => format!(
                "P_NZ {} (width), {}",
                shape.ell_width(params).unwrap_or(0),
                strips(shape.nrows, variant)
            ),
            Variant::Coo => format!("{} of non-zeros", strips(shape.nnz, variant)),
            Variant::Hyb => match shape.hyb_split(params) {
                Ok((k, over)) => format!(
                    "ELL width {k} ({}) + COO {over} entries ({})",
                    strips(if k > 0 { shape.nrows } else { 0 }, Variant::Ell),
                    strips(over, Variant::Coo)
                ),
                Err(_) => String::new(),
            },
            _ => String::new(),
        }
    }
}

impl Model for AnalyticalModel {
    fn name(&self) -> &str {
        "analytical"
    }

    fn precision(&self) -> Precision {
        self.precision
    }

    fn variants(&self) -> Vec<Variant> {
        let mut v: Vec<Variant> = self
            .csr
            .iter()
            .map(|c| Variant::Csr {
                threads_per_row: c.threads_per_row,
            })
            .collect();
        v.extend([Variant::Ell, Variant::Coo, Variant::Hyb]);
        v
    }

    fn statistic(&self) -> Statistic {
        self.statistic
    }

    fn predict_shape(&self, shape: &Shape, variant: Variant, params: &FormatParams) -> Result<f64> {
        AnalyticalModel::predict_shape(self, shape, variant, params)
    }

    fn explain(&self, features: &Features, variant: Variant, params: &FormatParams) -> String {
        self.explain_shape(&Shape::from_features(features), variant, params)
    }
}

/// The smallest measured time, the floor of every estimate.
pub(in crate::model) fn floor_of(what: &str, stat: Statistic, ms: &[&Measurement]) -> Result<f64> {
    let t = ms
        .iter()
        .map(|m| m.time(stat))
        .min_by(f64::total_cmp)
        .ok_or_else(|| Error::Invalid(format!("{what}: no benchmark measurements")))?;
    if !(t.is_finite() && t > 0.0) {
        return Err(Error::Invalid(format!(
            "{what}: benchmark time {t} s is not a positive number"
        )));
    }
    Ok(t)
}

/// Serde default of `min_strips` for profiles fitted before sub-strip benchmarks: one strip.
fn one() -> f64 {
    1.0
}

/// The least strip count of `ms` for strip size `s` (1 when there are none, or none below one).
fn min_strips(ms: &[&Measurement], s: u64) -> f64 {
    ms.iter().map(|m| m.strip_count(s)).fold(1.0, f64::min)
}
