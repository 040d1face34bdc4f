//! The CUDA backend: our kernels (`kernels/*.cu`, compiled at run time by NVRTC for the device's
//! architecture and cached on disk) and cuSPARSE's generic SpMV, behind the [`Backend`] trait.
//!
//! Everything CUDA is loaded dynamically through `cudarc`, so the binary builds and runs on a
//! machine without CUDA: there [`CudaBackend::new`] fails with one clear [`Error::NoCuda`] and the
//! CPU backend stays usable. (cudarc panics when a library is missing on first use; `new` checks
//! that each library can be opened before touching it, and additionally turns any panic from the
//! driver set-up into an error.)
//!
//! Files: [`sources`] (embedded kernel sources), [`nvrtc`] (compilation to CUBIN), [`cache`]
//! (on-disk module cache), [`modules`] (per-context module loading), [`launch`] (launch
//! configuration math), [`memory`] (the device-memory check), [`device`] ([`DeviceInfo`]),
//! [`timing`] (CUDA-event timing, L2 flush), [`cusparse`] (the vendor wrapper), `prepared`
//! (conversion, upload and launch sequences), `synthetic` (benchmark matrices generated on the
//! device), `rowdist` (the statistical models' benchmark matrices generated on the device) and
//! [`rowdist_check`] (their check against the host-built ones, and timing), `convert` (formats
//! converted on the device from the CSR arrays) and [`convert_check`] (the proof that they equal
//! the host conversions, and that the check on the device equals the host's), [`partition`]
//! (green-context partitions of fewer SMs: [`CudaBackend::open_partition`]).

pub mod cache;
pub(crate) mod convert;
pub mod convert_check;
pub mod cusparse;
pub mod device;
mod host_parse;
pub mod l2;
pub mod launch;
pub mod memory;
pub mod modules;
pub mod nvrtc;
pub mod partition;
mod prepared;
mod rowdist;
pub mod rowdist_check;
pub mod sell_split;
pub mod sources;
mod synthetic;
pub mod timing;

pub use device::DeviceInfo;
pub use modules::ModuleOrigin;

use crate::backend::{Backend, KernelConfig, PreparedSpmv, Variant};
use crate::{Csr, Error, Result, Scalar};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DeviceRepr, DriverError, ValidAsZeroBits,
};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

/// A value type the CUDA kernels are instantiated for (`f32`, `f64`).
pub trait CudaScalar: Scalar + DeviceRepr + ValidAsZeroBits + Unpin {}
impl CudaScalar for f32 {}
impl CudaScalar for f64 {}

/// One CUDA device with its context, stream, kernel modules and (lazily) a cuSPARSE handle.
///
/// All work goes to one stream of the backend's own, in order. It is a created (non-blocking)
/// stream rather than the legacy default stream, because the timing protocol captures SpMVs into
/// CUDA graphs and the default stream cannot be captured; since it is the only stream, cudarc's
/// cross-stream event tracking is switched off (it would record events inside captures).
pub struct CudaBackend {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    modules: modules::Modules,
    info: DeviceInfo,
    copy_bw: OnceLock<f64>,
    l2_bw: OnceLock<f64>,
    cusparse: OnceLock<std::result::Result<cusparse::Handle, String>>,
    flush: Mutex<Option<timing::L2Flush>>,
    /// The arrays kernels share while [`Backend::share_arrays`] is on (`prepared::shared`).
    shared: Mutex<Option<prepared::SharedArrays>>,
    /// Convert every format on the host and upload it instead of converting on the device
    /// ([`CudaBackend::set_host_conversion`]).
    host_conversion: std::sync::atomic::AtomicBool,
    /// HYB's COO kernel as the programmatic dependent of its ELL kernel
    /// ([`CudaBackend::follow_hyb_launch`]; `launch::PDL_VAR` fixes it).
    programmatic_hyb: std::sync::atomic::AtomicU8,
    /// The latest reference checked against, on the device (`prepared::check`).
    reference: Mutex<Option<prepared::DeviceReference>>,
    /// The green context of a partition: the last field, so that it is destroyed after
    /// everything made in it (fields drop in declaration order).
    _green: Option<partition::Green>,
}

/// Turn a driver error into [`Error::Cuda`] saying `what` was being done.
fn cuda(what: impl Into<String>) -> impl FnOnce(DriverError) -> Error {
    let what = what.into();
    move |e| Error::Cuda(format!("{what}: {e:?}"))
}

/// `n` zeroed elements of device memory (`n` > 0: CUDA refuses zero-byte allocations); `what`
/// names the allocation in the error.
fn zeros<U: DeviceRepr + ValidAsZeroBits>(
    stream: &Arc<CudaStream>,
    n: usize,
    what: &str,
) -> Result<CudaSlice<U>> {
    stream.alloc_zeros::<U>(n).map_err(cuda(what))
}

/// Run `f`, turning a panic into `Err(message)` without printing the default panic message.
fn quiet_catch<R>(f: impl FnOnce() -> R) -> std::result::Result<R, String> {
    static HOOK_LOCK: Mutex<()> = Mutex::new(());
    let _l = HOOK_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    std::panic::set_hook(prev);
    r.map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "unknown panic".into())
    })
}

/// Per-kernel resource use, as the driver reports it for the loaded machine code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct KernelResources {
    /// Registers per thread.
    pub registers: u32,
    /// Local memory per thread, bytes: register spills and stack arrays (0 is the goal).
    pub local_bytes: u32,
    /// Static shared memory per block, bytes.
    pub shared_bytes: u32,
    /// Largest block the kernel can be launched with (limited by its registers).
    pub max_threads_per_block: u32,
}

impl CudaBackend {
    /// Open device `ordinal`. Fails with [`Error::NoCuda`] (one clear message) when the driver
    /// library, NVRTC or a device is missing.
    pub fn new(ordinal: usize) -> Result<Self> {
        Self::open_on(ordinal, None)
    }

    /// A green-context partition of `sms` SMs of device `ordinal` ([`partition`]): a GPU of
    /// fewer SMs with the device's memory, L2 and clocks. Its [`DeviceInfo`] reports the
    /// partition (`sm_count` = `sms`, `full_sm_count` = the device's, the name "… [N-SM
    /// partition]"), so that strip sizes and launch grids scale with it. Refused with a clear
    /// error for a size the driver cannot split exactly or a driver without green contexts.
    pub fn open_partition(ordinal: usize, sms: u32) -> Result<Self> {
        Self::open_on(ordinal, Some(sms))
    }

    /// [`CudaBackend::new`] (`sms` = `None`) or [`CudaBackend::open_partition`].
    pub fn open_on(ordinal: usize, sms: Option<u32>) -> Result<Self> {
        if let Some(n) = sms {
            partition::check_request(n, None, partition::SM_GRANULARITY)?;
        }
        match quiet_catch(|| Self::open(ordinal, sms)) {
            Ok(r) => r,
            Err(msg) => Err(Error::NoCuda(format!(
                "the CUDA libraries failed to load: {msg}"
            ))),
        }
    }

    fn open(ordinal: usize, sms: Option<u32>) -> Result<Self> {
        // SAFETY: only tries to open the library.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(Error::NoCuda(
                "the CUDA driver library (libcuda.so) was not found; install the NVIDIA driver \
                 or add its directory to LD_LIBRARY_PATH"
                    .into(),
            ));
        }
        cudarc::driver::result::init()
            .map_err(|e| Error::NoCuda(format!("the CUDA driver did not initialize: {e:?}")))?;
        let count = CudaContext::device_count()
            .map_err(|e| Error::NoCuda(format!("cannot count CUDA devices: {e:?}")))?;
        if count <= 0 {
            return Err(Error::NoCuda("the CUDA driver reports no device".into()));
        }
        if ordinal >= count as usize {
            return Err(Error::Invalid(format!(
                "CUDA device {ordinal} does not exist: {count} device(s), numbered from 0"
            )));
        }
        if !nvrtc::present() {
            return Err(Error::NoCuda(
                "the NVRTC library (libnvrtc.so), needed to compile the kernels, was not found; \
                 install the CUDA toolkit or add its lib64 directory to LD_LIBRARY_PATH"
                    .into(),
            ));
        }
        let nvrtc_version = nvrtc::version()?;
        // On an error below, `green` may drop before `ctx`: harmless, `ctx` is then only a
        // reference count (`partition::Green` keeps the wrapper from ever destroying it).
        let (ctx, green, full_sms) = match sms {
            None => (
                CudaContext::new(ordinal).map_err(|e| {
                    Error::Cuda(format!("creating a context on device {ordinal}: {e:?}"))
                })?,
                None,
                None,
            ),
            Some(n) => {
                let (ctx, green, total) = partition::create(ordinal, n)?;
                (ctx, Some(green), Some(total))
            }
        };
        // SAFETY: every allocation and launch of this backend goes to its one stream, so no
        // cross-stream synchronization is needed (see the struct's documentation).
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx
            .new_stream()
            .map_err(|e| Error::Cuda(format!("creating a stream on device {ordinal}: {e:?}")))?;
        if let (Some(n), Some(g)) = (sms, &green) {
            g.verify(stream.cu_stream(), n)?;
        }
        let mut info = device::read_static(&ctx, nvrtc_version)?;
        if let (Some(n), Some(total)) = (sms, full_sms) {
            info.name = partition::partition_name(&info.name, n);
            info.sm_count = n;
            info.full_sm_count = Some(total);
        }
        if info.warp_size != launch::WARP {
            return Err(Error::Unsupported(format!(
                "the kernels assume {}-thread warps; this device has {}",
                launch::WARP,
                info.warp_size
            )));
        }
        let modules = modules::Modules::new(ctx.clone(), info.arch.clone(), nvrtc_version);
        Ok(CudaBackend {
            ctx,
            stream,
            modules,
            info,
            copy_bw: OnceLock::new(),
            l2_bw: OnceLock::new(),
            cusparse: OnceLock::new(),
            flush: Mutex::new(None),
            shared: Mutex::new(None),
            host_conversion: std::sync::atomic::AtomicBool::new(prepared::host_conversion_asked()),
            programmatic_hyb: std::sync::atomic::AtomicU8::new(
                launch::pdl_from_env().unwrap_or_default().code(),
            ),
            reference: Mutex::new(None),
            _green: green,
        })
    }

    /// The device description, including the measured copy bandwidth (measured on the first
    /// call, NaN if the measurement failed).
    pub fn describe(&self) -> DeviceInfo {
        let bw = *self.copy_bw.get_or_init(|| {
            device::measure_copy_bandwidth(&self.ctx, &self.stream).unwrap_or(f64::NAN)
        });
        DeviceInfo {
            copy_bandwidth_gbs: bw,
            ..self.info.clone()
        }
    }

    /// The device description without the bandwidth measurement (`copy_bandwidth_gbs` is NaN
    /// unless [`CudaBackend::describe`] has run).
    pub fn info(&self) -> DeviceInfo {
        DeviceInfo {
            copy_bandwidth_gbs: self.copy_bw.get().copied().unwrap_or(f64::NAN),
            ..self.info.clone()
        }
    }

    /// Convert formats on the host and upload them (`true`), or convert them on the device from
    /// the CSR arrays where the format allows (`false`, the default unless
    /// `SPARSECAST_HOST_CONVERSION=1`): both give the same arrays (`selftest` checks it).
    pub fn set_host_conversion(&self, on: bool) {
        self.host_conversion
            .store(on, std::sync::atomic::Ordering::Relaxed);
    }

    /// Warps the GPU holds resident at once (SMs × warps an SM holds): what the COO walk's
    /// chunks are sized for ([`launch::coo_chunks`]).
    pub fn resident_warps(&self) -> u32 {
        self.info.sm_count * self.info.max_warps_per_sm
    }

    /// Whether formats are converted on the host ([`CudaBackend::set_host_conversion`]).
    pub fn host_conversion(&self) -> bool {
        self.host_conversion
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Run HYB with the launch sequence `modelled` (the one the profile in use predicts), unless
    /// [`launch::PDL_VAR`] chose one for this process; before sm_90 it is always the plain one.
    /// Call it before preparing any HYB kernel (prepared kernels keep their sequence). Returns
    /// the sequence HYB runs with from now on.
    pub fn follow_hyb_launch(&self, modelled: launch::HybLaunch) -> launch::HybLaunch {
        if launch::pdl_from_env().is_none() {
            self.programmatic_hyb
                .store(modelled.code(), std::sync::atomic::Ordering::Relaxed);
        }
        self.hyb_launch()
    }

    /// The launch sequence HYB runs with ([`CudaBackend::follow_hyb_launch`]).
    pub fn hyb_launch(&self) -> launch::HybLaunch {
        if self.info.cc_major >= 9 {
            launch::HybLaunch::from_code(
                self.programmatic_hyb
                    .load(std::sync::atomic::Ordering::Relaxed),
            )
        } else {
            launch::HybLaunch::Plain
        }
    }

    /// Compile or load every kernel module now; returns (module, origin, NVRTC log).
    pub fn load_all_modules(&self) -> Result<Vec<(&'static str, ModuleOrigin, String)>> {
        self.modules.load_all()
    }

    /// What the loaded machine code of kernel `entry` uses, read from the driver
    /// (`cuFuncGetAttribute`): unlike the assembler report in NVRTC's log, which NVRTC 13.0 on
    /// the H200 machine returns empty, this works for compiled and cached modules alike.
    pub fn kernel_resources(&self, entry: &str) -> Result<KernelResources> {
        use cudarc::driver::sys::CUfunction_attribute_enum as A;
        let f = self.function(entry)?;
        let get = |a: A| {
            f.get_attribute(a)
                .map_err(|e| Error::Cuda(format!("cuFuncGetAttribute({a:?}) of {entry}: {e:?}")))
        };
        Ok(KernelResources {
            registers: get(A::CU_FUNC_ATTRIBUTE_NUM_REGS)? as u32,
            local_bytes: get(A::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)? as u32,
            shared_bytes: get(A::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)? as u32,
            max_threads_per_block: get(A::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)? as u32,
        })
    }

    /// Free and total device memory, bytes.
    pub fn memory(&self) -> Result<(u64, u64)> {
        let (free, total) = self
            .ctx
            .mem_get_info()
            .map_err(|e| Error::Cuda(format!("cuMemGetInfo: {e:?}")))?;
        Ok((free as u64, total as u64))
    }

    fn free_memory(&self) -> Result<u64> {
        Ok(self.memory()?.0)
    }

    fn function(&self, entry: &str) -> Result<CudaFunction> {
        self.modules.function(entry)
    }

    /// Whether cuSPARSE can be used.
    pub fn supports_vendor(&self) -> bool {
        cusparse::present()
    }

    /// cuSPARSE's version, if the library is present.
    pub fn cusparse_version(&self) -> Option<i32> {
        self.cusparse().ok().and_then(|h| h.version().ok())
    }

    fn cusparse(&self) -> Result<&cusparse::Handle> {
        let h = self.cusparse.get_or_init(|| {
            if !cusparse::present() {
                return Err("the cuSPARSE library (libcusparse.so) was not found".into());
            }
            quiet_catch(|| cusparse::Handle::new(&self.stream))
                .map_err(|p| format!("cuSPARSE failed to load: {p}"))?
                .map_err(|e| e.to_string())
        });
        h.as_ref().map_err(|m| Error::Unsupported(m.clone()))
    }

    /// Time one SpMV, queued by `enqueue`, with `protocol` ([`timing::time_spmv`]); in cold
    /// mode the L2 is flushed before each SpMV.
    pub fn time_spmv(
        &self,
        protocol: &crate::backend::TimingProtocol,
        enqueue: &mut timing::Enqueue,
    ) -> Result<crate::backend::Timing> {
        let mut flush_guard;
        let flush = if protocol.cold {
            flush_guard = self.l2_flush()?;
            flush_guard.as_mut()
        } else {
            None
        };
        timing::time_spmv(&self.ctx, &self.stream, protocol, flush, enqueue)
    }

    /// Time one SpMV made of independent `parts`, run as `overlap` says, with `protocol`
    /// ([`timing::time_parts`]: concurrent parts are the branches of a fork/join graph).
    pub fn time_parts(
        &self,
        protocol: &crate::backend::TimingProtocol,
        overlap: crate::backend::Overlap,
        parts: &mut [crate::backend::Part<'_>],
    ) -> Result<crate::backend::Timing> {
        let mut flush_guard;
        let flush = if protocol.cold {
            flush_guard = self.l2_flush()?;
            flush_guard.as_mut()
        } else {
            None
        };
        timing::time_parts(&self.ctx, &self.stream, protocol, flush, overlap, parts)
    }

    fn l2_flush(&self) -> Result<MutexGuard<'_, Option<timing::L2Flush>>> {
        let mut g = self.flush.lock().unwrap_or_else(|e| e.into_inner());
        if g.is_none() {
            *g = Some(timing::L2Flush::new(&self.stream, self.info.l2_bytes)?);
        }
        Ok(g)
    }
}

impl<T: CudaScalar> Backend<T> for CudaBackend {
    fn name(&self) -> &str {
        "cuda"
    }

    fn device_name(&self) -> String {
        format!(
            "{} ({}, {} SMs, {:.0} GiB)",
            self.info.name,
            self.info.arch,
            self.info.sm_count,
            self.info.global_mem as f64 / (1u64 << 30) as f64
        )
    }

    fn supports(&self, variant: Variant) -> bool {
        !variant.is_vendor() || self.supports_vendor()
    }

    fn copy_bandwidth_gbs(&self) -> Option<f64> {
        Some(self.describe().copy_bandwidth_gbs).filter(|b| b.is_finite())
    }

    fn l2_read_bandwidth_gbs(&self) -> Option<f64> {
        let bw = *self
            .l2_bw
            .get_or_init(|| l2::measure_l2_bandwidth(self).unwrap_or(f64::NAN));
        Some(bw).filter(|b| b.is_finite())
    }

    fn free_device_bytes(&self) -> Option<u64> {
        self.free_memory()
            .ok()
            .map(|f| f.saturating_sub(memory::RESERVE_BYTES))
    }

    fn l2_bytes(&self) -> Option<u64> {
        Some(self.describe().l2_bytes).filter(|&b| b > 0)
    }

    fn prepare<'a>(
        &'a self,
        csr: &Csr<T>,
        cfg: &KernelConfig,
    ) -> Result<Box<dyn PreparedSpmv<T> + 'a>> {
        Ok(Box::new(prepared::CudaPrepared::new(self, csr, cfg)?))
    }

    fn share_arrays(&self, on: bool) {
        let mut s = self.shared.lock().unwrap_or_else(|e| e.into_inner());
        *s = on.then(prepared::SharedArrays::default);
    }

    fn hyb_launch(&self) -> launch::HybLaunch {
        CudaBackend::hyb_launch(self)
    }

    fn follow_hyb_launch(&self, modelled: launch::HybLaunch) -> launch::HybLaunch {
        CudaBackend::follow_hyb_launch(self, modelled)
    }

    /// Generated in place by the fill kernels of `kernels/synthetic.cu` for CSR, ELL and COO;
    /// [`Error::Unsupported`] for the other variants.
    fn time_spmv(
        &self,
        protocol: &crate::backend::TimingProtocol,
        enqueue: &mut dyn FnMut() -> Result<()>,
    ) -> Result<crate::backend::Timing> {
        CudaBackend::time_spmv(self, protocol, enqueue)
    }

    /// Concurrent parts run as a fork/join graph of one SpMV, built for this call, and are
    /// waited for (the graph must outlive its run); serial parts are queued in order.
    fn enqueue_parts(
        &self,
        overlap: crate::backend::Overlap,
        parts: &mut [crate::backend::Part<'_>],
    ) -> Result<()> {
        match overlap {
            crate::backend::Overlap::Serial => crate::backend::enqueue_in_order(parts),
            crate::backend::Overlap::Concurrent => {
                timing::run_parts(&self.stream, overlap, parts).map(|_| ())
            }
        }
    }

    fn time_parts(
        &self,
        protocol: &crate::backend::TimingProtocol,
        overlap: crate::backend::Overlap,
        parts: &mut [crate::backend::Part<'_>],
    ) -> Result<crate::backend::Timing> {
        CudaBackend::time_parts(self, protocol, overlap, parts)
    }

    fn prepare_synthetic<'a>(
        &'a self,
        rows: usize,
        cols: usize,
        pnz: usize,
        cfg: &KernelConfig,
    ) -> Result<Box<dyn PreparedSpmv<T> + 'a>> {
        Ok(Box::new(prepared::CudaPrepared::new_synthetic(
            self, rows, cols, pnz, cfg,
        )?))
    }

    /// Generated in place by the kernels of `kernels/rowdist.cu` for CSR, ELL and JAD;
    /// [`Error::Unsupported`] for the other variants.
    fn prepare_distributed<'a>(
        &'a self,
        rows: usize,
        cols: usize,
        mean: usize,
        lengths: &crate::instrument::RowLengths,
        cfg: &KernelConfig,
    ) -> Result<Box<dyn PreparedSpmv<T> + 'a>> {
        Ok(Box::new(prepared::CudaPrepared::new_distributed(
            self, rows, cols, mean, lengths, cfg,
        )?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_catch_turns_panics_into_errors() {
        assert_eq!(quiet_catch(|| 5), Ok(5));
        let e = quiet_catch(|| -> i32 { panic!("boom {}", 1) }).unwrap_err();
        assert_eq!(e, "boom 1");
        let e = quiet_catch(|| -> i32 { panic!("static") }).unwrap_err();
        assert_eq!(e, "static");
    }
}
