//! How a plan's time follows from its blocks' predicted times, the way the plan executes.
//!
//! A block predicted at `T_b` alone (the model predicts whole kernels, launch included) is
//! `floor + w_b`, where `floor` is the fixed cost of any SpMV (the device's launch floor) and
//! `w_b = max(T_b − floor, 0)` the work beyond it. The blocks of a plan write disjoint rows of y
//! and run as one unit whose launches overlap ([`super::execute`]): the work of the blocks shares
//! the device's bandwidth and adds up, the floor is paid once, and every block beyond the first
//! costs `block_s` more (its launch inside the unit, the tail of a kernel on a small row range):
//!
//! ```text
//! T_plan = floor + Σ_b w_b + (blocks − 1) · block_s
//! ```
//!
//! which is ≥ every `T_b`, = `T_b` for one block, and additive over blocks
//! ([`PlanRule::block_cost`] + [`PlanRule::offset`]), so the dynamic program stays exact.
//! `block_s = floor` is the blocks run one after another with nothing lost between them
//! (`Σ T_b`, the rule of 004); `block_s = 0` is perfect overlap. `scripts/device_optimizer.sh`
//! measures `block_s` on the device (the best single configuration cut at the strips, timed as a
//! plan, against its blocks timed alone). On the GPUs it is several floors, not one: the
//! session-5 runs (docs/{h200,h100}/optimizer/log-*.txt) fitted 4.5–5.3 µs (H200, floor
//! 1.06–1.12 µs) and 4.8–6.0 µs (H100, floor 1.19–1.21 µs) per extra block on the large and
//! heterogeneous matrices, 4.0–5.05 floors (each block of the sequential graph drains its
//! kernel's tail before the next starts), and ≈ 1 floor on small matrices. The default
//! ([`PlanRule::measured_default`]) is therefore [`DEFAULT_BLOCK_FLOORS`] floors, the upper end
//! of those fits: conservative, it can only keep a plan from being adopted, never make one
//! look cheaper than it ran; `optimize --block-cost-us` sets a calibrated value.

use serde::{Deserialize, Serialize};

/// The constants of the plan-time rule (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanRule {
    /// The fixed cost of one SpMV, seconds.
    pub floor_s: f64,
    /// The cost of every block beyond the first, seconds.
    pub block_s: f64,
}

/// Default cost of every block beyond the first, in launch floors (see the module
/// documentation: the largest per-block cost fitted on the H200 and H100, 5.05 floors, rounded).
pub const DEFAULT_BLOCK_FLOORS: f64 = 5.0;

impl PlanRule {
    /// The default rule: `block_s` = [`DEFAULT_BLOCK_FLOORS`] × `floor_s`.
    pub fn measured_default(floor_s: f64) -> PlanRule {
        PlanRule {
            floor_s,
            block_s: DEFAULT_BLOCK_FLOORS * floor_s,
        }
    }

    /// The rule with `block_s` = `floor_s` (blocks in sequence, no overlap).
    pub fn sequential(floor_s: f64) -> PlanRule {
        PlanRule {
            floor_s,
            block_s: floor_s,
        }
    }

    /// A block's share of the plan: `max(T_b − floor, 0) + block_s` (`+∞` stays `+∞`).
    #[inline]
    pub fn block_cost(&self, t_b: f64) -> f64 {
        (t_b - self.floor_s).max(0.0) + self.block_s
    }

    /// What the plan adds to the sum of its blocks' costs: `floor − block_s`.
    pub fn offset(&self) -> f64 {
        self.floor_s - self.block_s
    }

    /// The predicted time of a plan whose blocks are predicted at `times`.
    pub fn plan_time(&self, times: &[f64]) -> f64 {
        if times.is_empty() {
            return 0.0;
        }
        self.offset() + times.iter().map(|&t| self.block_cost(t)).sum::<f64>()
    }

    /// `block_s` fitted to measured plans: `(blocks, measured plan seconds, Σ measured block
    /// work beyond the floor)` → the least-squares slope of `T_plan − floor − Σ w_b` on
    /// `blocks − 1` through the origin (the device script's calibration). `None` without a plan
    /// of two blocks or more.
    pub fn fit_block_s(floor_s: f64, samples: &[(usize, f64, f64)]) -> Option<f64> {
        let (mut sxy, mut sxx) = (0.0, 0.0);
        for &(k, t, work) in samples {
            let x = k.saturating_sub(1) as f64;
            sxy += x * (t - floor_s - work);
            sxx += x * x;
        }
        (sxx > 0.0).then(|| (sxy / sxx).max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_block_is_its_own_time_and_sequential_is_the_sum() {
        let r = PlanRule::sequential(2e-6);
        assert!((r.plan_time(&[7e-6]) - 7e-6).abs() < 1e-18);
        assert!((r.plan_time(&[7e-6, 3e-6, 2e-6]) - 12e-6).abs() < 1e-18);
        let o = PlanRule {
            floor_s: 2e-6,
            block_s: 0.5e-6,
        };
        // floor + (5 + 1 + 0) µs of work + 2 × 0.5 µs.
        assert!((o.plan_time(&[7e-6, 3e-6, 1e-6]) - 9e-6).abs() < 1e-18);
        assert!(o.plan_time(&[7e-6, 3e-6]) >= 7e-6);
        // Fit: plans whose extra blocks cost 1 µs each.
        let s = [(1, 5e-6, 3e-6), (3, 7e-6, 3e-6), (5, 9e-6, 3e-6)];
        let b = PlanRule::fit_block_s(2e-6, &s).unwrap();
        assert!((b - 1e-6).abs() < 1e-15, "{b}");
        assert!(PlanRule::fit_block_s(2e-6, &[(1, 5e-6, 3e-6)]).is_none());
        // The default charges 5 floors per extra block: two blocks of 7 and 3 µs cost
        // 2 + 5 + 1 + 10 µs.
        let d = PlanRule::measured_default(2e-6);
        assert!((d.plan_time(&[7e-6, 3e-6]) - 18e-6).abs() < 1e-18);
        assert!((d.plan_time(&[7e-6]) - 7e-6).abs() < 1e-18);
    }
}
