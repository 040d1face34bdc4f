//! Compiles every embedded kernel file with NVRTC for sm_90 (the H200) when the NVRTC library is
//! present — no GPU needed — so a kernel that does not compile fails here, not on the device.
//! Without NVRTC (CI) it prints "skipped: no NVRTC library" and checks nothing.

use crate::common::{skip, Lack};
use sparsecast::backend::cuda::{nvrtc, sources, CudaBackend};
use sparsecast::Error;

#[test]
fn every_kernel_file_compiles_for_sm_90() {
    if !nvrtc::present() {
        skip(
            Lack::Gpu,
            "no NVRTC library (libnvrtc.so); kernels not compiled",
        );
        return;
    }
    let _serial = crate::common::gpu_serial();
    let version = nvrtc::version().expect("nvrtc version");
    println!("NVRTC {}.{}", version.0, version.1);
    let opts = nvrtc::options("sm_90");
    for f in sources::ALL {
        let c = nvrtc::compile(f.name, &f.full_source(), &opts)
            .unwrap_or_else(|e| panic!("{}: {e}", f.name));
        assert!(c.cubin.len() > 100, "{}: CUBIN too small", f.name);
        // ELF magic: NVRTC produced machine code, not PTX.
        assert_eq!(&c.cubin[..4], b"\x7fELF", "{}", f.name);
        // The CUBIN's symbol table names every entry point. (NVRTC 13.0 on the H200 machine
        // returns a log without the assembler report, so the log cannot be relied on.)
        for e in f.entry_points {
            let found = c.cubin.windows(e.len()).any(|w| w == e.as_bytes());
            assert!(found, "{}: {e} missing from the CUBIN", f.name);
        }
        println!("--- {} ({} bytes)\n{}", f.name, c.cubin.len(), c.log);
        // Spills from the assembler report, where NVRTC returns one.
        let mut entry = String::new();
        for line in c.log.lines() {
            if line.contains("entry function") {
                entry = line.split('\'').nth(1).unwrap_or_default().to_string();
            }
            if !line.contains("spill stores") {
                continue;
            }
            let stores: u64 = line
                .split("bytes spill stores")
                .next()
                .and_then(|s| s.rsplit(',').next())
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or_else(|| panic!("unexpected assembler line: {line}"));
            assert!(
                stores <= allowed_local(&entry),
                "{entry}: register spills: {line}"
            );
        }
    }
    // Spills and stack frames from the driver, which reports them for the loaded code whatever
    // NVRTC's log holds; needs a GPU.
    match CudaBackend::new(0) {
        Ok(be) => {
            for f in sources::ALL {
                for e in f.entry_points {
                    let r = be
                        .kernel_resources(e)
                        .unwrap_or_else(|err| panic!("{e}: {err}"));
                    println!("{e}: {r:?}");
                    assert!(
                        r.local_bytes as u64 <= allowed_local(e),
                        "{e}: {} bytes of local memory per thread (spills or stack)",
                        r.local_bytes
                    );
                }
            }
        }
        Err(Error::NoCuda(msg)) => skip(
            Lack::Gpu,
            &format!("no CUDA device ({msg}); local-memory (spill) check not run"),
        ),
        Err(e) => panic!("CUDA backend failed to open: {e}"),
    }
}

/// Local memory (spill) bytes per thread a kernel may use: none, except the two-pass
/// merge-path kernel in f64, which spills at the 32-register budget (NVRTC 13.0).
fn allowed_local(entry: &str) -> u64 {
    if entry == "csr_merge_tp_f64" {
        8
    } else {
        0
    }
}
