//! Device profiles: a round trip through a file is lossless, and damaged profiles are rejected
//! with an error that says what is wrong.

use sparsecast::backend::{Timing, TimingProtocol};
use sparsecast::instrument::{plan, DeviceLimits, Measurement, Statistic, SuiteConfig};
use sparsecast::model::AnalyticalModel;
use sparsecast::profile::{PrecisionProfile, Profile, SCHEMA_VERSION};
use sparsecast::Precision;

/// A profile of the papers' C2050 with made-up but plausible times (growing with strips and
/// P_NZ, a little jitter between runs).
fn sample_profile() -> Profile {
    let limits = DeviceLimits::tesla_c2050();
    let suite = SuiteConfig::default();
    let timing = TimingProtocol {
        runs: 6,
        warmup: 2,
        cold: false,
        warmup_ms: 1.0,
        batch_ms: 0.05,
        ..TimingProtocol::default()
    };
    let mut precisions = Vec::new();
    for precision in [Precision::F32, Precision::F64] {
        let planned = plan(&limits, &suite, precision).unwrap();
        let ms: Vec<Measurement> = planned
            .points
            .iter()
            .map(|q| {
                let base = 2e-6 + 1e-10 * (q.rows * q.pnz) as f64 * precision.bytes() as f64;
                let samples: Vec<f64> = (0..timing.runs)
                    .map(|j| base * (1.0 + 0.01 * j as f64))
                    .collect();
                let t = Timing::from_samples(samples.clone(), timing.warmup);
                Measurement {
                    kernel: q.variant,
                    rows: q.rows,
                    cols: q.cols,
                    pnz: q.pnz,
                    strips: q.strips,
                    warm_mean: t.warm_mean(),
                    median: t.median(),
                    samples,
                }
            })
            .collect();
        precisions.push(PrecisionProfile {
            precision,
            limits: limits.clone(),
            statistic: Statistic::WarmMean,
            bounds: None,
            micro: Vec::new(),
            models: vec![sparsecast::model::NamedModel::new(
                "analytical",
                sparsecast::model::StoredModel::Analytical(
                    AnalyticalModel::fit(precision, &limits, Statistic::WarmMean, &ms).unwrap(),
                ),
            )],
            skipped_notes: Vec::new(),
            skipped: planned.skipped,
            seconds: 1.5,
            measurements: ms,
        });
    }
    Profile {
        schema_version: SCHEMA_VERSION,
        sparsecast_version: env!("CARGO_PKG_VERSION").into(),
        backend: "cuda".into(),
        device_name: limits.name.clone(),
        device_info: Some(serde_json::json!({ "name": "Tesla C2050", "cc": [2, 0] })),
        created_unix: 1_700_000_000,
        timing,
        suite,
        source: "device".into(),
        precisions,
    }
}

#[test]
fn round_trip_through_a_file() {
    let p = sample_profile();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c2050.json");
    p.save(&path).unwrap();
    let q = Profile::load(&path).unwrap();
    assert!(p == q, "the round trip changed the profile");
    assert_eq!(
        q.precision(Precision::F64).unwrap().precision(),
        Precision::F64
    );
    q.check_backend("cuda").unwrap();
}

#[test]
fn a_gz_path_is_written_compressed_and_read_back() {
    let p = sample_profile();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c2050.json.gz");
    p.save(&path).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(&bytes[..2], &[0x1f, 0x8b], "not gzip");
    assert!(Profile::load(&path).unwrap() == p);
    // Damaged gzip is a clear error naming the file, not a panic.
    let bad = dir.path().join("bad.json.gz");
    std::fs::write(&bad, &bytes[..bytes.len() / 2]).unwrap();
    let e = Profile::load(&bad).unwrap_err().to_string();
    assert!(e.contains("bad.json.gz") && e.contains("gzip"), "{e}");
}

/// Serialize, let `edit` damage the JSON value, and load the result.
fn load_edited(edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut v = serde_json::to_value(sample_profile()).unwrap();
    edit(&mut v);
    let text = serde_json::to_string_pretty(&v).unwrap();
    Profile::from_json("edited.json", &text)
        .expect_err("a damaged profile must be rejected")
        .to_string()
}

#[test]
fn wrong_schema_version_is_rejected() {
    let e = load_edited(|v| v["schema_version"] = 3.into());
    assert!(
        e.contains("schema version 3") && e.contains("edited.json"),
        "{e}"
    );
}

#[test]
fn missing_field_is_rejected_with_its_name_and_line() {
    let e = load_edited(|v| {
        v["precisions"][0]["models"][0]["model"]
            .as_object_mut()
            .unwrap()
            .remove("ell");
    });
    assert!(e.contains("missing field `ell`"), "{e}");
    assert!(e.starts_with("edited.json:"), "{e}");
}

#[test]
fn nan_and_non_positive_times_are_rejected() {
    // serde_json writes NaN as null.
    let e = load_edited(|v| {
        v["precisions"][0]["measurements"][3]["warm_mean"] = serde_json::Value::Null
    });
    assert!(e.contains("null"), "{e}");
    let e = load_edited(|v| v["precisions"][1]["measurements"][0]["samples"][4] = (-1.0).into());
    assert!(e.contains("not a positive number"), "{e}");
    let e = load_edited(|v| {
        v["precisions"][0]["models"][0]["model"]["coo"]["line"]["slope"] = serde_json::Value::Null
    });
    assert!(e.contains("null"), "{e}");
}

#[test]
fn parameters_that_do_not_follow_from_the_measurements_are_rejected() {
    let e = load_edited(|v| {
        let s = &mut v["precisions"][0]["models"][0]["model"]["ell"]["f"]["slope"];
        *s = (s.as_f64().unwrap() * 1.01).into();
    });
    assert!(e.contains("analytical.ell.f.slope"), "{e}");
    // A measurement changed behind the model's back.
    let e = load_edited(|v| {
        let m = &mut v["precisions"][1]["measurements"][0];
        for k in ["warm_mean", "median"] {
            m[k] = (m[k].as_f64().unwrap() * 2.0).into();
        }
        for s in m["samples"].as_array_mut().unwrap() {
            *s = (s.as_f64().unwrap() * 2.0).into();
        }
    });
    assert!(e.contains("does not follow"), "{e}");
    // Mean that does not match the samples.
    let e = load_edited(|v| {
        let m = &mut v["precisions"][0]["measurements"][2]["warm_mean"];
        *m = (m.as_f64().unwrap() * 1.5).into();
    });
    assert!(e.contains("does not match the samples"), "{e}");
}

#[test]
fn other_damage_is_rejected() {
    let e = load_edited(|v| v["backend"] = "opencl".into());
    assert!(e.contains("unknown backend"), "{e}");
    let e = load_edited(|v| v["surprise"] = 1.into());
    assert!(e.contains("unknown field"), "{e}");
    let e = load_edited(|v| {
        let first = v["precisions"][0].clone();
        v["precisions"][1] = first;
    });
    assert!(e.contains("two sections"), "{e}");
    let e = load_edited(|v| {
        // The sixth whole-strip benchmark (after the 3 × 8 sub-strip ones): 6 strips.
        let r = &mut v["precisions"][0]["measurements"][24 + 5]["rows"];
        *r = (r.as_u64().unwrap() + 1).into();
    });
    assert!(e.contains("is not 6 strips of 672"), "{e}");
    let e = load_edited(|v| v["precisions"][0]["measurements"][0]["kernel"] = "csr-t3".into());
    assert!(e.contains("unknown format"), "{e}");
    let text = serde_json::to_string_pretty(&sample_profile()).unwrap();
    let cut = &text[..text.len() / 2];
    let e = Profile::from_json("cut.json", cut).unwrap_err().to_string();
    assert!(
        e.starts_with("cut.json:") && e.contains("not valid JSON"),
        "{e}"
    );
    let e = Profile::from_json("x.json", "{}").unwrap_err().to_string();
    assert!(e.contains("schema_version"), "{e}");
}

#[test]
fn a_profile_of_another_backend_is_refused() {
    let p = sample_profile();
    let e = p.check_backend("cpu").unwrap_err().to_string();
    assert!(
        e.contains("cuda backend") && e.contains("not with the cpu backend"),
        "{e}"
    );
    let mut one = p.clone();
    one.precisions.truncate(1);
    assert!(one.precision(Precision::F64).is_err());
}
