//! Green-context partitions (`CudaBackend::open_partition`, `--sms`). The refusals run
//! everywhere; the GPU tests print "skipped: no CUDA device" without one (CI).

use sparsecast::backend::cuda::CudaBackend;
use sparsecast::backend::selftest::{self, Outcome, SelftestConfig};
use sparsecast::backend::{check_partition, Backend, BackendKind, KernelConfig, TimingProtocol};
use sparsecast::backend::{BackendScalar, Variant};
use sparsecast::instrument::DeviceLimits;
use sparsecast::Error;

use crate::common::{cuda as whole_device, gpu_serial as serial, skip, Lack};

#[test]
fn sizes_the_gpu_cannot_split_and_the_cpu_are_refused_before_any_device_is_opened() {
    // Refused by the request check alone: no driver is needed to say so.
    for bad in [0, 12, 20, 129] {
        let e = CudaBackend::open_partition(0, bad)
            .err()
            .expect("a size off the 8-SM grid is refused");
        assert!(matches!(e, Error::Invalid(_)), "{e}");
        assert!(e.to_string().contains("multiple of 8"), "{e}");
    }
    let e = check_partition(BackendKind::Cpu, Some(8)).unwrap_err();
    assert!(e.to_string().contains("CPU backend has none"), "{e}");
    let e = <f64 as BackendScalar>::open_backend_on(BackendKind::Cpu, Some(16))
        .err()
        .expect("the CPU backend has no partitions");
    assert!(e.to_string().contains("--sms 16"), "{e}");
    check_partition(BackendKind::Cpu, None).unwrap();
    check_partition(BackendKind::Cuda, Some(72)).unwrap();
}

/// The partition of `sms` SMs, or `None` after a skip notice (no device, or a driver without
/// green contexts).
fn partition(sms: u32) -> Option<CudaBackend> {
    match CudaBackend::open_partition(0, sms) {
        Ok(b) => Some(b),
        Err(Error::NoCuda(msg)) => {
            skip(Lack::Gpu, &format!("no CUDA device ({msg})"));
            None
        }
        Err(Error::Unsupported(msg)) if msg.contains("lacks") => {
            skip(Lack::Gpu, &format!("no green contexts ({msg})"));
            None
        }
        Err(e) => panic!("the {sms}-SM partition failed to open: {e}"),
    }
}

#[test]
fn a_partition_reports_its_sms_and_its_limits_scale_with_them() {
    let _serial = serial();
    let Some(whole) = whole_device() else { return };
    let full = whole.describe().sm_count;
    drop(whole);
    let Some(be) = partition(16) else { return };
    let d = be.describe();
    println!(
        "{} / {} SMs, copy {:.0} GB/s",
        d.name, d.sm_count, d.copy_bandwidth_gbs
    );
    assert_eq!(d.sm_count, 16);
    assert_eq!(d.full_sm_count, Some(full));
    assert!(d.name.ends_with("[16-SM partition]"), "{}", d.name);
    assert!(Backend::<f32>::device_name(&be).contains("16 SMs"));
    let limits = DeviceLimits::from(&d);
    assert_eq!(limits.n_sm, 16);
    // Larger than the device is refused with the device's count.
    let e = CudaBackend::open_partition(0, (full / 8 + 1) * 8)
        .err()
        .expect("a partition larger than the device is refused");
    assert!(e.to_string().contains(&format!("{full} SMs")), "{e}");
}

#[test]
fn every_kernel_passes_the_selftest_on_a_partition() {
    let _serial = serial();
    let Some(be) = partition(8) else { return };
    let matrices = selftest::test_matrices(2, 1);
    let cfg = SelftestConfig::all(vec![128], 2);
    let (results, secs) = selftest::run_all(&be, &matrices, &cfg, &mut |_| {});
    let failed: Vec<_> = results
        .iter()
        .filter(|r| matches!(r.outcome, Outcome::Fail { .. }))
        .collect();
    println!("{} cases in {secs:.1} s on 8 SMs", results.len());
    assert!(failed.is_empty(), "failures: {failed:#?}");
}

/// Median seconds of CSR (4 threads per row) on a 2²⁰-row benchmark matrix of 32 non-zeros per
/// row (f64, ≈ 400 MB: DRAM-bound on the whole device).
fn large_csr_time(be: &CudaBackend) -> f64 {
    let n = 1 << 20;
    let cfg = KernelConfig::new(Variant::Csr { threads_per_row: 4 });
    let mut p = Backend::<f64>::prepare_synthetic(be, n, n, 32, &cfg).unwrap();
    let proto = TimingProtocol {
        runs: 10,
        warmup: 2,
        ..TimingProtocol::default()
    };
    p.time(&proto).unwrap().median()
}

#[test]
fn work_on_a_partition_runs_on_its_sms_only() {
    // The test that fails if the backend's stream escaped the green context: with 8 of 132 SMs
    // a DRAM-bound SpMV cannot come near the whole device's bandwidth (one SM draws well under a
    // sixteenth of it), so it must be several times slower.
    let _serial = serial();
    let Some(whole) = whole_device() else { return };
    let t_whole = large_csr_time(&whole);
    drop(whole);
    let Some(part) = partition(8) else { return };
    let t_part = large_csr_time(&part);
    println!(
        "whole device {:.1} us, 8-SM partition {:.1} us ({:.1}x)",
        t_whole * 1e6,
        t_part * 1e6,
        t_part / t_whole
    );
    assert!(
        t_part > 2.0 * t_whole,
        "8 SMs ran at {t_part:e} s against {t_whole:e} s on the whole device: not confined"
    );
}
