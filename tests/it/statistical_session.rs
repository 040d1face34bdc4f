//! The statistical models' device session (scripts/device_statistical.sh) dry-run on the CPU
//! backend at tiny size, through the command line: instrument every 001 family with --base and
//! a budget, keep the base profile's learned model, then score the profile on a measured table.

use crate::common::{bin, run_ok};
use sparsecast::profile::Profile;
use sparsecast::Precision;
use std::path::{Path, PathBuf};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name)
}

const STAT: [&str; 3] = [
    "statistical-constant",
    "statistical-normal",
    "statistical-uniform",
];

#[test]
fn statistical_session_dry_run_on_the_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    // A base profile with a learned model: the analytical suite, then lr on a tiny table.
    run_ok(
        bin()
            .args([
                "instrument",
                "--backend",
                "cpu",
                "--quick",
                "--no-statistical",
            ])
            .arg("--out")
            .arg(p("base.json")),
    );
    let mats = p("mats");
    std::fs::create_dir(&mats).unwrap();
    for m in ["bcsstk09.mtx.gz", "west2021.mtx.gz"] {
        std::fs::copy(data(m), mats.join(m)).unwrap();
    }
    run_ok(
        bin()
            .args(["collect", "--backend", "cpu", "--corpus"])
            .arg(&mats)
            .args([
                "--kron-per-file",
                "0",
                "--generated",
                "3",
                "--min-nnz",
                "2000",
            ])
            .args(["--max-nnz", "60000", "--runs", "4", "--warmup-ms", "1"])
            .args(["--batch-ms", "0.1", "--block-sizes", "128", "--out"])
            .arg(p("table.jsonl")),
    );
    run_ok(
        bin()
            .args(["train", "--models", "lr", "--folds", "0", "--data"])
            .arg(p("table.jsonl"))
            .arg("--base")
            .arg(p("base.json"))
            .arg("--out")
            .arg(p("trained.json")),
    );

    // The session's instrument: the three families, the analytical csr-t16, a budget, --base.
    let args = [
        "instrument",
        "--backend",
        "cpu",
        "--quick",
        "--statistical",
        "constant,normal,uniform",
        "--csr-threads",
        "16,32",
        "--budget-s",
        "600",
    ];
    let plan = run_ok(bin().args(args).arg("--plan-only").arg(p("trained.json")));
    assert!(
        plan.contains("statistical-constant") && plan.contains("total:"),
        "{plan}"
    );
    run_ok(
        bin()
            .args(args)
            .arg("--base")
            .arg(p("trained.json"))
            .arg("--out")
            .arg(p("session.json")),
    );
    let prof = Profile::load(&p("session.json")).unwrap();
    for precision in [Precision::F32, Precision::F64] {
        let s = prof.precision(precision).unwrap();
        let names: Vec<&str> = s.models.iter().map(|m| m.name.as_str()).collect();
        // Its own models first, then the base's learned one.
        assert_eq!(names[..4], ["analytical", STAT[0], STAT[1], STAT[2]]);
        assert_eq!(names[4..], ["lr"], "{names:?}");
        assert!(s.skipped_notes.is_empty(), "{:?}", s.skipped_notes);
    }

    // A spent budget: the statistical suites are skipped, the profile is still written, and
    // the base's statistical models (another session's) are not carried over; lr is.
    let cut = bin()
        .args(&args[..args.len() - 2])
        .args(["--budget-s", "0.001", "--base"])
        .arg(p("session.json"))
        .arg("--out")
        .arg(p("cut.json"))
        .output()
        .unwrap();
    let log = String::from_utf8_lossy(&cut.stderr);
    assert!(cut.status.success(), "{log}");
    assert!(log.contains("time budget spent"), "{log}");
    let cut = Profile::load(&p("cut.json")).unwrap();
    for s in &cut.precisions {
        let names: Vec<&str> = s.models.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["analytical", "lr"]);
        assert!(s.skipped_notes.iter().any(|n| n.contains("not fitted")));
    }

    // 001's comparison on the table, every row held out (no model was fitted on it).
    let out = run_ok(
        bin()
            .args(["score", "--json", "--min-nnz", "10000", "--profile"])
            .arg(p("session.json"))
            .arg("--data")
            .arg(p("table.jsonl"))
            .args(["--configs", "csr-t16,csr-scalar,ell,jad"]),
    );
    let lines: serde_json::Value = serde_json::from_str(&out).unwrap();
    let lines = lines.as_array().unwrap();
    for model in STAT {
        for config in ["csr-t16", "csr-scalar", "ell", "jad"] {
            for precision in ["f32", "f64"] {
                let l = lines
                    .iter()
                    .find(|l| {
                        l["set"] == "files"
                            && l["model"] == model
                            && l["config"] == config
                            && l["precision"] == precision
                    })
                    .unwrap_or_else(|| panic!("no {model} {config} {precision} on files"));
                assert_eq!(l["n"], 2, "two real matrices");
                let (mean, median) = (l["mean"].as_f64().unwrap(), l["median"].as_f64().unwrap());
                assert!(mean.is_finite() && mean >= 0.0 && median >= 0.0, "{l}");
            }
        }
    }
    // lr was trained on this table: left to `train`'s cross-validation.
    assert!(!lines.iter().any(|l| l["model"] == "lr"));
    // The analytical model covers csr-t16 (--csr-threads 16) but not csr-scalar or JAD.
    let analytical: Vec<&str> = lines
        .iter()
        .filter(|l| l["model"] == "analytical" && l["set"] == "all")
        .map(|l| l["config"].as_str().unwrap())
        .collect();
    assert!(analytical.contains(&"csr-t16") && !analytical.contains(&"jad"));

    // A profile of another device is refused.
    let other = bin()
        .args(["score", "--profile"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/h200.json.gz"))
        .arg("--data")
        .arg(p("table.jsonl"))
        .output()
        .unwrap();
    assert!(!other.status.success());
    let e = String::from_utf8_lossy(&other.stderr);
    assert!(e.contains("own device"), "{e}");
}
