//! The training table: one [`TableRow`] per matrix × precision, with the matrix's features once
//! and the measured time of every configuration. JSON Lines, plain while it is being collected
//! (appended row by row, so that a cut run resumes), gzip-compressed when committed
//! (`.jsonl.gz`; [`read`] takes either).
//!
//! Compact by design: a row holds the features once (the evaluation records repeat them per
//! configuration), and a configuration's entry only what a model learns from — its name
//! ([`crate::backend::KernelConfig::label`]), status, median and warm-up-excluding mean, spread
//! and the bytes of the format's arrays.

use crate::backend::measure::Status;
use crate::backend::TimingProtocol;
use crate::evaluate::record::SourceInfo;
use crate::features::Features;
use crate::{Error, Precision, Result};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// The schema version written in every row.
pub const TABLE_SCHEMA: u32 = 1;

/// One configuration's measurement in a [`TableRow`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConfigTime {
    /// The configuration ([`crate::backend::KernelConfig::label`]).
    pub config: String,
    /// `ok`, or why there is no time (refused, skipped, mismatch, failed).
    pub status: Status,
    /// Median seconds per SpMV over the timed batches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_s: Option<f64>,
    /// The papers' warm-up-excluding mean over the same batches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warm_mean_s: Option<f64>,
    /// Interquartile range / median of the batches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<f64>,
    /// Bytes of the format's arrays on the device.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footprint_bytes: Option<u64>,
    /// Why it is not `ok` (the first line of the reason).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The revision of a kernel whose behaviour a setting can change, where it matters: our
    /// SELL-C-σ on CUDA stores its split rule (`SPARSECAST_SELL_SPLIT`;
    /// [`crate::backend::cuda::sell_split::Rule::label`]; none: a table timed before session 80,
    /// all under session 41's rule). The `sparsecast` model leaves out the SELL times whose rule
    /// splits the matrix otherwise than the one its chain reads. HYB timed with its COO kernel as
    /// the programmatic dependent of its ELL kernel (session 82; `collect --hyb-launch`) stores
    /// `hyb-pdl` ([`crate::backend::cuda::launch::HYB_PDL_REVISION`]); none: the plain launch
    /// sequence. The `sparsecast` fit models the sequence most short HYB times measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
}

impl ConfigTime {
    /// The measured median, when the status is `ok`.
    pub fn time(&self) -> Option<f64> {
        (self.status == Status::Ok)
            .then_some(self.median_s)
            .flatten()
    }
}

/// One matrix in one precision, every configuration measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableRow {
    /// [`TABLE_SCHEMA`].
    pub schema: u32,
    /// The matrix's stable id (`suitesparse/cage11.mtx.gz`, `gen/…`, `kron/…`).
    pub matrix: String,
    /// Its family: a real matrix and its Kronecker expansions share one (the file stem); every
    /// other generated matrix is a family of its own. Cross-validation folds split by family.
    pub family: String,
    /// What generated it (how to rebuild it), or the file.
    pub source: SourceInfo,
    /// Value precision of the measurements.
    pub precision: Precision,
    /// Backend (`cuda`, `cpu`).
    pub backend: String,
    /// The device as the backend describes it.
    pub device: String,
    /// The timing protocol of every measurement of the row.
    pub protocol: TimingProtocol,
    /// The matrix's features (with [`crate::features::Access`]).
    pub features: Features,
    /// Every configuration, in measurement order.
    pub times: Vec<ConfigTime>,
    /// Wall-clock seconds `collect` spent on this row: building the matrix (generation or
    /// reading, shared by its precisions: each row carries the whole) and measuring every
    /// configuration in this precision (conversions, uploads, checks and timing). Absent in
    /// tables collected before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<RowCost>,
}

/// Where `collect`'s time went for one row ([`TableRow::cost`]).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct RowCost {
    /// Building the matrix, seconds (since session 22 with its features and the references of
    /// both precisions, made while the device measures the matrix before).
    pub build_s: f64,
    /// Measuring every configuration in the row's precision, seconds.
    pub measure_s: f64,
}

impl TableRow {
    /// The entry of configuration `label`, if measured.
    pub fn get(&self, label: &str) -> Option<&ConfigTime> {
        self.times.iter().find(|t| t.config == label)
    }

    /// The fastest measured configuration and its time.
    pub fn best(&self) -> Option<(&str, f64)> {
        self.times
            .iter()
            .filter_map(|t| Some((t.config.as_str(), t.time()?)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }
}

/// Read a table (`.jsonl` or `.jsonl.gz`, by content); a bad line is an error naming the file
/// and line. Rows of another schema are refused.
pub fn read(path: &Path) -> Result<Vec<TableRow>> {
    parse(crate::util::open_lines(path)?, path)
}

fn parse(reader: Box<dyn BufRead>, path: &Path) -> Result<Vec<TableRow>> {
    let mut rows = Vec::new();
    crate::util::json_lines(
        reader,
        path,
        "a training-table row",
        |row: TableRow, line| {
            if row.schema != TABLE_SCHEMA {
                return Err(Error::Invalid(format!(
                    "{}:{line}: table schema {} (this build reads {TABLE_SCHEMA})",
                    path.display(),
                    row.schema
                )));
            }
            rows.push(row);
            Ok(())
        },
    )?;
    Ok(rows)
}

/// Read several tables into one list. A row whose matrix and precision an earlier row already
/// has is merged into it: its configurations that the earlier row lacks are added (a table
/// collected with `collect --configs` fills in configurations of another one), the rest is the
/// earlier row's. Rows of one matrix measured on two different devices are an error, and so are
/// rows of one id whose matrices differ (rows, columns or non-zeros): a draw whose generator
/// changed since the earlier table would otherwise lend its times to another matrix (session 38
/// found six Kronecker expansions of the `-bro` tables so, and removed them).
pub fn read_all(paths: &[impl AsRef<Path>]) -> Result<Vec<TableRow>> {
    let mut out: Vec<TableRow> = Vec::new();
    let mut at = std::collections::HashMap::new();
    for p in paths {
        for row in read(p.as_ref())? {
            let key = (row.matrix.clone(), row.precision);
            let Some(&i) = at.get(&key) else {
                at.insert(key, out.len());
                out.push(row);
                continue;
            };
            let first: &mut TableRow = &mut out[i];
            if first.device != row.device {
                return Err(Error::Invalid(format!(
                    "{}: {} {} was measured on {}, an earlier table measured it on {}",
                    p.as_ref().display(),
                    row.matrix,
                    row.precision,
                    row.device,
                    first.device
                )));
            }
            let shape = |f: &Features| (f.nrows, f.ncols, f.nnz);
            if shape(&first.features) != shape(&row.features) {
                let (a, b) = (shape(&row.features), shape(&first.features));
                return Err(Error::Invalid(format!(
                    "{}: {} {} is a {}×{} matrix of {} non-zeros, an earlier table's row of the \
                     same id is {}×{} with {}: not the same matrix (was it drawn by another \
                     version of the generator?)",
                    p.as_ref().display(),
                    row.matrix,
                    row.precision,
                    a.0,
                    a.1,
                    a.2,
                    b.0,
                    b.1,
                    b.2
                )));
            }
            for t in row.times {
                if first.get(&t.config).is_none() {
                    first.times.push(t);
                }
            }
        }
    }
    Ok(out)
}

/// Read a table from any reader (plain JSON Lines), e.g. an embedded one.
pub fn read_from(r: impl Read + 'static, name: &str) -> Result<Vec<TableRow>> {
    parse(Box::new(BufReader::new(r)), Path::new(name))
}

/// One row as one line of JSON (with the newline).
pub fn line(row: &TableRow) -> Result<String> {
    let mut s = serde_json::to_string(row)
        .map_err(|e| Error::Invalid(format!("cannot serialize a table row: {e}")))?;
    s.push('\n');
    Ok(s)
}

/// Write `rows` gzip-compressed to `path`, atomically (a temporary file renamed over it; a
/// symlink or special file is written through).
pub fn write_gz(path: &Path, rows: &[TableRow]) -> Result<()> {
    let text = rows.iter().map(line).collect::<Result<Vec<String>>>()?;
    crate::util::write_atomic(path, |w| {
        crate::util::gzip(w, |gz| {
            text.iter().try_for_each(|l| gz.write_all(l.as_bytes()))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::KernelConfig;
    use crate::Csr;

    fn row(matrix: &str, t: f64) -> TableRow {
        let a = Csr::<f64>::from_triplets(2, 2, &[0, 1], &[0, 1], &[1.0, 2.0]).unwrap();
        TableRow {
            schema: TABLE_SCHEMA,
            matrix: matrix.into(),
            family: "fam".into(),
            source: SourceInfo::Recipe("test".into()),
            precision: Precision::F64,
            backend: "cpu".into(),
            device: "test".into(),
            protocol: TimingProtocol::default(),
            features: Features::compute(&a),
            times: vec![
                ConfigTime {
                    config: "ell".into(),
                    status: Status::Ok,
                    median_s: Some(t),
                    warm_mean_s: Some(t),
                    spread: Some(0.01),
                    footprint_bytes: Some(24),
                    reason: None,
                    kernel: None,
                },
                ConfigTime {
                    config: "dia".into(),
                    status: Status::Skipped,
                    median_s: None,
                    warm_mean_s: None,
                    spread: None,
                    footprint_bytes: None,
                    reason: Some("refused".into()),
                    kernel: None,
                },
            ],
            cost: Some(RowCost {
                build_s: 0.5,
                measure_s: 1.5,
            }),
        }
    }

    #[test]
    fn rows_round_trip_plain_and_compressed() {
        let dir = tempfile::tempdir().unwrap();
        let rows = vec![row("a", 1e-6), row("b", 2e-6)];
        let gz = dir.path().join("t.jsonl.gz");
        write_gz(&gz, &rows).unwrap();
        assert_eq!(read(&gz).unwrap(), rows);
        let plain = dir.path().join("t.jsonl");
        let text: String = rows.iter().map(|r| line(r).unwrap()).collect();
        std::fs::write(&plain, text + "\n").unwrap();
        assert_eq!(read(&plain).unwrap(), rows);
        assert_eq!(rows[1].best(), Some(("ell", 2e-6)));
        assert_eq!(rows[0].get("dia").unwrap().time(), None);
    }

    #[test]
    fn tables_of_the_same_rows_merge_their_configurations() {
        let dir = tempfile::tempdir().unwrap();
        let mut extra = row("a", 5e-6);
        extra.times = vec![ConfigTime {
            config: "ell-bro".into(),
            ..extra.times[0].clone()
        }];
        extra.times.push(extra.times[0].clone()); // a duplicate label: the first is kept
        let (t1, t2) = (dir.path().join("1.jsonl.gz"), dir.path().join("2.jsonl.gz"));
        write_gz(&t1, &[row("a", 1e-6), row("b", 2e-6)]).unwrap();
        write_gz(&t2, &[extra.clone(), row("c", 3e-6)]).unwrap();
        let all = read_all(&[&t1, &t2]).unwrap();
        assert_eq!(
            all.iter().map(|r| r.matrix.as_str()).collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        let labels: Vec<&str> = all[0].times.iter().map(|t| t.config.as_str()).collect();
        assert_eq!(labels, ["ell", "dia", "ell-bro"]);
        assert_eq!(all[0].get("ell").unwrap().time(), Some(1e-6));
        assert_eq!(all[0].get("ell-bro").unwrap().time(), Some(5e-6));
        // Another matrix under the same id is refused.
        let mut other = extra.clone();
        other.features.nnz += 1;
        write_gz(&t2, &[other]).unwrap();
        let e = read_all(&[&t1, &t2]).unwrap_err().to_string();
        assert!(
            e.contains("2.jsonl.gz") && e.contains("not the same matrix"),
            "{e}"
        );
        // The same matrix from another device is refused.
        extra.device = "other".into();
        write_gz(&t2, &[extra]).unwrap();
        let e = read_all(&[&t1, &t2]).unwrap_err().to_string();
        assert!(e.contains("2.jsonl.gz") && e.contains("other"), "{e}");
    }

    #[test]
    fn a_bad_line_names_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.jsonl");
        std::fs::write(&p, line(&row("a", 1.0)).unwrap() + "{oops\n").unwrap();
        let e = read(&p).unwrap_err().to_string();
        assert!(e.contains("t.jsonl:2"), "{e}");
    }

    #[test]
    fn labels_round_trip() {
        for l in [
            "csr-t8",
            "csr-scalar@128",
            "sell-c512-s2048",
            "sell@512",
            "cusparse-csr-alg2",
        ] {
            assert_eq!(KernelConfig::parse_label(l).unwrap().label(), l);
        }
        assert!(KernelConfig::parse_label("cusparse-csr-alg2@128").is_err());
        assert!(KernelConfig::parse_label("ell@0").is_err());
        assert!(KernelConfig::parse_label("nope").is_err());
    }
}
