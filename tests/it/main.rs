//! Every integration test of sparsecast, in one test crate (one binary to build and link instead
//! of one per file). Each module is one former `tests/NAME.rs`; filter by module name to run a
//! part: `cargo test --test it cuda_` or `cargo test --test it mm_read::`.
//!
//! Tests that cannot run here (no CUDA device, no NVRTC, no `../shared` data) say so on the real
//! standard error ("skipped: …", visible without `--nocapture`); on a machine that should run them
//! set `SPARSECAST_REQUIRE_GPU=1` (GPU and NVRTC) and/or `SPARSECAST_REQUIRE_DATA=1` (`../shared`)
//! to make those skips fail. See [`common`].

mod common;

mod cli_files;
mod collect_cli;
mod cpu_backend;
mod cross_arch;
mod cuda_backend;
mod cuda_cache;
mod cuda_compile;
mod cuda_partition;
mod cuda_plan;
mod cuda_rowdist;
mod cuda_selftest_cpu;
mod cuda_stencil;
mod cuda_synthetic;
mod evaluate_cli;
mod features_cli;
mod features_exact;
mod features_proptest;
mod formats_correctness;
mod formats_ell_bro;
mod formats_layout;
mod formats_props;
mod formats_speed;
mod generate_cli;
mod generate_determinism;
mod generate_kron;
mod generate_random;
mod generate_structured;
mod instrument_cpu_pipeline;
mod instrument_mock;
mod learn;
mod mm_errors;
mod mm_fuzz_like;
mod mm_read;
mod mm_roundtrip;
mod mm_suitesparse;
mod model_analytical;
mod model_cpu_profile;
mod model_profile;
mod optimize_admit;
mod optimize_cli;
mod optimize_dp;
mod optimize_features;
mod optimize_learned;
mod optimize_plan;
mod platform;
mod statistical_session;
