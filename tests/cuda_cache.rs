//! The on-disk module cache on a real device: a second backend loads every module from the cache,
//! and a corrupt cache file is recompiled rather than fatal. Alone in its test binary because it
//! sets `SPARSECAST_CACHE`. Prints "skipped: no CUDA device" without one.

use sparsecast::backend::cuda::{cache, CudaBackend, ModuleOrigin};
use sparsecast::Error;

#[test]
fn second_backend_loads_from_cache_and_corruption_recompiles() {
    let dir = tempfile::tempdir().unwrap();
    std::env::set_var("SPARSECAST_CACHE", dir.path());
    let be = match CudaBackend::new(0) {
        Ok(b) => b,
        Err(Error::NoCuda(msg)) => {
            sparsecast::util::notice(&format!("skipped: no CUDA device ({msg})"));
            return;
        }
        Err(e) => panic!("{e}"),
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
