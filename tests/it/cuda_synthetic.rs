//! Benchmark matrices generated on the device (`Backend::prepare_synthetic`, kernels/synthetic.cu).
//! The GPU test prints "skipped: no CUDA device" without one (CI); the source test runs
//! everywhere and compiles the fill kernels when the NVRTC library is present.

use sparsecast::backend::cuda::CudaScalar;
use sparsecast::backend::cuda::{nvrtc, sources, CudaBackend};
use sparsecast::backend::{Backend, KernelConfig, Variant};
use sparsecast::instrument::synthetic;
use sparsecast::Error;

#[test]
fn synthetic_source_is_embedded_names_its_entry_points_and_compiles() {
    let f = sources::file_of("syn_csr_f64").expect("syn_csr_f64 is registered");
    assert_eq!(f.name, "synthetic");
    assert!(sources::ALL.contains(f));
    for kind in ["csr", "ell", "coo", "x"] {
        for t in ["f32", "f64"] {
            let name = format!("syn_{kind}_{t}");
            assert!(f.entry_points.contains(&name.as_str()), "{name} not listed");
            assert!(
                f.source.contains(&format!("({name},")),
                "{name} not defined"
            );
        }
    }
    // The contract's constants appear verbatim in the prelude the kernel files share.
    for c in [
        format!("{:X}ull", synthetic::VALUE_SALT),
        format!("{:X}ull", synthetic::X_SALT),
    ] {
        assert!(sources::PRELUDE.contains(&c), "{c} missing from common.cuh");
    }
    if !nvrtc::present() {
        crate::common::skip(
            crate::common::Lack::Gpu,
            "no NVRTC library (libnvrtc.so); synthetic.cu not compiled",
        );
        return;
    }
    let c = nvrtc::compile(f.name, &f.full_source(), &nvrtc::options("sm_90"))
        .unwrap_or_else(|e| panic!("synthetic.cu: {e}"));
    assert_eq!(&c.cubin[..4], b"\x7fELF");
    // The CUBIN's symbol table names every entry point. (Not the assembler report: on the H200
    // machine NVRTC 13.0 returned a log without ptxas lines, which made that check fail there.)
    for e in f.entry_points {
        let found = c.cubin.windows(e.len()).any(|w| w == e.as_bytes());
        assert!(found, "{e} missing from the CUBIN");
    }
}

/// Compare the device-generated matrix with the host-built one for one kernel and precision.
fn check<T: CudaScalar>(be: &CudaBackend, variant: Variant, rows: usize, cols: usize, pnz: usize) {
    let cfg = KernelConfig::new(variant);
    let what = format!("{variant} {} {rows}×{cols} P_NZ={pnz}", T::PRECISION.name());
    let mut dev = Backend::<T>::prepare_synthetic(be, rows, cols, pnz, &cfg)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let csr = synthetic::build_csr::<T>(rows, cols, pnz, u64::MAX).unwrap();
    let mut host = Backend::<T>::prepare(be, &csr, &cfg).unwrap();
    assert_eq!(dev.footprint_bytes(), host.footprint_bytes(), "{what}");
    assert_eq!(dev.effective_bytes(), host.effective_bytes(), "{what}");

    // x as generated on the device, against the f64 reference of the host-built matrix.
    let x = synthetic::x_vector::<T>(cols);
    let xf: Vec<f64> = x.iter().map(|v| v.as_f64()).collect();
    let want = csr.cast::<f64>().spmv_reference(&xf);
    dev.poison_y().unwrap();
    dev.run().unwrap();
    let got = dev.y().unwrap();
    host.set_x(&x).unwrap();
    host.poison_y().unwrap();
    host.run().unwrap();
    let from_host = host.y().unwrap();
    let eps = T::epsilon().as_f64();
    let tol = |i: usize| {
        let (c, v) = csr.row(i);
        let mag: f64 = c
            .iter()
            .zip(v)
            .map(|(&c, v)| (v.as_f64() * xf[c as usize]).abs())
            .sum();
        (pnz as f64 + 4.0) * eps * mag.max(f64::MIN_POSITIVE)
    };
    let atomics = variant == Variant::Coo;
    for i in 0..rows {
        let (g, w) = (got[i].as_f64(), want[i]);
        assert!(
            (g - w).abs() <= tol(i),
            "{what}: y[{i}] = {g}, reference {w}"
        );
        if !atomics {
            // Same kernel, same arrays, same order of additions: bit for bit.
            assert_eq!(
                g,
                from_host[i].as_f64(),
                "{what}: y[{i}] device vs host matrix"
            );
        }
    }

    // set_x still works: a different x gives that x's product.
    let x2: Vec<T> = (0..cols)
        .map(|j| T::cast_f64((j % 7) as f64 - 3.0))
        .collect();
    let x2f: Vec<f64> = x2.iter().map(|v| v.as_f64()).collect();
    let want2 = csr.cast::<f64>().spmv_reference(&x2f);
    dev.set_x(&x2).unwrap();
    dev.run().unwrap();
    let got2 = dev.y().unwrap();
    for i in 0..rows {
        let err = (got2[i].as_f64() - want2[i]).abs();
        assert!(
            err <= (pnz as f64 + 4.0) * eps * 4.0 * pnz as f64,
            "{what}: set_x y[{i}]"
        );
    }
}

#[test]
fn device_generated_matrices_match_the_host_ones() {
    let _serial = crate::common::gpu_serial();
    let Some(be) = crate::common::cuda() else {
        return;
    };
    let variants = [
        Variant::Csr {
            threads_per_row: 32,
        },
        Variant::Csr { threads_per_row: 4 },
        Variant::Ell,
        Variant::Coo,
    ];
    for &(rows, cols, pnz) in &[
        (1000, 5000, 7),
        (3, 1000, 1),
        (257, 129, 64),
        (20_000, 70_000, 33),
    ] {
        for v in variants {
            check::<f32>(&be, v, rows, cols, pnz);
            check::<f64>(&be, v, rows, cols, pnz);
        }
    }
    // Other variants and shapes are refused with the error the instrument driver expects.
    let e = Backend::<f64>::prepare_synthetic(&be, 10, 100, 5, &KernelConfig::new(Variant::Jad))
        .err()
        .unwrap();
    assert!(matches!(e, Error::Unsupported(_)), "{e}");
    let e = Backend::<f64>::prepare_synthetic(&be, 10, 4, 5, &KernelConfig::new(Variant::Ell))
        .err()
        .unwrap();
    assert!(matches!(e, Error::Invalid(_)), "{e}");
}
