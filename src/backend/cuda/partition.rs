//! Green-context partitions: a GPU of fewer SMs made out of one device (issue 15's smaller
//! targets), with the same memory, L2 and clocks.
//!
//! [`create`] follows the driver's four steps: the device's SM resource
//! (`cuDeviceGetDevResource`), one group of `sms` SMs split off it
//! (`cuDevSmResourceSplitByCount`, one group, default flags), a descriptor of that group
//! (`cuDevResourceGenerateDesc`), and the green context (`cuGreenCtxCreate` with
//! `CU_GREEN_CTX_DEFAULT_STREAM`, which CUDA 12.4 requires). `cuCtxFromGreenCtx` gives the
//! context handle the rest of the backend uses (cudarc's `CudaContext::from_raw_context`).
//!
//! **Which streams are confined.** The backend creates its one stream with cudarc's
//! `CudaContext::new_stream` — `cuStreamCreate` while the converted context is current — and not
//! with `cuGreenCtxStreamCreate`. Both are confined to the partition: the driver documents that
//! `cuStreamGetGreenCtx` returns the green context for a stream made by `cuStreamCreate` "if
//! during stream creation the context that was active in the calling thread was obtained with
//! `cuCtxFromGreenCtx`", and that APIs whose behavior depends on the green context's resources
//! (kernel launches) use them when given the converted context. `cuGreenCtxStreamCreate` would
//! give a raw stream cudarc cannot wrap, so every module, cuSPARSE call and timing event of the
//! backend would need its own plumbing. [`Green::verify`] checks both facts on the device when
//! the backend opens: the green context's SM count and the stream's green context
//! (`cuStreamGetGreenCtx`), refusing to measure otherwise.
//!
//! Choices where the driver documentation leaves room:
//! * **Sizes.** On compute capability 9.0 a split comes in groups of 8 SMs (the driver rounds a
//!   request up), so only multiples of [`SM_GRANULARITY`] are accepted — 8, 16, 32, 72 are
//!   exact — and anything else is refused before the device is touched rather than silently
//!   rounded: a target whose SM count is not what was asked for would mislabel every table and
//!   profile measured on it. A split that does not give exactly one group of `sms` SMs is an
//!   error naming the driver's own granularity (`minSmPartitionSize`, `smCoscheduledAlignment`).
//! * **Lifetime.** The context handle from `cuCtxFromGreenCtx` must not be destroyed with
//!   `cuCtxDestroy` (its validity is tied to the green context), yet cudarc's
//!   `CudaContext::from_raw_context` wraps it as a non-primary context whose `Drop` calls
//!   `cuCtxDestroy`. [`Green`] therefore keeps one reference to the wrapper that is never
//!   released (the wrapper's few bytes leak, its `Drop` never runs) and destroys the green
//!   context itself with `cuGreenCtxDestroy` — after the backend's streams, modules, cuSPARSE
//!   handle and buffers, because it is the backend's last field.
//! * **Drivers without green contexts** (before CUDA 12.4): the entry points are looked up first
//!   and their absence is one clear [`Error::Unsupported`], not a panic of the dynamic loader.

use crate::{Error, Result};
use cudarc::driver::sys;
use cudarc::driver::CudaContext;
use std::sync::Arc;

/// SMs per split group on compute capability 9.0 (Hopper): partitions are multiples of it.
pub const SM_GRANULARITY: u32 = 8;

/// The driver entry points a partition needs.
const ENTRY_POINTS: [&str; 7] = [
    "cuDeviceGetDevResource",
    "cuGreenCtxGetDevResource",
    "cuDevSmResourceSplitByCount",
    "cuDevResourceGenerateDesc",
    "cuGreenCtxCreate",
    "cuCtxFromGreenCtx",
    "cuGreenCtxDestroy",
];

/// Check a partition request of `sms` SMs against a device of `device_sms` SMs (when known)
/// split in groups of `granularity`: positive, a multiple of the granularity, and smaller than
/// the device (the whole device is opened without `--sms`).
pub fn check_request(sms: u32, device_sms: Option<u32>, granularity: u32) -> Result<()> {
    let g = granularity.max(1);
    if sms == 0 || sms % g != 0 {
        let below = (sms / g) * g;
        let hint = if below > 0 {
            format!("{below} or {}", below + g)
        } else {
            g.to_string()
        };
        return Err(Error::Invalid(format!(
            "--sms {sms}: a green-context partition holds a multiple of {g} SMs on this \
             architecture (the driver splits SMs in groups of {g}); ask for {hint}"
        )));
    }
    if let Some(n) = device_sms {
        if sms >= n {
            return Err(Error::Invalid(format!(
                "--sms {sms}: the device has {n} SMs; a partition must be smaller (leave out \
                 --sms for the whole device)"
            )));
        }
    }
    Ok(())
}

/// The name of a partition of the device `name`, e.g. "NVIDIA H200 [32-SM partition]": the
/// model name stays first, so that the L2 size and the family of the GPU are still read from it.
pub fn partition_name(name: &str, sms: u32) -> String {
    format!("{name} [{sms}-SM partition]")
}

/// A green context, destroyed on drop (see the module documentation).
pub(crate) struct Green {
    green: sys::CUgreenCtx,
    ctx: Option<Arc<CudaContext>>,
}

// SAFETY: the handle is only used to destroy the green context, once, on drop; the driver's
// handles are not tied to the thread that created them.
unsafe impl Send for Green {}
unsafe impl Sync for Green {}

impl Drop for Green {
    fn drop(&mut self) {
        if let Some(ctx) = self.ctx.take() {
            // The wrapper must never run `cuCtxDestroy` on the green context's handle.
            std::mem::forget(ctx);
        }
        // SAFETY: created by `cuGreenCtxCreate`, destroyed once; everything the backend made in
        // it (streams, modules, memory) was released before (this is its last field).
        unsafe {
            let _ = sys::cuGreenCtxDestroy(self.green);
            let _ = sys::cuCtxSetCurrent(std::ptr::null_mut());
        }
    }
}

impl Green {
    /// Check, once the backend's stream exists, that the partition is what was asked for: the
    /// green context holds `sms` SMs (`cuGreenCtxGetDevResource`) and `stream` belongs to it
    /// (`cuStreamGetGreenCtx`, CUDA 12.5 or later; an older driver lacks it and this half is
    /// skipped). A stream outside the green context would run on the whole GPU and mislabel
    /// every measurement as the partition's.
    pub(crate) fn verify(&self, stream: sys::CUstream, sms: u32) -> Result<()> {
        // SAFETY: the green context is alive (owned by `self`); the out-parameters are a
        // zero-initialized C struct and a handle.
        unsafe {
            let mut res: sys::CUdevResource = std::mem::zeroed();
            check(
                sys::cuGreenCtxGetDevResource(
                    self.green,
                    &mut res,
                    sys::CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM,
                ),
                "cuGreenCtxGetDevResource(SM)",
            )?;
            let got = res.__bindgen_anon_1.sm.smCount;
            if got != sms {
                return Err(Error::Cuda(format!(
                    "the green context of --sms {sms} holds {got} SMs"
                )));
            }
            if sys::culib()
                .get::<*const ()>(b"cuStreamGetGreenCtx")
                .is_ok()
            {
                let mut owner: sys::CUgreenCtx = std::ptr::null_mut();
                check(
                    sys::cuStreamGetGreenCtx(stream, &mut owner),
                    "cuStreamGetGreenCtx",
                )?;
                if owner != self.green {
                    return Err(Error::Cuda(format!(
                        "--sms {sms}: the backend's stream is not in the green context \
                         (cuStreamGetGreenCtx gave {owner:?}); its kernels would run on the \
                         whole GPU"
                    )));
                }
            }
        }
        Ok(())
    }
}

fn driver(what: &str) -> impl FnOnce(sys::CUresult) -> Error + '_ {
    move |e| Error::Cuda(format!("{what}: {e:?}"))
}

fn check(r: sys::CUresult, what: &str) -> Result<()> {
    match r {
        sys::CUresult::CUDA_SUCCESS => Ok(()),
        e => Err(driver(what)(e)),
    }
}

/// Whether the loaded driver library has every entry point of green contexts.
fn driver_has_green_contexts() -> std::result::Result<(), &'static str> {
    for name in ENTRY_POINTS {
        // SAFETY: looks a symbol up without calling it.
        let found = unsafe { sys::culib().get::<*const ()>(name.as_bytes()).is_ok() };
        if !found {
            return Err(name);
        }
    }
    Ok(())
}

/// A green context of `sms` SMs of device `ordinal` (the driver initialized), as a cudarc
/// context, with the guard that destroys it and the device's full SM count.
pub(crate) fn create(ordinal: usize, sms: u32) -> Result<(Arc<CudaContext>, Green, u32)> {
    check_request(sms, None, SM_GRANULARITY)?;
    if let Err(missing) = driver_has_green_contexts() {
        return Err(Error::Unsupported(format!(
            "--sms needs green contexts, which this CUDA driver lacks ({missing} not found; \
             CUDA 12.4 or later)"
        )));
    }
    let dev = cudarc::driver::result::device::get(ordinal as i32)
        .map_err(|e| Error::Cuda(format!("cuDeviceGet({ordinal}): {e:?}")))?;
    // SAFETY: plain-data out-parameters of the documented sizes; the resource structs are
    // zero-initialized C structs.
    unsafe {
        let mut all: sys::CUdevResource = std::mem::zeroed();
        check(
            sys::cuDeviceGetDevResource(
                dev,
                &mut all,
                sys::CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM,
            ),
            "cuDeviceGetDevResource(SM)",
        )?;
        let sm = all.__bindgen_anon_1.sm;
        let total = sm.smCount;
        check_request(sms, Some(total), SM_GRANULARITY)?;
        let mut group: sys::CUdevResource = std::mem::zeroed();
        let mut rest: sys::CUdevResource = std::mem::zeroed();
        let mut groups: std::ffi::c_uint = 1;
        check(
            sys::cuDevSmResourceSplitByCount(&mut group, &mut groups, &all, &mut rest, 0, sms),
            &format!("cuDevSmResourceSplitByCount({sms} SMs of {total})"),
        )?;
        let got = group.__bindgen_anon_1.sm.smCount;
        if groups != 1 || got != sms {
            return Err(Error::Unsupported(format!(
                "--sms {sms}: the driver split {groups} group(s) of {got} SMs off the device's \
                 {total}, not one of {sms} (its minimum partition: {} SMs, co-scheduled \
                 alignment: {} SMs)",
                sm.minSmPartitionSize, sm.smCoscheduledAlignment
            )));
        }
        let mut desc: sys::CUdevResourceDesc = std::ptr::null_mut();
        check(
            sys::cuDevResourceGenerateDesc(&mut desc, &mut group, 1),
            "cuDevResourceGenerateDesc",
        )?;
        let mut green: sys::CUgreenCtx = std::ptr::null_mut();
        let flags = sys::CUgreenCtxCreate_flags::CU_GREEN_CTX_DEFAULT_STREAM as std::ffi::c_uint;
        check(
            sys::cuGreenCtxCreate(&mut green, desc, dev, flags),
            &format!("cuGreenCtxCreate({sms} SMs)"),
        )?;
        // From here on the guard destroys the green context on every path.
        let mut guard = Green { green, ctx: None };
        let mut raw: sys::CUcontext = std::ptr::null_mut();
        check(sys::cuCtxFromGreenCtx(&mut raw, green), "cuCtxFromGreenCtx")?;
        let ctx = CudaContext::from_raw_context(ordinal, dev, raw)
            .map_err(|e| Error::Cuda(format!("binding the green context: {e:?}")))?;
        guard.ctx = Some(ctx.clone());
        Ok((ctx, guard, total))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_multiples_of_the_granularity_and_smaller_than_the_device() {
        for ok in [8, 16, 32, 72, 128] {
            check_request(ok, Some(132), 8).unwrap();
        }
        let e = check_request(20, Some(132), 8).unwrap_err().to_string();
        assert!(e.contains("multiple of 8") && e.contains("16 or 24"), "{e}");
        let e = check_request(3, None, 8).unwrap_err().to_string();
        assert!(e.contains("ask for 8"), "{e}");
        let e = check_request(0, None, 8).unwrap_err().to_string();
        assert!(e.contains("multiple of 8"), "{e}");
        let e = check_request(136, Some(132), 8).unwrap_err().to_string();
        assert!(e.contains("132 SMs"), "{e}");
        let e = check_request(132, Some(132), 4).unwrap_err().to_string();
        assert!(e.contains("must be smaller"), "{e}");
    }

    #[test]
    fn a_partition_keeps_the_model_name_first() {
        let n = partition_name("NVIDIA H200", 32);
        assert_eq!(n, "NVIDIA H200 [32-SM partition]");
        assert!(n.starts_with("NVIDIA H200"));
    }
}
