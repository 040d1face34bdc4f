//! The CPU backend: names, supported variants, the prepared kernel's contract (x, poison, run, y,
//! footprints, timing) and every variant on real SuiteSparse matrices.

use sparsecast::backend::cpu::CpuBackend;
use sparsecast::backend::{Backend, KernelConfig, TimingProtocol, Variant};
use sparsecast::formats::{AnyFormat, EllParams, FormatKind, FormatParams};
use sparsecast::{Csr, Error, Scalar};

fn small() -> Csr<f64> {
    Csr::from_triplets(
        4,
        3,
        &[0, 0, 1, 3, 3],
        &[0, 2, 1, 0, 2],
        &[1.0, 2.0, 3.0, 4.0, 5.0],
    )
    .unwrap()
}

#[test]
fn names_and_supported_variants() {
    let b = CpuBackend::new();
    assert_eq!(Backend::<f64>::name(&b), "cpu");
    let dev = Backend::<f32>::device_name(&b);
    assert!(
        dev.ends_with(&format!("({} rayon threads)", rayon::current_num_threads())),
        "{dev}"
    );
    for v in Variant::ours() {
        assert!(Backend::<f64>::supports(&b, v), "{v}");
    }
    for v in Variant::vendor() {
        assert!(!Backend::<f32>::supports(&b, v), "{v}");
        match b.prepare(&small(), &KernelConfig::new(v)) {
            Err(Error::Unsupported(msg)) => assert!(msg.contains("--backend cuda"), "{msg}"),
            other => panic!("{v}: expected Unsupported, got {:?}", other.map(|_| ())),
        };
    }
}

#[test]
fn prepared_kernel_contract() {
    let b = CpuBackend::new();
    let m = small();
    for v in Variant::ours() {
        let mut cfg = KernelConfig::new(v);
        cfg.params.segtile.min_segment = 0.0; // SEG-TILE on rows this short
        let mut k = b.prepare(&m, &cfg).unwrap();
        assert_eq!(k.config(), &cfg);
        let f = AnyFormat::convert(&m, v.format(), &cfg.params).unwrap();
        assert_eq!(k.footprint_bytes(), f.as_dyn().footprint_bytes(), "{v}");
        assert_eq!(
            k.effective_bytes(),
            k.footprint_bytes() + (3 + 4) * 8,
            "{v}: footprint + (ncols + nrows) × sizeof T"
        );
        // Wrong x length is an error, not a panic.
        assert!(matches!(k.set_x(&[1.0; 4]), Err(Error::Invalid(_))));
        k.set_x(&[1.0, 10.0, 100.0]).unwrap();
        k.poison_y().unwrap();
        assert!(k.y().unwrap().iter().all(|v| v.is_nan()), "{v}: poison");
        k.run().unwrap();
        assert_eq!(k.y().unwrap(), vec![201.0, 30.0, 0.0, 504.0], "{v}");
    }
}

#[test]
fn timing_keeps_every_sample() {
    let b = CpuBackend::new();
    let mut k = b
        .prepare(&small().cast::<f32>(), &KernelConfig::new(Variant::Sell))
        .unwrap();
    let p = TimingProtocol {
        runs: 7,
        warmup: 2,
        cold: true,
        warmup_ms: 1.0,
        batch_ms: 0.05,
        ..TimingProtocol::default()
    };
    let t = k.time(&p).unwrap();
    assert_eq!((t.samples.len(), t.warmup), (7, 2));
    assert!(t.samples.iter().all(|s| s.is_finite() && *s >= 0.0));
    assert!(t.warm_mean().is_finite());
    let none = TimingProtocol {
        runs: 0,
        ..TimingProtocol::default()
    };
    assert!(matches!(k.time(&none), Err(Error::Invalid(_))));
}

#[test]
fn invalid_csr_and_refusals_are_errors() {
    let b = CpuBackend::new();
    let bad = Csr {
        nrows: 1,
        ncols: 2,
        row_ptr: vec![0, 1],
        col_idx: vec![5],
        values: vec![1.0f64],
    };
    assert!(matches!(
        b.prepare(&bad, &KernelConfig::new(Variant::Coo)),
        Err(Error::Invalid(_))
    ));
    let cfg = KernelConfig {
        params: FormatParams {
            ell: EllParams { width: Some(1) },
            ..FormatParams::default()
        },
        ..KernelConfig::new(Variant::Ell)
    };
    assert!(matches!(
        b.prepare(&small(), &cfg),
        Err(Error::FormatRefused { .. })
    ));
}

/// Read with the crate's own Matrix Market reader.
fn read_mtx_gz(path: &std::path::Path) -> Csr<f64> {
    sparsecast::matrix::mm::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn check_real<T: Scalar>(name: &str, m: &Csr<f64>, tol: f64, expect_dia: bool) {
    let a: Csr<T> = m.cast();
    let x: Vec<T> = (0..a.ncols)
        .map(|j| T::cast_f64(((j * 37 % 101) as f64 - 50.0) / 50.0))
        .collect();
    let xf: Vec<f64> = x.iter().map(|v| v.as_f64()).collect();
    let reference = a.spmv_reference(&xf);
    let b = CpuBackend::new();
    for v in Variant::ours() {
        let mut cfg = KernelConfig::new(v);
        cfg.params.segtile.min_segment = 0.0; // SEG-TILE on rows this short
        let mut k = match b.prepare(&a, &cfg) {
            Ok(k) => k,
            Err(Error::FormatRefused { format, .. }) if format == "dia" && !expect_dia => continue,
            Err(e) => panic!("{name} {v}: {e}"),
        };
        k.set_x(&x).unwrap();
        k.poison_y().unwrap();
        k.run().unwrap();
        let y = k.y().unwrap();
        for i in 0..a.nrows {
            let (c, vals) = a.row(i);
            let scale: f64 = c
                .iter()
                .zip(vals)
                .map(|(&c, &v)| (v.as_f64() * xf[c as usize]).abs())
                .sum();
            let err = (y[i].as_f64() - reference[i]).abs();
            assert!(
                err <= tol * scale,
                "{name} {v} {} row {i}: error {err}",
                T::PRECISION
            );
        }
    }
}

#[test]
fn every_variant_on_real_matrices() {
    let Some(dir) = crate::common::shared_dir() else {
        return;
    };
    // (name, whether DIA accepts it with the default fill limit of 10): west2021 is scattered;
    // bcsstk09 is banded; mbeacxc is 20 % dense, so even all 991 diagonals stay under 10 × nnz.
    for (name, dia) in [("west2021", false), ("bcsstk09", true), ("mbeacxc", true)] {
        let m = read_mtx_gz(&dir.join(format!("matrices/suitesparse/{name}.mtx.gz")));
        let d = AnyFormat::convert(&m, FormatKind::Dia, &FormatParams::default());
        assert_eq!(d.is_ok(), dia, "{name}: DIA acceptance");
        if let Ok(d) = d {
            assert!(d.as_dyn().fill_ratio() <= 10.0);
        }
        check_real::<f64>(name, &m, 1e-12, dia);
        check_real::<f32>(name, &m, 1e-5, dia);
    }
}
