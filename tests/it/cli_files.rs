//! What a user meets at the command line around files and arguments: `--out` everywhere (and
//! `-` for standard output), interrupted writers that clean up, output checked before long work,
//! errors that name the user's path once, argument errors instead of skipped rows.

use crate::common::bin;
use std::path::Path;
use std::process::Output;

fn data(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data")
        .join(name)
        .display()
        .to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Files in `dir` whose name starts with `.` (temporary files of an atomic write), with their
/// sizes.
fn hidden_files(dir: &Path) -> Vec<(String, u64)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            let len = e.metadata().map_or(0, |m| m.len());
            (e.file_name().to_string_lossy().into_owned(), len)
        })
        .filter(|(n, _)| n.starts_with('.'))
        .collect()
}

#[test]
fn generate_accepts_out_its_old_names_and_standard_output() {
    let dir = tempfile::tempdir().unwrap();
    for flag in ["--out", "-o", "--output"] {
        let p = dir.path().join(format!("band{flag}.mtx"));
        let o = bin()
            .args([
                "generate",
                "banded",
                "--n",
                "12",
                "--half-bandwidth",
                "1",
                flag,
            ])
            .arg(&p)
            .output()
            .unwrap();
        assert!(o.status.success(), "{flag}: {}", stderr(&o));
        let m = sparsecast::matrix::mm::read::<f64>(&p).unwrap();
        assert_eq!(m.nnz(), 34, "{flag}");
    }
    // The other commands that write a file take `--out` too.
    let plan_report = dir.path().join("report.json");
    let o = bin()
        .args(["optimize", &data("bcsstk09.mtx.gz"), "--out"])
        .arg(&plan_report)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan_report).unwrap()).unwrap();
    assert_eq!(v["results"].as_array().unwrap().len(), 1);
    let cases = dir.path().join("cases.json");
    let o = bin()
        .args([
            "selftest",
            "--backend",
            "cpu",
            "--formats",
            "csr-scalar",
            "--out",
        ])
        .arg(&cases)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cases).unwrap()).unwrap();
    assert!(!v.as_array().unwrap().is_empty());
    // `--out -`: the matrix on stdout, the summary on stderr.
    let o = bin()
        .args(["generate", "banded", "--n", "12", "--half-bandwidth", "1"])
        .args(["--out", "-"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.starts_with(b"%%MatrixMarket"));
    assert!(stderr(&o).contains("12 rows"), "{}", stderr(&o));
    let m = sparsecast::matrix::mm::read_bytes::<f64>("stdout", &o.stdout).unwrap();
    assert_eq!(m.0.nnz(), 34);
    assert!(hidden_files(Path::new("."))
        .iter()
        .all(|(n, _)| !n.starts_with(".sparsecast-")));
}

/// Ctrl-C while `generate` writes leaves no hidden temporary file (and no output) behind.
#[cfg(unix)]
#[test]
fn an_interrupted_generate_removes_its_temporary_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("big.mtx");
    // About 3.4 million non-zeros: several seconds of writing in a test build.
    let mut child = bin()
        .args([
            "generate", "stencil", "--points", "27", "--n", "50", "--out",
        ])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let mut seen = false;
    while start.elapsed() < std::time::Duration::from_secs(60) {
        // Writing has begun (the output check's empty probe file does not count).
        if hidden_files(dir.path()).iter().any(|(_, len)| *len > 0) {
            seen = true;
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    assert!(
        seen,
        "the temporary file never appeared (the write was too fast?)"
    );
    // SAFETY: signalling our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let o = child.wait_with_output().unwrap();
    assert!(!o.status.success(), "interrupted, yet it succeeded");
    assert_eq!(hidden_files(dir.path()), vec![], "{}", stderr(&o));
    assert!(!out.exists(), "a partial output was left behind");
}

#[test]
fn instrument_checks_its_output_before_measuring() {
    let start = std::time::Instant::now();
    let o = bin()
        .args([
            "instrument",
            "--backend",
            "cpu",
            "--out",
            "/nonexistent/dir/x.json",
        ])
        .output()
        .unwrap();
    let e = stderr(&o);
    assert!(!o.status.success());
    assert!(
        e.contains("/nonexistent/dir/x.json") && e.contains("No such file"),
        "{e}"
    );
    // Said once, and no temporary file named.
    assert_eq!(e.matches("No such file").count(), 1, "{e}");
    assert!(!e.contains(".sparsecast-") && !e.contains(".tmp"), "{e}");
    // Failed at once rather than after the whole suite (which takes minutes).
    assert!(start.elapsed().as_secs() < 20, "took {:?}", start.elapsed());
}

#[test]
fn a_file_that_is_not_json_is_not_a_plan_or_a_profile() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, [0x1f, 0x8b, 0x08, 0x00, 0xff, 0xfe, 0x00]).unwrap();
    let o = bin()
        .args(["spmv", &data("bcsstk09.mtx.gz"), "--plan"])
        .arg(&junk)
        .args(["--out", "-"])
        .output()
        .unwrap();
    let e = stderr(&o);
    assert!(!o.status.success());
    assert!(e.contains("not a sparsecast plan"), "{e}");
    assert!(!e.contains("UTF-8"), "{e}");
    let o = bin()
        .args(["predict", &data("bcsstk09.mtx.gz"), "--profile"])
        .arg(&junk)
        .output()
        .unwrap();
    let e = stderr(&o);
    assert!(!o.status.success());
    assert!(e.contains("not a sparsecast profile"), "{e}");
    assert_eq!(e.lines().count(), 1, "{e}");
}

#[test]
fn zero_block_sizes_are_argument_errors() {
    for flag in ["--bsr-block", "--sell-c"] {
        let o = bin()
            .args(["bench", &data("bcsstk09.mtx.gz"), flag, "0"])
            .output()
            .unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{flag}: {e}");
        assert!(e.contains(flag) && e.contains("0"), "{e}");
    }
}

#[test]
fn selftest_that_tested_nothing_fails() {
    if sparsecast::backend::cuda::CudaBackend::new(0).is_ok() {
        // With a GPU the self-test runs for real (tests/it/cuda_backend.rs covers it).
        return;
    }
    let o = bin().arg("selftest").output().unwrap();
    let all = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(!o.status.success(), "{all}");
    assert!(all.contains("nothing was tested"), "{all}");
}

#[test]
fn optimize_json_prints_the_report_when_its_one_input_fails() {
    let dir = tempfile::tempdir().unwrap();
    let bad = crate::common::short_matrix(dir.path());
    let o = bin()
        .args(["optimize", "--json"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: stdout {:?}", String::from_utf8_lossy(&o.stdout)));
    assert_eq!(v["results"].as_array().unwrap().len(), 0);
    let failed = v["failed"].as_array().unwrap();
    assert_eq!(failed.len(), 1);
    assert!(
        failed[0]["error"].as_str().unwrap().contains("short.mtx:4"),
        "{v}"
    );
}

/// NaN and ±Inf in the matrix give y entries of the same class as the reference's: not a
/// mismatch. A random x is written beside y, so y can be checked elsewhere.
#[test]
fn spmv_compares_non_finite_values_by_class_and_saves_x() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.mtx");
    std::fs::write(
        &a,
        "%%MatrixMarket matrix coordinate real general\n3 3 4\n1 1 inf\n2 2 nan\n2 1 1.0\n3 3 2.0\n",
    )
    .unwrap();
    let y = dir.path().join("y.mtx");
    let o = bin()
        .args(["spmv", "--format", "csr-scalar"])
        .arg(&a)
        .arg("--out")
        .arg(&y)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let yv = sparsecast::matrix::mm::read_vector(&y).unwrap();
    assert!(
        yv[0].is_infinite() && yv[1].is_nan() && yv[2].is_finite(),
        "{yv:?}"
    );
    // x beside y, and the same y from it.
    let x = dir.path().join("y.x.mtx");
    assert!(stderr(&o).contains("y.x.mtx"), "{}", stderr(&o));
    assert_eq!(sparsecast::matrix::mm::read_vector(&x).unwrap().len(), 3);
    let y2 = dir.path().join("y2.mtx");
    let o = bin()
        .args(["spmv", "--format", "csr-scalar"])
        .arg(&a)
        .arg("--x")
        .arg(&x)
        .arg("--out")
        .arg(&y2)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(&y).unwrap(), std::fs::read(&y2).unwrap());
    assert!(
        !dir.path().join("y2.x.mtx").exists(),
        "a given x is not saved again"
    );
    // --save-x names the file.
    let sx = dir.path().join("mine.mtx");
    let o = bin()
        .args(["spmv", "--seed", "3", &data("bcsstk09.mtx.gz"), "--out"])
        .arg(dir.path().join("y3.mtx"))
        .arg("--save-x")
        .arg(&sx)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        sparsecast::matrix::mm::read_vector(&sx).unwrap().len(),
        1083
    );
}

/// A plan optimized for f32 runs in f32 (not silently in f64).
#[test]
fn spmv_runs_a_plan_in_its_precision() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan.json");
    let profile = Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/cpu-example.json");
    let o = bin()
        .args(["optimize", "--precision", "f32", &data("bcsstk09.mtx.gz")])
        .arg("--profile")
        .arg(&profile)
        .arg("--save-plan")
        .arg(&plan)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let run = |extra: &[&str]| {
        bin()
            .args(["spmv", &data("bcsstk09.mtx.gz"), "--plan"])
            .arg(&plan)
            .arg("--out")
            .arg(dir.path().join("y.mtx"))
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run(&[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("(f32)"), "{}", stderr(&o));
    let o = run(&["--precision", "f64"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("(f64)") && stderr(&o).contains("optimized for f32"),
        "{}",
        stderr(&o)
    );
}

/// `sparsecast predict INPUT --gpu h200 --precision f64` plus `extra`: its standard output
/// (the command must succeed).
fn predict_h200_f64(input: &Path, extra: &[&str]) -> String {
    let o = bin()
        .arg("predict")
        .arg(input)
        .args(["--gpu", "h200", "--precision", "f64"])
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn predict_shows_the_recommendation_first_with_its_share_of_the_bandwidth() {
    let cage11 = data("cage11.mtx.gz");
    let out = predict_h200_f64(Path::new(&cage11), &[]);
    let lines: Vec<&str> = out.lines().collect();
    let head = lines
        .iter()
        .position(|l| l.contains("non-zeros — f64"))
        .unwrap();
    // The line right after the matrix's names the recommendation, its time, its uncertainty
    // and its share of a named ceiling; the table follows.
    let rec = lines[head + 1];
    assert!(rec.starts_with("recommendation (sparsecast): "), "{rec}");
    assert!(
        rec.contains(" ± ") && rec.contains("% of the ") && rec.contains("ceiling"),
        "{rec}"
    );
    assert!(lines[head + 2].starts_with('┌'), "{}", lines[head + 2]);
    assert!(out.contains("of BW"), "{out}");
    // cage11 is refused by DIA: the reason is under the table, not in it.
    let refusal = lines
        .iter()
        .find(|l| l.starts_with("refused — dia"))
        .unwrap();
    assert!(refusal.contains("dia_max_fill"), "{refusal}");
    assert!(!lines
        .iter()
        .any(|l| l.starts_with('│') && l.contains("dia_max_fill")));
    // JSON: every sized configuration carries its share and ceiling, the padded formats too.
    let json = predict_h200_f64(Path::new(&cage11), &["--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let kernels = v["results"][0]["kernels"].as_array().unwrap();
    for name in ["csr-t8", "sell", "bsr", "ell"] {
        let k = kernels.iter().find(|k| k["variant"] == name).unwrap();
        let share = k["bandwidth_share"]
            .as_f64()
            .unwrap_or_else(|| panic!("{name}: {k}"));
        assert!(share > 0.0 && share <= 1.0, "{name}: {share}");
        assert!(["L2", "DRAM"].contains(&k["ceiling"]["level"].as_str().unwrap()));
        // cage11 is in the H200 training table: sparsecast's predictions of it are in-sample.
        assert_eq!(k["in_sample"], true, "{name}: {k}");
    }
    // A generated matrix is no training family: nothing is marked.
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("s.json");
    std::fs::write(&spec, r#"{"family":"stencil","stencil":"2d5","n":300}"#).unwrap();
    let v: serde_json::Value = serde_json::from_str(&predict_h200_f64(&spec, &["--json"])).unwrap();
    let kernels = v["results"][0]["kernels"].as_array().unwrap();
    assert!(!kernels.is_empty() && kernels.iter().all(|k| k.get("in_sample").is_none()));
}

/// `accuracy` reads a recorded `predict --measure --json` report plain or gzip-compressed (the
/// reports in docs/ are kept compressed) and reads both the same; compressed data that is not a
/// report is an error that names the file.
#[test]
fn accuracy_reads_plain_and_gzip_reports() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let gz = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/h200/acc_gen.json.gz");
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&gz).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    assert!(text.trim_start().starts_with('{') || text.trim_start().starts_with('['));
    let plain = dir.path().join("acc_gen.json");
    std::fs::write(&plain, &text).unwrap();
    let profile = Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/cpu-example.json");
    let run = |input: &Path| {
        bin()
            .arg("accuracy")
            .arg("--profile")
            .arg(&profile)
            .arg(input)
            .output()
            .unwrap()
    };
    let (a, b) = (run(&gz), run(&plain));
    assert!(a.status.success(), "{}", stderr(&a));
    assert!(b.status.success(), "{}", stderr(&b));
    assert!(!a.stdout.is_empty());
    assert_eq!(
        String::from_utf8_lossy(&a.stdout),
        String::from_utf8_lossy(&b.stdout)
    );
    let bad = dir.path().join("bad.json.gz");
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    enc.write_all(b"not a report").unwrap();
    std::fs::write(&bad, enc.finish().unwrap()).unwrap();
    let o = run(&bad);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("bad.json.gz"), "{}", stderr(&o));
}
