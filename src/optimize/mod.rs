//! The optimization analysis of 004 §4: partition a matrix by rows into blocks of consecutive
//! strips, choose one storage format per block, and run the result as an executable plan.
//!
//! * [`strips`] — how rows are cut into strips (`S_CSR` rows by default, coarsened for very tall
//!   matrices);
//! * [`features`] — every block's summary ([`crate::model::Shape`]: rows, non-zeros, longest and
//!   most frequent row length, the HYB split) from per-strip prefix structures, without
//!   re-scanning rows;
//! * [`predictor`] — the models as the optimizer calls them, on block summaries;
//! * [`admit`] — which blocks a format's conversion accepts at all (32-bit offsets, byte budget);
//! * [`dp`] — the dynamic program of Fig. 8 / Fig. 11;
//! * [`solve`] — all of the above: [`optimize`] returns the optimal strategy ([`Optimum`]);
//! * [`plan`] — the strategy as a file ([`Plan`], JSON, validated on load), tied to its matrix by
//!   [`identity`];
//! * [`execute`] — a plan prepared on a backend ([`PreparedPlan`], a [`crate::backend::PreparedSpmv`]);
//! * [`stack`] — heterogeneous test matrices (generated parts stacked by rows).
//!
//! The path above is 004's, faithful, on the analytical model's block shapes. Every model that
//! predicts from full features (`sparsecast`, our own, by default) goes through [`learned`]
//! instead: few strips cut where the rows change ([`cuts`]), every candidate block's features
//! computed from its rows, a program over plans with distinct adjacent configurations
//! ([`merged`]) costed the way the plan executes ([`rule`]: blocks in a chain with a per-block
//! cost, or concurrent branches bounded by the shared bandwidth and the largest block),
//! and a plan adopted only when its predicted gain exceeds the model's uncertainty.
//!
//! ```
//! use sparsecast::optimize::dp::solve_table;
//! // Three strips; strips 1–2 are cheap together in format 0, strip 3 alone in format 1.
//! let e = |i: usize, j: usize| match (i, j) {
//!     (0, 1) => (2.0, 0),
//!     (2, 2) => (1.0, 1),
//!     _ => (9.0, 0),
//! };
//! let p = solve_table(3, e);
//! assert_eq!(p.total, 3.0);
//! assert_eq!((p.blocks[0].first, p.blocks[0].last, p.blocks[1].format), (0, 1, 1));
//! ```

pub mod admit;
pub mod cuts;
pub mod dp;
pub mod execute;
pub mod features;
pub mod identity;
pub mod learned;
pub mod merged;
pub mod plan;
pub mod predictor;
pub mod rule;
pub mod solve;
pub mod stack;
pub mod strips;

pub use admit::format_refusal;
pub use execute::{PlanTiming, PreparedPlan};
pub use features::{StripTable, Sweep};
pub use identity::MatrixIdentity;
pub use learned::{
    optimize_learned, LearnedBlock, LearnedOptimum, LearnedOptions, DEFAULT_ADOPT_SIGMAS,
    DEFAULT_BLOCK_SIGMA,
};
pub use plan::{Plan, PlanBlock, Provenance, SingleFormat};
pub use predictor::{block_model, AnalyticalBlocks, BlockModel, MODEL_NAMES};
pub use rule::{PlanRule, DEFAULT_BLOCK_FLOORS};
pub use solve::{
    features_for, optimize, optimize_with_progress, OptimalBlock, OptimizeOptions, Optimum,
};
pub use stack::{stack_rows, StackSpec};
pub use strips::{StripLayout, DEFAULT_MAX_STRIPS};
