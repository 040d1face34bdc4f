//! How a plan's time follows from its blocks' predicted times, the way the plan executes
//! ([`Overlap`]: its blocks one after another, or all at once).
//!
//! A block predicted at `T_b` alone (the model predicts whole kernels, launch included) is
//! `floor + w_b`, where `floor` is the fixed cost of any SpMV (the device's launch floor) and
//! `w_b = max(T_b − floor, 0)` the work beyond it. The blocks of a plan write disjoint rows of y
//! and run as one unit ([`super::execute`]).
//!
//! **Serial** (the blocks in a chain; 004's sum with the floor paid once): the work of the blocks
//! adds up, the floor is paid once, and every block beyond the first costs `block_s` more (its
//! launch inside the unit, the tail of a kernel on a small row range drained before the next
//! starts):
//!
//! ```text
//! T_serial = floor + Σ_b w_b + (blocks − 1) · block_s
//! ```
//!
//! which is ≥ every `T_b`, = `T_b` for one block, and additive over blocks
//! ([`PlanRule::block_cost`] + [`PlanRule::offset`]), so the dynamic program stays exact.
//! `block_s = floor` is the blocks run one after another with nothing lost between them
//! (`Σ T_b`, the rule of 004). `scripts/device_optimizer.sh` measures `block_s` on the device
//! (the best single configuration cut at the strips, timed as a plan, against its blocks timed
//! alone). On the GPUs it is several floors, not one: the session-5 runs
//! (docs/{h200,h100}/optimizer/log-*.txt) fitted 4.5–5.3 µs (H200, floor 1.06–1.12 µs) and
//! 4.8–6.0 µs (H100, floor 1.19–1.21 µs) per extra block on the large and heterogeneous
//! matrices, 4.0–5.05 floors (each block of the sequential graph drains its kernel's tail before
//! the next starts), and ≈ 1 floor on small matrices. The serial default
//! ([`PlanRule::measured_default`]) is therefore [`DEFAULT_BLOCK_FLOORS`] floors, the upper end
//! of those fits: conservative, it can only keep a plan from being adopted, never make one look
//! cheaper than it ran; `optimize --block-cost-us` sets a calibrated value.
//!
//! **Concurrent** (the blocks as parallel branches of one fork/join graph): a block no longer
//! waits for the others, so what a block costs beyond its bytes (latency, a tail on few SMs, a
//! small grid) overlaps with the other blocks' work. The plan ends when the device has moved
//! every block's bytes and its slowest block is done, so its time is the larger of two bounds:
//!
//! ```text
//! T_concurrent = max( floor + Σ_b β_b + (blocks − 1) · block_s ,  max_b T_b )
//! ```
//!
//! * the **shared-bandwidth chain** — `β_b` is block `b`'s bytes (format, x, y) at the device's
//!   bandwidth ceiling (`bytes / BW`, [`crate::model::DeviceBounds`]; at most `w_b`: a block
//!   moves its bytes no slower than it runs alone), so `Σ β_b` is the total bytes over the
//!   bandwidth; the floor is paid once, and each further branch costs `block_s`
//!   (its launch by the graph: the critical launch chain `floor + (blocks − 1)·block_s` is
//!   added here rather than maximized, the upper estimate of the two). Where the profile has
//!   no bandwidth, `β_b = w_b` (the work beyond the floor: then the chain is the serial one with
//!   the concurrent `block_s`);
//! * the **largest block** — no plan finishes before its slowest block would alone (the
//!   critical path of one branch).
//!
//! With `block_s` small, an irregular block that runs long on few SMs beside a large regular
//! one costs about the larger of the two, not their sum — the gain overlap is for. A block
//! whose bytes are far more than `bytes / BW` says (scattered x reads) makes the chain
//! optimistic; the largest-block bound and the adoption margin ([`super::learned`]) guard that.
//! The rule is not additive, but the program stays exact: for a bound `τ` on the largest block,
//! the least chain is an additive program over the blocks with `T_b ≤ τ`; it does not grow with
//! `τ`, so the best `τ` is found by bisection over the candidate blocks' times
//! ([`super::merged::solve_merged_max`], tested against brute force). The concurrent `block_s`
//! defaults to [`DEFAULT_CONCURRENT_BLOCK_FLOORS`] floors (not yet measured: the device run of
//! `scripts/device_concurrent.sh` calibrates it; `--block-cost-us` sets it).
//!
//! 004's own program (`--model analytical`, [`super::dp`]) keeps its serial sum `Σ E` as the
//! faithful baseline; this rule is the feature-based optimizer's ([`super::learned`]).

use crate::backend::Overlap;
use serde::{Deserialize, Serialize};

/// The constants of the plan-time rule (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlanRule {
    /// The fixed cost of one SpMV, seconds.
    pub floor_s: f64,
    /// The cost of every block beyond the first, seconds.
    pub block_s: f64,
    /// How the plan's blocks run, and so which rule applies (a rule stored before the field
    /// existed reads `serial`, which it was).
    #[serde(default)]
    pub overlap: Overlap,
}

/// Default cost of every block beyond the first of a serial plan, in launch floors (see the
/// module documentation: the largest per-block cost fitted on the H200 and H100, 5.05 floors,
/// rounded).
pub const DEFAULT_BLOCK_FLOORS: f64 = 5.0;

/// Default cost of every branch beyond the first of a concurrent plan, in launch floors: one
/// launch, issued while the other branches work. **Not measured yet** — a placeholder between
/// perfect overlap (0) and the serial chain's drained tails ([`DEFAULT_BLOCK_FLOORS`]);
/// `scripts/device_concurrent.sh` fits it on forced splits (its "per-branch cost" line).
pub const DEFAULT_CONCURRENT_BLOCK_FLOORS: f64 = 1.0;

impl PlanRule {
    /// The default serial rule: `block_s` = [`DEFAULT_BLOCK_FLOORS`] × `floor_s`.
    pub fn measured_default(floor_s: f64) -> PlanRule {
        PlanRule {
            floor_s,
            block_s: DEFAULT_BLOCK_FLOORS * floor_s,
            overlap: Overlap::Serial,
        }
    }

    /// The default concurrent rule: `block_s` = [`DEFAULT_CONCURRENT_BLOCK_FLOORS`] ×
    /// `floor_s`.
    pub fn concurrent_default(floor_s: f64) -> PlanRule {
        PlanRule {
            floor_s,
            block_s: DEFAULT_CONCURRENT_BLOCK_FLOORS * floor_s,
            overlap: Overlap::Concurrent,
        }
    }

    /// The default rule of plans that run as `overlap` says.
    pub fn for_overlap(overlap: Overlap, floor_s: f64) -> PlanRule {
        match overlap {
            Overlap::Serial => Self::measured_default(floor_s),
            Overlap::Concurrent => Self::concurrent_default(floor_s),
        }
    }

    /// The serial rule with `block_s` = `floor_s` (blocks in sequence, nothing lost between).
    pub fn sequential(floor_s: f64) -> PlanRule {
        PlanRule {
            floor_s,
            block_s: floor_s,
            overlap: Overlap::Serial,
        }
    }

    /// A block's share of the serial chain: `max(T_b − floor, 0) + block_s` (`+∞` stays `+∞`).
    #[inline]
    pub fn block_cost(&self, t_b: f64) -> f64 {
        (t_b - self.floor_s).max(0.0) + self.block_s
    }

    /// A block's share of the plan's chain in the plan's mode: serial, [`PlanRule::block_cost`]
    /// of its time alone `t_b`; concurrent, its bandwidth time `min(β_b, w_b) + block_s` (a
    /// block moves its bytes no slower than it runs alone; `beta_b` NaN = unknown: `w_b`).
    #[inline]
    pub fn chain_cost(&self, t_b: f64, beta_b: f64) -> f64 {
        let w = (t_b - self.floor_s).max(0.0);
        match self.overlap {
            Overlap::Concurrent if !beta_b.is_nan() && t_b.is_finite() => {
                beta_b.clamp(0.0, w) + self.block_s
            }
            _ => w + self.block_s,
        }
    }

    /// What the plan adds to the sum of its blocks' chain costs: `floor − block_s`.
    pub fn offset(&self) -> f64 {
        self.floor_s - self.block_s
    }

    /// The predicted time of a plan whose blocks are predicted at `times` alone, with bandwidth
    /// times `betas` (ignored by the serial rule; NaN or missing = unknown): the chain, and for a
    /// concurrent plan at least its largest block (see the module documentation).
    pub fn plan_time(&self, times: &[f64], betas: &[f64]) -> f64 {
        if times.is_empty() {
            return 0.0;
        }
        let beta = |k: usize| betas.get(k).copied().unwrap_or(f64::NAN);
        let chain = self.offset()
            + times
                .iter()
                .enumerate()
                .map(|(k, &t)| self.chain_cost(t, beta(k)))
                .sum::<f64>();
        match self.overlap {
            Overlap::Serial => chain,
            Overlap::Concurrent => times.iter().fold(chain, |m, &t| m.max(t)),
        }
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
        assert!((r.plan_time(&[7e-6], &[]) - 7e-6).abs() < 1e-18);
        assert!((r.plan_time(&[7e-6, 3e-6, 2e-6], &[]) - 12e-6).abs() < 1e-18);
        let o = PlanRule {
            floor_s: 2e-6,
            block_s: 0.5e-6,
            overlap: Overlap::Serial,
        };
        // floor + (5 + 1 + 0) µs of work + 2 × 0.5 µs.
        assert!((o.plan_time(&[7e-6, 3e-6, 1e-6], &[]) - 9e-6).abs() < 1e-18);
        assert!(o.plan_time(&[7e-6, 3e-6], &[]) >= 7e-6);
        // Fit: plans whose extra blocks cost 1 µs each.
        let s = [(1, 5e-6, 3e-6), (3, 7e-6, 3e-6), (5, 9e-6, 3e-6)];
        let b = PlanRule::fit_block_s(2e-6, &s).unwrap();
        assert!((b - 1e-6).abs() < 1e-15, "{b}");
        assert!(PlanRule::fit_block_s(2e-6, &[(1, 5e-6, 3e-6)]).is_none());
        // The default charges 5 floors per extra block: two blocks of 7 and 3 µs cost
        // 2 + 5 + 1 + 10 µs.
        let d = PlanRule::measured_default(2e-6);
        assert!((d.plan_time(&[7e-6, 3e-6], &[]) - 18e-6).abs() < 1e-18);
        assert!((d.plan_time(&[7e-6], &[]) - 7e-6).abs() < 1e-18);
    }

    #[test]
    fn a_concurrent_plan_costs_its_bandwidth_chain_or_its_largest_block() {
        let c = PlanRule {
            floor_s: 2e-6,
            block_s: 0.5e-6,
            overlap: Overlap::Concurrent,
        };
        // Three blocks moving their bytes in 4, 1 and 0.5 µs at full bandwidth (the last is
        // held to its work beyond the floor, 0): chain 2 + 5 + 2 × 0.5 = 8 µs, above the
        // largest block alone (7 µs).
        let t = c.plan_time(&[7e-6, 3e-6, 2e-6], &[4e-6, 1e-6, 0.5e-6]);
        assert!((t - 8e-6).abs() < 1e-15, "{t}");
        // A slow irregular block (40 µs alone, 3 µs of bytes) beside a large regular one
        // (20 µs, 17 µs of bytes): chain 2 + 20 + 0.5 = 22.5 µs, the slow block bounds — 40 µs,
        // where the serial chain would be 2 + 38 + 18 + 0.5 = 58.5 µs.
        let t = c.plan_time(&[40e-6, 20e-6], &[3e-6, 17e-6]);
        assert!((t - 40e-6).abs() < 1e-15, "{t}");
        let serial = PlanRule {
            overlap: Overlap::Serial,
            ..c
        };
        assert!((serial.plan_time(&[40e-6, 20e-6], &[3e-6, 17e-6]) - 58.5e-6).abs() < 1e-15);
        // Unknown bandwidth times: the serial chain with the concurrent per-block cost, which
        // is never below the largest block.
        let t = c.plan_time(&[7e-6, 3e-6, 1e-6], &[]);
        assert!((t - 9e-6).abs() < 1e-15, "{t}");
        // One block is its own time when its bytes fit in it.
        assert!((c.plan_time(&[7e-6], &[3e-6]) - 7e-6).abs() < 1e-18);
        // Never below the largest block.
        for (times, betas) in [
            (&[3e-6, 9e-6, 4e-6][..], &[1e-6, 1e-6, 1e-6][..]),
            (&[1e-6, 1e-6], &[0.0, 0.0]),
            (&[50e-6, 1e-6, 1e-6, 1e-6], &[40e-6, 0.1e-6, 0.1e-6, 0.1e-6]),
        ] {
            let t = c.plan_time(times, betas);
            assert!(t >= times.iter().cloned().fold(0.0, f64::max));
            // The chain costs add up as the program adds them.
            let chain: f64 = times
                .iter()
                .zip(betas)
                .map(|(&t, &b)| c.chain_cost(t, b))
                .sum::<f64>()
                + c.offset();
            assert!((t - chain.max(times.iter().cloned().fold(0.0, f64::max))).abs() < 1e-15);
        }
        // The defaults follow the execution mode.
        let s = PlanRule::for_overlap(Overlap::Serial, 1e-6);
        assert_eq!(
            (s.block_s, s.overlap),
            (DEFAULT_BLOCK_FLOORS * 1e-6, Overlap::Serial)
        );
        let d = PlanRule::for_overlap(Overlap::Concurrent, 1e-6);
        assert_eq!(
            (d.block_s, d.overlap),
            (DEFAULT_CONCURRENT_BLOCK_FLOORS * 1e-6, Overlap::Concurrent)
        );
        // A rule stored before the mode existed is serial.
        let old: PlanRule = serde_json::from_str(r#"{"floor_s":1e-6,"block_s":5e-6}"#).unwrap();
        assert_eq!(old.overlap, Overlap::Serial);
    }
}
