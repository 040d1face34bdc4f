//! `sparsecast evaluate` end to end on the CPU backend, as CI runs it: a tiny corpus (three small
//! matrices shipped in `data/` and one broken file) plus the small generated set, a quick CPU
//! profile; then the report's structure, the kill-and-resume path, the refusal to mix settings
//! and `--report-only`.

use crate::common::bin;
use sparsecast::backend::Variant;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name)
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("run sparsecast")
}

fn ok(cmd: &mut Command) -> String {
    let out = run(cmd);
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stderr).unwrap()
}

/// An evaluation of the tiny corpus: everything readable is measured and reported, then the
/// command fails naming the broken file. Returns stderr.
fn evaluated_but_broken(cmd: &mut Command) -> String {
    let out = run(cmd);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        !out.status.success(),
        "{cmd:?}: an unreadable matrix must fail it:\n{err}"
    );
    assert!(
        err.contains("1 of 7 matrices could not be read: tiny/broken.mtx")
            && err.contains("could not read tiny/broken.mtx: ")
            && err.contains("records ("),
        "{err}"
    );
    err
}

fn lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

const SECTIONS: [&str; 7] = [
    "## Summary",
    "## Setup",
    "## Matrices",
    "## Accuracy",
    "## Ranking quality",
    "## Speed against cuSPARSE",
    "## Skipped and failed configurations",
];

/// Every section present, in order, and every linked SVG present and an SVG document.
fn check_report(out: &Path) -> String {
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let mut at = 0;
    for s in SECTIONS {
        let i = md[at..]
            .find(s)
            .unwrap_or_else(|| panic!("report.md lacks '{s}' after byte {at}"));
        at += i + s.len();
    }
    let mut svgs = 0;
    for part in md.split("](").skip(1) {
        let link = &part[..part.find(')').unwrap()];
        if !link.ends_with(".svg") {
            continue;
        }
        let text = std::fs::read_to_string(out.join(link))
            .unwrap_or_else(|e| panic!("{link} is linked but unreadable: {e}"));
        let head = text.trim_start();
        assert!(
            head.starts_with("<svg") || head.starts_with("<?xml"),
            "{link} is not an SVG document"
        );
        assert!(text.trim_end().ends_with("</svg>"), "{link} is cut short");
        svgs += 1;
    }
    assert!(
        svgs >= 3,
        "expected bar, CDF and ranking plots, found {svgs}"
    );
    md
}

#[test]
fn evaluate_cpu_tiny_corpus_report_and_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = tmp.path().join("tiny");
    std::fs::create_dir(&corpus).unwrap();
    for f in ["Roget.mtx.gz", "bcsstk09.mtx.gz", "west2021.mtx.gz"] {
        std::fs::copy(data(f), corpus.join(f)).unwrap();
    }
    // A broken file must be recorded as skipped, with the reason, never dropped. (Padded with
    // comments so that it is the largest file: the small set expands the smallest one.)
    let mut broken = "%%MatrixMarket matrix coordinate real general\n".to_string();
    broken.push_str(&"% padding\n".repeat(8_000));
    broken.push_str("3 3 2\n1 1 1.0\n");
    std::fs::write(corpus.join("broken.mtx"), broken).unwrap();
    let profile = tmp.path().join("cpu.json");
    ok(bin()
        .args(["instrument", "--backend", "cpu", "--quick", "--out"])
        .arg(&profile));
    let out = tmp.path().join("eval");
    let evaluate = |runs: &str| {
        let mut c = bin();
        c.args(["evaluate", "--backend", "cpu", "--generated", "small"])
            .args(["--runs", runs, "--warmup", "1", "--corpus"])
            .arg(&corpus)
            .arg("--profile")
            .arg(&profile)
            .arg("--out")
            .arg(&out);
        c
    };

    // First run.
    evaluated_but_broken(&mut evaluate("3"));
    let results = out.join("results.jsonl");
    let recs = lines(&results);
    // The CPU backend runs every kernel of ours (no cuSPARSE), and the optimizer's plan.
    let configs = Variant::ours().len() + 1;
    let matrices = 4 + 3; // 4 files + stencil, power law, Kronecker
    assert_eq!(recs.len(), matrices * 2 * configs);
    let keys: HashSet<(String, String, String)> = recs
        .iter()
        .map(|r| {
            (
                r["matrix"].as_str().unwrap().to_string(),
                r["precision"].as_str().unwrap().to_string(),
                r["config"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        keys.len(),
        recs.len(),
        "one record per matrix × precision × configuration"
    );
    let mut predicted = 0;
    for r in &recs {
        assert_eq!(r["schema"], 1);
        assert_eq!(r["backend"], "cpu");
        assert_eq!(
            (r["runs"].as_u64(), r["warmup"].as_u64()),
            (Some(3), Some(1))
        );
        let m = r["matrix"].as_str().unwrap();
        match r["status"].as_str().unwrap() {
            "ok" => {
                let (med, mean) = (
                    r["median_s"].as_f64().unwrap(),
                    r["warm_mean_s"].as_f64().unwrap(),
                );
                assert!(med > 0.0 && mean > 0.0, "{r}");
                assert!(r["max_rel_error"].as_f64().unwrap() <= 1e-4);
                assert!(r["features"]["nnz"].as_u64().unwrap() > 0);
            }
            "skipped" => assert!(!r["reason"].as_str().unwrap().is_empty(), "{r}"),
            other => panic!("{m} {}: status {other}: {}", r["config"], r["reason"]),
        }
        if m == "tiny/broken.mtx" {
            assert_eq!(r["status"], "skipped");
            let reason = r["reason"].as_str().unwrap();
            assert!(
                reason.contains("cannot build the matrix") && reason.contains("broken.mtx"),
                "{reason}"
            );
            assert!(r["features"].is_null());
        }
        // The analytical model predicts exactly the kernels it covers, and its plan.
        let config = r["config"].as_str().unwrap();
        let covered = ["csr-vector", "ell", "coo", "hyb", "plan-analytical"].contains(&config);
        if config == "plan-analytical" && m != "tiny/broken.mtx" {
            assert_eq!(r["kind"], "plan");
            let blocks = r["plan"]["blocks"].as_array().unwrap();
            let rows = r["features"]["nrows"].as_u64().unwrap();
            assert_eq!(blocks.first().unwrap()["row_start"], 0);
            assert_eq!(
                blocks.last().unwrap()["row_end"].as_u64(),
                Some(rows),
                "{r}"
            );
        }
        let has = r["predictions"].get("analytical").is_some();
        if m != "tiny/broken.mtx" {
            assert_eq!(covered, has, "{r}");
        }
        if r["status"] == "ok" && has {
            assert!(r["predictions"]["analytical"]["seconds"].as_f64().unwrap() > 0.0);
            predicted += 1;
        }
    }
    assert!(
        predicted >= 6 * 2 * 4 - 4,
        "only {predicted} predicted measurements"
    );
    let ids: HashSet<&str> = recs.iter().map(|r| r["matrix"].as_str().unwrap()).collect();
    for id in [
        "gen/stencil3d27-12",
        "gen/powerlaw-4000-m8-g2.5-s1",
        "gen/kron-Roget-to4e4",
        "tiny/bcsstk09.mtx.gz",
    ] {
        assert!(ids.contains(id), "{id} missing from {ids:?}");
    }
    let md = check_report(&out);
    assert!(md.contains("### Model `analytical`"));
    assert!(md.contains("| analytical | f64 |"), "ranking row");
    assert!(md.contains("No cuSPARSE measurements"));
    assert!(md.contains("cannot build the matrix"));
    let original = std::fs::read(&results).unwrap();

    // Killed while writing the last record: cut it in the middle; the re-run measures exactly
    // that record again and keeps every other byte.
    let last_start = original[..original.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    let cut = last_start + (original.len() - last_start) / 2;
    std::fs::write(&results, &original[..cut]).unwrap();
    let log = evaluated_but_broken(&mut evaluate("3"));
    assert!(log.contains("the last line is incomplete"), "{log}");
    assert!(
        log.contains(&format!(
            "({} kept from before, 1 measured now)",
            recs.len() - 1
        )),
        "{log}"
    );
    let resumed = std::fs::read(&results).unwrap();
    assert_eq!(
        &resumed[..last_start],
        &original[..last_start],
        "finished records are kept as they were"
    );
    let again = lines(&results);
    assert_eq!(again.len(), recs.len());
    assert_eq!(
        (
            &again.last().unwrap()["matrix"],
            &again.last().unwrap()["config"],
            &again.last().unwrap()["precision"]
        ),
        (
            &recs.last().unwrap()["matrix"],
            &recs.last().unwrap()["config"],
            &recs.last().unwrap()["precision"]
        )
    );

    // A finished evaluation measures nothing more.
    let log = evaluated_but_broken(&mut evaluate("3"));
    assert!(log.contains("0 measured now"), "{log}");
    assert_eq!(std::fs::read(&results).unwrap(), resumed);
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run.json")).unwrap()).unwrap();
    assert_eq!(info["invocations"].as_array().unwrap().len(), 3);

    // A configuration recorded as failed (a backend error) is measured again with
    // --retry-failed, and only then; its new record replaces the old one.
    let text = String::from_utf8(resumed.clone()).unwrap();
    let mut ls: Vec<String> = text.lines().map(str::to_string).collect();
    let victim = ls
        .iter()
        .position(|l| l.contains("\"config\":\"coo\"") && l.contains("\"status\":\"ok\""))
        .unwrap();
    ls[victim] = ls[victim].replace("\"status\":\"ok\"", "\"status\":\"failed\"");
    std::fs::write(&results, ls.join("\n") + "\n").unwrap();
    let log = evaluated_but_broken(&mut evaluate("3"));
    assert!(
        log.contains("0 measured now"),
        "not retried by default: {log}"
    );
    let log = evaluated_but_broken(evaluate("3").arg("--retry-failed"));
    assert!(
        log.contains(&format!(
            "{} records ({} kept from before, 1 measured now)",
            recs.len(),
            recs.len() - 1
        )),
        "{log}"
    );
    let after = lines(&results);
    assert_eq!(after.len(), recs.len() + 1, "appended, never rewritten");
    let (old, new) = (&after[victim], after.last().unwrap());
    assert_eq!(
        (&old["matrix"], &old["precision"], &old["config"]),
        (&new["matrix"], &new["precision"], &new["config"])
    );
    assert_eq!(new["status"], "ok");
    let md = check_report(&out);
    assert!(
        !md.contains("| failed |"),
        "the retried record replaced the failed one"
    );

    // The broken file is fixed (still the largest, so the generated set stays the same): its
    // matrix is read and measured again, its records replace the old ones (the file is
    // rewritten, one record per configuration), and the command succeeds.
    let mut fixed = "%%MatrixMarket matrix coordinate real general\n".to_string();
    fixed.push_str(&"% padding\n".repeat(8_001));
    fixed.push_str("3 3 2\n1 1 1.0\n3 2 -2.0\n");
    std::fs::write(corpus.join("broken.mtx"), fixed).unwrap();
    let log = ok(&mut evaluate("3"));
    assert!(
        log.contains("tiny/broken.mtx: the file changed since it was measured"),
        "{log}"
    );
    assert!(
        log.contains(&format!(
            "{} records ({} kept from before, {} measured now)",
            recs.len(),
            recs.len() - 2 * configs,
            2 * configs
        )),
        "{log}"
    );
    let now = lines(&results);
    assert_eq!(now.len(), recs.len(), "one record per configuration");
    let broken: Vec<_> = now
        .iter()
        .filter(|r| r["matrix"] == "tiny/broken.mtx")
        .collect();
    assert_eq!(broken.len(), 2 * configs);
    assert!(broken
        .iter()
        .all(|r| !r["reason"].as_str().unwrap_or("").contains("cannot build")));
    assert!(broken.iter().any(|r| r["status"] == "ok"));
    assert!(
        ok(&mut evaluate("3")).contains("0 measured now"),
        "measured once"
    );

    // Other settings are refused rather than mixed in.
    let o = run(&mut evaluate("4"));
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("use another --out"));

    // The report from results.jsonl alone.
    for f in std::fs::read_dir(&out).unwrap() {
        let p = f.unwrap().path();
        if p.file_name().unwrap() != "results.jsonl" {
            std::fs::remove_file(p).unwrap();
        }
    }
    ok(bin().args(["evaluate", "--report-only", "--out"]).arg(&out));
    check_report(&out);
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = run(bin()
        .args(["evaluate", "--report-only", "--out"])
        .arg(&empty));
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no results"));
}

/// A temporary directory holding a corpus `one/` of one small real matrix.
fn one_matrix_corpus() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let corpus = tmp.path().join("one");
    std::fs::create_dir(&corpus).unwrap();
    std::fs::copy(data("bcsstk09.mtx.gz"), corpus.join("bcsstk09.mtx.gz")).unwrap();
    (tmp, corpus)
}

/// `evaluate --corpus D --out O` as a new user types it: the default backend (cpu) with the
/// profile built into the binary (a GPU's) measures without predictions, saying so.
#[test]
fn evaluate_defaults_measure_with_the_embedded_profile_of_another_backend() {
    let (tmp, corpus) = one_matrix_corpus();
    let out = tmp.path().join("eval");
    let log = ok(bin()
        .args([
            "evaluate",
            "--precision",
            "f64",
            "--runs",
            "2",
            "--warmup",
            "1",
        ])
        .arg("--corpus")
        .arg(&corpus)
        .arg("--out")
        .arg(&out));
    assert!(
        log.contains("measured with the cuda backend") && log.contains("without predictions"),
        "{log}"
    );
    let recs = lines(&out.join("results.jsonl"));
    assert!(recs.iter().any(|r| r["status"] == "ok"));
    assert!(recs
        .iter()
        .all(|r| r["predictions"].as_object().unwrap().is_empty()));
}

/// A run that fails before measuring anything leaves no output directory behind.
#[test]
fn a_failed_evaluate_leaves_no_empty_output_directory() {
    let (tmp, corpus) = one_matrix_corpus();
    let out = tmp.path().join("eval");
    // A profile of another backend, given explicitly, is refused.
    let o = run(bin()
        .args(["evaluate", "--backend", "cpu", "--corpus"])
        .arg(&corpus)
        .arg("--profile")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/h200.json.gz"))
        .arg("--out")
        .arg(&out));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success());
    assert!(err.contains("measured with the cuda backend"), "{err}");
    assert!(!out.exists(), "{} was left behind", out.display());
    // So is a corpus with nothing to read.
    let o = run(bin()
        .args(["evaluate", "--no-profile", "--corpus"])
        .arg(tmp.path().join("missing"))
        .arg("--out")
        .arg(&out));
    assert!(!o.status.success());
    assert!(!out.exists(), "{} was left behind", out.display());
}
