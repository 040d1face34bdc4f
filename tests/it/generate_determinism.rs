//! Every generator family: the same spec gives the same matrix, whatever the thread count, and a
//! different seed gives a different one.

use sparsecast::matrix::generate::{GeneratorSpec, RowLength, Stencil};
use sparsecast::Csr;

/// Specs large enough to span many row chunks (1024 rows / 65536 entries each).
fn specs(seed: u64) -> Vec<GeneratorSpec> {
    vec![
        GeneratorSpec::Random {
            rows: 5000,
            cols: 3000,
            row_len: RowLength::Uniform { min: 0, max: 40 },
            seed,
        },
        GeneratorSpec::Random {
            rows: 3000,
            cols: 100,
            row_len: RowLength::Normal {
                mean: 70.0,
                std: 20.0,
            },
            seed,
        },
        GeneratorSpec::Random {
            rows: 2500,
            cols: 64,
            row_len: RowLength::Constant { nnz: 60 },
            seed,
        },
        GeneratorSpec::Banded {
            n: 4000,
            half_bandwidth: 9,
            seed,
        },
        GeneratorSpec::BlockDiagonal {
            blocks: 300,
            block_size: 7,
            seed,
        },
        GeneratorSpec::PowerLaw {
            n: 6000,
            mean: 10.0,
            exponent: 2.3,
            seed,
        },
    ]
}

fn in_pool(threads: usize, spec: &GeneratorSpec) -> Csr<f64> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap()
        .install(|| spec.generate().unwrap())
}

#[test]
fn same_seed_same_matrix_for_any_thread_count() {
    for spec in specs(11) {
        let a = in_pool(1, &spec);
        let b = in_pool(2, &spec);
        let c = in_pool(3, &spec);
        a.validate().unwrap();
        assert!(a.nnz() > 0, "{}", spec.name());
        assert_eq!(a, b, "{}: 1 vs 2 threads", spec.name());
        assert_eq!(a, c, "{}: 1 vs 3 threads", spec.name());
        assert_eq!(a, spec.generate().unwrap(), "{}: rerun", spec.name());
    }
}

#[test]
fn different_seed_different_matrix() {
    for (s1, s2) in specs(1).into_iter().zip(specs(2)) {
        let (a, b) = (s1.generate().unwrap(), s2.generate().unwrap());
        assert_ne!(a.values, b.values, "{}", s1.name());
    }
}

#[test]
fn stencils_are_deterministic_across_pools() {
    for stencil in [Stencil::D2P5, Stencil::D3P7, Stencil::D3P27] {
        let spec = GeneratorSpec::Stencil { stencil, n: 23 };
        assert_eq!(in_pool(1, &spec), in_pool(2, &spec), "{}", spec.name());
    }
}

#[test]
fn spec_round_trips_through_json() {
    for spec in specs(5) {
        let j = serde_json::to_string(&spec).unwrap();
        let back: GeneratorSpec = serde_json::from_str(&j).unwrap();
        assert_eq!(back, spec, "{j}");
    }
    let s: GeneratorSpec =
        serde_json::from_str(r#"{"family":"stencil","stencil":"3d27","n":4}"#).unwrap();
    assert_eq!(s.name(), "stencil3d27-4");
    assert_eq!(s.generate().unwrap().nnz(), 10 * 10 * 10);
}
