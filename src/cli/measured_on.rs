//! `predict --measured-on FILE`: times measured on a reference GPU, for the cross-architecture
//! model. Reads `bench --json` output (one report or an array of them) or a training table
//! (`collect`, `.jsonl` / `.jsonl.gz`); matrices are matched by file name, and a table's
//! generated matrix also by its generator spec's name (what `predict` calls an input given as a
//! spec).

use crate::backend::{KernelConfig, Variant};
use crate::Precision;
use serde::Deserialize;
use std::path::Path;

/// Reference times: (file name, precision, configuration label, seconds).
pub struct ReferenceTimes(Vec<(String, Precision, String, f64)>);

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
                let mut names = vec![base(&r.matrix)];
                if let crate::evaluate::record::SourceInfo::Generated(spec) = &r.source {
                    names.push(spec.name());
                }
                for t in &r.times {
                    if let Some(s) = t.time() {
                        for n in &names {
                            out.push((n.clone(), r.precision, t.config.clone(), s));
                        }
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
                    if let Some(s) = k.median_s {
                        out.push((base(&r.file), r.precision, k.kernel.clone(), s));
                    }
                }
            }
        }
        if out.is_empty() {
            anyhow::bail!("{}: no measured time in it", path.display());
        }
        Ok(ReferenceTimes(out))
    }

    /// The times of the input named `input` in `precision` per kernel at the default block
    /// size and parameters (003's cross model; empty when none).
    pub fn of(&self, input: &str, precision: Precision) -> Vec<(Variant, f64)> {
        self.labels_of(input, precision)
            .into_iter()
            .filter_map(|(l, s)| Some((variant(&l)?, s)))
            .collect()
    }

    /// The times of the input named `input` in `precision` per configuration label (our
    /// transferred model; empty when none).
    pub fn labels_of(&self, input: &str, precision: Precision) -> Vec<(String, f64)> {
        let b = base(input);
        self.0
            .iter()
            .filter(|t| t.0 == b && t.1 == precision)
            .map(|t| (t.2.clone(), t.3))
            .collect()
    }
}
