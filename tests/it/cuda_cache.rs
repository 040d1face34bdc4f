//! The on-disk module cache on a real device: a second backend loads every module from the cache,
//! and a corrupt cache file is recompiled rather than fatal. It points `SPARSECAST_CACHE` at a temporary
//! directory while holding the GPU lock, and restores it. Prints "skipped: no CUDA device" without one.

use sparsecast::backend::cuda::{cache, CudaBackend, ModuleOrigin};

#[test]
fn second_backend_loads_from_cache_and_corruption_recompiles() {
    // Every GPU test holds the lock, so none sees the cache pointed elsewhere.
    let _serial = crate::common::gpu_serial();
    let dir = tempfile::tempdir().unwrap();
    let _cache = CacheDir::set(dir.path());
    let Some(be) = crate::common::cuda() else {
        return;
    };
    let first = be.load_all_modules().unwrap();
    assert!(
        first.iter().all(|m| m.1 == ModuleOrigin::Compiled),
        "{first:?}"
    );
    drop(be);
    let be = CudaBackend::new(0).unwrap();
    let second = be.load_all_modules().unwrap();
    assert!(
        second.iter().all(|m| m.1 == ModuleOrigin::Cached),
        "{second:?}"
    );
    drop(be);
    // Corrupt one file: that module is compiled again, the others still come from the cache.
    let victim = std::fs::read_dir(cache::cache_dir().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with("coo-"))
        .expect("coo module cached");
    std::fs::write(&victim, b"SCCUBIN1 not a cubin").unwrap();
    let be = CudaBackend::new(0).unwrap();
    let third = be.load_all_modules().unwrap();
    for (name, origin, _) in &third {
        let want = if *name == "coo" {
            ModuleOrigin::Compiled
        } else {
            ModuleOrigin::Cached
        };
        assert_eq!(*origin, want, "{name}");
    }
    assert!(
        cache::load(&victim).is_some(),
        "the corrupt file was rewritten"
    );
}

/// `SPARSECAST_CACHE` pointed at a directory while the guard lives; restored when dropped (also
/// when the test fails), so that later tests of this binary use their usual cache.
struct CacheDir(Option<std::ffi::OsString>);

impl CacheDir {
    fn set(dir: &std::path::Path) -> CacheDir {
        let old = std::env::var_os("SPARSECAST_CACHE");
        std::env::set_var("SPARSECAST_CACHE", dir);
        CacheDir(old)
    }
}

impl Drop for CacheDir {
    fn drop(&mut self) {
        match self.0.take() {
            Some(v) => std::env::set_var("SPARSECAST_CACHE", v),
            None => std::env::remove_var("SPARSECAST_CACHE"),
        }
    }
}
