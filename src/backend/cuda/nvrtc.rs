//! Run-time compilation of the kernel sources with NVRTC, straight to CUBIN (machine code) for the
//! device's architecture (`--gpu-architecture=sm_XY`), so the driver has no PTX to JIT at load time
//! and the code uses the architecture's own instructions.
//!
//! cudarc's safe NVRTC wrapper only returns PTX, so this file calls `nvrtcGetCUBIN` through
//! `cudarc::nvrtc::sys`. The library is loaded dynamically; [`present`] says whether it can be.

use crate::{Error, Result};
use cudarc::nvrtc::{result, sys};
use std::ffi::{c_char, CStr, CString};

/// Whether the NVRTC library can be loaded (no panic when it cannot).
pub fn present() -> bool {
    // SAFETY: only tries to open the library.
    unsafe { sys::is_culib_present() }
}

/// NVRTC's (major, minor) version. Call only when [`present`] is true.
pub fn version() -> Result<(i32, i32)> {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: plain out-parameters.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|e| Error::Cuda(format!("nvrtcVersion: {e:?}")))?;
    Ok((major, minor))
}

/// The `sm_XY` name of a compute capability.
pub fn arch_name(cc: (i32, i32)) -> String {
    format!("sm_{}{}", cc.0, cc.1)
}

/// The NVRTC options every module is compiled with, for architecture `arch` (e.g. `sm_90`),
/// followed by any whitespace-separated options in `$SPARSECAST_NVRTC_OPTIONS` (an experiment
/// knob, e.g. `-DSC_MIN_BLOCKS=1`). They are part of the module-cache key.
pub fn options(arch: &str) -> Vec<String> {
    let extra = std::env::var("SPARSECAST_NVRTC_OPTIONS").unwrap_or_default();
    let mut o = base_options(arch);
    o.extend(extra.split_whitespace().map(str::to_string));
    o
}

/// The fixed part of [`options`].
pub fn base_options(arch: &str) -> Vec<String> {
    vec![
        format!("--gpu-architecture={arch}"),
        "--std=c++17".into(),
        // Resource usage (registers, spills, shared memory) goes to the log, which
        // `sparsecast device --kernels` prints.
        "--ptxas-options=-v".into(),
    ]
}

/// A compiled module.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// CUBIN bytes.
    pub cubin: Vec<u8>,
    /// NVRTC's log (warnings and the assembler's resource report).
    pub log: String,
}

/// Compile `source` (named `name` in messages) with `options` to CUBIN.
pub fn compile(name: &str, source: &str, options: &[String]) -> Result<Compiled> {
    let src = CString::new(source)
        .map_err(|_| Error::Invalid(format!("kernel source {name} contains a NUL byte")))?;
    let cname = CString::new(format!("{name}.cu")).expect("module names have no NUL");
    let prog = result::create_program(&src, Some(&cname))
        .map_err(|e| Error::Cuda(format!("NVRTC could not create program {name}: {e:?}")))?;
    let guard = ProgramGuard(prog);
    // SAFETY: `prog` is a live program (destroyed by the guard).
    let compiled = unsafe { result::compile_program(guard.0, options) };
    let log = program_log(guard.0);
    if let Err(e) = compiled {
        return Err(Error::Cuda(format!(
            "NVRTC failed to compile kernels/{name}.cu ({e:?}) with options {options:?}:\n{log}"
        )));
    }
    let mut size = 0usize;
    // SAFETY: live program, out-parameter.
    unsafe { sys::nvrtcGetCUBINSize(guard.0, &mut size) }
        .result()
        .map_err(|e| Error::Cuda(format!("nvrtcGetCUBINSize({name}): {e:?}")))?;
    if size == 0 {
        return Err(Error::Cuda(format!(
            "NVRTC produced no CUBIN for {name} (options {options:?}); was a real sm_XY architecture given?"
        )));
    }
    let mut cubin = vec![0u8; size];
    // SAFETY: `cubin` has the size NVRTC reported.
    unsafe { sys::nvrtcGetCUBIN(guard.0, cubin.as_mut_ptr() as *mut c_char) }
        .result()
        .map_err(|e| Error::Cuda(format!("nvrtcGetCUBIN({name}): {e:?}")))?;
    Ok(Compiled { cubin, log })
}

fn program_log(prog: sys::nvrtcProgram) -> String {
    // SAFETY: live program.
    match unsafe { result::get_program_log(prog) } {
        Ok(raw) if !raw.is_empty() => {
            // SAFETY: NVRTC NUL-terminates the log it wrote into `raw`.
            unsafe { CStr::from_ptr(raw.as_ptr()) }
                .to_string_lossy()
                .trim_end()
                .to_string()
        }
        _ => String::new(),
    }
}

struct ProgramGuard(sys::nvrtcProgram);

impl Drop for ProgramGuard {
    fn drop(&mut self) {
        // SAFETY: created by create_program, destroyed once.
        let _ = unsafe { result::destroy_program(self.0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_and_options() {
        assert_eq!(arch_name((9, 0)), "sm_90");
        assert_eq!(arch_name((12, 1)), "sm_121");
        let o = base_options("sm_90");
        assert!(o.contains(&"--gpu-architecture=sm_90".to_string()));
    }
}
