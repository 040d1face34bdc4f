//! `sparsecast features` end to end on a real matrix (skipped, visibly, when `../shared` is
//! absent).

use sparsecast::features::Features;
use std::process::Command;

#[test]
fn json_and_table_for_a_real_matrix() {
    let Some(path) = crate::common::shared_matrix("bcsstk13.mtx.gz") else {
        return;
    };
    let bin = env!("CARGO_BIN_EXE_sparsecast");
    let o = Command::new(bin)
        .args(["features", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let f: Features = serde_json::from_value(j["features"].clone()).unwrap();
    // Sizes from shared/matrices/README.md (symmetric file, expanded).
    assert_eq!((f.nrows, f.ncols, f.nnz), (2003, 2003, 83883));
    assert_eq!(j["header"]["symmetry"], "symmetric");
    assert_eq!(j["precision"], "f64");
    // A structurally symmetric matrix with a full diagonal occupies an odd number of diagonals.
    assert_eq!(f.diagonals % 2, 1);
    let m = sparsecast::matrix::mm::read::<f64>(&path).unwrap();
    assert_eq!(f, Features::compute(&m));

    let o = Command::new(bin)
        .arg("features")
        .arg(&path)
        .output()
        .unwrap();
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(
        table.contains("83883") && table.contains("bandwidth"),
        "{table}"
    );
}

#[test]
fn missing_file_is_an_error() {
    let o = Command::new(env!("CARGO_BIN_EXE_sparsecast"))
        .args(["features", "/nonexistent/m.mtx"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("/nonexistent/m.mtx"), "{err}");
}
