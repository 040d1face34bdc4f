//! Every kernel file parsed and type-checked by the host's C++ compiler, on machines without
//! CUDA (CI has no GPU and no NVRTC, so without this a kernel that does not compile is found
//! only on the device). The files are compiled as NVRTC would see them
//! ([`KernelFile::full_source`]: the prelude, then the file) after `kernels/host_stubs.h`, which
//! declares the CUDA built-ins they use; `-fsyntax-only` checks names, types and the template
//! instantiations of every `extern "C"` entry point. What it cannot see: device-only rules
//! (address spaces, `__shared__` limits, register budgets) — those stay the device self-test's.

#[cfg(test)]
mod tests {
    use super::super::sources::{KernelFile, ALL};
    use std::path::{Path, PathBuf};
    use std::process::Command;

    /// The built-in stand-ins prepended to each file.
    const HOST_STUBS: &str = include_str!("../../../kernels/host_stubs.h");

    /// The host C++ compiler: `$CXX`, else the first of `c++`, `g++`, `clang++` that runs;
    /// `None` where none does.
    fn host_cxx() -> Option<String> {
        let named = std::env::var("CXX").ok();
        named
            .into_iter()
            .chain(["c++", "g++", "clang++"].map(String::from))
            .find(|cxx| {
                Command::new(cxx)
                    .arg("--version")
                    .output()
                    .is_ok_and(|o| o.status.success())
            })
    }

    /// The compiler and a scratch folder of this test (`tag`), or `None` after saying the test
    /// is skipped where no compiler runs.
    fn setup(tag: &str) -> Option<(String, PathBuf)> {
        let Some(cxx) = host_cxx() else {
            eprintln!("skipped: no host C++ compiler (set CXX or install c++)");
            return None;
        };
        let d = std::env::temp_dir().join(format!("sc-host-parse-{}-{tag}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        Some((cxx, d))
    }

    /// Compiles `text` with `defines`; the compiler's messages on failure.
    fn parse(cxx: &str, path: &Path, text: &str, defines: &[&str]) -> Result<(), String> {
        std::fs::write(path, text).unwrap();
        let out = Command::new(cxx)
            .args(["-std=c++17", "-fsyntax-only", "-w", "-x", "c++"])
            .args(defines)
            .arg(path)
            .output()
            .unwrap();
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    fn host_text(f: &KernelFile) -> String {
        format!("{HOST_STUBS}\n{}", f.full_source())
    }

    #[test]
    fn kernels_parse_as_host_cpp() {
        let Some((cxx, dir)) = setup("all") else {
            return;
        };
        for f in ALL {
            let path = dir.join(format!("{}.cpp", f.name));
            // As shipped, and with the experiment's 64-register budget (kernels/common.cuh).
            for defines in [&[][..], &["-DSC_MIN_BLOCKS=1"][..]] {
                if let Err(e) = parse(&cxx, &path, &host_text(&f), defines) {
                    panic!(
                        "kernels/{}.cu {defines:?} does not compile as host C++:\n{e}",
                        f.name
                    );
                }
            }
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    /// The check is live: a kernel calling an undeclared function, or passing a pointer where a
    /// value goes, is refused.
    #[test]
    fn a_broken_kernel_is_refused() {
        let Some((cxx, dir)) = setup("broken") else {
            return;
        };
        let path = dir.join("broken.cpp");
        let coo = ALL.iter().find(|f| f.name == "coo").unwrap();
        let good = host_text(coo);
        assert!(parse(&cxx, &path, &good, &[]).is_ok());
        for (from, to) in [
            ("ld(x + ld(cols + k))", "ldx(x + ld(cols + k))"),
            ("atomicAdd(y + r, v)", "atomicAdd(y + r, &v)"),
        ] {
            assert!(
                good.contains(from),
                "the coo kernel changed: update this test's edit"
            );
            let bad = good.replacen(from, to, 1);
            assert!(parse(&cxx, &path, &bad, &[]).is_err(), "{to} was accepted");
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
