//! `sparsecast optimize` and `sparsecast spmv --plan` end to end on the CPU backend, with a profile
//! measured by `sparsecast instrument --backend cpu --quick`.

use crate::common::bin;
use crate::common::shared_matrix;
use serde_json::Value;
use sparsecast::backend::KernelConfig;
use sparsecast::model::StoredModel;
use std::path::Path;
use std::process::Output;
use std::sync::OnceLock;

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("running sparsecast")
}

fn ok(args: &[&str]) -> String {
    let o = run(args);
    assert!(
        o.status.success(),
        "sparsecast {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// Time on the CPU backend with the embedded GPU profile, few runs (the tests' timings).
const CPU_QUICK_TIMING: [&str; 7] = [
    "--backend",
    "cpu",
    "--any-backend",
    "--runs",
    "3",
    "--warmup",
    "1",
];

fn fails(args: &[&str]) -> String {
    let o = run(args);
    assert!(!o.status.success(), "sparsecast {args:?} should fail");
    String::from_utf8(o.stderr).unwrap()
}

/// A directory that lives as long as the test binary, with a quick CPU profile in it.
fn workdir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    let d = DIR.get_or_init(|| {
        let d = tempfile::tempdir().unwrap();
        let prof = d.path().join("cpu.json");
        ok(&[
            "instrument",
            "--backend",
            "cpu",
            "--quick",
            "--precision",
            "both",
            "--out",
            prof.to_str().unwrap(),
        ]);
        std::fs::write(
            d.path().join("hetero.json"),
            r#"{"stack": [{"family": "power-law", "n": 20000, "mean": 8.0, "exponent": 3.0, "seed": 4},
                          {"family": "stencil", "stencil": "2d5", "n": 120}]}"#,
        )
        .unwrap();
        d
    });
    d.path()
}

fn path(name: &str) -> String {
    workdir().join(name).to_str().unwrap().to_string()
}

#[test]
fn optimize_saves_a_plan_that_spmv_runs() {
    let plan = path("hetero-plan.json");
    let out = ok(&[
        "optimize",
        &path("hetero.json"),
        "--profile",
        &path("cpu.json"),
        "--strip-rows",
        "700",
        "--save-plan",
        &plan,
        "--json",
    ]);
    let all: Value = serde_json::from_str(&out).unwrap();
    let r = &all["results"][0];
    let blocks = r["blocks"].as_array().unwrap();
    assert!(!blocks.is_empty());
    // The blocks cover the strips; the total is their sum; no single format predicts better.
    let strips = r["layout"]["strips"].as_u64().unwrap();
    assert_eq!(strips, 34_400u64.div_ceil(700));
    assert_eq!(blocks.last().unwrap()["strips"][1].as_u64(), Some(strips));
    let sum: f64 = blocks
        .iter()
        .map(|b| b["predicted_seconds"].as_f64().unwrap())
        .sum();
    let total = r["predicted_seconds"].as_f64().unwrap();
    assert!((sum - total).abs() <= 1e-12 * total, "{sum} vs {total}");
    for s in r["singles"].as_array().unwrap() {
        if let Some(t) = s["seconds"].as_f64() {
            assert!(total <= t, "plan {total} vs {} {t}", s["variant"]);
        }
    }
    // The saved plan is the reported one and spmv runs it (it checks y against the reference).
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    assert_eq!(saved, r["plan"]);
    assert_eq!(
        r["strategy"].as_str().unwrap().matches('[').count(),
        blocks.len()
    );
}

#[test]
fn real_matrix_plan_runs_and_rejects_other_matrices() {
    let Some(m) = shared_matrix("cage11.mtx.gz") else {
        return;
    };
    let m = m.to_str().unwrap();
    let plan = path("cage11-plan.json");
    // S_CSR of the CPU is a few rows: 39,082 rows exceed a cap of 400 strips, so strips are
    // coarsened and the output says so.
    let out = ok(&[
        "optimize",
        m,
        "--profile",
        &path("cpu.json"),
        "--max-strips",
        "400",
        "--save-plan",
        &plan,
    ]);
    assert!(
        out.contains("Optimal strategy:") && out.contains("Optimal format(s):"),
        "{out}"
    );
    assert!(out.contains("coarsened from"), "{out}");
    assert!(out.contains("single formats on the whole matrix"), "{out}");
    let y = path("cage11-y.mtx");
    ok(&["spmv", m, "--plan", &plan, "--out", &y]);
    assert!(std::fs::metadata(&y).unwrap().len() > 39_082);
    ok(&[
        "spmv",
        m,
        "--plan",
        &plan,
        "--precision",
        "f32",
        "--out",
        &y,
    ]);
    if let Some(other) = shared_matrix("G38.mtx.gz") {
        let e = fails(&[
            "spmv",
            other.to_str().unwrap(),
            "--plan",
            &plan,
            "--out",
            &y,
        ]);
        assert!(e.contains("was made for a 39082 × 39082 matrix"), "{e}");
    }
    // --plan and --format exclude each other.
    let e = fails(&["spmv", m, "--plan", &plan, "--format", "ell", "--out", &y]);
    assert!(e.contains("cannot be used with"), "{e}");
}

#[test]
fn measure_runs_the_plan_and_every_single_format() {
    let out = ok(&[
        "optimize",
        &path("hetero.json"),
        "--profile",
        &path("cpu.json"),
        "--strip-rows",
        "2000",
        "--measure",
        "--backend",
        "cpu",
        "--runs",
        "4",
        "--warmup",
        "1",
        "--json",
    ]);
    let all: Value = serde_json::from_str(&out).unwrap();
    let r = &all["results"][0];
    let ms = &r["measured"];
    assert!(ms["max_relative_error"].as_f64().unwrap() <= ms["tolerance"].as_f64().unwrap());
    assert!(ms["plan"]["measured_seconds"].as_f64().unwrap() > 0.0);
    assert_eq!(
        ms["plan_blocks"].as_array().unwrap().len(),
        r["blocks"].as_array().unwrap().len()
    );
    // Every kernel the model predicted was timed; the CPU has no cuSPARSE.
    for k in ms["singles"].as_array().unwrap() {
        assert_eq!(
            k["predicted_seconds"].is_null(),
            k["measured_seconds"].is_null(),
            "{k}"
        );
    }
    assert_eq!(ms["vendor"].as_array().unwrap().len(), 0);
    // The table form prints the same comparison.
    let text = ok(&[
        "optimize",
        &path("hetero.json"),
        "--profile",
        &path("cpu.json"),
        "--strip-rows",
        "2000",
        "--precision",
        "f32",
        "--measure",
        "--runs",
        "3",
        "--warmup",
        "1",
    ]);
    assert!(
        text.contains("plan (") && text.contains("plan saves (measured)"),
        "{text}"
    );
}

#[test]
fn several_inputs_end_with_a_summary() {
    // An array of generated inputs: a stack and a plain spec.
    let list = path("list.json");
    std::fs::write(
        &list,
        r#"[{"stack": [{"family": "stencil", "stencil": "3d7", "n": 25},
                       {"family": "random", "rows": 9000, "cols": 9000,
                        "row_len": {"dist": "uniform", "min": 1, "max": 60}, "seed": 2}]},
            {"family": "banded", "n": 20000, "half_bandwidth": 4, "seed": 1}]"#,
    )
    .unwrap();
    let hetero = path("hetero.json");
    let prof = path("cpu.json");
    let args = [
        "optimize",
        &list,
        &hetero,
        "--profile",
        &prof,
        "--strip-rows",
        "1000",
        "--measure",
        "--runs",
        "3",
        "--warmup",
        "1",
    ];
    let all: Value = serde_json::from_str(&ok(&[&args[..], &["--json"]].concat())).unwrap();
    let results = all["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    let s = &all["summary"];
    assert_eq!(s["matrices"], 3);
    assert_eq!(s["measured"], 3);
    let parted = results
        .iter()
        .filter(|r| r["blocks"].as_array().unwrap().len() > 1)
        .count();
    assert_eq!(s["partitioned"].as_u64(), Some(parted as u64));
    // Each comparison's mean over all matrices is the mean of the per-matrix improvements.
    let versus = s["versus"].as_array().unwrap();
    assert!(!versus.is_empty());
    for v in versus {
        let name = v["kernel"].as_str().unwrap();
        let per: Vec<f64> = results
            .iter()
            .filter_map(|r| {
                r["measured"]["singles"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|k| k["kernel"] == name)
                    .and_then(|k| k["plan_improvement"].as_f64())
            })
            .collect();
        let mean = per.iter().sum::<f64>() / per.len() as f64;
        assert_eq!(v["all"]["count"].as_u64(), Some(per.len() as u64), "{name}");
        assert!(
            (v["all"]["mean"].as_f64().unwrap() - mean).abs() < 1e-12,
            "{name}"
        );
    }
    let saved = path("summary-run.json");
    let text = ok(&[&args[..], &["--summary-only", "--json-out", &saved]].concat());
    assert!(text.starts_with("summary: 3 matrices"), "{text}");
    let again: Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    assert_eq!(again["results"].as_array().unwrap().len(), 3);
    assert_eq!(again["summary"]["matrices"], 3);
    assert!(
        text.contains("plan vs") && text.contains("csr-vector"),
        "{text}"
    );
    // An input that cannot be read is reported and skipped; the others are still summarized,
    // and the command fails at the end.
    let o = run(&[
        "optimize",
        &hetero,
        &path("no-such-matrix.mtx"),
        "--profile",
        &prof,
        "--strip-rows",
        "1000",
        "--summary-only",
    ]);
    assert!(!o.status.success());
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(out.starts_with("summary: 1 matrices"), "{out}");
    assert!(
        err.contains("skipped") && err.contains("1 of 2 inputs failed"),
        "{err}"
    );
    // --save-plan needs exactly one input.
    let e = fails(&[
        "optimize",
        &list,
        "--profile",
        &prof,
        "--save-plan",
        &path("x.json"),
    ]);
    assert!(e.contains("one matrix"), "{e}");
}

#[test]
fn bad_arguments_are_explained() {
    let e = fails(&[
        "optimize",
        &path("hetero.json"),
        "--profile",
        &path("cpu.json"),
        "--model",
        "oracle",
    ]);
    assert!(
        e.contains("no model 'oracle'") && e.contains("analytical"),
        "{e}"
    );
    let e = fails(&[
        "optimize",
        &path("hetero.json"),
        "--profile",
        &path("cpu.json"),
        "--measure",
        "--backend",
        "cuda",
    ]);
    assert!(e.contains("not with the cuda backend"), "{e}");
    let e = fails(&[
        "optimize",
        &path("hetero.json"),
        "--profile",
        &path("cpu.json"),
        "--strip-rows",
        "0",
    ]);
    assert!(e.contains("at least 1 row"), "{e}");
    std::fs::write(
        workdir().join("bad.json"),
        "{\"family\": \"stencil\",\n \"n\": -3}",
    )
    .unwrap();
    let e = fails(&[
        "optimize",
        &path("bad.json"),
        "--profile",
        &path("cpu.json"),
    ]);
    assert!(e.contains("bad.json:") && e.contains("-3"), "{e}");
    // spmv with a plan that does not exist, or one corrupted on disk.
    let m = path("stencil.mtx");
    ok(&[
        "generate", "stencil", "--points", "5", "--n", "30", "-o", &m,
    ]);
    let e = fails(&[
        "spmv",
        &m,
        "--plan",
        &path("missing-plan.json"),
        "--out",
        &path("y.mtx"),
    ]);
    assert!(e.contains("missing-plan.json"), "{e}");
    let plan = path("stencil-plan.json");
    ok(&[
        "optimize",
        &m,
        "--profile",
        &path("cpu.json"),
        "--strip-rows",
        "100",
        "--save-plan",
        &plan,
    ]);
    ok(&["spmv", &m, "--plan", &plan, "--out", &path("y.mtx")]);
    let text = std::fs::read_to_string(&plan).unwrap();
    std::fs::write(&plan, text.replacen("\"kernel\": \"", "\"kernel\": \"x", 1)).unwrap();
    let e = fails(&["spmv", &m, "--plan", &plan, "--out", &path("y.mtx")]);
    assert!(
        e.contains("stencil-plan.json:") && e.contains("unknown format"),
        "{e}"
    );
}

/// The default model of the embedded profile is ours: the answer (plan or best single
/// configuration) with its reason, one line per block; the saved answer runs on the CPU
/// (`--any-backend`: the H200 profile, measured on the CPU) and its y is checked.
#[test]
fn our_model_answers_with_its_reason_and_the_answer_runs() {
    let het = path("hetero.json");
    let out = ok(&["optimize", &het, "--strips", "3", "--block-cost-us", "0.5"]);
    assert!(out.contains("sparsecast model"), "{out}");
    assert!(out.contains("answer: "), "{out}");
    assert!(out.contains("    rows "), "{out}");
    let j: Value =
        serde_json::from_str(&ok(&["optimize", &het, "--strips", "3", "--json"])).unwrap();
    let r = &j["results"][0];
    assert_eq!(r["model"], "sparsecast");
    assert!(!r["verdict"].as_str().unwrap().is_empty());
    assert!(r["cuts"].as_array().unwrap().len() <= 4);
    // Measured on the CPU: the answer, every single configuration ours, y checked.
    let mut args = vec!["optimize", het.as_str(), "--strips", "2", "--measure"];
    args.extend(CPU_QUICK_TIMING);
    args.extend(["--calibrate", "--json"]);
    let m = ok(&args);
    let j: Value = serde_json::from_str(&m).unwrap();
    let ms = &j["results"][0]["measured"];
    assert!(ms["answer_seconds"].as_f64().unwrap() > 0.0);
    assert!(ms["best_ours"][1].as_f64().unwrap() > 0.0);
    // A plan of blocks is also timed with each block left out in turn.
    let blocks = ms["plan_block_seconds"].as_array().unwrap().len();
    let left_out = ms["plan_left_out_seconds"]
        .as_array()
        .map_or(0, |v| v.len());
    assert_eq!(left_out, if blocks >= 2 { blocks } else { 0 }, "{ms}");
    // Run concurrently (the default mode), the DP's plan is a sample of the per-branch cost.
    let conc = j["summary"]["concurrent_samples"].as_u64().unwrap();
    assert_eq!(conc, u64::from(blocks >= 2), "{}", j["summary"]);
    assert!(ms["max_relative_error"].as_f64().unwrap() <= 1e-10);
    let e = fails(&["optimize", &het, "--measure", "--backend", "cpu"]);
    assert!(e.contains("cuda backend"), "{e}");
}

/// A best single configuration with others predicted within its uncertainty says so, beside
/// them, and points to `--tune`; one without says neither. The shipped matrices and a matrix of
/// no close call ([`crate::common::clear_call_matrix`]) hold both (with the embedded H200
/// profile; which shipped matrix and precision is a close call moves with each refit — with
/// session 72's profile every one — so the test asks for one among them, not a named one).
#[test]
fn a_close_call_names_the_configurations_within_the_uncertainty_and_points_to_tune() {
    let mut seen = Vec::new();
    let mut inputs: Vec<String> = [
        "cage11.mtx.gz",
        "Roget.mtx.gz",
        "bcsstk09.mtx.gz",
        "west2021.mtx.gz",
    ]
    .map(|m| format!("{}/data/{m}", env!("CARGO_MANIFEST_DIR")))
    .to_vec();
    let clear = crate::common::clear_call_matrix(workdir());
    inputs.push(clear.to_str().unwrap().to_string());
    for file in &inputs {
        let m = Path::new(file).file_name().unwrap().to_str().unwrap();
        for precision in ["f32", "f64"] {
            // Two strips: the best single configuration does not depend on them.
            let json = path(&format!("close-{m}-{precision}.json"));
            let out = ok(&[
                "optimize",
                file,
                "--precision",
                precision,
                "--strips",
                "2",
                "--json-out",
                &json,
            ]);
            let j: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
            let r = &j["results"][0];
            let adopted = r["adopted"].as_bool().unwrap();
            let close = r["within_uncertainty"].as_array().unwrap();
            let (best, plan) = (&r["best_single"], r["plan"].as_array().unwrap());
            for c in close {
                // Where the DP's plan is the best single configuration on every row, its sigma
                // is the best's uncertainty: every close call lies within it.
                if plan.len() == 1 && plan[0]["config"] == best[0] {
                    let (b, sigma) = (
                        best[1].as_f64().unwrap(),
                        plan[0]["sigma"].as_f64().unwrap(),
                    );
                    assert!(
                        (c[1].as_f64().unwrap() - b).abs() <= sigma * b * (1.0 + 1e-9),
                        "{r}"
                    );
                }
                assert!(out.contains(c[0].as_str().unwrap()), "{out}");
            }
            assert_eq!(
                out.contains("within its uncertainty: "),
                !close.is_empty(),
                "{out}"
            );
            let hint = out.contains("too close to call by prediction: `--tune`");
            assert_eq!(hint, !close.is_empty() && !adopted, "{out}");
            seen.push(!close.is_empty());
        }
    }
    assert!(
        seen.iter().any(|&c| c),
        "a close call among the inputs: {seen:?}"
    );
    assert!(
        seen.iter().any(|&c| !c),
        "a clear answer among the inputs: {seen:?}"
    );
}

/// `--tune` times more plans than the DP's: the same blocks run the other way (serially:
/// concurrent is the default since session 48), and the plans of the alternate rules (the
/// serial rule, blocks costing one launch floor), then the DP's plan with one block at another block size or at a
/// runner-up, then the variants of the fastest plans not yet varied; each is labelled, checked
/// and timed, and the answer is the fastest measured (the close ones raced in placements),
/// with its blocks.
#[test]
fn tune_times_the_plan_in_both_modes_and_the_alternate_rules_plans() {
    // A 2-D stencil (DIA) on top of 100 long random rows: the DP cuts it with free blocks.
    let het = path("stencil-long.json");
    std::fs::write(
        &het,
        r#"{"stack": [{"family": "stencil", "stencil": "2d5", "n": 600},
                      {"family": "random", "rows": 100, "cols": 360000,
                       "row_len": {"dist": "uniform", "min": 2000, "max": 20000}, "seed": 42}]}"#,
    )
    .unwrap();
    let mut args = vec![
        "optimize",
        het.as_str(),
        "--strips",
        "6",
        "--block-cost-us",
        "0",
        "--tune",
        "1",
        "--json",
    ];
    args.extend(CPU_QUICK_TIMING);
    let j: Value = serde_json::from_str(&ok(&args)).unwrap();
    let r = &j["results"][0];
    let n = r["plan"].as_array().unwrap().len();
    assert!(n >= 2, "the DP did not cut: {r}");
    let t = &r["measured"]["tuned"];
    let timed = t["timed"].as_array().unwrap();
    let label = |x: &Value| x[0].as_str().unwrap().to_string();
    let plans: Vec<String> = timed
        .iter()
        .map(label)
        .filter(|l| l.starts_with("plan"))
        .collect();
    // The DP's plan in the default mode (concurrent since session 48), then in the other.
    assert_eq!(plans[0], format!("plan ({n} blocks, concurrent)"), "{t}");
    assert_eq!(
        plans[1],
        format!("plan #2 ({n} blocks, serial; the DP's plan)"),
        "{t}"
    );
    // At most the three alternates more (no cuSPARSE blocks on the CPU), then the DP's plan's
    // variants, concurrently: one block at another block size, then at a runner-up; then the
    // further rounds' variants of the fastest plans not yet varied. Every plan numbered in turn.
    let kinds = [
        format!("{n} blocks, concurrent; the DP's plan, one block at another block size)"),
        format!("{n} blocks, concurrent; the DP's plan, one block at its runner-up)"),
    ];
    let kind_of = |l: &String| kinds.iter().position(|k| l.ends_with(k));
    let first = plans
        .iter()
        .position(|l| kind_of(l).is_some())
        .unwrap_or_else(|| panic!("no variant of the DP's plan: {t}"));
    assert!(first <= 5, "{t}");
    let dp_variants: Vec<usize> = plans[first..].iter().map_while(kind_of).collect();
    // Block-size variants (kind 0), where the plan has a block whose kernel comes in other block
    // sizes, before the runners-up (kind 1). Which kernels the DP picks depends on the embedded
    // profile (session 61's chose `hyb`, `dia`, `hyb`: none has another block size), so the
    // presence of kind 0 is the unit test's (`variants_change_one_block_to_each_other_block_size
    // _then_to_each_runner_up`); here the order and the runners-up.
    // A block has another block size where the model (the embedded profile's, which the command
    // ran on) has a configuration of the same kernel and parameters at another size.
    let (_, profile) = sparsecast::profile::Profile::load_embedded()
        .unwrap()
        .unwrap();
    let configs: Vec<KernelConfig> = profile
        .precisions
        .iter()
        .flat_map(|s| &s.models)
        .filter_map(|m| match &m.model {
            StoredModel::Sparsecast(o) => Some(&o.configs),
            _ => None,
        })
        .flatten()
        .map(|c| KernelConfig::parse_label(&c.config).unwrap())
        .collect();
    let sized = r["plan"].as_array().unwrap().iter().any(|b| {
        let c = KernelConfig::parse_label(b["config"].as_str().unwrap()).unwrap();
        configs.iter().any(|o| o.is_block_size_sibling(&c))
    });
    assert_eq!(
        dp_variants[0] == 0,
        sized,
        "block-size variants first where any: {t}"
    );
    assert!(dp_variants.contains(&1), "no runner-up variant: {t}");
    assert!(dp_variants.windows(2).all(|w| w[0] <= w[1]), "{t}");
    // Then the further rounds' variants, then (session 49) up to three of the fastest
    // concurrent plans launched longest-predicted block first.
    let rest = &plans[first + dp_variants.len()..];
    let reordered = rest
        .iter()
        .filter(|l| l.contains("; a fast plan, its longest-predicted block launched first)"))
        .count();
    assert!(reordered <= 3, "{t}");
    assert!(
        rest[..rest.len() - reordered]
            .iter()
            .all(|l| l.contains("; a fast plan not yet varied, one block at ")),
        "only the further rounds' variants, then the reordered plans, come after the DP's: {t}"
    );
    for (k, l) in plans.iter().enumerate().skip(1) {
        assert!(l.starts_with(&format!("plan #{} (", k + 1)), "{t}");
    }
    // Every plan ran on the CPU, its y checked against the f64 reference.
    assert!(
        timed
            .iter()
            .take(plans.len())
            .all(|x| x[1].as_f64().unwrap() > 0.0),
        "{t}"
    );
    assert!(
        r["measured"]["max_relative_error"].as_f64().unwrap() <= 1e-10,
        "{r}"
    );
    let answer = tuned_answer_is_the_race_winner(t);
    let blocks = t["blocks"].as_array().unwrap();
    if answer.starts_with("plan") {
        assert!(blocks.len() >= 2, "{t}");
        assert_eq!(blocks[0][0].as_u64(), Some(0));
        assert_eq!(blocks.last().unwrap()[1].as_u64(), r["nrows"].as_u64());
    } else {
        assert!(blocks.is_empty(), "{t}");
    }
}

/// The tuned answer of `--tune`'s JSON `t`: the candidates within 5 % of the fastest search time
/// (at most 4, fastest first) were raced in placements, and the answer is the fastest by the race
/// pooled with the search (geometric, weighted by placements: a plan searched in one, a single
/// configuration in as many as the race but at most the default protocol's 3); without a race
/// (one candidate that close) the search's fastest. Its `seconds` is its search time. Returns
/// the answer's label.
fn tuned_answer_is_the_race_winner(t: &Value) -> String {
    let times: Vec<(String, f64)> = t["timed"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|x| {
            x[1].as_f64()
                .map(|s| (x[0].as_str().unwrap().to_string(), s))
        })
        .collect();
    let best = times.iter().map(|x| x.1).fold(f64::INFINITY, f64::min);
    let mut close: Vec<&(String, f64)> = times.iter().filter(|x| x.1 <= best * 1.05).collect();
    close.sort_by(|a, b| a.1.total_cmp(&b.1));
    close.truncate(4);
    let raced = t["raced"].as_array().unwrap();
    let answer = t["answer"].as_str().unwrap().to_string();
    if close.len() == 1 {
        assert!(raced.is_empty(), "{t}");
        assert_eq!(answer, close[0].0, "{t}");
    } else {
        let labels: Vec<&str> = raced.iter().map(|x| x[0].as_str().unwrap()).collect();
        let want: Vec<&str> = close.iter().map(|x| x.0.as_str()).collect();
        assert_eq!(labels, want, "{t}");
        // Each timed in at least one placement (the CPU protocol's placements: all it asks).
        let placed = t["raced_placements"].as_array().unwrap();
        assert_eq!(placed.len(), raced.len(), "{t}");
        for (x, n) in raced.iter().zip(placed) {
            assert_eq!(x[1].is_null(), n.as_u64() == Some(0), "{t}");
        }
        let search = |l: &str| times.iter().find(|x| x.0 == l).unwrap().1;
        let pooled = t["raced_pooled"].as_array().unwrap();
        assert_eq!(pooled.len(), raced.len(), "{t}");
        let winner = raced
            .iter()
            .zip(placed)
            .zip(pooled)
            .filter_map(|((x, n), p)| {
                let (l, r, n) = (x[0].as_str().unwrap(), x[1].as_f64()?, n.as_u64()? as f64);
                let m = if l.starts_with("plan") {
                    1.0
                } else {
                    n.clamp(1.0, 3.0)
                };
                let want = ((n * r.ln() + m * search(l).ln()) / (n + m)).exp();
                let got = p.as_f64().unwrap();
                assert!(
                    (got - want).abs() <= 1e-9 * want,
                    "{l}: {got} against {want}: {t}"
                );
                Some((l, got))
            })
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .unwrap();
        assert_eq!(answer, winner.0, "{t}");
    }
    let own = times.iter().find(|x| x.0 == answer).unwrap().1;
    assert_eq!(t["seconds"].as_f64().unwrap(), own, "{t}");
    answer
}

/// `--tune`: only the DP's plan and the shortlist are timed (the N predicted-fastest single
/// configurations and the predicted-fastest cuSPARSE algorithm, which fails on the CPU), the
/// answer is the fastest measured of them (the close ones raced in placements) and --save-plan
/// writes it; with --measure everything is timed, and the tuned answer and the best single
/// configuration are timed again side by side and summarised.
#[test]
fn tune_answers_with_the_fastest_measured_of_the_plan_and_the_shortlist() {
    // Matrix Market, so that `spmv --plan` runs the saved answer on it.
    let het = path("power-law.mtx");
    ok(&[
        "generate",
        "power-law",
        "--n",
        "4000",
        "--mean",
        "8",
        "--exponent",
        "2.1",
        "--out",
        &het,
    ]);
    let plan = path("tuned-plan.json");
    let mut base = vec!["optimize", het.as_str(), "--strips", "2"];
    base.extend(CPU_QUICK_TIMING);
    let mut args = base.to_vec();
    args.extend(["--tune", "2", "--json", "--save-plan", plan.as_str()]);
    let j: Value = serde_json::from_str(&ok(&args)).unwrap();
    let r = &j["results"][0];
    let ms = &r["measured"];
    let t = &ms["tuned"];
    let timed = t["timed"].as_array().unwrap();
    let has_plan = r["plan"].as_array().unwrap().len() >= 2;
    // The plans first (the DP's, then other candidate plans), then 2 configurations and
    // cuSPARSE's fastest unless among the 2.
    let label = |x: &Value| x[0].as_str().unwrap().to_string();
    let plans = timed
        .iter()
        .take_while(|x| label(x).starts_with("plan"))
        .count();
    assert!(
        timed[plans..].iter().all(|x| !label(x).starts_with("plan")),
        "{t}"
    );
    assert!(timed.len() - plans >= 2 && timed.len() - plans <= 3, "{t}");
    if has_plan {
        // The DP's plan in its mode (serial by default), then in the other.
        let n = r["plan"].as_array().unwrap().len();
        assert_eq!(
            label(&timed[0]),
            format!("plan ({n} blocks, serial)"),
            "{t}"
        );
        assert!(
            timed[..plans]
                .iter()
                .any(|x| label(x) == format!("plan ({n} blocks, concurrent)")),
            "{t}"
        );
    }
    // Only the shortlist's single configurations were timed, and nothing is called the best.
    let singles = ms["singles"].as_array().unwrap();
    assert_eq!(singles.len(), timed.len() - plans, "{ms}");
    assert!(ms["best_single"].is_null(), "{ms}");
    let answer = tuned_answer_is_the_race_winner(t);
    assert!(t["retimed_seconds"].is_null());
    // The saved plan is the tuned answer, and it runs.
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    let blocks = saved["blocks"].as_array().unwrap();
    if answer.starts_with("plan") {
        assert!(blocks.len() >= 2, "{saved}");
    } else {
        assert_eq!(blocks.len(), 1, "{saved}");
    }
    ok(&["spmv", &het, "--plan", &plan, "--out", &path("y-tuned.mtx")]);
    // With --measure: every configuration, the tuned answer timed again, and the summary.
    let mut args = base.to_vec();
    args.extend(["--tune", "--measure", "--json"]);
    let j: Value = serde_json::from_str(&ok(&args)).unwrap();
    let ms = &j["results"][0]["measured"];
    assert!(ms["singles"].as_array().unwrap().len() > 4, "{ms}");
    assert!(
        ms["tuned"]["retimed_seconds"].as_f64().unwrap() > 0.0,
        "{ms}"
    );
    // The best single configuration of the sweep timed again beside the answer (fair ratio).
    assert!(
        ms["tuned"]["best_single_retimed_seconds"].as_f64().unwrap() > 0.0,
        "{ms}"
    );
    assert_eq!(j["summary"]["tuned"]["measured"], 1, "{}", j["summary"]);
    // The ≥ 1.15× counts of the summary follow the ratios, against the sweep's best single and
    // against the best single timed again beside the answer.
    let tu = &ms["tuned"];
    let t = tu["retimed_seconds"].as_f64().unwrap();
    let sweep = ms["best_single"][1].as_f64().unwrap() / t;
    let again = tu["best_single_retimed_seconds"].as_f64().unwrap() / t;
    // A fair pair raced once agreed within 1 % (else it is raced again, and says so).
    if tu.get("fair_raced_twice").is_none() {
        assert!((1.0 / 1.01..=1.01).contains(&again), "{tu}");
    } else {
        assert_eq!(tu["fair_raced_twice"], true, "{tu}");
    }
    let st = &j["summary"]["tuned"];
    assert_eq!(st["faster_115"], u64::from(sweep >= 1.15), "{st}");
    assert_eq!(st["faster_115_retimed"], u64::from(again >= 1.15), "{st}");
    let e = fails(&[
        "optimize",
        &het,
        "--profile",
        &path("cpu.json"),
        "--model",
        "analytical",
        "--tune",
    ]);
    assert!(e.contains("--tune needs a feature-based model"), "{e}");
    let e = fails(&["optimize", &het, "--tune", "0", "--backend", "cpu"]);
    assert!(e.contains("--tune 0"), "{e}");
}

/// `--models a,b`: the plans of several models of the profile side by side (one line per block
/// range), each equal to what `--model` alone finds; JSON per model; bad names and --measure
/// refused.
#[test]
fn several_models_side_by_side() {
    let het = path("hetero.json");
    let out = ok(&[
        "optimize",
        &het,
        "--strips",
        "3",
        "--models",
        "sparsecast,analytical",
    ]);
    assert!(out.contains("2 models"), "{out}");
    assert!(out.contains("  sparsecast  "), "{out}");
    assert!(out.contains("  analytical  "), "{out}");
    assert!(out.matches("→ ").count() == 2, "{out}");
    let j: Value = serde_json::from_str(&ok(&[
        "optimize",
        &het,
        "--strips",
        "3",
        "--models",
        "sparsecast,analytical",
        "--json",
    ]))
    .unwrap();
    let ms = j["results"][0]["models"].as_array().unwrap();
    assert_eq!(ms.len(), 2);
    for (r, name) in ms.iter().zip(["sparsecast", "analytical"]) {
        assert_eq!(r["model"], name);
        // The blocks tile the rows in order.
        let plan = r["plan"].as_array().unwrap();
        assert_eq!(plan[0]["rows"][0], 0);
        for w in plan.windows(2) {
            assert_eq!(w[0]["rows"][1], w[1]["rows"][0]);
        }
        assert_eq!(plan.last().unwrap()["rows"][1], r["nrows"]);
    }
    // The same plan as the model alone.
    let alone: Value = serde_json::from_str(&ok(&[
        "optimize",
        &het,
        "--strips",
        "3",
        "--model",
        "sparsecast",
        "--json",
    ]))
    .unwrap();
    assert_eq!(alone["results"][0]["plan"], ms[0]["plan"]);
    assert_eq!(alone["results"][0]["adopted"], ms[0]["adopted"]);
    let e = fails(&["optimize", &het, "--models", "sparsecast,nope"]);
    assert!(e.contains("no model 'nope'"), "{e}");
    let e = fails(&["optimize", &het, "--models", "sparsecast", "--measure"]);
    assert!(e.contains("--measure"), "{e}");
}
