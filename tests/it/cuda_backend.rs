//! GPU tests of the CUDA backend. Without a CUDA device (CI) each test prints
//! "skipped: no CUDA device" and checks nothing else.

use sparsecast::backend::cuda::CudaBackend;
use sparsecast::backend::selftest::{self, Outcome, SelftestConfig};
use sparsecast::backend::{Backend, KernelConfig, TimingProtocol, Variant};
use sparsecast::{Csr, Error};

/// The memory test compares the device's free memory before and after a refused preparation,
/// which another test allocating at the same moment would disturb (it did, on the H200): every GPU
/// test holds [`gpu_serial`].
use crate::common::{cuda as backend, gpu_serial as serial};

#[test]
fn no_device_error_is_one_clear_message() {
    if let Err(e) = CudaBackend::new(0) {
        let msg = e.to_string();
        assert!(matches!(e, Error::NoCuda(_)), "{msg}");
        assert!(!msg.contains('\n'), "one line: {msg}");
        println!("skipped: {msg}");
    }
}

#[test]
fn every_kernel_passes_the_selftest() {
    let _serial = serial();
    let Some(be) = backend() else { return };
    let matrices = selftest::test_matrices(3, 1);
    let cfg = SelftestConfig::all(vec![64, 256], 3);
    let (results, secs) = selftest::run_all(&be, &matrices, &cfg, &mut |_| {});
    let failed: Vec<_> = results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Fail { .. }))
        .collect();
    let passed = results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Pass { .. }))
        .count();
    println!("{} cases, {passed} passed, in {secs:.1} s", results.len());
    assert!(failed.is_empty(), "failures: {failed:#?}");
    // Our CSR kernels and cuSPARSE's never skip a matrix.
    for r in &results {
        if r.variant.starts_with("csr") || r.variant.starts_with("cusparse-csr") {
            assert!(
                matches!(r.outcome, Outcome::Pass { .. }),
                "{} {} on {}: {:?}",
                r.variant,
                r.precision,
                r.matrix,
                r.outcome
            );
        }
    }
}

#[test]
fn describe_reads_the_device() {
    let _serial = serial();
    let Some(be) = backend() else { return };
    let d = be.describe();
    println!("{d:#?}");
    assert!(d.sm_count > 0 && d.max_threads_per_block >= 256);
    assert_eq!(d.warp_size, 32);
    assert_eq!(d.max_warps_per_sm * d.warp_size, d.max_threads_per_sm);
    assert!(d.l2_bytes > 0 && d.global_mem > d.l2_bytes);
    assert!(d.copy_bandwidth_gbs.is_finite() && d.copy_bandwidth_gbs > 1.0);
    assert!(d.arch.starts_with("sm_"));
}

#[test]
fn a_matrix_larger_than_device_memory_is_refused_before_allocating() {
    let _serial = serial();
    let Some(be) = backend() else { return };
    // 2 M rows, one of them with 200 000 entries: as ELL, 2e6 × 2e5 × 12 bytes ≈ 4.8 TB.
    let n = 2_000_000usize;
    let long = 200_000usize;
    let mut row_ptr = vec![0usize; n + 1];
    for p in row_ptr.iter_mut().skip(2) {
        *p = long;
    }
    let csr = Csr::new(
        n,
        n,
        row_ptr,
        (0..long as u32).collect(),
        vec![1.0f64; long],
    )
    .unwrap();
    let (free_before, _) = be.memory().unwrap();
    let t0 = std::time::Instant::now();
    let err = match Backend::<f64>::prepare(&be, &csr, &KernelConfig::new(Variant::Ell)) {
        Ok(_) => panic!("an ELL matrix of ~4.8 TB was accepted"),
        Err(e) => e.to_string(),
    };
    println!("{err}");
    assert!(
        err.contains("device memory") && err.contains("nothing was allocated"),
        "{err}"
    );
    assert!(
        t0.elapsed().as_secs_f64() < 5.0,
        "refusal must come before the conversion"
    );
    let (free_after, _) = be.memory().unwrap();
    assert!(
        free_after + (64 << 20) >= free_before,
        "memory was allocated"
    );
}

#[test]
fn timing_returns_every_run() {
    let _serial = serial();
    let Some(be) = backend() else { return };
    let matrices = selftest::test_matrices(5, 4);
    let csr = matrices
        .iter()
        .find(|m| m.name == "random")
        .unwrap()
        .csr
        .clone();
    for variant in [
        Variant::Csr { threads_per_row: 4 },
        Variant::CsrMerge,
        Variant::Coo,
        Variant::Vendor(sparsecast::backend::VendorAlg::CsrAlg2),
    ] {
        let mut p = Backend::<f64>::prepare(&be, &csr, &KernelConfig::new(variant)).unwrap();
        p.set_x(&vec![1.0; csr.ncols]).unwrap();
        for cold in [false, true] {
            let proto = TimingProtocol {
                runs: 12,
                warmup: 2,
                cold,
                warmup_ms: 1.0,
                batch_ms: 0.05,
                ..TimingProtocol::default()
            };
            let t = p.time(&proto).unwrap();
            assert_eq!(t.samples.len(), 12);
            assert!(
                t.samples.iter().all(|&s| s > 0.0 && s < 1.0),
                "{:?}",
                t.samples
            );
            println!(
                "{variant} cold={cold}: median {:.2} us, warm mean {:.2} us",
                t.median() * 1e6,
                t.warm_mean() * 1e6
            );
        }
        // Effective bytes: the format once plus x and y.
        let fp = p.footprint_bytes();
        assert_eq!(p.effective_bytes(), fp + (csr.nrows + csr.ncols) as u64 * 8);
    }
}
