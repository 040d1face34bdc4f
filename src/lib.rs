//! # sparsecast
//!
//! Predicts, ranks and optimizes the run time of sparse matrix–vector multiplication
//! (SpMV, `y = A·x`) on GPUs.
//!
//! The crate follows the data:
//!
//! * [`matrix`] — the canonical CSR matrix, the Matrix Market reader/writer and the generators;
//! * [`formats`] — one module per storage format (layout, parameters, conversion from CSR, CPU
//!   kernel, and its footprint and refusal rules on one matrix summary, [`formats::Summary`]);
//! * [`features`] — one-pass matrix features used by every performance model;
//! * [`backend`] — the [`backend::Backend`] trait with CPU and CUDA implementations, and timing;
//! * [`instrument`] — the instrumenting phase: strip sizes, benchmark suites, timing;
//! * [`model`] — performance models behind one [`model::Model`] trait (the papers' analytical model
//!   first) and their accuracy;
//! * [`learn`] — learned models (002: linear regression, gradient boosting, KNN) trained on the
//!   training table, and their cross-validation;
//! * [`profile`] — device profiles: measurements and fitted models as JSON;
//! * [`optimize`] — row-block partitioning with one format per block (DP) and executable plans;
//! * [`corpus`] — the training corpus: matrices drawn from a seed, `collect`, the training table;
//! * [`evaluate`] — the evaluation harness: corpus runs, results.jsonl, report and plots;
//! * [`cli`] — the `sparsecast` command-line program, one file per subcommand.

pub mod backend;
pub mod cli;
pub mod corpus;
pub mod error;
pub mod evaluate;
pub mod features;
pub mod formats;
pub mod instrument;
pub mod json;
pub mod learn;
pub mod matrix;
pub mod model;
pub mod optimize;
pub mod profile;
pub mod scalar;
pub mod util;

pub use error::{Error, Result};
pub use matrix::Csr;
pub use scalar::{Precision, Scalar};
