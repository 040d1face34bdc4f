//! The CSR model (004 §3.5.1, 000 §III-F1), for the vector kernel (one warp per row) and, with
//! their own strip sizes, the sub-warp mappings.
//!
//! **Step 1 — relationships.**
//! * Relationship-1, `T = E(x)`: time against `P_NZ = x` at one fixed strip count. The papers
//!   allow "any" strip count and plot `I = 5`; we take the middle of the measured strip counts
//!   (the lower median among those measured at the most `P_NZ` values), which is 5 for the
//!   papers' `I = 1…10`.
//! * Relationship-2, `T' = E'(y)`: time against strips `y` at a fixed `P_NZ = Z`, one line per
//!   side of the threshold. As in the papers' Fig. 5, the low side uses the smallest measured
//!   `P_NZ` (4) and the high side the threshold itself (1,024) — precisely: the smallest measured
//!   `P_NZ ≥ threshold` that was measured at two or more strip counts.
//!
//! Both relationships are fitted by least squares, Relationship-1 piecewise on the two sides of
//! the threshold (the device's max threads per block; see [`PiecewiseLine`] for how the point at
//! the threshold is shared).
//!
//! **Step 2 — estimate.** For a target with `P_NZ` mode `x0` and `y0 = ⌈N_R / S⌉` strips:
//! `T1 = E(x0)`; `T3 = E'(y0)` from the Relationship-2 line of `x0`'s side (the low line when the
//! grid never reached past the threshold); `T2 = E(Z)`, Relationship-1 evaluated at that line's
//! reference `P_NZ = Z` with the piece of `x0`'s side — 003 §4.1.2 writes it out as
//! `T_0.Ref = C_1 · X_0 + B_0` (and `T1 = C_1 · P_NZ + B_0`), so both sides of the ratio come from
//! the same fitted line and their fitting errors cancel; then `T0 = (T1 / T2) × T3`.
//! (Before schema 2 `T2` was the *measured* time of the benchmark with `P_NZ = Z` at
//! Relationship-1's strip count, one reading of 004's "execution time of any previously tested
//! benchmark matrix"; it put the noise of one benchmark into every prediction: H200 f64 CSR,
//! 74.7 % mean difference on real matrices.)
//!
//! **Physically impossible fits are rejected.** Every line is fitted by least squares constrained
//! to a non-negative slope and a non-negative value where the model starts using it
//! ([`Line::fit_monotone`]): a time that falls with more non-zeros per row or more strips is
//! never used. The sides whose free fit was rejected are listed in [`CsrParams::rejected`].
//!
//! **Outside the benchmark range** the lines extrapolate linearly (the papers' relationships are
//! linear; the strip count of a large matrix is far beyond the ten measured), and every value —
//! `T1`, `T3` and `T0` — is floored at the suite's fastest benchmark (see
//! [`super::AnalyticalModel::fit`]).

use super::min_strips;
use crate::backend::Variant;
use crate::instrument::{Measurement, Statistic};
use crate::model::fit::{Line, PiecewiseLine};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// A Relationship-2 line with the benchmark it is anchored to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StripLine {
    /// `Z`: the `P_NZ` of the line's benchmark matrices.
    pub pnz: u64,
    /// `T2 = E(Z)`: Relationship-1 at `P_NZ = Z` (003 §4.1.2), on the low piece for the low
    /// line and on the high piece for the high line.
    pub t2: f64,
    /// `T' = E'(y)`.
    pub line: Line,
}

/// Fitted parameters of the CSR model for one thread mapping.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CsrParams {
    /// Threads per row of the kernel (32 = the vector kernel).
    pub threads_per_row: u32,
    /// `S`, rows per strip.
    pub strip_size: u64,
    /// Strip count at which Relationship-1 was measured.
    pub fixed_strips: u64,
    /// Relationship-1 `T = E(x)`, piecewise at the threshold.
    pub rel1: PiecewiseLine,
    /// Relationship-2 for `x ≤ threshold`.
    pub rel2_low: StripLine,
    /// Relationship-2 for `x > threshold`, when measured.
    pub rel2_high: Option<StripLine>,
    /// The fewest strips among the benchmarks fitted (1, or a fraction with sub-strip benchmarks):
    /// a target's strip count is taken no lower, so the lines are never extrapolated below the
    /// measured range.
    #[serde(default = "super::one")]
    pub min_strips: f64,
    /// The suite's fastest benchmark time, the floor of every estimate.
    pub floor: f64,
    /// The relationships whose unconstrained least-squares fit made time fall with more work
    /// (or go negative) and was replaced by the constrained fit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rejected: Vec<String>,
}

impl CsrParams {
    /// Fit from this kernel's measurements (all with the same `threads_per_row`).
    pub fn fit(
        threads_per_row: u32,
        strip_size: u64,
        threshold: u64,
        floor: f64,
        stat: Statistic,
        ms: &[&Measurement],
    ) -> Result<CsrParams> {
        let what = Variant::Csr { threads_per_row }.name();
        // Relationship-1 is fitted at a whole strip count; sub-strip benchmarks serve
        // Relationship-2 only.
        let all = ms;
        let whole: Vec<&Measurement> = ms
            .iter()
            .copied()
            .filter(|m| !m.is_sub_strip(strip_size))
            .collect();
        let ms = &whole[..];
        let fixed = fixed_strips(ms).ok_or_else(|| {
            Error::Invalid(format!(
                "{what}: Relationship-1 needs two P_NZ values at one strip count"
            ))
        })?;
        let (xs, ys): (Vec<f64>, Vec<f64>) = ms
            .iter()
            .filter(|m| m.strips == fixed)
            .map(|m| (m.pnz as f64, m.time(stat)))
            .unzip();
        let (rel1, mut rejected) = PiecewiseLine::fit_monotone(
            &format!("{what} Relationship-1 (I = {fixed})"),
            threshold as f64,
            &xs,
            &ys,
        )?;
        let multi = |z: u64| ms.iter().filter(|m| m.pnz == z).count() >= 2;
        let mut pnzs: Vec<u64> = ms.iter().map(|m| m.pnz).collect();
        pnzs.sort_unstable();
        pnzs.dedup();
        let z_low = pnzs
            .iter()
            .copied()
            .filter(|&z| z <= threshold)
            .find(|&z| multi(z))
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "{what}: Relationship-2 needs a P_NZ ≤ {threshold} measured at two strip counts"
                ))
            })?;
        let rel2_low = strip_line(
            &what,
            all,
            strip_size,
            z_low,
            rel1.low.eval(z_low as f64),
            stat,
            &mut rejected,
        )?;
        let rel2_high = match (
            rel1.high,
            pnzs.iter().find(|&&z| z >= threshold && multi(z)),
        ) {
            (Some(h), Some(&z)) => Some(strip_line(
                &what,
                all,
                strip_size,
                z,
                h.eval(z as f64),
                stat,
                &mut rejected,
            )?),
            _ => None,
        };
        Ok(CsrParams {
            min_strips: min_strips(all, strip_size),
            threads_per_row,
            strip_size,
            fixed_strips: fixed,
            rel1,
            rel2_low,
            rel2_high,
            floor,
            rejected,
        })
    }

    /// Estimated seconds for a target with `P_NZ` mode `x0` and `nrows` rows.
    pub fn predict(&self, x0: f64, nrows: u64) -> f64 {
        let y0 = crate::instrument::strip_count(nrows, self.strip_size).max(self.min_strips);
        let rel2 = match &self.rel2_high {
            Some(h) if self.rel1.is_high(x0) => h,
            _ => &self.rel2_low,
        };
        let t1 = self.rel1.eval(x0).max(self.floor);
        let t2 = rel2.t2.max(self.floor);
        let t3 = rel2.line.eval(y0).max(self.floor);
        (t1 / t2 * t3).max(self.floor)
    }

    /// Whether every number is finite and the times positive.
    pub fn is_valid(&self) -> bool {
        let sl = |s: &StripLine| s.line.is_finite() && s.t2.is_finite() && s.t2 > 0.0;
        self.strip_size > 0
            && self.rel1.is_finite()
            && sl(&self.rel2_low)
            && self.rel2_high.as_ref().map_or(true, sl)
            && self.floor.is_finite()
            && self.floor > 0.0
    }
}

/// The strip count for Relationship-1: among those measured at the most distinct `P_NZ` values
/// (at least two), the lower median.
fn fixed_strips(ms: &[&Measurement]) -> Option<u64> {
    let mut strips: Vec<u64> = ms.iter().map(|m| m.strips).collect();
    strips.sort_unstable();
    strips.dedup();
    let count = |s: u64| ms.iter().filter(|m| m.strips == s).count();
    let best = strips.iter().map(|&s| count(s)).max()?;
    if best < 2 {
        return None;
    }
    let cands: Vec<u64> = strips.into_iter().filter(|&s| count(s) == best).collect();
    Some(cands[(cands.len() - 1) / 2])
}

/// Fit Relationship-2 at `P_NZ = z` (constrained, see the module documentation) and anchor it at
/// `T2 = t2`, Relationship-1's value at `z`.
fn strip_line(
    what: &str,
    ms: &[&Measurement],
    strip_size: u64,
    z: u64,
    t2: f64,
    stat: Statistic,
    rejected: &mut Vec<String>,
) -> Result<StripLine> {
    let (xs, ys): (Vec<f64>, Vec<f64>) = ms
        .iter()
        .filter(|m| m.pnz == z)
        .map(|m| (m.strip_count(strip_size), m.time(stat)))
        .unzip();
    let rel2_what = format!("{what} Relationship-2 (P_NZ = {z})");
    let (line, c) = Line::fit_monotone(&rel2_what, &xs, &ys, 0.0)?;
    if c {
        rejected.push(rel2_what);
    }
    if !(t2.is_finite() && t2 > 0.0) {
        return Err(Error::Invalid(format!(
            "{what}: Relationship-1 gives T2 = {t2} s at the reference P_NZ = {z}"
        )));
    }
    Ok(StripLine { pnz: z, t2, line })
}
