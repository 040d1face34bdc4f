//! The ELL model (004 §3.5.2, 000 §III-F2).
//!
//! **Step 1 — relationships**, all least-squares lines:
//! * Relationship-1, `T = f(y)·x + g(y)`: for every measured strip count `y`, time against
//!   `P_NZ = x` (kept in [`EllParams::rel1`]; only its slopes are used).
//! * Relationship-2, `f(y)`: those slopes against `y`.
//! * Relationship-3, `e(y) = f(y)·x1 + g(y)`: time against strips at a fixed `P_NZ = x1`; we take
//!   the smallest measured `P_NZ` (the papers' Fig. 5c uses 4) among those measured at two or
//!   more strip counts. Hence `g(y) = e(y) − f(y)·x1`. (One sentence of the papers writes
//!   `g(Y) = e(Y) − f(Y)·Y`; `x1` is what the derivation means.)
//!
//! **Step 2 — estimate.** With `X` = the longest row (the ELL width) and `Y = ⌈N_R / S_ELL⌉`:
//! `T0 = f(Y)·X + g(Y) = f(Y)·(X − x1) + e(Y)`.
//!
//! **Outside the benchmark range** the lines extrapolate linearly and `T0` is floored at the
//! suite's fastest benchmark (see [`super::AnalyticalModel::fit`]).

use crate::instrument::{Measurement, Statistic};
use crate::model::fit::Line;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// Relationship-1 at one strip count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StripFit {
    /// `y`.
    pub strips: u64,
    /// `T = f(y)·x + g(y)` (slope `f(y)`, intercept `g(y)`).
    pub line: Line,
}

/// Fitted parameters of the ELL model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EllParams {
    /// `S_ELL`, rows per strip.
    pub strip_size: u64,
    /// Relationship-1 at every strip count measured at two or more `P_NZ` values.
    pub rel1: Vec<StripFit>,
    /// Relationship-2: `f(y)`.
    pub f: Line,
    /// `x1`, the `P_NZ` of Relationship-3.
    pub x1: u64,
    /// Relationship-3: `e(y)`.
    pub e: Line,
    /// The suite's fastest benchmark time, the floor of every estimate.
    pub floor: f64,
}

impl EllParams {
    /// Fit from the ELL measurements.
    pub fn fit(
        strip_size: u64,
        floor: f64,
        stat: Statistic,
        ms: &[&Measurement],
    ) -> Result<EllParams> {
        if ms.is_empty() {
            return Err(Error::Invalid("ell: no benchmark measurements".into()));
        }
        let mut strips: Vec<u64> = ms.iter().map(|m| m.strips).collect();
        strips.sort_unstable();
        strips.dedup();
        let mut rel1 = Vec::new();
        for &y in &strips {
            let (xs, ts): (Vec<f64>, Vec<f64>) = ms
                .iter()
                .filter(|m| m.strips == y)
                .map(|m| (m.pnz as f64, m.time(stat)))
                .unzip();
            if distinct(&xs) >= 2 {
                let line = Line::fit(&format!("ell Relationship-1 (I = {y})"), &xs, &ts)?;
                rel1.push(StripFit { strips: y, line });
            }
        }
        let (ys, fs): (Vec<f64>, Vec<f64>) =
            rel1.iter().map(|r| (r.strips as f64, r.line.slope)).unzip();
        let f = Line::fit("ell Relationship-2 f(y)", &ys, &fs).map_err(|_| {
            Error::Invalid(
                "ell: Relationship-2 needs two strip counts each measured at two P_NZ values"
                    .into(),
            )
        })?;
        let mut pnzs: Vec<u64> = ms.iter().map(|m| m.pnz).collect();
        pnzs.sort_unstable();
        pnzs.dedup();
        let x1 = pnzs
            .into_iter()
            .find(|&z| ms.iter().filter(|m| m.pnz == z).count() >= 2)
            .ok_or_else(|| {
                Error::Invalid(
                    "ell: Relationship-3 needs a P_NZ measured at two strip counts".into(),
                )
            })?;
        let (ys, es): (Vec<f64>, Vec<f64>) = ms
            .iter()
            .filter(|m| m.pnz == x1)
            .map(|m| (m.strips as f64, m.time(stat)))
            .unzip();
        let e = Line::fit(&format!("ell Relationship-3 e(y) (P_NZ = {x1})"), &ys, &es)?;
        Ok(EllParams {
            strip_size,
            rel1,
            f,
            x1,
            e,
            floor,
        })
    }

    /// Estimated seconds for an ELL matrix `width` entries wide with `nrows` rows.
    pub fn predict(&self, width: f64, nrows: u64) -> f64 {
        let y = nrows.div_ceil(self.strip_size) as f64;
        let fy = self.f.eval(y);
        let gy = self.e.eval(y) - fy * self.x1 as f64;
        (fy * width + gy).max(self.floor)
    }

    /// Whether every number is finite and the floor positive.
    pub fn is_valid(&self) -> bool {
        self.strip_size > 0
            && self.f.is_finite()
            && self.e.is_finite()
            && self.rel1.iter().all(|r| r.line.is_finite())
            && self.floor.is_finite()
            && self.floor > 0.0
    }
}

fn distinct(xs: &[f64]) -> usize {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v.len()
}
