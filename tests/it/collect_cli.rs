//! `sparsecast collect` on the CPU backend: a configuration subset (`--configs`) written to a
//! second table fills in the first one's rows when both are read, mixtures are stacked
//! matrices, and every row records where the time went.

use crate::common::bin;
use sparsecast::corpus::table;
use std::path::Path;

fn collect(out: &Path, extra: &[&str]) -> std::process::Output {
    bin()
        .args(["collect", "--backend", "cpu", "--corpus"])
        .arg(out.parent().unwrap().join("no-files"))
        .args(["--generated", "2", "--mixtures", "1", "--seed", "7"])
        .args([
            "--min-nnz",
            "2000",
            "--max-nnz",
            "20000",
            "--precision",
            "f64",
        ])
        .args([
            "--runs",
            "3",
            "--warmup-ms",
            "0.5",
            "--batch-ms",
            "0.05",
            "--out",
        ])
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn a_configuration_subset_fills_in_another_table() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("no-files")).unwrap();
    let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
    let o = collect(&a, &["--configs", "csr-t4,coo"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = collect(&b, &["--configs", "ell-bro"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let first = table::read(&a).unwrap();
    assert_eq!(first.len(), 3, "2 generated + 1 mixture, f64");
    assert!(first.iter().any(|r| r.matrix.contains("-m00000-stack-")));
    for r in &first {
        let labels: Vec<&str> = r.times.iter().map(|t| t.config.as_str()).collect();
        assert_eq!(labels, ["csr-t4", "coo"], "{}", r.matrix);
        let c = r.cost.expect("collect records its cost");
        assert!(c.build_s >= 0.0 && c.measure_s > 0.0, "{c:?}");
    }
    let merged = table::read_all(&[&a, &b]).unwrap();
    assert_eq!(merged.len(), 3);
    for r in &merged {
        let labels: Vec<&str> = r.times.iter().map(|t| t.config.as_str()).collect();
        assert_eq!(labels, ["csr-t4", "coo", "ell-bro"], "{}", r.matrix);
    }
    // An unknown label is refused with the known ones listed.
    let o = collect(&dir.path().join("c.jsonl"), &["--configs", "ell-brooo"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("ell-brooo") && err.contains("csr-t4"),
        "{err}"
    );
}

/// Both precisions, stopped by its budget and resumed: the matrix made ready ahead of the one
/// being measured (on a second thread) is neither lost nor written twice, a finished table is
/// left alone, and the two precisions of a matrix carry the same features (one pass over the
/// matrix serves both).
#[test]
fn a_stopped_collection_resumes_with_every_row_once() {
    let dir = tempfile::tempdir().unwrap();
    let none = dir.path().join("no-files");
    std::fs::create_dir(&none).unwrap();
    let out = dir.path().join("t.jsonl");
    let run = |budget: &[&str]| {
        bin()
            .args(["collect", "--backend", "cpu", "--corpus"])
            .arg(&none)
            .args(["--generated", "3", "--mixtures", "0", "--seed", "11"])
            .args(["--min-nnz", "2000", "--max-nnz", "20000"])
            .args(["--configs", "csr-t4,ell", "--runs", "3"])
            .args(["--warmup-ms", "0.5", "--batch-ms", "0.05", "--out"])
            .arg(&out)
            .args(budget)
            .output()
            .unwrap()
    };
    let o = run(&["--budget-s", "0"]);
    let text = String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{text}");
    assert!(text.contains("3 matrices left"), "{text}");
    assert_eq!(table::read(&out).unwrap().len(), 0);
    let o = run(&[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = table::read(&out).unwrap();
    assert_eq!(rows.len(), 6, "3 matrices × 2 precisions");
    let mut names: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r.matrix.clone(), r.precision.to_string()))
        .collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 6, "every matrix and precision once");
    for pair in rows.chunks(2) {
        assert_eq!(
            pair[0].matrix, pair[1].matrix,
            "a matrix's rows are written together"
        );
        assert_ne!(pair[0].precision, pair[1].precision);
        let f = |r: &table::TableRow| serde_json::to_value(&r.features).unwrap();
        assert_eq!(f(&pair[0]), f(&pair[1]), "{}", pair[0].matrix);
        assert_eq!(pair[0].times.len(), 2);
    }
    let o = run(&[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        table::read(&out).unwrap().len(),
        6,
        "nothing measured again"
    );
}
