//! The statistical models of Wang, Gu & Li (001): Guo & Wang's relationships fitted to
//! benchmark matrices whose row lengths follow a normal or a uniform distribution
//! ([`crate::instrument::rowdist`]) instead of being constant; one model per distribution
//! (`statistical-normal`, `statistical-uniform`), each covering CSR-V (`csr-t16`), CSR-S
//! (`csr-scalar`), ELL and JAD. A third, `statistical-constant`, fits the same relationships to
//! constant-row matrices of the same grid: Guo & Wang's benchmarks with 001's forms, the
//! constant-row column of 001's comparison (so the three differ only in their row lengths).
//!
//! **CSR-V (001 §3.2.1).** `T(P_NZ) = m·P_NZ + n` at one strip count, two pieces at the
//! device's max threads per block; `E(I) = p·I + q` at one `P_NZ`, one line per side; the target
//! (`P0` = the mode of its row lengths, `I0 = ⌈N_R / S_CSR-V⌉`) is
//! `T0 = T(P0) / t0 × E(I0)`. That is the CSR model of Guo & Wang term for term
//! (`T1 / T2 × T3`), and it is fitted by the same code ([`CsrParams`]): the strip count of `T` is
//! the middle of the measured ones and `E` is measured at the smallest `P_NZ` (low side) and the
//! smallest `P_NZ ≥` the threshold (high side) — 001 allows "any" (its figures show `I = 40`
//! and `P_NZ = 64, 2048`).
//!
//! **t0.** 001 defines `t0` as "the execution time of any previously tested benchmark matrix
//! whose `P_NZ` is set to the number of non-zero elements per row in `E(I)`". As for the
//! analytical model's `T2` (see [`crate::model::analytical::csr`]), we use the definition the
//! same line of work writes out (003 §4.1.2, `T_0.Ref = C_1 · X_0 + B_0`): `t0 = T(Z)`, the
//! fitted `T` evaluated at `E`'s reference `P_NZ = Z` on the piece of `P0`'s side, so the ratio
//! `T(P0) / t0` compares two values of one fitted line and its fitting error cancels.
//!
//! **CSR-S, ELL, JAD (001 §3.2.2–3.2.3).** The ELL form: `T(P_NZ) = f(I1)·P_NZ + g(I1)` per
//! strip count, `f(I) = A·I + B`, `E(I) = f(I)·P1 + g(I)` at one `P_NZ = P1`, so
//! `T0 = f(I0)·P0 + E(I0) − f(I0)·P1` — Guo & Wang's ELL model, fitted by its code
//! ([`EllParams`]) on each kernel's own benchmarks and strip size. The target's `P0` is its
//! **longest row** (001 §3.1: "the maximum value of D for CSR-S, ELL, JAD"); the benchmarks are
//! placed on the `P_NZ` axis by their distribution's **mean**, as 001 does. (A benchmark's own
//! longest row exceeds its mean by a few standard deviations, so the model reads a benchmark
//! like matrix as wider than the benchmarks it was fitted on; 001 reports that its estimates
//! are "almost all" above the measured times.)
//!
//! The fitted relationships extrapolate linearly outside the measured range and every estimate
//! is floored at the fastest of the model's own benchmarks. The model keeps its benchmark
//! measurements, so a loaded profile is checked by fitting them again
//! ([`crate::model::StoredModel::refit`]).

mod fit;

use super::analytical::{CsrParams, EllParams};
use super::{Model, Shape};
use crate::backend::Variant;
use crate::features::Features;
use crate::formats::FormatParams;
use crate::instrument::{strip_size, DeviceLimits, Measurement, RowDist, Spread, Statistic};
use crate::{Error, Precision, Result};
use serde::{Deserialize, Serialize};

/// The fitted statistical model of one row-length distribution, device and precision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatisticalModel {
    /// The distribution of the benchmark matrices' row lengths.
    pub distribution: RowDist,
    /// Their spread.
    pub spread: Spread,
    /// Precision of the benchmark matrices.
    pub precision: Precision,
    /// The device (strip sizes, threshold, memory bound).
    pub limits: DeviceLimits,
    /// The statistic of the timed runs it was fitted to (and predicts).
    pub statistic: Statistic,
    /// CSR-V (`csr-t16`): `T0 = T(P0) / t0 × E(I0)`.
    pub csr_v: CsrParams,
    /// CSR-S (`csr-scalar`), ELL form.
    pub csr_s: EllParams,
    /// ELL, ELL form.
    pub ell: EllParams,
    /// JAD, ELL form.
    pub jad: EllParams,
    /// The benchmark measurements it was fitted to.
    pub measurements: Vec<Measurement>,
}

impl StatisticalModel {
    /// The model's name in a profile: `statistical-normal` or `statistical-uniform`.
    pub fn name_of(dist: RowDist) -> &'static str {
        match dist {
            RowDist::Normal => "statistical-normal",
            RowDist::Uniform => "statistical-uniform",
            RowDist::Constant => "statistical-constant",
        }
    }

    /// Whether every fitted number is finite, every floor positive, and every measurement a
    /// positive time of one of the model's kernels.
    pub fn is_valid(&self) -> bool {
        let times_ok = self.measurements.iter().all(|m| {
            [m.warm_mean, m.median]
                .iter()
                .chain(&m.samples)
                .all(|t| t.is_finite() && *t > 0.0)
                && crate::instrument::STAT_KERNELS.contains(&m.kernel)
        });
        self.csr_v.is_valid()
            && self.csr_s.is_valid()
            && self.ell.is_valid()
            && self.jad.is_valid()
            && times_ok
    }

    /// Predicted seconds for the matrix summarized by `shape`.
    pub fn predict_shape(
        &self,
        shape: &Shape,
        variant: Variant,
        params: &FormatParams,
    ) -> Result<f64> {
        let val = self.precision.bytes() as u64;
        let bytes = shape.working_set_bytes(variant, params, val)?;
        super::analytical::check_memory(&self.limits, variant, bytes)?;
        let (n, longest) = (shape.nrows, shape.max_row_len as f64);
        Ok(match variant {
            Variant::Csr {
                threads_per_row: 16,
            } => self.csr_v.predict(shape.mode_row_len as f64, n),
            Variant::Csr { threads_per_row: 1 } => self.csr_s.predict(longest, n),
            Variant::Ell => self.ell.predict(shape.ell_width(params)? as f64, n),
            Variant::Jad => self.jad.predict(longest, n),
            other => {
                return Err(Error::Unsupported(format!(
                    "the {} model does not cover {other}",
                    self.name()
                )))
            }
        })
    }
}

impl Model for StatisticalModel {
    fn name(&self) -> &str {
        StatisticalModel::name_of(self.distribution)
    }
    fn precision(&self) -> Precision {
        self.precision
    }
    fn statistic(&self) -> Statistic {
        self.statistic
    }
    fn variants(&self) -> Vec<Variant> {
        crate::instrument::STAT_KERNELS.to_vec()
    }
    fn predict_shape(&self, shape: &Shape, variant: Variant, params: &FormatParams) -> Result<f64> {
        StatisticalModel::predict_shape(self, shape, variant, params)
    }
    fn explain(&self, features: &Features, variant: Variant, params: &FormatParams) -> String {
        let shape = Shape::from_features(features);
        let strips = strip_size(&self.limits, variant)
            .map_or(0, |s| crate::instrument::strips(shape.nrows, s));
        let strips = crate::util::count(strips, "strip", "strips");
        match variant {
            Variant::Csr {
                threads_per_row: 16,
            } => format!("P_NZ {} (mode), {strips}", shape.mode_row_len),
            Variant::Ell => format!(
                "P_NZ {} (width), {strips}",
                shape.ell_width(params).unwrap_or(0)
            ),
            Variant::Csr { threads_per_row: 1 } | Variant::Jad => {
                format!("P_NZ {} (longest row), {strips}", shape.max_row_len)
            }
            _ => String::new(),
        }
    }
}
