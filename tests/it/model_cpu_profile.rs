//! The committed CPU example profile: it loads and validates, predicts real matrices, and a
//! prediction of every modeled kernel costs well under a millisecond.

use sparsecast::backend::Variant;
use sparsecast::features::Features;
use sparsecast::formats::FormatParams;
use sparsecast::model::{rank, Model};
use sparsecast::profile::Profile;
use sparsecast::Precision;
use std::path::Path;
use std::time::Instant;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn example() -> Profile {
    Profile::load(&root().join("profiles/cpu-example.json")).unwrap()
}

#[test]
fn the_example_profile_is_valid() {
    let p = example();
    p.check_backend("cpu").unwrap();
    for precision in [Precision::F32, Precision::F64] {
        let s = p.precision(precision).unwrap();
        assert!(!s.measurements.is_empty());
        let kernels = s.model.variants();
        for v in [Variant::Ell, Variant::Coo, Variant::Hyb] {
            assert!(kernels.contains(&v));
        }
    }
}

#[test]
fn predicting_every_kernel_costs_under_a_millisecond() {
    let p = example();
    let model = &p.precision(Precision::F64).unwrap().model;
    let a = sparsecast::matrix::mm::read::<f64>(&root().join("data/cage11.mtx.gz")).unwrap();
    let f = Features::compute(&a);
    let params = FormatParams::default();
    // The best of several tries, so that a busy machine does not decide the outcome.
    let mut best = f64::INFINITY;
    for _ in 0..20 {
        let t = Instant::now();
        let r = rank(model, &f, &params);
        best = best.min(t.elapsed().as_secs_f64());
        assert!(r.rows.iter().all(|x| x.seconds.is_some_and(|s| s > 0.0)));
        assert_eq!(r.best().unwrap().rank, Some(1));
    }
    assert!(best < 1e-3, "ranking took {best} s");
    // The trait path and the summary path agree.
    for v in model.variants() {
        let via_features = model.predict(&f, v, &params).unwrap();
        let via_shape = model
            .predict_shape(&sparsecast::model::Shape::from_features(&f), v, &params)
            .unwrap();
        assert_eq!(via_features, via_shape);
    }
}
