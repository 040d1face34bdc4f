//! `predict --measured-on FILE`: times measured on a reference GPU, for the cross-architecture
//! model. Reads `bench --json` output (one report or an array of them) or a training table
//! (`collect`, `.jsonl` / `.jsonl.gz`); matrices are matched by file name.

use crate::backend::{KernelConfig, Variant};
use crate::Precision;
use serde::Deserialize;
use std::path::Path;

/// Reference times: (file name, precision, kernel, seconds).
pub struct ReferenceTimes(Vec<(String, Precision, Variant, f64)>);

#[derive(Deserialize)]
struct BenchRow {
    kernel: String,
    status: String,
    median_s: Option<f64>,
}

#[derive(Deserialize)]
struct BenchReport {
    file: String,
    precision: Precision,
    results: Vec<BenchRow>,
}

/// The last path component of `s`.
fn base(s: &str) -> String {
    Path::new(s)
        .file_name()
        .map_or_else(|| s.to_string(), |n| n.to_string_lossy().into())
}

/// The kernel of a configuration label at the default block size and parameters.
fn variant(label: &str) -> Option<Variant> {
    KernelConfig::parse_label(label)
        .ok()
        .filter(|c| c.block_size == KernelConfig::DEFAULT_BLOCK_SIZE)
        .map(|c| c.variant)
}

impl ReferenceTimes {
    /// Read `path` (see the module documentation).
    pub fn load(path: &Path) -> anyhow::Result<ReferenceTimes> {
        let name = path.to_string_lossy();
        let mut out = Vec::new();
        if name.ends_with(".jsonl") || name.ends_with(".jsonl.gz") {
            for r in crate::corpus::table::read(path)? {
                for t in &r.times {
                    if let (Some(s), Some(v)) = (t.time(), variant(&t.config)) {
                        out.push((base(&r.matrix), r.precision, v, s));
                    }
                }
            }
        } else {
            let text = std::fs::read_to_string(path).map_err(|e| crate::Error::io(path, e))?;
            let reports: Vec<BenchReport> = match serde_json::from_str::<BenchReport>(&text) {
                Ok(r) => vec![r],
                Err(_) => serde_json::from_str(&text).map_err(|e| {
                    anyhow::anyhow!(
                        "{}: neither `bench --json` output nor an array of it: {e}",
                        path.display()
                    )
                })?,
            };
            for r in reports {
                for k in r.results.iter().filter(|k| k.status == "ok") {
                    if let (Some(s), Some(v)) = (k.median_s, variant(&k.kernel)) {
                        out.push((base(&r.file), r.precision, v, s));
                    }
                }
            }
        }
        if out.is_empty() {
            anyhow::bail!("{}: no measured time in it", path.display());
        }
        Ok(ReferenceTimes(out))
    }

    /// The times of the input named `input` in `precision` (empty when none).
    pub fn of(&self, input: &str, precision: Precision) -> Vec<(Variant, f64)> {
        let b = base(input);
        self.0
            .iter()
            .filter(|t| t.0 == b && t.1 == precision)
            .map(|t| (t.2, t.3))
            .collect()
    }
}
