//! Cross-architecture prediction (003 and ours): the model's algebra on the embedded profiles,
//! the device refit of our model, and the `instrument --cross-from` → `predict --measured-on`
//! pipeline on the CPU backend.

use crate::common::{bin, run_ok};
use sparsecast::backend::{KernelConfig, Variant};
use sparsecast::corpus::table::{self, TableRow};
use sparsecast::formats::FormatParams;
use sparsecast::instrument::Measurement;
use sparsecast::learn::own::{Device, OwnConfig, OwnModel};
use sparsecast::learn::transfer::{calibration, Scale};
use sparsecast::model::cross::Selection;
use sparsecast::model::{CrossModel, Shape, StoredModel};
use sparsecast::profile::Profile;
use sparsecast::Precision;
use std::path::{Path, PathBuf};

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// The H200 profile's f64 section, and a cross model from it to a target whose measurements
/// are the reference's scaled by `k`.
fn scaled(k: f64) -> (CrossModel, Vec<Measurement>) {
    let p = Profile::load(&repo("profiles/h200.json.gz")).unwrap();
    let s = p.precision(Precision::F64).unwrap();
    let tar: Vec<Measurement> = s
        .measurements
        .iter()
        .map(|m| Measurement {
            median: m.median * k,
            warm_mean: m.warm_mean * k,
            samples: m.samples.iter().map(|t| t * k).collect(),
            ..m.clone()
        })
        .collect();
    let sel = Selection::choose(&s.measurements, &s.limits, &s.limits).unwrap();
    assert_eq!(sel.keys().len(), 17, "9 CSR + 5 ELL + 3 COO");
    let m = CrossModel::fit(
        Precision::F64,
        sel,
        (&s.limits, &s.measurements),
        (&s.limits, &tar),
        None,
    )
    .unwrap();
    (m, tar)
}

/// Shapes of every regime: tiny, one strip, many strips, long rows, an empty HYB COO part.
fn shapes() -> Vec<Shape> {
    let mut v = vec![
        Shape::constant(1000, 1000, 3),
        Shape::constant(300_000, 300_000, 9),
        Shape::constant(5_000_000, 5_000_000, 30),
        Shape::constant(20_000, 40_000, 2000),
    ];
    let lens: Vec<usize> = (0..100_000)
        .map(|i| if i % 50 == 0 { 400 } else { 7 })
        .collect();
    v.push(Shape::from_row_lengths(100_000, &lens, None));
    v
}

const VARIANTS: [Variant; 4] = [
    Variant::Csr {
        threads_per_row: 32,
    },
    Variant::Ell,
    Variant::Coo,
    Variant::Hyb,
];

/// ELL, COO and HYB are exact; CSR's `P_1` divides Relationship-1's *fitted* `T_0.Ref` by the
/// *measured* `T_0.Tar` (003 §4.1.2), which differ by the line's residual at the anchor even for
/// one device (≈ 9–17 % on the H200's f64 suite, where time barely grows from `P_NZ` 4 to 64):
/// `P_1 − 1 = (r − 1)(1 − a)`, so CSR may move by at most the largest relative residual `r − 1`
/// of the line at its anchor, read off the model itself.
fn tolerance(m: &CrossModel, v: Variant) -> f64 {
    if !matches!(v, Variant::Csr { .. }) {
        return 1e-9;
    }
    let c = &m.reference.csr;
    let worst = c
        .anchors
        .iter()
        .map(|&(x0, t0, _)| {
            // `csr` anchors rows up to the threshold at `X_00` on the low line, longer ones at
            // the threshold on the high line.
            let l = if x0 < c.threshold { &c.low } else { &c.high };
            ((l.slope * x0 as f64 + l.intercept) / t0 - 1.0).abs()
        })
        .fold(0.0, f64::max);
    assert!(worst < 0.5, "the CSR lines miss their anchors by {worst}");
    worst + 1e-9
}

#[test]
fn a_device_carried_to_itself_keeps_its_times() {
    let (m, _) = scaled(1.0);
    let p = FormatParams::default();
    for s in shapes() {
        for v in VARIANTS {
            for t in [2e-6, 4e-5, 3e-3] {
                let got = m.transfer(&s, v, &p, t).unwrap();
                assert!(
                    (got / t - 1.0).abs() <= tolerance(&m, v),
                    "{v} {s:?}: {t} → {got}"
                );
            }
        }
    }
}

#[test]
fn a_uniformly_slower_target_scales_every_format() {
    let (m, _) = scaled(2.0);
    let p = FormatParams::default();
    for s in shapes() {
        for v in VARIANTS {
            let t = 5e-5;
            let got = m.transfer(&s, v, &p, t).unwrap();
            assert!(
                (got / (2.0 * t) - 1.0).abs() <= tolerance(&m, v),
                "{v} {s:?}: {got}"
            );
        }
    }
    // A target lacking a selected benchmark is refused with the benchmark named.
    let (_, tar) = scaled(1.0);
    let p = Profile::load(&repo("profiles/h200.json.gz")).unwrap();
    let s = p.precision(Precision::F64).unwrap();
    let sel = Selection::choose(&s.measurements, &s.limits, &s.limits).unwrap();
    let short: Vec<Measurement> = tar
        .into_iter()
        .filter(|m| m.kernel != Variant::Coo)
        .collect();
    let e = CrossModel::fit(
        Precision::F64,
        sel,
        (&s.limits, &s.measurements),
        (&s.limits, &short),
        None,
    )
    .unwrap_err();
    assert!(e.to_string().contains("coo"), "{e}");
}

/// A model of no trees (the physical base alone) for every configuration of `rows`.
fn base_model(rows: &[TableRow], device: Device) -> OwnModel {
    let mut labels: Vec<String> = rows[0].times.iter().map(|t| t.config.clone()).collect();
    labels.dedup();
    OwnModel {
        precision: Precision::F64,
        device,
        configs: labels
            .into_iter()
            .map(|config| OwnConfig {
                config,
                base: 0.0,
                trees: Vec::new(),
                sigma: 0.1,
                sigma_by_nnz: Vec::new(),
                step_s: 0.0,
                n: 1,
                rel_base: 0.0,
                rel_trees: Vec::new(),
                issue_s: 0.0,
            })
            .collect(),
        trained_on: None,
        version: sparsecast::learn::own::VERSION,
        reference: None,
        calibration: None,
        cross: None,
        pick: None,
        hyb_launch: Default::default(),
    }
}

/// The f64 rows of the committed H100 seed-1 table.
fn h100_f64_rows() -> Vec<TableRow> {
    table::read(&repo("data/corpus/h100.jsonl.gz"))
        .unwrap()
        .into_iter()
        .filter(|r| r.precision == Precision::F64)
        .collect()
}

#[test]
fn our_transfer_recovers_the_target_device_from_17_matrices() {
    let rows = h100_f64_rows();
    let reference = Device {
        floor_s: 4e-6,
        bandwidth: 4e12,
        l2_bytes: 50e6,
    };
    let m = base_model(&rows, reference);
    // Target times made by the same model on a device of another floor and bandwidth.
    let target = Device {
        floor_s: 5.3e-6,
        bandwidth: 2.9e12,
        l2_bytes: 50e6,
    };
    let truth = m.with_device(target);
    let made = timed_by(&rows, &truth);
    let refs: Vec<&TableRow> = made.iter().collect();
    let cal = calibration(&refs, Precision::F64);
    assert_eq!(cal.len(), 17);
    assert!(cal
        .windows(2)
        .all(|w| w[0].features.nnz <= w[1].features.nnz));
    let got = m.transfer(&cal, Scale::None);
    let close = |a: f64, b: f64| (a / b - 1.0).abs() < 0.01;
    assert!(
        close(got.device.floor_s, target.floor_s),
        "{:?}",
        got.device
    );
    assert!(
        close(got.device.bandwidth, target.bandwidth),
        "{:?}",
        got.device
    );
    // The trees (none here) and the reference device they read are kept.
    assert_eq!(got.trained_on, Some(reference));
    let f = &rows[0].features;
    let a = got.predict_label(f, "csr-vector").unwrap();
    let b = truth.predict_label(f, "csr-vector").unwrap();
    assert!(close(a, b), "{a} vs {b}");
}

/// The H100 f64 rows, a model of the physical base alone on a whole GPU, and a target streaming
/// 9× slower (a partition of few SMs).
fn partition_like() -> (Vec<TableRow>, OwnModel, Device) {
    let rows = h100_f64_rows();
    let reference = Device {
        floor_s: 1.5e-6,
        bandwidth: 2.9e12,
        l2_bytes: 50e6,
    };
    let m = base_model(&rows, reference);
    let target = Device {
        floor_s: 1.7e-6,
        bandwidth: 2.9e12 / 9.0,
        l2_bytes: 50e6,
    };
    (rows, m, target)
}

/// A target far from the reference — a partition of few SMs streams at a fraction of the
/// whole GPU's bandwidth — is still found: the refit's grid recentres beyond its first octave
/// (which stopped at 0.49× the reference's bandwidth before session 20).
#[test]
fn our_transfer_follows_a_target_many_times_slower() {
    let (rows, m, target) = partition_like();
    let truth = m.with_device(target);
    let made = timed_by(&rows, &truth);
    let refs: Vec<&TableRow> = made.iter().collect();
    let cal = calibration(&refs, Precision::F64);
    let got = m.transfer(&cal, Scale::None);
    let close = |a: f64, b: f64| (a / b - 1.0).abs() < 0.01;
    assert!(
        close(got.device.bandwidth, target.bandwidth),
        "{:?}",
        got.device
    );
    assert!(
        close(got.device.floor_s, target.floor_s),
        "{:?}",
        got.device
    );
}

/// On a GPU of few SMs a kernel that issues a warp step per short row is held by the issue
/// rate, not the bandwidth: with the target's `csr-vector` made issue-bound, the transfer with
/// the issue term ([`Scale::Config`]) finds it and predicts every row within 3 %, leaves the
/// streaming configurations without one — where the family's scalar alone misses `csr-vector`
/// by far more.
#[test]
fn our_transfer_finds_an_issue_bound_configuration_on_few_sms() {
    let (rows, m, target) = partition_like();
    let mut truth = m.with_device(target);
    let issue = 2e-9;
    for c in &mut truth.configs {
        if c.config == "csr-vector" {
            c.issue_s = issue;
        }
    }
    let made = timed_by(&rows, &truth);
    let refs: Vec<&TableRow> = made.iter().collect();
    let cal = calibration(&refs, Precision::F64);
    let issue_of =
        |m: &OwnModel, l: &str| m.configs.iter().find(|c| c.config == l).unwrap().issue_s;
    let got = m.transfer(&cal, Scale::Config);
    let found = issue_of(&got, "csr-vector");
    assert!((found / issue - 1.0).abs() < 0.03, "{found} vs {issue}");
    for streaming in ["csr-scalar", "coo", "cusparse-csr-alg1"] {
        assert_eq!(issue_of(&got, streaming), 0.0, "{streaming}");
    }
    let worst = |m: &OwnModel| {
        made.iter()
            .map(|r| {
                let t = r.get("csr-vector").and_then(|t| t.time()).unwrap();
                let p = m.predict_label(&r.features, "csr-vector").unwrap();
                (p / t).ln().abs()
            })
            .fold(0.0, f64::max)
    };
    assert!(worst(&got) < 0.03, "{}", worst(&got));
    let family = m.transfer(&cal, Scale::Family);
    assert!(worst(&family) > 0.3, "{}", worst(&family));
}

/// The issue term is fitted only for a target of fewer SMs than its reference.
#[test]
fn the_issue_term_is_for_targets_of_fewer_sms() {
    use sparsecast::learn::transfer::{scale_for, sms_of};
    let h100 = "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79 GiB)";
    let part = "NVIDIA H100 80GB HBM3 [8-SM partition] (sm_90, 8 SMs, 79 GiB)";
    let h200 = "NVIDIA H200 (sm_90, 132 SMs, 140 GiB)";
    assert_eq!(sms_of(part), Some(8));
    assert_eq!(sms_of(h200), Some(132));
    assert_eq!(sms_of("AMD EPYC 9454 (48 cores)"), None);
    assert_eq!(scale_for(h100, part), Scale::Config);
    assert_eq!(scale_for(h200, h100), Scale::Family);
    assert_eq!(scale_for(part, h100), Scale::Family);
    assert_eq!(scale_for(h100, "cpu"), Scale::Family);
}

/// `bench --json` of bcsstk09 on the CPU (as times measured on a reference, written to
/// `dir/bench.json`), then `predict --json --models MODEL --profile TARGET --measured-on` it:
/// the matrix, the prediction and the bench report.
fn bench_then_predict(
    dir: &Path,
    target: &Path,
    model: &str,
) -> (PathBuf, serde_json::Value, serde_json::Value) {
    let mtx = repo("data/bcsstk09.mtx.gz");
    let bench = run_ok(
        bin()
            .args([
                "bench",
                "--backend",
                "cpu",
                "--precision",
                "f64",
                "--json",
                "--runs",
                "3",
            ])
            .arg(&mtx),
    );
    std::fs::write(dir.join("bench.json"), &bench).unwrap();
    let pred = run_ok(
        bin()
            .args(["predict", "--json", "--precision", "f64", "--models", model])
            .arg("--profile")
            .arg(target)
            .arg("--measured-on")
            .arg(dir.join("bench.json"))
            .arg(&mtx),
    );
    (
        mtx,
        serde_json::from_str(&pred).unwrap(),
        serde_json::from_str(&bench).unwrap(),
    )
}

#[test]
fn instrument_cross_from_then_predict_measured_on_the_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let (reference, target) = (dir.path().join("ref.json"), dir.path().join("tar.json"));
    let quick = [
        "--backend",
        "cpu",
        "--quick",
        "--no-statistical",
        "--precision",
        "f64",
    ];
    run_ok(
        bin()
            .arg("instrument")
            .args(quick)
            .arg("--out")
            .arg(&reference),
    );
    let out = run_ok(
        bin()
            .arg("instrument")
            .args(quick)
            .arg("--cross-from")
            .arg(&reference)
            .arg("--out")
            .arg(&target),
    );
    assert!(out.contains("benchmark matrices"), "{out}");
    let r = Profile::load(&reference).unwrap();
    let t = Profile::load(&target).unwrap();
    let (rs, ts) = (
        r.precision(Precision::F64).unwrap(),
        t.precision(Precision::F64).unwrap(),
    );
    let sel = Selection::choose(&rs.measurements, &rs.limits, &ts.limits).unwrap();
    assert_eq!(ts.measurements.len(), sel.keys().len());
    assert!(ts.measurements.len() < rs.measurements.len());
    let StoredModel::Cross(cross) = &ts.models[0].model else {
        panic!("the target profile's model is not the cross model");
    };
    assert!(cross.reference_model.is_some());
    // The target's bounds are measured too (the bandwidth transfer reads its DRAM and L2).
    let b = ts.bounds.as_ref().expect("the target's bounds");
    assert!(b.dram_gbs > 0.0 && b.launch_floor_s > 0.0, "{b:?}");

    // Reference times measured by `bench --json`, carried to the target by `predict`.
    let (mtx, v, b) = bench_then_predict(dir.path(), &target, "cross");
    let a = sparsecast::matrix::mm::read::<f64>(&mtx).unwrap();
    let shape = Shape::from_features(&sparsecast::features::Features::compute(&a));
    let mut checked = 0;
    for k in v["results"][0]["kernels"].as_array().unwrap() {
        let label = k["variant"].as_str().unwrap();
        let cfg = KernelConfig::parse_label(label).unwrap();
        let t_ref = b["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["kernel"] == label)
            .and_then(|r| r["median_s"].as_f64())
            .unwrap();
        let want = cross
            .transfer(&shape, cfg.variant, &cfg.params, t_ref)
            .unwrap();
        let got = k["seconds"].as_f64().unwrap();
        assert!((got / want - 1.0).abs() < 1e-9, "{label}: {got} vs {want}");
        checked += 1;
    }
    assert!(checked >= 4, "{v}");
    // A profile without a cross model refuses reference times (rather than ignoring them).
    let out = bin()
        .args(["predict", "--profile"])
        .arg(&reference)
        .arg("--measured-on")
        .arg(dir.path().join("bench.json"))
        .arg(&mtx)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--cross-from"));
}

#[test]
fn the_throughput_ratio_map_follows_how_bandwidth_bound_a_run_was() {
    use sparsecast::learn::transfer::{RatioKey, RatioMap};
    let rows = h100_f64_rows();
    let m = base_model(
        &rows,
        Device {
            floor_s: 4e-6,
            bandwidth: 3e12,
            l2_bytes: 50e6,
        },
    );
    // A target that keeps every run under 1 TB/s and makes every faster one 1.3× slower:
    // what a GPU with the same SMs and less DRAM bandwidth does, whatever the size.
    let bytes = |r: &TableRow, c: &str| m.bytes_label(&r.features, c).ok();
    let ratio = |b: f64, t: f64| if b / t < 1e12 { 1.0 } else { 1.3 };
    let mut target = rows.clone();
    for (r, t) in rows.iter().zip(&mut target) {
        for x in &mut t.times {
            if let (Some(s), Some(b)) = (x.median_s, bytes(r, &x.config)) {
                x.median_s = Some(s * ratio(b, s));
            }
        }
    }
    let refs: Vec<&TableRow> = rows.iter().collect();
    let tars: Vec<&TableRow> = target.iter().collect();
    let (cal_ref, cal_tar) = (
        calibration(&refs, Precision::F64),
        calibration(&tars, Precision::F64),
    );
    let by = |key| RatioMap::fit(|f, l| m.bytes_label(f, l).ok(), &cal_ref, &cal_tar, key);
    let (tput, size) = (by(RatioKey::Throughput), by(RatioKey::Bytes));
    let (mut right, mut right_by_size, mut n) = (0, 0, 0);
    for r in &rows {
        for x in r.times.iter().filter(|x| x.config == "csr-vector") {
            let (Some(s), Some(b)) = (x.median_s, bytes(r, &x.config)) else {
                continue;
            };
            // Away from the regime boundary, where 3 neighbours decide either way.
            if (b / s / 1e12).ln().abs() < 0.3 {
                continue;
            }
            let want = s * ratio(b, s);
            let hit = |p: Option<f64>| p.is_some_and(|p| (p / want - 1.0).abs() < 1e-9);
            n += 1;
            right += hit(tput.predict(&x.config, b, s)) as usize;
            right_by_size += hit(size.predict(&x.config, b, s)) as usize;
        }
    }
    assert!(n > 100, "{n}");
    assert!(right as f64 >= 0.95 * n as f64, "{right} of {n}");
    assert!(right > right_by_size, "{right} vs {right_by_size} of {n}");
}

/// `rows` with every time replaced by `model`'s prediction.
fn timed_by(rows: &[TableRow], model: &OwnModel) -> Vec<TableRow> {
    let mut out = rows.to_vec();
    for r in &mut out {
        for t in &mut r.times {
            if let Ok(s) = model.predict_label(&r.features, &t.config) {
                t.median_s = Some(s);
            }
        }
    }
    out
}

/// The H100 f64 rows, a model of a reference device (4 µs floor, 4 TB/s, `l2_bytes`) and the
/// rows timed by it.
fn reference_of_4tbs(l2_bytes: f64) -> (Vec<TableRow>, OwnModel, Vec<TableRow>) {
    let rows = h100_f64_rows();
    let device = Device {
        floor_s: 4e-6,
        bandwidth: 4e12,
        l2_bytes,
    };
    let m = base_model(&rows, device);
    let on_ref = timed_by(&rows, &m);
    (rows, m, on_ref)
}

#[test]
fn the_product_transfer_recovers_both_devices_and_carries_reference_times() {
    use sparsecast::learn::transfer::{CALIBRATION, CALIBRATION_MAX_NNZ};
    let rows = h100_f64_rows();
    let reference = Device {
        floor_s: 4e-6,
        bandwidth: 4e12,
        l2_bytes: 50e6,
    };
    let target = Device {
        floor_s: 5.3e-6,
        bandwidth: 2.9e12,
        l2_bytes: 50e6,
    };
    let m = base_model(&rows, reference);
    let truth = m.with_device(target);
    let (on_ref, on_tar) = (timed_by(&rows, &m), timed_by(&rows, &truth));
    let refs: Vec<&TableRow> = on_ref.iter().collect();
    let cal_ref = calibration(&refs, Precision::F64);
    assert_eq!(cal_ref.len(), CALIBRATION);
    // Only generated matrices a target rebuilds without files, none beyond the cap.
    assert!(cal_ref.iter().all(|r| r.matrix.starts_with("gen/")
        && r.features.nnz as u64 <= CALIBRATION_MAX_NNZ
        && sparsecast::learn::transfer::spec_of(r).is_some()));
    let cal_tar: Vec<&TableRow> = cal_ref
        .iter()
        .map(|c| on_tar.iter().find(|t| t.matrix == c.matrix).unwrap())
        .collect();
    let x = m.cross_fit(&cal_ref, &cal_tar, None);
    let close = |a: f64, b: f64, tol: f64| (a / b - 1.0).abs() < tol;
    assert!(
        close(x.device.floor_s, target.floor_s, 0.01),
        "{:?}",
        x.device
    );
    assert!(
        close(x.device.bandwidth, target.bandwidth, 0.01),
        "{:?}",
        x.device
    );
    let side = x.cross.as_ref().unwrap();
    assert!(
        close(side.device.floor_s, reference.floor_s, 0.01),
        "{:?}",
        side.device
    );
    assert!(
        close(side.device.bandwidth, reference.bandwidth, 0.01),
        "{:?}",
        side.device
    );
    // The calibration it stores is the target's: the same matrices, the target's times.
    let cal = x.calibration.as_ref().unwrap();
    assert_eq!(cal.len(), CALIBRATION);
    let (c0, t0) = (&cal[0], cal_tar[0]);
    assert_eq!(c0.matrix, t0.matrix);
    assert_eq!(c0.times.get("coo").copied(), t0.get("coo").unwrap().time());
    // A stored profile predicts alike.
    let back: OwnModel = serde_json::from_str(&serde_json::to_string(&x).unwrap()).unwrap();
    // From the reference's time of a matrix outside the calibration, the target's.
    let (mut errs, mut n) = (Vec::new(), 0);
    for r in rows
        .iter()
        .filter(|r| !cal_ref.iter().any(|c| c.matrix == r.matrix))
    {
        for t in &r.times {
            let (Ok(t_ref), Ok(want)) = (
                m.predict_label(&r.features, &t.config),
                truth.predict_label(&r.features, &t.config),
            ) else {
                continue;
            };
            let p = x.measured_parts(&r.features, &t.config, t_ref).unwrap();
            let (ratio, mix) = (p.ratio, p.mix);
            // Without both devices' memory the product predicts ours-mix.
            assert_eq!((p.bw, p.value), (None, mix));
            assert!(
                close(ratio, want, 0.02),
                "{} {}: {ratio} vs {want}",
                r.matrix,
                t.config
            );
            assert_eq!(back.from_measured(&r.features, &t.config, t_ref), Some(mix));
            errs.push((mix / want - 1.0).abs());
            n += 1;
        }
    }
    errs.sort_by(f64::total_cmp);
    assert!(n > 1000, "{n}");
    assert!(errs[n / 2] < 0.02, "median {}", errs[n / 2]);
    // A model that was not transferred has no reference side.
    assert!(m.from_measured(&rows[0].features, "coo", 1e-5).is_none());
}

#[test]
fn with_both_memories_the_product_retimes_the_dram_seconds() {
    use sparsecast::learn::cross_bw::{streaming, touched_bytes, Memory, MemoryPair};
    let (rows, m, on_ref) = reference_of_4tbs(60e6);
    let refs: Vec<&TableRow> = on_ref.iter().collect();
    let cal = calibration(&refs, Precision::F64);
    let memory = MemoryPair {
        reference: Memory {
            dram_bytes_s: 4.3e12,
            l2_bytes: 60e6,
        },
        target: Memory {
            dram_bytes_s: 3.0e12,
            l2_bytes: 50e6,
        },
    };
    let x = m.cross_fit(&cal, &cal, Some(memory));
    let back: OwnModel = serde_json::from_str(&serde_json::to_string(&x).unwrap()).unwrap();
    assert_eq!(back.cross.as_ref().unwrap().memory, Some(memory));
    // A stored memory that is not a positive number is refused when the profile loads.
    assert!(back.validate().is_ok());
    let mut bad = back.clone();
    bad.cross.as_mut().unwrap().memory = Some(MemoryPair {
        target: Memory {
            dram_bytes_s: f64::NAN,
            l2_bytes: 50e6,
        },
        ..memory
    });
    assert!(bad.validate().is_err());
    let (mut streamed, mut blended, mut beyond) = (0, 0, 0);
    for r in rows.iter().filter(|r| r.features.nnz > 2_000_000) {
        for t in &r.times {
            let cfg = KernelConfig::parse_label(&t.config).unwrap();
            let Some(t_ref) = t.time() else { continue };
            let Some(p) = back.measured_parts(&r.features, &t.config, t_ref) else {
                continue;
            };
            let bytes = touched_bytes(&r.features, &cfg, 8, back.version).unwrap();
            let bw = memory.transfer(bytes, t_ref);
            assert_eq!(p.bw, Some(bw));
            let want = if streaming(cfg.variant) {
                streamed += 1;
                bw
            } else {
                blended += 1;
                (bw * p.mix).sqrt()
            };
            assert!((p.value / want - 1.0).abs() < 1e-12, "{}", t.config);
            // Beyond both L2 shares the slower DRAM makes the target slower.
            if bytes > 30e6 {
                assert!(bw > t_ref, "{} {}: {bw} vs {t_ref}", r.matrix, t.config);
                beyond += 1;
            }
        }
    }
    assert!(
        streamed > 10 && blended > 10 && beyond > 10,
        "{streamed} {blended} {beyond}"
    );
    // `predict --measured-on` says which way each time was carried.
    use sparsecast::model::Model;
    let measured = sparsecast::learn::cross_own::MeasuredOwn {
        model: &back,
        times: vec![("csr-vector".into(), 1e-4), ("coo".into(), 1e-4)],
    };
    let f = &rows
        .iter()
        .find(|r| r.features.nnz > 2_000_000)
        .unwrap()
        .features;
    let note = |label: &str| {
        let c = KernelConfig::parse_label(label).unwrap();
        measured.explain(f, c.variant, &c.params)
    };
    assert!(
        note("csr-vector").contains("re-timed"),
        "{}",
        note("csr-vector")
    );
    assert!(note("coo").contains("geometric mean"), "{}", note("coo"));
    assert!(note("ell").contains("from the features"), "{}", note("ell"));
}

#[test]
fn a_transferred_model_states_the_uncertainty_its_calibration_shows() {
    let (rows, m, on_ref) = reference_of_4tbs(50e6);
    let refs: Vec<&TableRow> = on_ref.iter().collect();
    let cal_ref = calibration(&refs, Precision::F64);
    // A target that differs from the reference by ±20 % at random per matrix and
    // configuration: no transfer can predict it better than that.
    let hash = |s: &str| {
        s.bytes()
            .fold(7u64, |h, b| h.wrapping_mul(31).wrapping_add(b as u64))
    };
    let noisy = |exact: bool| -> Vec<TableRow> {
        cal_ref
            .iter()
            .map(|r| {
                let mut r = (*r).clone();
                for t in &mut r.times {
                    let u = (hash(&format!("{}{}", r.matrix, t.config)) % 1000) as f64 / 1000.0;
                    let k = if exact { 1.0 } else { (0.4 * (u - 0.5)).exp() };
                    t.median_s = t.median_s.map(|s| s * 1.3 * k);
                }
                r
            })
            .collect()
    };
    let sigma_of = |x: &OwnModel, label: &str| {
        let f = &cal_ref[0].features;
        x.uncertainty_label(f, label).unwrap() / x.predict_label(f, label).unwrap()
    };
    let (exact, rough) = (noisy(true), noisy(false));
    let (exact, rough): (Vec<&TableRow>, Vec<&TableRow>) =
        (exact.iter().collect(), rough.iter().collect());
    let (xe, xr) = (
        m.cross_fit(&cal_ref, &exact, None),
        m.cross_fit(&cal_ref, &rough, None),
    );
    let (side_e, side_r) = (xe.cross.as_ref().unwrap(), xr.cross.as_ref().unwrap());
    for label in ["csr-vector", "coo", "ell", "csr-merge"] {
        // An exact transfer keeps the native sigma (0.1) and is certain from a measured time.
        assert!((sigma_of(&xe, label) - 0.1).abs() < 0.01, "{label}");
        let fam = sparsecast::learn::transfer::family(label);
        assert!(side_e.sigma[&fam] < 0.01, "{label}: {:?}", side_e.sigma);
        // A noisy one adds the noise: the one-sigma (68th percentile) of |ln k| for k uniform
        // in e^±0.2 is 0.137.
        let added = (sigma_of(&xr, label).powi(2) - 0.01).sqrt();
        assert!((0.06..0.16).contains(&added), "{label}: {added}");
        assert!(
            (0.06..0.16).contains(&side_r.sigma[&fam]),
            "{label}: {:?}",
            side_r.sigma
        );
    }
    // The stated sigma of a prediction from a measured time is the measured-on one.
    let measured = sparsecast::learn::cross_own::MeasuredOwn {
        model: &xr,
        times: vec![("coo".into(), 1e-5)],
    };
    let f = &rows[0].features;
    let cfg = KernelConfig::parse_label("coo").unwrap();
    use sparsecast::model::Model;
    let (t, u) = (
        measured.predict_config(f, &cfg).unwrap(),
        measured.uncertainty_config(f, &cfg).unwrap(),
    );
    assert!((u / t - side_r.sigma["coo"]).abs() < 1e-12, "{u} {t}");
}

#[test]
fn instrument_cross_from_transfers_our_model_on_the_cpu() {
    use sparsecast::learn::cross_own::CalibrationRow;
    use sparsecast::matrix::generate::{GeneratorSpec, RowLength, Stencil};
    use sparsecast::model::NamedModel;
    let dir = tempfile::tempdir().unwrap();
    let (reference, with_own, target) = (
        dir.path().join("ref.json"),
        dir.path().join("ref-own.json"),
        dir.path().join("tar.json"),
    );
    let quick = [
        "--backend",
        "cpu",
        "--quick",
        "--no-statistical",
        "--precision",
        "f64",
    ];
    run_ok(
        bin()
            .arg("instrument")
            .args(quick)
            .arg("--out")
            .arg(&reference),
    );
    // The reference's sparsecast model: the physical base alone, and three calibration
    // matrices with times "measured" on it.
    let labels = ["csr-scalar", "csr-vector", "coo", "ell"];
    let specs = [
        GeneratorSpec::Random {
            rows: 3000,
            cols: 3000,
            row_len: RowLength::Constant { nnz: 8 },
            seed: 1,
        },
        GeneratorSpec::Stencil {
            stencil: Stencil::D2P5,
            n: 60,
        },
        GeneratorSpec::Banded {
            n: 4000,
            half_bandwidth: 6,
            seed: 2,
        },
    ];
    let mut own = base_model(
        &h100_f64_rows(),
        Device {
            floor_s: 1e-5,
            bandwidth: 2e10,
            l2_bytes: 50e6,
        },
    );
    own.configs.retain(|c| labels.contains(&c.config.as_str()));
    own.calibration = Some(
        specs
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let nnz = spec.generate().unwrap().nnz() as u64;
                CalibrationRow {
                    matrix: format!("gen/cal-{i}"),
                    spec: spec.clone(),
                    nnz,
                    times: labels
                        .iter()
                        .map(|l| (l.to_string(), 2e-5 + nnz as f64 * 1e-9))
                        .collect(),
                }
            })
            .collect(),
    );
    let mut p = Profile::load(&reference).unwrap();
    p.precisions
        .iter_mut()
        .find(|s| s.precision == Precision::F64)
        .unwrap()
        .models
        .push(NamedModel::new("sparsecast", StoredModel::Sparsecast(own)));
    p.save(&with_own).unwrap();
    let out = run_ok(
        bin()
            .arg("instrument")
            .args(quick)
            .arg("--cross-from")
            .arg(&with_own)
            .arg("--out")
            .arg(&target),
    );
    assert!(out.contains("sparsecast: 3 calibration matrices"), "{out}");
    let t = Profile::load(&target).unwrap();
    let ts = t.precision(Precision::F64).unwrap();
    let moved = ts
        .models
        .iter()
        .find_map(|m| match &m.model {
            StoredModel::Sparsecast(o) => Some(o),
            _ => None,
        })
        .expect("the target profile carries our transferred model");
    let side = moved.cross.as_ref().expect("with the reference's side");
    assert_eq!(side.device_name, p.device_name);
    let cal = moved.calibration.as_ref().unwrap();
    assert_eq!(cal.len(), 3);
    // Measured on this machine: every configuration of every calibration matrix.
    assert!(cal.iter().all(|c| labels
        .iter()
        .all(|l| c.times.get(*l).is_some_and(|s| *s > 0.0))));

    // Times measured on the reference carried to the target: exactly the model's own.
    let (mtx, v, b) = bench_then_predict(dir.path(), &target, "sparsecast");
    let a = sparsecast::matrix::mm::read::<f64>(&mtx).unwrap();
    let f = sparsecast::features::Features::compute(&a);
    let mut checked = 0;
    for k in v["results"][0]["kernels"].as_array().unwrap() {
        let label = k["variant"].as_str().unwrap();
        let got = k["seconds"].as_f64().unwrap();
        let t_ref = b["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["kernel"] == label)
            .and_then(|r| r["median_s"].as_f64());
        let want = match t_ref {
            Some(t_ref) => moved.from_measured(&f, label, t_ref).unwrap(),
            None => moved.predict_label(&f, label).unwrap(),
        };
        assert!((got / want - 1.0).abs() < 1e-9, "{label}: {got} vs {want}");
        checked += t_ref.is_some() as usize;
    }
    assert!(checked >= 3, "{v}");
}

#[test]
fn train_calibration_only_stores_the_calibration_matrices_of_the_tables() {
    use sparsecast::learn::transfer::CALIBRATION_MAX_NNZ;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json.gz");
    let data = repo("data/corpus/h100.jsonl.gz");
    run_ok(
        bin()
            .args(["train", "--calibration-only", "--data"])
            .arg(&data)
            .arg("--base")
            .arg(repo("profiles/h100.json.gz"))
            .arg("--out")
            .arg(&out),
    );
    let rows = table::read(&data).unwrap();
    let p = Profile::load(&out).unwrap();
    let mut seen = 0;
    for s in &p.precisions {
        for m in &s.models {
            let StoredModel::Sparsecast(o) = &m.model else {
                continue;
            };
            let cal = o.calibration.as_ref().expect("calibration stored");
            assert_eq!(cal.len(), 17);
            assert!(cal.windows(2).all(|w| w[0].nnz <= w[1].nnz));
            for c in cal {
                assert!(c.nnz <= CALIBRATION_MAX_NNZ);
                // The times are the table's, of this precision.
                let r = rows
                    .iter()
                    .find(|r| r.matrix == c.matrix && r.precision == s.precision)
                    .unwrap();
                assert_eq!(
                    c.times.get("csr-merge").copied(),
                    r.get("csr-merge").unwrap().time()
                );
                assert_eq!(&c.spec, sparsecast::learn::transfer::spec_of(r).unwrap());
            }
            seen += 1;
        }
    }
    assert_eq!(seen, 2);
    // A base without our model has nowhere to store them.
    let mut bare = p.clone();
    for s in &mut bare.precisions {
        s.models.retain(|m| m.name != "sparsecast");
    }
    let bare_path = dir.path().join("bare.json.gz");
    bare.save(&bare_path).unwrap();
    let o = bin()
        .args(["train", "--calibration-only", "--data"])
        .arg(&data)
        .arg("--base")
        .arg(&bare_path)
        .arg("--out")
        .arg(dir.path().join("q.json"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no sparsecast model"));
}
