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
//! waits for the others, so part of what a block costs beyond its work (its launch, the tail of a
//! kernel on a small row range) overlaps with the other blocks. The plan's time is
//!
//! ```text
//! T_concurrent = max( floor + Σ_b w_b + (blocks − 1) · block_s ,  max_b T_b )
//! ```
//!
//! the serial chain with the concurrent per-branch cost `block_s`, and never below the slowest
//! block alone (which the chain already is for `block_s ≥ 0`: the bound is kept for rules with
//! other chains). **Measured choice** (`scripts/device_concurrent.sh`, H200 and H100, session
//! 9; docs/OPTIMIZER.md): a first version priced each block's bytes at the device's bandwidth
//! ceiling, `β_b = bytes / BW`, in place of `w_b` (the blocks share the bandwidth, their latency
//! overlaps). The branches do not run at that ceiling: the measured concurrent plans took
//! 1.3–3.1× `floor + Σ β_b` on matrices with scattered columns (x gathers the byte count misses),
//! so that rule predicted them 31–38 % too fast (median; 39–43 % on the DP's plans) and adopted
//! plans that lost: the 6 plans it adopted per GPU ran at 0.79× (H200, worst 0.29×) and 0.90×
//! (H100, worst 0.73×) of the best single configuration (geomean). With
//! the work `w_b` each block is predicted to take alone, the DP's plans are predicted within
//! 6.1 % (H200) / 4.3 % (H100) median at 4 floors per branch; `block_s` fitted on them by least
//! squares is 3.4 floors (H200, 3.7 µs) and 3.6 floors (H100, 4.4 µs) without csr-merge, 4.3
//! floors (H100) with it, 17.5 floors (H200) with it — one csr-merge plan ran 2.1× its serial
//! time as branches, which is why concurrent plans leave csr-merge out ([`super::learned`]):
//! [`DEFAULT_CONCURRENT_BLOCK_FLOORS`] = 4 (`scripts/concurrent_refit.py` replays it). Overlap is
//! worth about one floor per extra block over the serial execution
//! ([`DEFAULT_BLOCK_FLOORS`] = 5), not the bandwidth sharing the first version assumed. Equal
//! splits of one configuration run faster concurrently than this says (their blocks' predicted
//! works overshoot; fitted `block_s` ≈ 0 on them), but they never beat the best single
//! configuration by more than 2.6 % (H200; 0.8 % H100), so the DP loses little by pricing them
//! high. `β_b` is still computed and
//! reported beside each block (`bandwidth_seconds`), not used in the time.
//!
//! Those fits were made on a fork/join graph of child graph nodes that barely overlapped its
//! branches (session 49, the CUDA backend's timing); with the blocks as kernel nodes, blocks of a
//! few µs now overlap for ≈ 0.2–0.4 µs per branch, but on the DP's plans, whose blocks each fill
//! the GPU, plan − floor − Σ w_b per extra block still has a median of 3.3 floors (H100, 13
//! plans) and 1.9 floors (H200, 9 plans): the blocks share the L2 and the bandwidth. 4 floors
//! stays (docs/OPTIMIZER.md, session 49).
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

/// Default cost of every branch beyond the first of a concurrent plan, in launch floors: the
/// least-squares fit on the DP's concurrent plans without csr-merge measured on the H200 and the
/// H100 (3.4 and 3.6 floors), rounded up; see the module documentation. `scripts/device_concurrent.sh` refits it (its "per-branch cost" line).
pub const DEFAULT_CONCURRENT_BLOCK_FLOORS: f64 = 4.0;

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

    /// What the plan adds to the sum of its blocks' chain costs: `floor − block_s`.
    pub fn offset(&self) -> f64 {
        self.floor_s - self.block_s
    }

    /// The predicted time of a plan whose blocks are predicted at `times` alone: the chain,
    /// and for a concurrent plan at least its largest block (see the module documentation).
    pub fn plan_time(&self, times: &[f64]) -> f64 {
        if times.is_empty() {
            return 0.0;
        }
        let chain = self.offset() + times.iter().map(|&t| self.block_cost(t)).sum::<f64>();
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
        assert!((r.plan_time(&[7e-6]) - 7e-6).abs() < 1e-18);
        assert!((r.plan_time(&[7e-6, 3e-6, 2e-6]) - 12e-6).abs() < 1e-18);
        let o = PlanRule {
            floor_s: 2e-6,
            block_s: 0.5e-6,
            overlap: Overlap::Serial,
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

    #[test]
    fn a_concurrent_plan_is_the_chain_with_its_branch_cost_and_never_below_its_largest_block() {
        let c = PlanRule {
            floor_s: 2e-6,
            block_s: 0.5e-6,
            overlap: Overlap::Concurrent,
        };
        // Three blocks of 7, 3 and 2 µs alone: 2 + (5 + 1 + 0) + 2 × 0.5 = 9 µs.
        let t = c.plan_time(&[7e-6, 3e-6, 2e-6]);
        assert!((t - 9e-6).abs() < 1e-15, "{t}");
        // Cheaper than the serial default by (5 floors − block_s) per extra block.
        let s = PlanRule::measured_default(2e-6);
        assert!((s.plan_time(&[7e-6, 3e-6, 2e-6]) - (9e-6 + 2.0 * 9.5e-6)).abs() < 1e-15);
        // One block is its own time; a block below the floor costs only the branch.
        assert!((c.plan_time(&[7e-6]) - 7e-6).abs() < 1e-18);
        assert!((c.plan_time(&[7e-6, 1e-6]) - 7.5e-6).abs() < 1e-15);
        // Never below the largest block, and additive as the program adds it.
        for times in [
            &[3e-6, 9e-6, 4e-6][..],
            &[1e-6, 1e-6],
            &[50e-6, 1e-6, 1e-6, 1e-6],
        ] {
            let t = c.plan_time(times);
            let largest = times.iter().cloned().fold(0.0, f64::max);
            assert!(t >= largest);
            let chain: f64 = times.iter().map(|&t| c.block_cost(t)).sum::<f64>() + c.offset();
            assert!((t - chain.max(largest)).abs() < 1e-15);
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
