//! `results.jsonl`: reading it back (for resuming and for the report) and appending to it.
//!
//! Each record is one line written with a single `write` of the whole line, then flushed and
//! `fsync`ed, so a killed run loses at most the record it was writing. When the file is read
//! back, a last line without its newline is that interrupted record: it is dropped with a
//! warning (its configuration is measured again) and cut off before anything is appended. Any
//! other line that is not a valid record is an error naming the line: the file was damaged in a
//! way a kill cannot explain, and guessing could lose results.

use super::record::{Key, Record, SCHEMA};
use crate::backend::measure::Status;
use crate::{Error, Result};
use std::collections::{HashMap, HashSet};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The records of a results file.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Every record, in file order, one per key: where a key appears twice (a configuration
    /// retried with `--retry-failed`), the later record replaces the earlier in its place.
    pub records: Vec<Record>,
    /// What was dropped and why (an interrupted last line, duplicate keys).
    pub warnings: Vec<String>,
    /// Bytes of the file that hold complete lines; appending starts here.
    pub valid_len: u64,
}

impl Loaded {
    /// The keys of every record.
    pub fn keys(&self) -> HashSet<Key> {
        self.records.iter().map(Record::key).collect()
    }
}

/// Read `path` (a missing file holds no records).
pub fn load(path: &Path) -> Result<Loaded> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Loaded::default()),
        Err(e) => return Err(Error::io(path, e)),
    };
    parse(&path.display().to_string(), &bytes)
}

/// Parse the content of a results file; `name` is used in messages.
pub fn parse(name: &str, bytes: &[u8]) -> Result<Loaded> {
    let mut out = Loaded::default();
    let mut seen: HashMap<Key, usize> = HashMap::new();
    let mut start = 0usize;
    let mut line_no = 0u64;
    while start < bytes.len() {
        line_no += 1;
        let Some(nl) = bytes[start..].iter().position(|&b| b == b'\n') else {
            out.warnings.push(format!(
                "{name}:{line_no}: the last line is incomplete ({} bytes without a newline: an \
                 interrupted write); dropped, its configuration will be measured again",
                bytes.len() - start
            ));
            break;
        };
        let line = &bytes[start..start + nl];
        start += nl + 1;
        out.valid_len = start as u64;
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        let rec: Record = serde_json::from_slice(line).map_err(|e| {
            Error::parse(
                name,
                line_no,
                format!("not a valid result record ({e}); the file is damaged"),
            )
        })?;
        if rec.schema != SCHEMA {
            return Err(Error::parse(
                name,
                line_no,
                format!(
                    "record schema {} (this sparsecast reads {SCHEMA}); use another --out",
                    rec.schema
                ),
            ));
        }
        match seen.get(&rec.key()) {
            Some(&i) => {
                // A retried configuration (`--retry-failed`) follows its failed record; anything
                // else is unexpected but the later record is still the newer one.
                if out.records[i].status != Status::Failed {
                    out.warnings.push(format!(
                        "{name}:{line_no}: a second record for {} / {} / {} replaces the earlier one",
                        rec.matrix, rec.precision, rec.config
                    ));
                }
                out.records[i] = rec;
            }
            None => {
                seen.insert(rec.key(), out.records.len());
                out.records.push(rec);
            }
        }
    }
    Ok(out)
}

/// Write `records` as the whole content of `path`, atomically (after records were replaced, so
/// that the file holds one record per configuration again).
pub fn rewrite(path: &Path, records: &[Record]) -> Result<()> {
    let mut text = Vec::new();
    for r in records {
        serde_json::to_writer(&mut text, r)
            .map_err(|e| Error::Invalid(format!("cannot serialize a record: {e}")))?;
        text.push(b'\n');
    }
    crate::util::write_atomic(path, |w| w.write_all(&text))
}

/// Appends records to a results file.
pub struct Appender {
    file: std::fs::File,
    path: PathBuf,
}

impl Appender {
    /// Open `path` for appending after its first `valid_len` bytes (anything after them — an
    /// interrupted line — is cut off). Creates the file if needed.
    pub fn open(path: &Path, valid_len: u64) -> Result<Appender> {
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        if len > valid_len {
            file.set_len(valid_len).map_err(|e| Error::io(path, e))?;
        }
        file.seek(SeekFrom::Start(valid_len.min(len)))
            .map_err(|e| Error::io(path, e))?;
        Ok(Appender {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Append one record as one line, flushed and synced to disk. A record that would not read
    /// back (JSON has no NaN: a non-finite number in a field that is not optional) is refused
    /// before anything is written, so the file never holds a line that stops the next resume.
    pub fn append(&mut self, r: &Record) -> Result<()> {
        let mut line = serde_json::to_vec(r)
            .map_err(|e| Error::Invalid(format!("cannot serialize a record: {e}")))?;
        if let Err(e) = serde_json::from_slice::<Record>(&line) {
            return Err(Error::Invalid(format!(
                "the record of {} / {} / {} would not read back ({e}); not written",
                r.matrix, r.precision, r.config
            )));
        }
        line.push(b'\n');
        let io = |e| Error::io(&self.path, e);
        self.file.write_all(&line).map_err(io)?;
        self.file.flush().map_err(io)?;
        self.file.sync_data().map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::record::{ConfigKind, SourceInfo};
    use crate::Precision;

    fn rec(matrix: &str, config: &str) -> Record {
        Record {
            schema: SCHEMA,
            matrix: matrix.into(),
            source: SourceInfo::File(format!("/x/{matrix}").into()),
            precision: Precision::F64,
            config: config.into(),
            kind: ConfigKind::Ours,
            format: Some("csr".into()),
            status: Status::Ok,
            reason: None,
            backend: "cpu".into(),
            device: "test".into(),
            runs: 3,
            warmup: 1,
            median_s: Some(1e-5),
            warm_mean_s: Some(1.1e-5),
            protocol: None,
            spread: None,
            per_batch: None,
            graph: None,
            placement_medians: Vec::new(),
            footprint_bytes: Some(100),
            effective_bytes: Some(200),
            max_rel_error: Some(0.0),
            prepare_s: Some(1e-3),
            features: None,
            predictions: Default::default(),
            plan: None,
        }
    }

    #[test]
    fn append_then_load_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.jsonl");
        assert!(load(&p).unwrap().records.is_empty());
        let mut a = Appender::open(&p, 0).unwrap();
        a.append(&rec("m1", "csr-vector")).unwrap();
        a.append(&rec("m1", "ell")).unwrap();
        drop(a);
        let l = load(&p).unwrap();
        assert_eq!(l.records, vec![rec("m1", "csr-vector"), rec("m1", "ell")]);
        assert!(l.warnings.is_empty());
        assert_eq!(l.valid_len, std::fs::metadata(&p).unwrap().len());
    }

    #[test]
    fn an_interrupted_last_line_is_dropped_and_cut_before_appending() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.jsonl");
        let mut a = Appender::open(&p, 0).unwrap();
        a.append(&rec("m1", "a")).unwrap();
        a.append(&rec("m1", "b")).unwrap();
        drop(a);
        let full = std::fs::read(&p).unwrap();
        // Cut the second line in its middle.
        let first_end = full.iter().position(|&b| b == b'\n').unwrap() + 1;
        let cut = first_end + (full.len() - first_end) / 2;
        std::fs::write(&p, &full[..cut]).unwrap();
        let l = load(&p).unwrap();
        assert_eq!(l.records, vec![rec("m1", "a")]);
        assert_eq!(l.valid_len, first_end as u64);
        assert!(l.warnings[0].contains(":2: the last line is incomplete"));
        let mut a = Appender::open(&p, l.valid_len).unwrap();
        a.append(&rec("m1", "b")).unwrap();
        drop(a);
        assert_eq!(std::fs::read(&p).unwrap(), full);
    }

    #[test]
    fn damage_in_the_middle_is_an_error_with_the_line() {
        let mut text = serde_json::to_string(&rec("m", "a")).unwrap();
        text.push_str("\n{\"schema\":1,\"broken\n");
        text.push_str(&serde_json::to_string(&rec("m", "c")).unwrap());
        text.push('\n');
        let e = parse("r.jsonl", text.as_bytes()).unwrap_err().to_string();
        assert!(e.starts_with("r.jsonl:2:"), "{e}");
        let mut other = rec("m", "a");
        other.schema = 99;
        let e = parse(
            "r.jsonl",
            format!("{}\n", serde_json::to_string(&other).unwrap()).as_bytes(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("schema 99"), "{e}");
    }

    #[test]
    fn a_record_that_would_not_read_back_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.jsonl");
        let mut a = Appender::open(&p, 0).unwrap();
        let mut bad = rec("m", "a");
        let mut f = crate::features::Features::compute(
            &crate::Csr::<f64>::from_triplets(1, 1, &[0], &[0], &[1.0]).unwrap(),
        );
        f.mean_nnz = f64::NAN; // serialized as null, which an f64 cannot read
        bad.features = Some(f);
        let e = a.append(&bad).unwrap_err().to_string();
        assert!(e.contains("would not read back"), "{e}");
        // A NaN in an optional field reads back as "absent": accepted.
        let mut odd = rec("m", "b");
        odd.max_rel_error = Some(f64::INFINITY);
        a.append(&odd).unwrap();
        drop(a);
        let l = load(&p).unwrap();
        assert_eq!(l.records.len(), 1);
        assert_eq!(l.records[0].max_rel_error, None);
    }

    #[test]
    fn a_later_record_replaces_an_earlier_one() {
        let mut failed = rec("m", "a");
        failed.status = Status::Failed;
        let mut again = rec("m", "a");
        again.median_s = Some(9.0);
        let line = |r: &Record| serde_json::to_string(r).unwrap();
        let text = format!(
            "{}\n{}\n\n{}\n",
            line(&failed),
            line(&rec("m", "b")),
            line(&again)
        );
        let l = parse("r", text.as_bytes()).unwrap();
        assert_eq!(l.records, vec![again.clone(), rec("m", "b")]);
        assert!(
            l.warnings.is_empty(),
            "a retry is expected: {:?}",
            l.warnings
        );
        // Replacing a record that had not failed is reported.
        let text = format!("{}\n{}\n", line(&rec("m", "a")), line(&again));
        let l = parse("r", text.as_bytes()).unwrap();
        assert_eq!(l.records, vec![again]);
        assert!(l.warnings[0].contains("replaces the earlier one"));
    }
}
