//! The statistical models' benchmark matrices generated on the device
//! (`Backend::prepare_distributed`, kernels/rowdist.cu) against the host-built ones: the same
//! check as the "gen …" rows of `sparsecast selftest --backend cuda`. The GPU test prints
//! "skipped: no CUDA device" without one (CI); the source test runs everywhere.

use sparsecast::backend::cpu::CpuBackend;
use sparsecast::backend::cuda::{rowdist_check, sources};
use sparsecast::backend::selftest::Outcome;
use sparsecast::backend::{Backend, KernelConfig, Variant};
use sparsecast::instrument::{rowdist, RowDist, RowLengths, Spread, STAT_KERNELS};
use sparsecast::Error;

#[test]
fn rowdist_source_holds_the_contracts_salt_and_entry_points() {
    let f = sources::file_of("rd_lengths_k").expect("rd_lengths_k is registered");
    assert_eq!(f.name, "rowdist");
    assert!(f.source.contains(&format!("{:X}ull", rowdist::LEN_SALT)));
    for kind in ["csr", "ell", "jad"] {
        for t in ["f32", "f64"] {
            assert!(f.entry_points.contains(&format!("rd_{kind}_{t}").as_str()));
        }
    }
}

#[test]
fn the_cpu_backend_leaves_generation_to_the_host() {
    let rl = RowLengths {
        dist: RowDist::Normal,
        spread: Spread::Sqrt,
    };
    let cfg = KernelConfig::new(Variant::Jad);
    let e = Backend::<f64>::prepare_distributed(&CpuBackend::new(), 10, 10, 3, &rl, &cfg)
        .err()
        .unwrap();
    assert!(matches!(e, Error::Unsupported(_)), "{e}");
}

#[test]
fn device_generated_row_length_matrices_are_the_host_ones() {
    let _serial = crate::common::gpu_serial();
    let Some(be) = crate::common::cuda() else {
        return;
    };
    let results = rowdist_check::run(&be, &STAT_KERNELS, &mut |_| {});
    assert_eq!(results.len(), rowdist_check::count(&STAT_KERNELS));
    let failed: Vec<String> = results
        .iter()
        .filter_map(|r| match &r.outcome {
            Outcome::Pass { .. } => None,
            o => Some(format!("{} {} {}: {o:?}", r.variant, r.precision, r.matrix)),
        })
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    // Other kernels are left to the host.
    let rl = RowLengths {
        dist: RowDist::Uniform,
        spread: Spread::Sqrt,
    };
    let e =
        Backend::<f64>::prepare_distributed(&be, 10, 100, 5, &rl, &KernelConfig::new(Variant::Coo))
            .err()
            .unwrap();
    assert!(matches!(e, Error::Unsupported(_)), "{e}");
}
