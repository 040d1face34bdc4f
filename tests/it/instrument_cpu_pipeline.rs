//! The whole instrument → fit → predict pipeline on the CPU backend at small sizes, through the
//! command line, as CI runs it.

use crate::common::{bin, run_ok};
use sparsecast::instrument::{plan, DeviceLimits, SuiteConfig};
use sparsecast::profile::Profile;
use sparsecast::Precision;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A matrix shipped in the repository.
fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name)
}

fn run_err(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run sparsecast");
    assert!(!out.status.success(), "{cmd:?} should have failed");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn instrument_fit_predict_measure_on_the_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let prof = dir.path().join("cpu.json");
    run_ok(
        bin()
            .args(["instrument", "--backend", "cpu", "--quick", "--out"])
            .arg(&prof),
    );

    // The profile is valid, of the CPU backend, and holds every planned benchmark.
    let p = Profile::load(&prof).unwrap();
    p.check_backend("cpu").unwrap();
    assert_eq!(p.suite, SuiteConfig::quick());
    for precision in [Precision::F32, Precision::F64] {
        let s = p.precision(precision).unwrap();
        let planned = plan(
            &DeviceLimits::cpu(precision),
            &SuiteConfig::quick(),
            precision,
        )
        .unwrap();
        assert_eq!(s.measurements.len(), planned.points.len());
        assert!(s
            .measurements
            .iter()
            .all(|m| m.samples.len() == p.timing.runs));
    }

    // --bounds-only re-measures the bounds of the base and keeps everything else.
    let fresh = dir.path().join("bounds.json");
    let out = run_ok(
        bin()
            .args([
                "instrument",
                "--backend",
                "cpu",
                "--quick",
                "--bounds-only",
                "--base",
            ])
            .arg(&prof)
            .arg("--out")
            .arg(&fresh),
    );
    assert!(out.contains("bounds only"), "{out}");
    let q = Profile::load(&fresh).unwrap();
    for (a, b) in p.precisions.iter().zip(&q.precisions) {
        assert_eq!(a.models, b.models);
        assert_eq!(a.measurements, b.measurements);
        let nb = b.bounds.as_ref().expect("bounds measured");
        // Raised by the base's own benchmarks: none of them is outside the new bounds.
        for m in &b.measurements {
            assert!(m.time(b.statistic) >= nb.launch_floor_s);
        }
        assert_eq!(
            nb.l2_read_gbs, None,
            "the CPU backend has no L2 read benchmark"
        );
    }
    // Another device's profile is refused, and nothing is written.
    let mut other: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&prof).unwrap()).unwrap();
    other["device_name"] = "Some Other Device".into();
    let other_path = dir.path().join("other.json");
    std::fs::write(&other_path, other.to_string()).unwrap();
    let never = dir.path().join("never.json");
    let e = run_err(
        bin()
            .args([
                "instrument",
                "--backend",
                "cpu",
                "--quick",
                "--bounds-only",
                "--base",
            ])
            .arg(&other_path)
            .arg("--out")
            .arg(&never),
    );
    assert!(e.contains("Some Other Device"), "{e}");
    assert!(!never.exists());

    // Predict and measure two real matrices in both precisions.
    let out = run_ok(
        bin()
            .args([
                "predict",
                "--json",
                "--measure",
                "--runs",
                "6",
                "--warmup",
                "1",
                "--models",
                "analytical",
                "--profile",
            ])
            .arg(&prof)
            .arg(data("bcsstk09.mtx.gz"))
            .arg(data("west2021.mtx.gz")),
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["backend"], "cpu");
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 4, "2 matrices × 2 precisions");
    for r in results {
        let kernels = r["kernels"].as_array().unwrap();
        let names: Vec<&str> = kernels
            .iter()
            .map(|k| k["variant"].as_str().unwrap())
            .collect();
        for want in ["csr-vector", "ell", "coo", "hyb"] {
            assert!(names.contains(&want), "{names:?}");
        }
        let mut prev = 0.0;
        for (i, k) in kernels.iter().enumerate() {
            if k["seconds"].is_null() {
                continue; // refused (e.g. ELL too wide) — must come last
            }
            let t = k["seconds"].as_f64().unwrap();
            assert!(t > 0.0 && t >= prev, "ranked by time");
            prev = t;
            assert_eq!(k["rank"].as_u64(), Some(i as u64 + 1));
            if let Some(m) = k["measured_seconds"].as_f64() {
                let d = k["difference_rate"].as_f64().unwrap();
                assert!(m > 0.0 && ((t - m).abs() / m - d).abs() < 1e-12);
            } else {
                assert!(k["measure_error"].is_string(), "{k}");
            }
        }
        assert!(r["predict_seconds"].as_f64().unwrap() < 1e-3);
    }
    let summary = v["summary"].as_array().unwrap();
    assert!(summary
        .iter()
        .any(|s| s["variant"] == "csr-vector" && s["count"] == 2));

    // The table output names the recommendation first.
    let table = run_ok(
        bin()
            .args(["predict", "--precision", "f64", "--models", "analytical"])
            .arg("--profile")
            .arg(&prof)
            .arg(data("bcsstk09.mtx.gz")),
    );
    assert!(
        table.contains("bcsstk09.mtx.gz") && table.contains("time sparsecast took"),
        "{table}"
    );
    // The footer is the tool's own time, not a predicted SpMV time; counts are in the number.
    assert!(!table.contains("prediction:"), "{table}");
    assert!(
        table.contains("to predict 4 kernels") && !table.contains(" 1 strips"),
        "{table}"
    );

    // The statistical models of the same run predict and are measured beside the analytical
    // one: their four kernels each, ranked per model, with a difference rate.
    let stat = statistical_models_predict_and_measure(&prof);
    assert_eq!(
        stat,
        2 * 2 * 4,
        "2 models × 2 precisions × 4 kernels measured"
    );

    // A CPU profile is not checked against CUDA measurements: the command says so (and then
    // measures on a GPU, or fails for want of one).
    let out = bin()
        .args(["predict", "--measure", "--backend", "cuda", "--profile"])
        .arg(&prof)
        .arg(data("bcsstk09.mtx.gz"))
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("measured with the cpu backend"), "{e}");
    assert!(out.status.success() || e.contains("no CUDA device"), "{e}");
}

/// `predict --measure` with every model of a CPU profile on one real matrix: both statistical
/// models predict csr-t16, csr-scalar, ell and jad, each model ranked on its own, and the summary
/// holds a difference rate per model and kernel. Returns the statistical predictions measured.
fn statistical_models_predict_and_measure(prof: &Path) -> usize {
    let out = run_ok(
        bin()
            .args([
                "predict",
                "--json",
                "--measure",
                "--runs",
                "4",
                "--warmup",
                "1",
            ])
            .arg("--profile")
            .arg(prof)
            .arg(data("bcsstk09.mtx.gz")),
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mut measured = 0;
    for r in v["results"].as_array().unwrap() {
        let kernels = r["kernels"].as_array().unwrap();
        for model in ["analytical", "statistical-normal", "statistical-uniform"] {
            let of: Vec<&serde_json::Value> =
                kernels.iter().filter(|k| k["model"] == model).collect();
            let names: Vec<&str> = of.iter().map(|k| k["variant"].as_str().unwrap()).collect();
            if model == "analytical" {
                assert!(names.contains(&"csr-vector"), "{names:?}");
                continue;
            }
            let mut sorted = names.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, ["csr-scalar", "csr-t16", "ell", "jad"], "{model}");
            let mut ranks: Vec<u64> = of.iter().filter_map(|k| k["rank"].as_u64()).collect();
            ranks.sort_unstable();
            assert_eq!(ranks, [1, 2, 3, 4], "{model}: ranked on its own");
            for k in of {
                let t = k["seconds"].as_f64().unwrap();
                let m = k["measured_seconds"].as_f64().unwrap();
                let d = k["difference_rate"].as_f64().unwrap();
                assert!(t > 0.0 && ((t - m).abs() / m - d).abs() < 1e-12, "{k}");
                measured += 1;
            }
        }
    }
    let summary = v["summary"].as_array().unwrap();
    for model in ["statistical-normal", "statistical-uniform"] {
        assert!(
            summary
                .iter()
                .any(|s| s["model"] == model && s["variant"] == "jad"),
            "{model}: {summary:?}"
        );
    }
    measured
}

/// The README's `predict FILE --measure --backend cpu` with the embedded (CUDA) profile measures
/// on the CPU, says the predictions are another device's, and gives no difference rate.
#[test]
fn predict_measures_on_another_backend_than_the_profile_s() {
    let out = bin()
        .args(["predict", "--measure", "--backend", "cpu", "--json"])
        .args(["--precision", "f64", "--runs", "3", "--warmup", "1"])
        .arg(data("bcsstk09.mtx.gz"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("measured with the cuda backend") && err.contains("without a difference rate"),
        "{err}"
    );
    // The profile is announced once.
    assert_eq!(err.matches("profile:").count(), 1, "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let kernels = v["results"][0]["kernels"].as_array().unwrap();
    assert!(kernels
        .iter()
        .any(|k| k["measured_seconds"].as_f64().is_some()));
    assert!(kernels.iter().all(|k| k["difference_rate"].is_null()));
    assert!(v["summary"].as_array().unwrap().is_empty());
}

/// `predict --tune N --json` of a shipped matrix on the CPU backend, f64, 3 runs.
fn predict_tune_json(n: &str, matrix: &str) -> serde_json::Value {
    let out = run_ok(
        bin()
            .args(["predict", "--tune", n, "--backend", "cpu", "--json"])
            .args(["--precision", "f64", "--runs", "3", "--warmup", "1"])
            .arg(data(matrix)),
    );
    serde_json::from_str(&out).unwrap()
}

/// The tuned pick's second step times every other block size of the fastest measured
/// configuration of ours: with `--tune 1` on west2021 (predicted fastest `csr-t4` or one of its
/// block sizes, the only one of ours in the shortlist), all three block sizes of `csr-t4` are
/// timed, and nothing else of ours.
#[test]
fn predict_tune_times_the_block_sizes_of_its_fastest_measured() {
    let v = predict_tune_json("1", "west2021.mtx.gz");
    let timed: Vec<String> = v["results"][0]["tuned"][0]["timed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t[0].as_str().unwrap().to_string())
        .filter(|n| !n.starts_with("cusparse"))
        .collect();
    let top = timed[0].split('@').next().unwrap().to_string();
    assert_eq!(timed.len(), 3, "{timed:?}");
    assert!(
        timed
            .iter()
            .all(|n| n.split('@').next() == Some(top.as_str())),
        "{timed:?}"
    );
}

/// `predict --tune N` times only the model's shortlist — the N predicted fastest and the
/// predicted-fastest cuSPARSE algorithm — and its second step (the other block sizes of the
/// fastest measured of ours among them), and recommends the fastest measured of them.
#[test]
fn predict_tune_times_only_the_shortlist_and_recommends_its_fastest() {
    let v = predict_tune_json("2", "bcsstk09.mtx.gz");
    let r = &v["results"][0];
    let kernels = r["kernels"].as_array().unwrap();
    let name = |k: &serde_json::Value| k["variant"].as_str().unwrap().to_string();
    // The shortlist from the predictions (kernels are ranked fastest first).
    let predicted: Vec<&serde_json::Value> =
        kernels.iter().filter(|k| k["seconds"].is_f64()).collect();
    let mut want: Vec<String> = predicted.iter().take(2).map(|k| name(k)).collect();
    let vendor = predicted
        .iter()
        .map(|k| name(k))
        .find(|n| n.starts_with("cusparse"))
        .expect("the embedded profile predicts cuSPARSE");
    if !want.contains(&vendor) {
        want.push(vendor);
    }
    // The second step: the other block sizes (`@N`) of the fastest measured of ours among them.
    let measured = |n: &String| {
        kernels
            .iter()
            .find(|k| name(k) == *n)
            .and_then(|k| k["measured_seconds"].as_f64())
    };
    let top = want
        .iter()
        .filter(|n| !n.starts_with("cusparse"))
        .filter_map(|n| measured(n).map(|t| (t, n.clone())))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .expect("one of ours measured")
        .1;
    let base = |n: &str| n.split('@').next().unwrap().to_string();
    for k in &predicted {
        if base(&name(k)) == base(&top) && !want.contains(&name(k)) {
            want.push(name(k));
        }
    }
    // Exactly the shortlist and its second step were run (cuSPARSE fails on the CPU backend: an
    // error, not a time).
    let ran: Vec<String> = kernels
        .iter()
        .filter(|k| !k["measured_seconds"].is_null() || !k["measure_error"].is_null())
        .map(name)
        .collect();
    let sorted = |v: &[String]| {
        let mut v = v.to_vec();
        v.sort();
        v
    };
    assert_eq!(sorted(&ran), sorted(&want), "{kernels:?}");
    let tuned = &r["tuned"][0];
    assert_eq!(tuned["model"], "sparsecast");
    let timed: Vec<String> = tuned["timed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t[0].as_str().unwrap().to_string())
        .collect();
    assert_eq!(timed, want);
    // The recommendation is the fastest measured of them.
    let fastest = kernels
        .iter()
        .filter_map(|k| k["measured_seconds"].as_f64().map(|m| (m, name(k))))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .unwrap();
    assert_eq!(tuned["recommendation"].as_str().unwrap(), fastest.1);
    assert_eq!(tuned["measured_seconds"].as_f64().unwrap(), fastest.0);

    // The table says it; --tune and --measure exclude each other.
    let table = run_ok(
        bin()
            .args([
                "predict",
                "--tune",
                "--backend",
                "cpu",
                "--precision",
                "f32",
            ])
            .args(["--runs", "3", "--warmup", "1"])
            .arg(data("bcsstk09.mtx.gz")),
    );
    assert!(
        table.contains("tuned recommendation (sparsecast): ") && table.contains("timed:"),
        "{table}"
    );
    let e = run_err(
        bin()
            .args(["predict", "--tune", "--measure"])
            .arg(data("bcsstk09.mtx.gz")),
    );
    assert!(e.contains("--measure"), "{e}");
    let e = run_err(
        bin()
            .args(["predict", "--tune", "0", "--backend", "cpu"])
            .arg(data("bcsstk09.mtx.gz")),
    );
    assert!(e.contains("--tune 0"), "{e}");
}

/// A recommendation too close to call (configurations within its uncertainty) points to
/// `--tune`; one that is not, does not; and not once something was timed. Which of the four
/// shipped matrices are ties depends on the profile (with session 29's H200 profile: cage11 and
/// west2021, not Roget or bcsstk09; with session 72's all of them), so both cases are asked for
/// among them and a matrix of no close call ([`crate::common::clear_call_matrix`]).
#[test]
fn a_tie_within_the_uncertainty_points_to_tune() {
    let predict = |m: &Path, precision: &str, extra: &[&str]| {
        run_ok(
            bin()
                .args(["predict", "--precision", precision, "--gpu", "h200"])
                .args(extra)
                .arg(m),
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let mut inputs: Vec<PathBuf> = [
        "cage11.mtx.gz",
        "Roget.mtx.gz",
        "bcsstk09.mtx.gz",
        "west2021.mtx.gz",
    ]
    .map(data)
    .to_vec();
    inputs.push(crate::common::clear_call_matrix(dir.path()));
    let mut ties = Vec::new();
    for m in &inputs {
        for precision in ["f32", "f64"] {
            let out = predict(m, precision, &[]);
            let tie = out.contains("within its uncertainty");
            assert_eq!(
                tie,
                out.contains(&format!(
                    "`--tune` on the device times the {} predicted-fastest",
                    sparsecast::model::SHORTLIST
                )),
                "{out}"
            );
            if !tie {
                assert!(!out.contains("--tune"), "{out}");
            }
            ties.push(tie);
        }
    }
    assert!(
        ties.iter().any(|&t| t) && ties.iter().any(|&t| !t),
        "both a tie and a clear recommendation among the inputs: {ties:?}"
    );
    let out = predict(&inputs[0], "f32", &["--tune", "1", "--backend", "cpu"]);
    assert!(out.contains("tuned recommendation"), "{out}");
    assert!(!out.contains("`--tune` on the device"), "{out}");
}

#[test]
fn predict_without_profile_uses_the_embedded_h200_profile_and_says_so() {
    let name = sparsecast::profile::embedded()[0].name;
    let out = bin()
        .arg("predict")
        .arg(data("bcsstk09.mtx.gz"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        all.contains(name),
        "the output does not name the embedded profile: {all}"
    );
    assert!(all.contains("NVIDIA H200"), "{all}");
}

#[test]
fn predict_reports_the_readable_inputs_and_fails_on_an_unreadable_one() {
    let dir = tempfile::tempdir().unwrap();
    let bad = crate::common::short_matrix(dir.path());
    let out = bin()
        .args(["predict", "--precision", "f64", "--json"])
        .arg(data("bcsstk09.mtx.gz"))
        .arg(&bad)
        .output()
        .unwrap();
    assert!(
        !out.status.success(),
        "an unreadable input must fail the command"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("1 of 2 input(s) could not be read") && stderr.contains("short.mtx:4"),
        "{stderr}"
    );
    // The readable input was still predicted, and the JSON names the skipped one.
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["results"].as_array().unwrap().len(), 1);
    assert_eq!(v["skipped"].as_array().unwrap().len(), 1);
}

#[test]
fn instrument_rejects_bad_suites() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.json");
    let e = run_err(
        bin()
            .args([
                "instrument",
                "--backend",
                "cpu",
                "--quick",
                "--strips",
                "3,2",
                "--out",
            ])
            .arg(&out),
    );
    assert!(e.contains("strictly increasing"), "{e}");
    let e = run_err(
        bin()
            .args([
                "instrument",
                "--backend",
                "cpu",
                "--quick",
                "--runs",
                "3",
                "--warmup",
                "3",
                "--out",
            ])
            .arg(&out),
    );
    assert!(e.contains("warm-up"), "{e}");
    assert!(!out.exists(), "nothing written on failure");
}

#[test]
fn predict_accepts_generator_specs() {
    let dir = tempfile::tempdir().unwrap();
    let prof = dir.path().join("cpu.json");
    run_ok(
        bin()
            .args([
                "instrument",
                "--backend",
                "cpu",
                "--quick",
                "--precision",
                "f64",
                "--out",
            ])
            .arg(&prof),
    );
    let specs = dir.path().join("specs.json");
    std::fs::write(
        &specs,
        r#"[{"family": "stencil", "stencil": "2d5", "n": 30},
            {"family": "random", "rows": 500, "cols": 800,
             "row_len": {"dist": "uniform", "min": 1, "max": 9}, "seed": 3}]"#,
    )
    .unwrap();
    let out = run_ok(
        bin()
            .args(["predict", "--json", "--profile"])
            .arg(&prof)
            .arg(&specs),
    );
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["nrows"], 900);
    assert_eq!(
        (results[1]["nrows"].as_u64(), results[1]["ncols"].as_u64()),
        (Some(500), Some(800))
    );
    // A broken spec file is an error with its line.
    std::fs::write(&specs, "[{\"family\": \"nope\"}]").unwrap();
    let e = run_err(bin().args(["predict", "--profile"]).arg(&prof).arg(&specs));
    assert!(
        e.contains("specs.json:1") && e.contains("generator spec"),
        "{e}"
    );
}

#[test]
fn the_documented_large_matrix_set_parses() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/accuracy-generated.json");
    let specs: Vec<sparsecast::matrix::generate::GeneratorSpec> =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(specs.len(), 10);
    let mut names: Vec<String> = specs.iter().map(|s| s.name()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 10);
}
