//! Bring measured training tables up to counts the features gained after they were collected,
//! without measuring again: every distinct matrix of the tables is rebuilt from its recorded
//! source (a Matrix Market file or the generator spec that made it) and only the new counts are
//! written into its rows. The times, the other features (the f32 row's non-finite count
//! included) and everything else stay as measured.
//!
//! The counts written: BSR's per-block-row ones (`BsrCount::max_row_blocks`,
//! `BsrCount::warp_trips`, session 30), the histograms of the warps by their steps
//! (`Access::warp_hist`, session 31), the warps' lane-alignment steps (`Access::align_steps`,
//! session 44), DIA's stored slots outside the columns (`DiaCount::outside`, session 56,
//! from the full pass) and the rows' `x` sectors by their length (`Access::row_len_sectors`,
//! session 71, from the full pass). Rows that hold the full pass's counts (BSR's, the warp
//! histograms, the sectors by length) and need no DIA count get the alignment steps from the
//! rebuilt matrix's row pointers alone
//! ([`crate::features::access::warp_counts`], no pass over the entries); the others get what
//! they lack from [`Features::compute`]. The rebuilt matrix must be the measured one: its
//! non-zeros, stored BSR blocks (where computed) and summed warp steps are checked against the
//! row's features, and a matrix that differs (or whose source is gone) is reported and its rows
//! left as they were.

use super::table::TableRow;
use crate::evaluate::record::SourceInfo;
use crate::features::Features;
use crate::matrix::generate::GeneratorSpec;
use crate::{Csr, Error, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What [`new_counts`] did.
#[derive(Debug, Default, serde::Serialize)]
pub struct Outcome {
    /// Distinct matrices (sources) in the rows.
    pub matrices: usize,
    /// Rows whose counts were written.
    pub rows_updated: usize,
    /// Matrices skipped because every row already had the counts.
    pub already: usize,
    /// Matrices left out by the non-zero bounds.
    pub out_of_bounds: usize,
    /// Matrices that could not be rebuilt or did not match their rows: (matrix, why).
    pub failed: Vec<(String, String)>,
}

/// Where to look for a source's Matrix Market file: the recorded path, else a file of the same
/// name in `mats` (tables collected on another machine record its paths).
fn locate(path: &Path, mats: Option<&Path>) -> PathBuf {
    match (path.exists(), mats, path.file_name()) {
        (false, Some(dir), Some(name)) if dir.join(name).exists() => dir.join(name),
        _ => path.to_path_buf(),
    }
}

/// `spec` with every Matrix Market path it names (Kronecker bases, also inside stacks)
/// located by [`locate`].
fn relocate(spec: &GeneratorSpec, mats: Option<&Path>) -> Result<GeneratorSpec> {
    fn walk(v: &mut serde_json::Value, mats: Option<&Path>) {
        match v {
            serde_json::Value::String(s) if s.ends_with(".mtx") || s.ends_with(".mtx.gz") => {
                *s = locate(Path::new(s.as_str()), mats)
                    .to_string_lossy()
                    .into_owned();
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|x| walk(x, mats)),
            serde_json::Value::Object(o) => o.values_mut().for_each(|x| walk(x, mats)),
            _ => {}
        }
    }
    let mut v = serde_json::to_value(spec).map_err(|e| Error::Invalid(e.to_string()))?;
    walk(&mut v, mats);
    serde_json::from_value(v).map_err(|e| Error::Invalid(e.to_string()))
}

/// Rebuild the matrix of `source` (f64, as `collect` measured it).
pub fn rebuild(source: &SourceInfo, mats: Option<&Path>) -> Result<Csr<f64>> {
    match source {
        SourceInfo::File(p) => crate::matrix::mm::read::<f64>(&locate(p, mats)),
        SourceInfo::Generated(spec) => {
            relocate(spec, mats)?.generate_with_limit(crate::formats::default_max_bytes())
        }
        SourceInfo::Recipe(r) => Err(Error::Unsupported(format!(
            "the source is a recipe in words ({r}), not a spec that rebuilds the matrix"
        ))),
    }
}

/// Every distinct generated matrix of `rows` with at most `max_nnz` non-zeros (by the table's
/// count), rebuilt from its spec, in table order, beside its first row: the loop of the
/// analysis examples (`examples/cta_load.rs`). A spec that cannot be
/// rebuilt is reported on stderr and skipped; file sources are left out.
pub fn generated_matrices(
    rows: &[TableRow],
    max_nnz: usize,
) -> impl Iterator<Item = (&TableRow, Csr<f64>)> {
    let mut seen = std::collections::BTreeSet::new();
    rows.iter().filter_map(move |r| {
        if !matches!(r.source, SourceInfo::Generated(_))
            || r.features.nnz > max_nnz
            || !seen.insert(r.matrix.as_str())
        {
            return None;
        }
        rebuild(&r.source, None)
            .map_err(|e| eprintln!("{}: {e}", r.matrix))
            .ok()
            .map(|m| (r, m))
    })
}

/// Whether `row` holds the counts of the full pass (BSR's per-block-row counts, the warp
/// histograms, the rows' `x` sectors by their length).
fn has_full_counts(row: &TableRow) -> bool {
    let Some(a) = row.features.access.as_ref() else {
        return false;
    };
    let bsr = a.bsr.is_some_and(|b| b.blocks == 0 || b.warp_trips > 0);
    bsr && (row.features.nrows == 0 || !a.warp_hist.is_empty())
        && row.features.has_row_len_sectors()
}

/// Whether `row` already holds every count this pass writes (a matrix with an entry has at
/// least one alignment step).
fn has_counts(row: &TableRow) -> bool {
    let f = &row.features;
    let align = |a: &crate::features::Access| f.nnz == 0 || a.align_steps[0] > 0;
    has_full_counts(row)
        && f.access
            .as_ref()
            .is_some_and(|a| align(a) && has_outside(row, a))
}

/// Whether DIA's count of `row` holds its slots outside the columns where they are counted
/// (session 56), or has no DIA count to add them to.
fn has_outside(row: &TableRow, a: &crate::features::Access) -> bool {
    let (r, z) = (row.features.nrows as u64, row.features.nnz as u64);
    a.dia.map_or(true, |d| {
        d.outside.is_some() || !crate::formats::dia::outside_counted(d.diagonals, r, z)
    })
}

/// The counts of `a` for `rows`: the full pass where some row lacks its counts, else the warp
/// and alignment steps from the row pointers (the rest of the access features stay `None`/empty
/// and are not written).
fn fresh_counts(a: &Csr<f64>, full: bool, outside: bool) -> crate::features::Access {
    if full || outside {
        return Features::compute(a)
            .access
            .expect("Features::compute sets the access features");
    }
    let (warp_steps, align_steps) = crate::features::access::warp_counts(&a.row_ptr);
    crate::features::Access {
        warp_steps,
        align_steps,
        x_sectors_f32: 0,
        x_sectors_f64: 0,
        row_sectors_f64: 0,
        cols_used: 0,
        dia: None,
        sell: Vec::new(),
        bsr: None,
        warp_hist: Vec::new(),
        row_len_sectors: Default::default(),
        hyb_line_carries: None,
    }
}

/// Write the new counts (BSR's per-block-row counts of the default block size, the warp
/// histograms, the rows' `x` sectors by their length, the alignment steps, DIA's outside slots)
/// into every row of `rows` that lacks them, rebuilding each distinct matrix once (largest
/// first, so the progress's ETA is honest early), among those whose recorded non-zeros lie in
/// `nnz_bounds`. `tick(done, total, name)` reports progress in non-zeros rebuilt.
pub fn new_counts(
    rows: &mut [TableRow],
    mats: Option<&Path>,
    nnz_bounds: (usize, usize),
    mut tick: impl FnMut(u64, u64, &str),
) -> Outcome {
    let mut by_source: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        let key = serde_json::to_string(&r.source).unwrap_or_else(|_| r.matrix.clone());
        by_source.entry(key).or_default().push(i);
    }
    let mut out = Outcome {
        matrices: by_source.len(),
        ..Outcome::default()
    };
    let mut todo: Vec<&Vec<usize>> = Vec::new();
    for idx in by_source.values() {
        let nnz = rows[idx[0]].features.nnz;
        if idx.iter().all(|&i| has_counts(&rows[i])) {
            out.already += 1;
        } else if nnz < nnz_bounds.0 || nnz > nnz_bounds.1 {
            out.out_of_bounds += 1;
        } else {
            todo.push(idx);
        }
    }
    todo.sort_by_key(|idx| std::cmp::Reverse(rows[idx[0]].features.nnz));
    let total: u64 = todo.iter().map(|i| rows[i[0]].features.nnz as u64).sum();
    let mut done = 0u64;
    for idx in todo {
        let first = &rows[idx[0]];
        let name = first.matrix.clone();
        tick(done, total, &name);
        done += first.features.nnz as u64;
        let full = idx.iter().any(|&i| !has_full_counts(&rows[i]));
        let outside = idx.iter().any(|&i| {
            let r = &rows[i];
            r.features
                .access
                .as_ref()
                .is_some_and(|a| !has_outside(r, a))
        });
        let counted = rebuild(&first.source, mats).and_then(|a| {
            let fresh = fresh_counts(&a, full, outside);
            let stored = first.features.access.as_ref();
            let blocks = |x: Option<&crate::features::Access>| x.and_then(|x| x.bsr);
            let same_blocks = match (blocks(stored), fresh.bsr) {
                (Some(s), Some(c)) => s.block == c.block && s.blocks == c.blocks,
                _ => true,
            };
            let same_steps = stored.map_or(true, |s| s.warp_steps == fresh.warp_steps);
            if a.nnz() == first.features.nnz && same_blocks && same_steps {
                Ok(fresh)
            } else {
                Err(Error::Invalid(format!(
                    "the rebuilt matrix differs from the measured one ({} non-zeros, {:?} \
                     blocks, warp steps {:?}; the table: {} non-zeros, {:?}, {:?})",
                    a.nnz(),
                    fresh.bsr.map(|s| s.blocks),
                    fresh.warp_steps,
                    first.features.nnz,
                    blocks(stored).map(|s| s.blocks),
                    stored.map(|s| s.warp_steps)
                )))
            }
        });
        match counted {
            Ok(c) => {
                for &i in idx {
                    if let Some(a) = rows[i].features.access.as_mut() {
                        if full {
                            a.bsr = c.bsr;
                            a.warp_hist = c.warp_hist.clone();
                            a.row_len_sectors = c.row_len_sectors.clone();
                        }
                        a.align_steps = c.align_steps;
                        if outside {
                            if let (Some(d), Some(n)) = (a.dia.as_mut(), c.dia) {
                                d.outside = n.outside;
                            }
                        }
                        out.rows_updated += 1;
                    }
                }
            }
            Err(e) => out.failed.push((name, e.to_string())),
        }
    }
    tick(done, total, "");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::measure::Status;
    use crate::backend::TimingProtocol;
    use crate::corpus::table::{ConfigTime, TABLE_SCHEMA};
    use crate::features::Features;
    use crate::Precision;

    /// A row of `source` as a table collected before the counts existed holds it: its features
    /// without BSR's per-block-row counts, the warp histograms, the rows' sectors by length and
    /// the alignment steps, one measured time.
    fn old_row(source: SourceInfo, a: &Csr<f64>, precision: Precision) -> TableRow {
        let mut features = Features::compute(a);
        let access = features.access.as_mut().unwrap();
        access.warp_hist.clear();
        access.row_len_sectors = Default::default();
        access.align_steps = [0, 0];
        let b = access.bsr.as_mut().unwrap();
        (b.max_row_blocks, b.warp_trips) = (0, 0);
        TableRow {
            schema: TABLE_SCHEMA,
            matrix: "m".into(),
            family: "fam".into(),
            source,
            precision,
            backend: "cuda".into(),
            device: "test".into(),
            protocol: TimingProtocol::default(),
            features,
            times: vec![ConfigTime {
                config: "bsr".into(),
                status: Status::Ok,
                median_s: Some(3e-6),
                warm_mean_s: Some(3e-6),
                spread: Some(0.01),
                footprint_bytes: Some(100),
                reason: None,
                kernel: None,
            }],
            cost: None,
        }
    }

    /// A random matrix of `rows` rows of `len` entries each, and the spec that makes it.
    fn constant_rows(rows: usize, cols: usize, len: usize, seed: u64) -> (GeneratorSpec, Csr<f64>) {
        let spec: GeneratorSpec = serde_json::from_str(&format!(
            r#"{{"family":"random","rows":{rows},"cols":{cols},
                "row_len":{{"dist":"constant","nnz":{len}}},"seed":{seed}}}"#
        ))
        .unwrap();
        let a = spec.generate().unwrap();
        (spec, a)
    }

    #[test]
    fn the_generated_matrices_come_once_each_within_the_limit() {
        let (small, a) = constant_rows(40, 50, 3, 1);
        let (big, b) = constant_rows(40, 50, 9, 2);
        let (src_small, src_big) = (SourceInfo::Generated(small), SourceInfo::Generated(big));
        let mut rows = vec![
            old_row(src_small.clone(), &a, Precision::F32),
            old_row(src_small, &a, Precision::F64),
            old_row(src_big, &b, Precision::F32),
            old_row(
                SourceInfo::File("/nowhere/x.mtx".into()),
                &a,
                Precision::F32,
            ),
        ];
        (rows[2].matrix, rows[3].matrix) = ("big".into(), "file".into());
        // Both generated matrices, each once, beside its first row; the file is left out.
        let all: Vec<_> = generated_matrices(&rows, usize::MAX).collect();
        assert_eq!(all.len(), 2);
        assert_eq!(
            (all[0].0.matrix.as_str(), all[0].0.precision),
            ("m", Precision::F32)
        );
        assert_eq!(all[0].1.col_idx, a.col_idx);
        assert_eq!(
            (all[1].0.matrix.as_str(), &all[1].1.col_idx),
            ("big", &b.col_idx)
        );
        // The limit reads the table's count: 40 · 9 = 360 non-zeros are over 200.
        let few: Vec<_> = generated_matrices(&rows, 200)
            .map(|(r, _)| &r.matrix)
            .collect();
        assert_eq!(few, ["m"]);
    }

    #[test]
    fn the_counts_are_written_and_nothing_else_changes() {
        let spec: GeneratorSpec = serde_json::from_str(
            r#"{"family":"stack","parts":[{"family":"random","rows":300,"cols":300,
                "row_len":{"dist":"uniform","min":1,"max":9},"seed":3},
               {"family":"random","rows":5,"cols":300,
                "row_len":{"dist":"constant","nnz":200},"seed":4}]}"#,
        )
        .unwrap();
        let a = spec.generate().unwrap();
        let fresh_access = Features::compute(&a).access.unwrap();
        let fresh = fresh_access.bsr.unwrap();
        assert!(fresh.warp_trips > 0 && fresh.max_row_blocks >= 50);
        let src = SourceInfo::Generated(spec);
        let mut rows = vec![
            old_row(src.clone(), &a, Precision::F32),
            old_row(src, &a, Precision::F64),
        ];
        let before = rows.clone();
        let out = new_counts(&mut rows, None, (0, usize::MAX), |_, _, _| {});
        assert_eq!(
            (out.matrices, out.rows_updated, out.failed.len()),
            (1, 2, 0)
        );
        for (r, b) in rows.iter().zip(&before) {
            assert_eq!(r.features.access.as_ref().unwrap().bsr, Some(fresh));
            assert_eq!(
                r.features.access.as_ref().unwrap().warp_hist,
                fresh_access.warp_hist
            );
            assert!(!fresh_access.warp_hist.is_empty());
            assert_eq!(
                r.features.access.as_ref().unwrap().row_len_sectors,
                fresh_access.row_len_sectors
            );
            assert!(!fresh_access.row_len_sectors.is_empty());
            let got = r.features.access.as_ref().unwrap().align_steps;
            assert_eq!(got, fresh_access.align_steps);
            assert!(got[0] > 0);
            let mut r = r.clone();
            r.features.access = b.features.access.clone();
            assert_eq!(&r, b, "only the counts change");
        }
        // A second pass finds them there and rebuilds nothing.
        let again = new_counts(&mut rows, None, (0, usize::MAX), |_, _, _| {});
        assert_eq!((again.already, again.rows_updated), (1, 0));
    }

    #[test]
    fn dias_slots_outside_the_columns_are_added_to_rows_with_every_other_count() {
        // A band of 200 rows over 3 rows of 150 entries: DIA's far diagonals lie mostly outside.
        let spec: GeneratorSpec = serde_json::from_str(
            r#"{"family":"stack","parts":[{"family":"banded","n":200,"half_bandwidth":2,
                "seed":1},{"family":"random","rows":3,"cols":200,
                "row_len":{"dist":"constant","nnz":150},"seed":2}]}"#,
        )
        .unwrap();
        let a = spec.generate().unwrap();
        let fresh = Features::compute(&a);
        let n = fresh.access.as_ref().unwrap().dia.unwrap().outside;
        assert!(n.is_some_and(|n| n > 0), "{n:?}");
        let mut row = old_row(SourceInfo::Generated(spec), &a, Precision::F64);
        row.features = fresh.clone();
        row.features
            .access
            .as_mut()
            .unwrap()
            .dia
            .as_mut()
            .unwrap()
            .outside = None;
        let mut rows = vec![row];
        let out = new_counts(&mut rows, None, (0, usize::MAX), |_, _, _| {});
        assert_eq!((out.rows_updated, out.already), (1, 0));
        assert_eq!(rows[0].features, fresh, "DIA's count, nothing else");
        let again = new_counts(&mut rows, None, (0, usize::MAX), |_, _, _| {});
        assert_eq!((again.already, again.rows_updated), (1, 0));
    }

    #[test]
    fn rows_with_the_full_counts_get_the_alignment_steps_alone() {
        // Rows of 16 entries on 4-byte elements: 2 offsets per 32 rows, so 16 lanes meet.
        let (spec, a) = constant_rows(96, 500, 16, 7);
        let full = Features::compute(&a);
        let mut row = old_row(SourceInfo::Generated(spec), &a, Precision::F32);
        row.features = full.clone();
        row.features.access.as_mut().unwrap().align_steps = [0, 0];
        let mut rows = vec![row];
        let out = new_counts(&mut rows, None, (0, usize::MAX), |_, _, _| {});
        assert_eq!((out.rows_updated, out.failed.len()), (1, 0));
        assert_eq!(rows[0].features, full, "the alignment steps, nothing else");
        assert_eq!(full.access.unwrap().align_steps, [3 * 16 * 16, 3 * 16 * 32]);
    }

    #[test]
    fn a_matrix_that_is_not_the_measured_one_is_reported_and_left_alone() {
        let (spec, a) = constant_rows(100, 100, 4, 5);
        let mut row = old_row(SourceInfo::Generated(spec), &a, Precision::F64);
        row.features.nnz += 1; // measured on another matrix (e.g. a generator that changed)
        let gone = old_row(
            SourceInfo::File("/nonexistent/x.mtx.gz".into()),
            &a,
            Precision::F64,
        );
        let mut rows = vec![row, gone];
        let before = rows.clone();
        let out = new_counts(&mut rows, None, (0, usize::MAX), |_, _, _| {});
        assert_eq!((out.rows_updated, out.failed.len()), (0, 2));
        assert!(
            out.failed.iter().any(|(_, why)| why.contains("differs")),
            "{:?}",
            out.failed
        );
        assert_eq!(rows, before);
        // Out of the non-zero bounds: not rebuilt at all.
        let out = new_counts(&mut rows, None, (1_000_000, usize::MAX), |_, _, _| {});
        assert_eq!((out.out_of_bounds, out.failed.len()), (2, 0));
    }

    #[test]
    fn a_file_recorded_elsewhere_is_found_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("small.mtx");
        std::fs::write(
            &p,
            "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 3 2\n3 2 3\n",
        )
        .unwrap();
        let recorded = PathBuf::from("/root/mats/small.mtx");
        assert_eq!(locate(&recorded, Some(dir.path())), p);
        assert_eq!(locate(&recorded, None), recorded);
        let a = rebuild(&SourceInfo::File(recorded), Some(dir.path())).unwrap();
        assert_eq!(a.nnz(), 3);
    }
}
