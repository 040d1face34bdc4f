//! The COO model (004 §3.5.3, 000 §III-F3): one thread per non-zero, so strips are counted in
//! non-zeros, `x = ⌈N_NZ / S_COO⌉`, and the time is one least-squares line `T = E(x)` fitted to
//! benchmarks of one strip of rows with a growing number of non-zeros per row. Outside the
//! measured range the line extrapolates linearly; the estimate is floored at the suite's fastest
//! benchmark (see [`super::AnalyticalModel::fit`]). The line is constrained to a non-negative slope
//! and intercept ([`Line::fit_monotone`]); a free fit that made time fall with more non-zeros is
//! rejected (a CPU profile once fitted a negative slope and predicted 1.9 PB/s).

use super::min_strips;
use crate::instrument::{Measurement, Statistic};
use crate::model::fit::Line;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// Fitted parameters of the COO model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CooParams {
    /// `S_COO`, non-zeros per strip.
    pub strip_size: u64,
    /// `T = E(x)`, `x` in non-zero strips.
    pub line: Line,
    /// The fewest strips among the benchmarks fitted (1, or a fraction with sub-strip benchmarks):
    /// a target's strip count is taken no lower, so the lines are never extrapolated below the
    /// measured range.
    #[serde(default = "super::one")]
    pub min_strips: f64,
    /// The suite's fastest benchmark time, the floor of every estimate.
    pub floor: f64,
    /// Whether the free least-squares fit was rejected (see the module documentation).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rejected: bool,
}

impl CooParams {
    /// Fit from the COO measurements.
    pub fn fit(
        strip_size: u64,
        floor: f64,
        stat: Statistic,
        ms: &[&Measurement],
    ) -> Result<CooParams> {
        if ms.is_empty() {
            return Err(Error::Invalid("coo: no benchmark measurements".into()));
        }
        let (xs, ts): (Vec<f64>, Vec<f64>) = ms
            .iter()
            .map(|m| (m.strip_count(strip_size), m.time(stat)))
            .unzip();
        let (line, rejected) = Line::fit_monotone("coo Relationship-1", &xs, &ts, 0.0)?;
        Ok(CooParams {
            min_strips: min_strips(ms, strip_size),
            strip_size,
            line,
            floor,
            rejected,
        })
    }

    /// Estimated seconds for `nnz` non-zeros.
    pub fn predict(&self, nnz: u64) -> f64 {
        let x = crate::instrument::strip_count(nnz, self.strip_size).max(self.min_strips);
        self.line.eval(x).max(self.floor)
    }

    /// Whether every number is finite and the floor positive.
    pub fn is_valid(&self) -> bool {
        self.strip_size > 0 && self.line.is_finite() && self.floor.is_finite() && self.floor > 0.0
    }
}
