//! The model platform: embedded profiles and their migration, named models, the device bounds
//! every prediction is clamped to, and `instrument --out` checked before measuring.

use sparsecast::backend::Variant;
use sparsecast::features::Features;
use sparsecast::formats::FormatParams;
use sparsecast::model::{rank, Bounded, DeviceBounds, Model, Shape};
use sparsecast::profile::{Profile, SCHEMA_VERSION};
use sparsecast::{Csr, Error, Precision, Result};
use std::process::Command;

/// The fixes of issue 11 hold in every section: no line makes time fall with more work, and
/// CSR's T2 is Relationship-1 at the line's P_NZ (003 §4.1.2).
fn assert_fixed(s: &sparsecast::profile::PrecisionProfile) {
    assert_eq!(s.models[0].name, "analytical");
    let a = s.analytical().unwrap();
    assert!(a.ell.f.slope >= 0.0 && a.ell.f.eval(a.ell.min_strips) >= 0.0);
    assert!(a.coo.line.slope >= 0.0);
    for c in &a.csr {
        assert!(c.rel1.low.slope >= 0.0 && c.rel2_low.line.slope >= 0.0);
        assert_eq!(c.rel2_low.t2, c.rel1.low.eval(c.rel2_low.pnz as f64));
    }
    assert!(s.bounded_models(Some(&["nope".to_string()])).is_err());
}

#[test]
fn the_embedded_profiles_are_measured_and_selectable() {
    for (gpu, other) in [
        ("H200", "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79 GiB)"),
        ("h100", "NVIDIA H200 (sm_90, 132 SMs, 139 GiB)"),
    ] {
        let (name, p) = Profile::load_embedded_for(Some(gpu)).unwrap().unwrap();
        assert!(name.to_lowercase().contains(&gpu.to_lowercase()), "{name}");
        assert_eq!(p.schema_version, SCHEMA_VERSION);
        assert!(!p.matches_device(other), "{gpu} profile matches {other}");
        for s in &p.precisions {
            assert_fixed(s);
            // Beside it, the learned models trained on data/corpus (issues 13, 14).
            let names: Vec<&str> = s.models.iter().map(|m| m.name.as_str()).collect();
            for learned in ["lr", "gb", "knn", "sparsecast"] {
                assert!(names.contains(&learned), "{learned} missing: {names:?}");
            }
            // Instrumented with schema 2: the bounds were measured on the device.
            let b = s.bounds.as_ref().expect("measured bounds");
            assert!(b.launch_floor_s > 1e-7 && b.launch_floor_s < 1e-4, "{b:?}");
            assert!(b.dram_gbs > 1000.0 && b.l2_gbs >= b.dram_gbs, "{b:?}");
        }
    }
    let e = Profile::load_embedded_for(Some("h999"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("no embedded profile") && e.contains("h200"),
        "{e}"
    );
    let (_, h200) = Profile::load_embedded_for(Some("h200")).unwrap().unwrap();
    assert!(h200.matches_device("NVIDIA H200 (sm_90, 132 SMs, 139 GiB)"));
}

#[test]
fn a_schema_1_profile_is_migrated_and_refitted() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/cpu-example.json");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("\"schema_version\": 1"),
        "the fixture is schema 1"
    );
    let p = Profile::load(&path).unwrap();
    assert_eq!(p.schema_version, SCHEMA_VERSION);
    for s in &p.precisions {
        // Schema 1 had one analytical model and no bounds: refitted, unbounded.
        assert!(s.bounds.is_none());
        assert_fixed(s);
    }
}

/// 1 µs for every kernel: below any launch floor.
struct Fast;
impl Model for Fast {
    fn name(&self) -> &str {
        "fast"
    }
    fn precision(&self) -> Precision {
        Precision::F64
    }
    fn variants(&self) -> Vec<Variant> {
        vec![Variant::Coo, Variant::Ell]
    }
    fn predict_shape(&self, _: &Shape, v: Variant, _: &FormatParams) -> Result<f64> {
        match v {
            Variant::Coo => Ok(1e-6),
            _ => Err(Error::Unsupported("no".into())),
        }
    }
}

#[test]
fn predictions_below_the_floor_are_clamped_and_flagged() {
    let (rows, cols): (Vec<u32>, Vec<u32>) = (0..200u32).map(|k| (k / 2, k % 2)).unzip();
    let a = Csr::<f64>::from_triplets(100, 100, &rows, &cols, &[1.0; 200]).unwrap();
    let f = Features::compute(&a);
    let b = Bounded {
        model: Fast,
        bounds: Some(DeviceBounds {
            launch_floor_s: 4e-6,
            dram_gbs: 3000.0,
            l2_gbs: 8000.0,
            l2_bytes: 50 << 20,
            l2_read_gbs: None,
        }),
    };
    let r = rank(&b, &f, &FormatParams::default());
    let coo = &r.rows[0];
    assert_eq!(coo.seconds, Some(4e-6));
    assert!(coo.clamped.as_deref().unwrap().contains("launch floor"));
    assert!(coo.note.contains("clamped"), "{}", coo.note);
    // The refusal passes through untouched.
    assert!(r.rows[1].seconds.is_none());
    // Without bounds nothing changes.
    let unb = Bounded {
        model: Fast,
        bounds: None,
    };
    assert_eq!(
        unb.predict(&f, Variant::Coo, &FormatParams::default())
            .unwrap(),
        1e-6
    );
}

#[test]
fn instrument_refuses_an_unwritable_out_before_measuring() {
    let t = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_sparsecast"))
        .args([
            "instrument",
            "--backend",
            "cpu",
            "--out",
            "/nonexistent-dir/p.json",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("/nonexistent-dir/p.json") && err.contains("No such file"),
        "{err}"
    );
    // The full CPU suite takes minutes; the refusal comes before any of it.
    assert!(t.elapsed().as_secs() < 20);
}

#[test]
fn cpu_instrument_measures_bounds_and_every_prediction_respects_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cpu.json");
    let out = Command::new(env!("CARGO_BIN_EXE_sparsecast"))
        .args([
            "instrument",
            "--backend",
            "cpu",
            "--quick",
            "--precision",
            "f64",
            "--statistic",
        ])
        .args(["median", "--out"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let p = Profile::load(&path).unwrap();
    let s = p.precision(Precision::F64).unwrap();
    let b = s.bounds.clone().expect("instrument measures the bounds");
    assert!(!s.micro.is_empty());
    // The floor is the fastest SpMV measured, micro-benchmarks and suites (the statistical
    // models' too) alike.
    let statistical = s.models.iter().flat_map(|m| match &m.model {
        sparsecast::model::StoredModel::Statistical(st) => st.measurements.iter(),
        _ => [].iter(),
    });
    let fastest = s
        .measurements
        .iter()
        .chain(statistical)
        .map(|m| m.time(s.statistic))
        .chain(s.micro.iter().map(|m| m.seconds))
        .fold(f64::INFINITY, f64::min);
    assert_eq!(b.launch_floor_s, fastest);
    let a =
        sparsecast::matrix::mm::read::<f64>(std::path::Path::new("data/cage11.mtx.gz")).unwrap();
    let f = Features::compute(&a);
    for m in s.bounded_models(None).unwrap() {
        let r = rank(&m, &f, &FormatParams::default());
        for row in r.rows.iter().filter(|r| r.seconds.is_some()) {
            let t = row.seconds.unwrap();
            assert!(t >= b.launch_floor_s, "{row:?}");
            assert!(
                row.effective_gbs.unwrap()
                    <= b.effective_ceiling_gbs(row.bytes.unwrap()) * (1.0 + 1e-9),
                "{row:?}"
            );
        }
    }
}
