//! Executable plans: the optimal strategy as a file. A plan names the matrix it belongs to
//! ([`MatrixIdentity`]), how the rows were cut into strips, and its blocks — each a range of
//! strips and rows, a kernel, the format parameters and the block's predicted time — plus every
//! single format's prediction for comparison.
//!
//! JSON layout (schema version [`PLAN_SCHEMA_VERSION`]):
//!
//! ```json
//! { "schema_version": 1, "sparsecast_version": "0.1.0",
//!   "matrix": { "source": "a.mtx.gz", "nrows": 1000, "ncols": 1000, "nnz": 5000,
//!               "pattern_checksum": "sha256-chunked:…" },
//!   "precision": "f64", "model": "analytical", "profile": "profiles/h200.json.gz",
//!   "device": "NVIDIA H200", "strip_rows": 672, "strips": 2, "coarsening": 1,
//!   "predicted_seconds": 1.2e-5,
//!   "blocks": [ { "strips": [1, 1], "rows": [0, 672], "kernel": "ell",
//!                 "params": { "ell_width": 5, … }, "block_size": 256,
//!                 "predicted_seconds": 7e-6 }, … ],
//!   "overlap": "serial",
//!   "single_formats": [ { "kernel": "csr-vector", "predicted_seconds": 1.4e-5, "note": "…" } ] }
//! ```
//!
//! `strips` are the paper's 1-based inclusive `[i, j]`; `rows` are 0-based `[start, end)`. A plan
//! written by hand can cut at any row by using `strip_rows: 1` ([`Plan::by_rows`]).
//!
//! Loading validates everything a plan promises: the schema version, no unknown fields, the
//! blocks covering the strips `1..=N` in order without gaps or overlaps, each block's rows
//! following from its strips, known kernel names, and finite non-negative times. Files are written
//! atomically.

use super::identity::MatrixIdentity;
use super::solve::Optimum;
use crate::backend::{KernelConfig, Overlap, Variant};
use crate::formats::FormatParams;
use crate::instrument::measure::variant_name;
use crate::{Error, Precision, Result};
use serde::{Deserialize, Serialize};
use std::ops::Range;
use std::path::Path;

/// The plan schema version this build writes and reads.
pub const PLAN_SCHEMA_VERSION: u64 = 1;

/// An executable plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plan {
    /// Always [`PLAN_SCHEMA_VERSION`].
    pub schema_version: u64,
    /// The sparsecast that wrote it.
    pub sparsecast_version: String,
    /// The matrix it belongs to.
    pub matrix: MatrixIdentity,
    /// The value precision it was optimized for.
    pub precision: Precision,
    /// The model that chose it (`analytical`, or `by hand`).
    pub model: String,
    /// The profile the model came from.
    pub profile: String,
    /// The device of the profile.
    pub device: String,
    /// Rows per strip (the last strip holds the rest).
    pub strip_rows: u64,
    /// `N`.
    pub strips: u64,
    /// The factor the requested strip height was multiplied by (1 = none).
    pub coarsening: u64,
    /// `T[1, N]`: the predicted total, seconds (`null` for a plan made by hand).
    pub predicted_seconds: Option<f64>,
    /// The blocks in row order.
    pub blocks: Vec<PlanBlock>,
    /// How the blocks run ([`Overlap`]): the mode the plan was costed for. A plan written
    /// before the field existed reads `serial`, which is how it ran.
    #[serde(default)]
    pub overlap: Overlap,
    /// Every single format's prediction on the whole matrix.
    #[serde(default)]
    pub single_formats: Vec<SingleFormat>,
    /// The order the blocks are queued in, as indices into `blocks` (`None`: row order). For a
    /// concurrent plan it is the order the device starts the branches in: in session 49's probe
    /// (docs/OPTIMIZER.md) two kernels of 5.3 and 4.4 µs ran 7.8 µs per SpMV with the longer
    /// first and 9.9 µs the other way round. `--tune` times the longest-predicted-first order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_order: Option<Vec<usize>>,
}

/// One block of a plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanBlock {
    /// Strips `[i, j]`, 1-based, inclusive.
    pub strips: [u64; 2],
    /// Rows `[start, end)`, 0-based.
    pub rows: [u64; 2],
    /// The kernel, by name (`csr-vector`, `ell`, …).
    #[serde(with = "variant_name")]
    pub kernel: Variant,
    /// Format parameters, each format's own (defaults where absent; the host-dependent byte
    /// limit [`FormatParams::max_bytes`] is not stored and is this host's when loaded).
    #[serde(default)]
    pub params: FormatParams,
    /// CUDA threads per block.
    #[serde(default = "default_block_size")]
    pub block_size: u32,
    /// `E[i, j]`, seconds (`null` for a block made by hand).
    #[serde(default)]
    pub predicted_seconds: Option<f64>,
}

fn default_block_size() -> u32 {
    KernelConfig::new(Variant::Coo).block_size
}

/// `p` as a plan stores it: without the caller's byte limit, which a loaded plan takes from this
/// host ([`crate::formats::default_max_bytes`]).
fn as_stored(p: &FormatParams) -> FormatParams {
    FormatParams {
        max_bytes: crate::formats::default_max_bytes(),
        ..p.clone()
    }
}

/// One single format's prediction on the whole matrix.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SingleFormat {
    /// The kernel.
    #[serde(with = "variant_name")]
    pub kernel: Variant,
    /// Predicted seconds (`null`: refused).
    pub predicted_seconds: Option<f64>,
    /// What the model used, or why it refused.
    #[serde(default)]
    pub note: String,
}

/// Who made a plan: the model's name, the profile, the device.
#[derive(Clone, Debug, PartialEq)]
pub struct Provenance {
    /// Model name.
    pub model: String,
    /// Profile name or path.
    pub profile: String,
    /// Device of the profile.
    pub device: String,
    /// Precision optimized for.
    pub precision: Precision,
}

impl PlanBlock {
    /// Rows `[start, end)` as a range.
    pub fn row_range(&self) -> Range<usize> {
        self.rows[0] as usize..self.rows[1] as usize
    }

    /// The kernel configuration that runs this block.
    pub fn kernel_config(&self) -> KernelConfig {
        KernelConfig {
            variant: self.kernel,
            params: self.params.clone(),
            block_size: self.block_size,
        }
    }
}

impl Plan {
    /// The plan of an optimizer's answer. 004's program costs a plan as the sum of its blocks,
    /// so its plans run serially (the faithful baseline).
    pub fn from_optimum(opt: &Optimum, matrix: MatrixIdentity, by: &Provenance) -> Plan {
        let block_size = default_block_size();
        Plan {
            schema_version: PLAN_SCHEMA_VERSION,
            sparsecast_version: env!("CARGO_PKG_VERSION").into(),
            matrix,
            precision: by.precision,
            model: by.model.clone(),
            profile: by.profile.clone(),
            device: by.device.clone(),
            strip_rows: opt.layout.strip_rows,
            strips: opt.layout.strips,
            coarsening: opt.layout.coarsening,
            predicted_seconds: Some(opt.predicted),
            blocks: opt
                .blocks
                .iter()
                .map(|b| PlanBlock {
                    strips: [b.strips.0 as u64 + 1, b.strips.1 as u64 + 1],
                    rows: [b.rows.start as u64, b.rows.end as u64],
                    kernel: b.variant,
                    params: as_stored(&b.params),
                    block_size,
                    predicted_seconds: Some(b.predicted),
                })
                .collect(),
            overlap: Overlap::Serial,
            launch_order: None,
            single_formats: opt
                .singles
                .iter()
                .map(|r| SingleFormat {
                    kernel: r.config.variant,
                    predicted_seconds: r.seconds,
                    note: r.note.clone(),
                })
                .collect(),
        }
    }

    /// A plan made by hand: consecutive row ranges, each with its kernel configuration
    /// (`strip_rows` = 1, so the block of rows `[a, b)` is strips `[a + 1, b]`), run in the
    /// default mode ([`crate::backend::DEFAULT_OVERLAP`]; set [`Plan::overlap`] to change it).
    pub fn by_rows(
        matrix: MatrixIdentity,
        precision: Precision,
        blocks: &[(Range<usize>, KernelConfig)],
    ) -> Result<Plan> {
        let plan = Plan {
            schema_version: PLAN_SCHEMA_VERSION,
            sparsecast_version: env!("CARGO_PKG_VERSION").into(),
            strip_rows: 1,
            strips: matrix.nrows,
            coarsening: 1,
            matrix,
            precision,
            model: "by hand".into(),
            profile: String::new(),
            device: String::new(),
            predicted_seconds: None,
            blocks: blocks
                .iter()
                .map(|(r, cfg)| PlanBlock {
                    strips: [r.start as u64 + 1, r.end as u64],
                    rows: [r.start as u64, r.end as u64],
                    kernel: cfg.variant,
                    params: as_stored(&cfg.params),
                    block_size: cfg.block_size,
                    predicted_seconds: None,
                })
                .collect(),
            overlap: crate::backend::DEFAULT_OVERLAP,
            launch_order: None,
            single_formats: Vec::new(),
        };
        plan.validate()?;
        Ok(plan)
    }

    /// Check every promise of the format (see the module documentation).
    pub fn validate(&self) -> Result<()> {
        let bad = |msg: String| Err(Error::Invalid(msg));
        if self.schema_version != PLAN_SCHEMA_VERSION {
            return bad(format!(
                "schema version {} (this sparsecast reads {PLAN_SCHEMA_VERSION})",
                self.schema_version
            ));
        }
        let nrows = self.matrix.nrows;
        if self.strip_rows == 0 || self.coarsening == 0 {
            return bad("strip_rows and coarsening must be at least 1".into());
        }
        if self.strips != nrows.div_ceil(self.strip_rows) {
            return bad(format!(
                "{} strips of {} rows do not cut {nrows} rows (expected {} strips)",
                self.strips,
                self.strip_rows,
                nrows.div_ceil(self.strip_rows)
            ));
        }
        if self.blocks.is_empty() {
            return bad("the plan has no blocks".into());
        }
        let check_time = |what: &str, t: Option<f64>| match t {
            Some(t) if !(t.is_finite() && t >= 0.0) => bad(format!(
                "{what}: predicted time {t} is not a non-negative number"
            )),
            _ => Ok(()),
        };
        check_time("the plan", self.predicted_seconds)?;
        if let Some(order) = &self.launch_order {
            let mut seen = vec![false; self.blocks.len()];
            for &k in order {
                if k >= seen.len() || std::mem::replace(&mut seen[k], true) {
                    return bad(format!(
                        "launch_order {order:?} is not an order of the plan's {} blocks (each \
                         index from 0 to {} once)",
                        self.blocks.len(),
                        self.blocks.len() - 1
                    ));
                }
            }
            if order.len() != self.blocks.len() {
                return bad(format!(
                    "launch_order {order:?} names {} of the plan's {} blocks",
                    order.len(),
                    self.blocks.len()
                ));
            }
        }
        let mut next = 1u64;
        for (k, b) in self.blocks.iter().enumerate() {
            let what = format!(
                "block {} (strips [{}, {}])",
                k + 1,
                b.strips[0],
                b.strips[1]
            );
            if b.strips[0] != next {
                return bad(format!(
                    "{what}: starts at strip {}, expected {next} (blocks must cover the strips \
                     in order, without gaps or overlaps)",
                    b.strips[0]
                ));
            }
            if b.strips[1] < b.strips[0] || b.strips[1] > self.strips {
                return bad(format!(
                    "{what}: must end at a strip in [{}, {}]",
                    b.strips[0], self.strips
                ));
            }
            let rows = [
                (b.strips[0] - 1) * self.strip_rows,
                (b.strips[1] * self.strip_rows).min(nrows),
            ];
            if b.rows != rows {
                return bad(format!(
                    "{what}: rows [{}, {}) do not match its strips (expected [{}, {}))",
                    b.rows[0], b.rows[1], rows[0], rows[1]
                ));
            }
            if b.block_size == 0 {
                return bad(format!("{what}: block_size must be positive"));
            }
            check_time(&what, b.predicted_seconds)?;
            next = b.strips[1] + 1;
        }
        if next != self.strips + 1 {
            return bad(format!(
                "the blocks end at strip {} but the matrix has {} strips",
                next - 1,
                self.strips
            ));
        }
        for s in &self.single_formats {
            check_time(&format!("single format {}", s.kernel), s.predicted_seconds)?;
        }
        Ok(())
    }

    /// Parse and validate a plan held in memory; `name` is used in error messages.
    pub fn from_json(name: &str, text: &str) -> Result<Plan> {
        let at = |e: &serde_json::Error, msg: String| Error::parse(name, e.line() as u64, msg);
        let v: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| at(&e, format!("not a sparsecast plan: not valid JSON ({e})")))?;
        let version = v.get("schema_version").ok_or_else(|| {
            Error::parse(name, 1, "not a sparsecast plan: no `schema_version` field")
        })?;
        if version.as_u64() != Some(PLAN_SCHEMA_VERSION) {
            return Err(Error::parse(
                name,
                1,
                format!(
                    "plan schema version {version}; this sparsecast reads version \
                     {PLAN_SCHEMA_VERSION} (re-run `sparsecast optimize --save-plan`)"
                ),
            ));
        }
        let plan: Plan = serde_json::from_str(text).map_err(|e| at(&e, e.to_string()))?;
        plan.validate()
            .map_err(|e| Error::Invalid(format!("{name}: invalid plan: {e}")))?;
        Ok(plan)
    }

    /// Read and validate a plan file.
    pub fn load(path: &Path) -> Result<Plan> {
        let text = crate::util::read_json_text(path, "plan")?;
        Plan::from_json(&path.display().to_string(), &text)
    }

    /// Write the plan as pretty JSON, atomically (after validating it).
    pub fn save(&self, path: &Path) -> Result<()> {
        self.validate()?;
        crate::util::write_atomic(path, |w| {
            serde_json::to_writer_pretty(&mut *w, self).map_err(std::io::Error::other)?;
            w.write_all(b"\n")
        })
    }

    /// The strategy as 004's Table 3 prints it: `[1, 59], [60, 66]` and `ell, csr-vector`.
    pub fn strategy(&self) -> (String, String) {
        let spans: Vec<String> = self
            .blocks
            .iter()
            .map(|b| format!("[{}, {}]", b.strips[0], b.strips[1]))
            .collect();
        let kernels: Vec<String> = self.blocks.iter().map(|b| b.kernel.name()).collect();
        (spans.join(", "), kernels.join(", "))
    }
}
