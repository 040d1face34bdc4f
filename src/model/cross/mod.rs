//! Guo & Wang's cross-architecture model (003): predict a target GPU from a time on a reference
//! GPU and a handful of benchmark matrices measured on the target.
//!
//! `T_Tar = T_Init.Tar + P_Tar.Ref · (T_Ref − T_Init.Ref)` (003 §4), per format:
//!
//! * **CSR** (§4.1.2–4.1.3): `P = P_1 · P_2`, `P_1 = C_1.Tar/C_1.Ref · T_0.Ref/T_0.Tar ·
//!   (1 − T_0.Ref/T_1.Ref) + T_0.Ref/T_1.Ref`, `P_2 = C_2.Tar/C_2.Ref · S_Ref/S_Tar`, with
//!   `T_0.Ref = C_1.Ref·X_0 + B_0` and `T_1.Ref = C_1.Ref·P_NZ + B_0` (`P_NZ` = the mode of the
//!   row lengths); the cases of the thresholds pick `X_0`, `T_0.Tar` and the initialization
//!   times (the fewest-strip times of the anchor matrices on each side).
//! * **ELL** (§4.2): `P = C_Tar/C_Ref · S_Ref/S_Tar`; `T_Init = B = E(I) − C·X_1·I` at
//!   `I = ⌈N_R / S⌉` of each device (003's ceiling, no fractional strips).
//! * **COO** (§4.3): `P = C_Tar/C_Ref · S_Ref/S_Tar`; `T_Init` = the fewest-strip benchmark.
//! * **HYB** (§4.4): ELL's `P` unless the ELL part is empty (COO's); `T_Init` by the three cases
//!   of §4.4.3.
//!
//! **Choices where 003 is silent** (also in [`select`] and [`fit`]):
//! * every CSR thread mapping (scalar, sub-warp, vector, any block size) takes the CSR factors,
//!   which 003 measures with the vector kernel only;
//! * the times are medians (the corpus tables' statistic), on both devices;
//! * a ratio whose reference slope is not positive (a flat fit) is taken as 1;
//! * a result that is not a positive number (a time far below `T_Init.Ref` with `P > 1`) falls
//!   back to `P · T_Ref`.
//!
//! Predicting needs `T_Ref`: a measured one ([`CrossModel::transfer`], `predict --measured-on`),
//! or, through [`Model`], the reference profile's analytical model stored in the cross model.

pub mod fit;
pub mod select;

use super::{AnalyticalModel, Model, Shape};
use crate::backend::Variant;
use crate::features::Features;
use crate::formats::FormatParams;
use crate::instrument::{DeviceLimits, Measurement, Statistic};
use crate::{Error, Precision, Result};
pub use fit::DeviceFit;
pub use select::{Key, Selection};
use serde::{Deserialize, Serialize};

/// The fitted cross-architecture model of one precision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CrossModel {
    /// Precision of both devices' benchmarks.
    pub precision: Precision,
    /// The reference device's name.
    pub reference_device: String,
    /// The benchmark matrices measured on the target.
    pub selection: Selection,
    /// The reference's fit.
    pub reference: DeviceFit,
    /// The target's fit.
    pub target: DeviceFit,
    /// The reference profile's analytical model, for a `T_Ref` when none is measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_model: Option<AnalyticalModel>,
}

/// `P_Tar.Ref` and the initialization times of one prediction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Factors {
    /// `P_Tar.Ref`.
    pub p: f64,
    /// `T_Init.Ref`, seconds.
    pub init_ref: f64,
    /// `T_Init.Tar`, seconds.
    pub init_tar: f64,
}

/// `a / b`, or 1 when `b` is not positive (see the module documentation).
fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 {
        a / b
    } else {
        1.0
    }
}

impl CrossModel {
    /// Fit from the reference's and the target's measurements of the selected benchmarks.
    pub fn fit(
        precision: Precision,
        selection: Selection,
        (ref_limits, ref_ms): (&DeviceLimits, &[Measurement]),
        (tar_limits, tar_ms): (&DeviceLimits, &[Measurement]),
        reference_model: Option<AnalyticalModel>,
    ) -> Result<CrossModel> {
        let reference = DeviceFit::fit(&selection, ref_limits, ref_ms, "reference")?;
        let target = DeviceFit::fit(&selection, tar_limits, tar_ms, "target")?;
        Ok(CrossModel {
            precision,
            reference_device: ref_limits.name.clone(),
            selection,
            reference,
            target,
            reference_model,
        })
    }

    /// The factors of `variant` for the matrix summarized by `shape`.
    pub fn factors(
        &self,
        shape: &Shape,
        variant: Variant,
        params: &FormatParams,
    ) -> Result<Factors> {
        let (r, t) = (&self.reference, &self.target);
        let s = |a: u64, b: u64| a as f64 / b as f64;
        let p_ell = ratio(t.ell.c, r.ell.c) * s(r.ell.strip_size, t.ell.strip_size);
        let p_coo = ratio(t.coo.c, r.coo.c) * s(r.coo.strip_size, t.coo.strip_size);
        let ell_init = |n: u64| {
            let i = |sz: u64| n.div_ceil(sz).max(1) as f64;
            (
                r.ell.init(i(r.ell.strip_size)),
                t.ell.init(i(t.ell.strip_size)),
            )
        };
        Ok(match variant {
            Variant::Csr { .. } => self.csr(shape.mode_row_len as f64)?,
            Variant::Ell => {
                shape.ell_width(params)?;
                let (a, b) = ell_init(shape.nrows);
                Factors {
                    p: p_ell,
                    init_ref: a,
                    init_tar: b,
                }
            }
            Variant::Coo => Factors {
                p: p_coo,
                init_ref: r.coo.t_init,
                init_tar: t.coo.t_init,
            },
            Variant::Hyb => {
                let (w, over) = shape.hyb_split(params)?;
                let (a, b) = ell_init(shape.nrows);
                if w == 0 {
                    Factors {
                        p: p_coo,
                        init_ref: r.coo.t_init,
                        init_tar: t.coo.t_init,
                    }
                } else if over == 0 {
                    Factors {
                        p: p_ell,
                        init_ref: a,
                        init_tar: b,
                    }
                } else {
                    Factors {
                        p: p_ell,
                        init_ref: a + ratio(p_coo, p_ell) * r.coo.t_init,
                        init_tar: b + t.coo.t_init,
                    }
                }
            }
            other => {
                return Err(Error::Unsupported(format!(
                    "the cross-architecture model (003) covers CSR, ELL, COO and HYB, not {other}"
                )))
            }
        })
    }

    /// CSR's factors for a target `P_NZ` (the mode of its row lengths), 003 §4.1.2–4.1.3.
    fn csr(&self, x: f64) -> Result<Factors> {
        let (r, t) = (&self.reference.csr, &self.target.csr);
        let (tar_thd, ref_thd) = (t.threshold as f64, r.threshold as f64);
        let sel = &self.selection.csr;
        let (c1t, c2t) = if x <= tar_thd {
            (t.low.slope, t.c2_low)
        } else {
            (t.high.slope, t.c2_high)
        };
        let (c1r, c2r, b0) = if x <= ref_thd {
            (r.low.slope, r.c2_low, r.low.intercept)
        } else {
            (r.high.slope, r.c2_high, r.high.intercept)
        };
        let x0 = if x <= tar_thd {
            sel.x00
        } else if x < ref_thd {
            t.threshold
        } else {
            r.threshold
        };
        let missing = || Error::Invalid(format!("cross model: no CSR anchor at P_NZ = {x0}"));
        let (t0_tar, init_tar) = t.anchor(x0).ok_or_else(missing)?;
        let (_, init_ref) = r.anchor(x0).ok_or_else(missing)?;
        let t0_ref = c1r * x0 as f64 + b0;
        let t1_ref = c1r * x + b0;
        let a = ratio(t0_ref, t1_ref);
        let p1 = if c1r > 0.0 {
            c1t / c1r * ratio(t0_ref, t0_tar) * (1.0 - a) + a
        } else {
            1.0
        };
        let p2 = ratio(c2t, c2r) * r.strip_size as f64 / t.strip_size as f64;
        Ok(Factors {
            p: p1 * p2,
            init_ref,
            init_tar,
        })
    }

    /// `T_Tar` from a time `t_ref` (seconds) of `variant` on the reference.
    pub fn transfer(
        &self,
        shape: &Shape,
        variant: Variant,
        params: &FormatParams,
        t_ref: f64,
    ) -> Result<f64> {
        if !(t_ref.is_finite() && t_ref > 0.0) {
            return Err(Error::Invalid(format!(
                "reference time {t_ref} s is not a positive number"
            )));
        }
        let f = self.factors(shape, variant, params)?;
        let t = f.init_tar + f.p * (t_ref - f.init_ref);
        Ok(if t.is_finite() && t > 0.0 {
            t
        } else {
            f.p * t_ref
        })
    }

    /// Whether every number is finite.
    pub fn is_valid(&self) -> bool {
        self.reference.is_valid()
            && self.target.is_valid()
            && self.reference_model.as_ref().map_or(true, |m| m.is_valid())
    }
}

impl Model for CrossModel {
    fn name(&self) -> &str {
        "cross"
    }
    fn precision(&self) -> Precision {
        self.precision
    }
    fn statistic(&self) -> Statistic {
        Statistic::Median
    }
    fn variants(&self) -> Vec<Variant> {
        match &self.reference_model {
            Some(m) => m.variants(),
            None => vec![
                Variant::Csr {
                    threads_per_row: 32,
                },
                Variant::Ell,
                Variant::Coo,
                Variant::Hyb,
            ],
        }
    }
    fn predict_shape(&self, shape: &Shape, variant: Variant, params: &FormatParams) -> Result<f64> {
        let m = self.reference_model.as_ref().ok_or_else(|| {
            Error::Unsupported(
                "the cross model has no reference model: give the reference's times \
                 (predict --measured-on)"
                    .into(),
            )
        })?;
        let t_ref = m.predict_shape(shape, variant, params)?;
        self.transfer(shape, variant, params, t_ref)
    }
    fn explain(&self, features: &Features, variant: Variant, params: &FormatParams) -> String {
        match self.factors(&Shape::from_features(features), variant, params) {
            Ok(f) => format!(
                "P {:.3}, T_Init {:.2} µs (ref) → {:.2} µs (target)",
                f.p,
                f.init_ref * 1e6,
                f.init_tar * 1e6
            ),
            Err(_) => String::new(),
        }
    }
}

/// A [`CrossModel`] with the times measured on the reference for one matrix (`predict
/// --measured-on`): it predicts exactly the configurations measured there.
pub struct MeasuredCross<'a> {
    /// The cross model.
    pub cross: &'a CrossModel,
    /// Seconds measured on the reference, per kernel (default parameters and block size).
    pub times: Vec<(Variant, f64)>,
}

impl Model for MeasuredCross<'_> {
    fn name(&self) -> &str {
        "cross"
    }
    fn precision(&self) -> Precision {
        self.cross.precision
    }
    fn statistic(&self) -> Statistic {
        Statistic::Median
    }
    fn variants(&self) -> Vec<Variant> {
        let covered = |v: &Variant| {
            matches!(
                v,
                Variant::Csr { .. } | Variant::Ell | Variant::Coo | Variant::Hyb
            )
        };
        self.times.iter().map(|t| t.0).filter(covered).collect()
    }
    fn predict_shape(&self, shape: &Shape, variant: Variant, params: &FormatParams) -> Result<f64> {
        let t = self.times.iter().find(|t| t.0 == variant).ok_or_else(|| {
            Error::Unsupported(format!("no time of {variant} measured on the reference"))
        })?;
        self.cross.transfer(shape, variant, params, t.1)
    }
    fn explain(&self, features: &Features, variant: Variant, params: &FormatParams) -> String {
        let t = self
            .times
            .iter()
            .find(|t| t.0 == variant)
            .map_or(0.0, |t| t.1);
        format!(
            "from {:.2} µs measured on the reference; {}",
            t * 1e6,
            self.cross.explain(features, variant, params)
        )
    }
}
