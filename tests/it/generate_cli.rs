//! `sparsecast generate` end to end: summary line, argument errors, JSON specs, Kronecker growth
//! of a real matrix, and the written file.

use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sparsecast"))
        .args(args)
        .output()
        .expect("run sparsecast")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn summary_line_reports_the_matrix() {
    let o = run(&["generate", "stencil", "--points", "7", "--n", "5"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let s = stdout(&o);
    // 7-point on 5³: 125 + 6·25·4 = 725 non-zeros.
    assert!(
        s.contains("stencil3d7-5: 125 rows × 125 cols, 725 non-zeros"),
        "{s}"
    );
    let o = run(&[
        "generate",
        "random",
        "--rows",
        "300",
        "--cols",
        "50",
        "--per-row",
        "7",
        "--seed",
        "3",
    ]);
    assert!(
        stdout(&o).contains("300 rows × 50 cols, 2100 non-zeros"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn bad_parameters_fail_cleanly() {
    let o = run(&["generate", "random", "--rows", "10", "--per-row", "11"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("exceed the 10 columns"),
        "{}",
        stderr(&o)
    );
    let o = run(&["generate", "random", "--rows", "10", "--uniform", "3"]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("MIN:MAX") || stderr(&o).contains("A:B"),
        "{}",
        stderr(&o)
    );
    let o = run(&["generate", "random", "--rows", "10"]);
    assert!(!o.status.success(), "a row-length distribution is required");
    let o = run(&[
        "generate",
        "kron",
        "--matrix",
        "x.mtx",
        "--pattern",
        "triangle:3",
    ]);
    assert!(stderr(&o).contains("dense:K"), "{}", stderr(&o));
    let o = run(&["generate", "spec", "{\"family\":\"stencil\",\"n\":3}"]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("spec"), "{}", stderr(&o));
    for p in ["0", "5"] {
        let o = run(&["generate", "block-diag", "--blocks", p, "--block-size", "0"]);
        assert!(
            !o.status.success() && stderr(&o).contains("must be ≥ 1"),
            "{}",
            stderr(&o)
        );
    }
    // No panic, no allocation attempt: refused on the memory limit.
    let o = run(&[
        "generate",
        "random",
        "--rows",
        "4000000000",
        "--per-row",
        "4000",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("GiB"), "{}", stderr(&o));
}

#[test]
fn json_spec_matches_subcommand() {
    let a = run(&[
        "generate",
        "power-law",
        "--n",
        "3000",
        "--mean",
        "6",
        "--exponent",
        "2.2",
        "--seed",
        "9",
    ]);
    let b = run(&[
        "generate",
        "spec",
        r#"{"family":"power-law","n":3000,"mean":6.0,"exponent":2.2,"seed":9}"#,
    ]);
    let line = |o: &Output| stdout(o).split(", generated").next().unwrap().to_string();
    assert!(a.status.success() && b.status.success());
    assert_eq!(line(&a), line(&b));
}

#[test]
fn kron_grows_a_real_matrix() {
    let Some(m) = crate::common::shared_matrix("bcsstk13.mtx.gz") else {
        return;
    };
    let o = run(&[
        "generate",
        "kron",
        "--matrix",
        m.to_str().unwrap(),
        "--pattern",
        "dense:3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // bcsstk13: 2003 × 2003, 83 883 non-zeros (symmetric, expanded); ⊗ 3×3 dense.
    assert!(
        stdout(&o).contains("6009 rows × 6009 cols, 754947 non-zeros"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn writes_a_matrix_market_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("band.mtx");
    let o = run(&[
        "generate",
        "banded",
        "--n",
        "40",
        "--half-bandwidth",
        "2",
        "-o",
        path.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("written to"), "{}", stdout(&o));
    let back = sparsecast::matrix::mm::read::<f64>(&path).unwrap();
    let spec = sparsecast::matrix::generate::GeneratorSpec::Banded {
        n: 40,
        half_bandwidth: 2,
        seed: 1,
    };
    let m = spec.generate().unwrap();
    assert_eq!((back.row_ptr, back.col_idx), (m.row_ptr, m.col_idx));
}
