//! Helpers shared by the test modules: the program under test, the shared real matrices, and
//! skips that are visible (and can be made to fail).

use sparsecast::backend::cuda::CudaBackend;
use sparsecast::Error;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The `sparsecast` binary of this build.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sparsecast"))
}

/// What a skipped test lacks.
#[derive(Clone, Copy, Debug)]
pub enum Lack {
    /// A CUDA device or the NVRTC library: fails under `SPARSECAST_REQUIRE_GPU=1`.
    Gpu,
    /// The shared real matrices (`../shared` beside the repository): fails under
    /// `SPARSECAST_REQUIRE_DATA=1`.
    Data,
}

impl Lack {
    fn variable(self) -> &'static str {
        match self {
            Lack::Gpu => "SPARSECAST_REQUIRE_GPU",
            Lack::Data => "SPARSECAST_REQUIRE_DATA",
        }
    }
}

/// A Matrix Market file in `dir` that declares 2 entries but holds 1 (an input that cannot be
/// read: the error names `short.mtx:4`).
pub fn short_matrix(dir: &Path) -> PathBuf {
    let bad = dir.join("short.mtx");
    std::fs::write(
        &bad,
        "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n",
    )
    .unwrap();
    bad
}

/// A matrix whose recommendation is no close call (a 2-D 5-point stencil on a 200 × 200 grid,
/// written into `dir` by `sparsecast generate`): `csr-t2`, nothing within its uncertainty, in
/// f32 and f64 with session 72's embedded H200 profile. The shipped real matrices' calls move
/// with each refit (that profile calls all eight of cage11, Roget, bcsstk09 and west2021 in both
/// precisions close), so the tests that need a clear answer beside a close one add this one.
pub fn clear_call_matrix(dir: &Path) -> PathBuf {
    let out = dir.join("stencil2d5-200.mtx");
    run_ok(
        bin()
            .args([
                "generate", "stencil", "--points", "5", "--n", "200", "--out",
            ])
            .arg(&out),
    );
    out
}

/// Run `cmd` (the program under test), fail the test with its standard error unless it
/// succeeds, and return its standard output.
pub fn run_ok(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run sparsecast");
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Report a skipped test on the real standard error (bypassing the harness's capture, so that
/// it shows in a plain `cargo test`), or fail it when the environment says that what it lacks
/// must be there.
pub fn skip(lack: Lack, why: &str) {
    let var = lack.variable();
    if std::env::var_os(var).is_some_and(|v| !v.is_empty() && v != "0") {
        panic!("{var} is set, but this test would be skipped: {why}");
    }
    sparsecast::util::notice(&format!("skipped: {why}"));
}

/// `../shared` beside the repository (a clone at `/work/NAME` finds `/work/shared`), when it
/// holds the real matrices; else the test is skipped, saying so.
pub fn shared_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared");
    if dir.join("matrices/suitesparse").is_dir() {
        Some(dir)
    } else {
        skip(
            Lack::Data,
            &format!("{}/matrices/suitesparse not found", dir.display()),
        );
        None
    }
}

/// A real matrix of `../shared/matrices/suitesparse`, or `None` after saying it is skipped.
pub fn shared_matrix(name: &str) -> Option<PathBuf> {
    let p = shared_dir()?.join("matrices/suitesparse").join(name);
    if p.is_file() {
        Some(p)
    } else {
        skip(Lack::Data, &format!("{} not found", p.display()));
        None
    }
}

/// The GPU tests run one at a time: a test that compares the device's free memory, or that
/// points the module cache elsewhere, must not see another test's work.
pub fn gpu_serial() -> std::sync::MutexGuard<'static, ()> {
    static DEVICE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    DEVICE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The CUDA backend on device 0, or `None` after "skipped: no CUDA device (…)".
pub fn cuda() -> Option<CudaBackend> {
    match CudaBackend::new(0) {
        Ok(b) => Some(b),
        Err(Error::NoCuda(msg)) => {
            skip(Lack::Gpu, &format!("no CUDA device ({msg})"));
            None
        }
        Err(e) => panic!("CUDA backend failed to open: {e}"),
    }
}
