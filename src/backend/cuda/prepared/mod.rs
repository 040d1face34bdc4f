//! A matrix prepared for one kernel on the device: conversion to the variant's format (on the
//! device where it can be, `on_device`), the memory check, the upload, and the launch sequence
//! of one SpMV.
//!
//! Launch sequences (all in the backend's one stream):
//! * CSR (1–32 threads per row), ELL, JAD, SELL, DIA, BSR, ELL-BRO: one kernel, which writes
//!   every row.
//! * Merge-path CSR: one single-pass kernel when all tiles are resident at once (rows crossing
//!   tiles are finished by a look-back on the previous tiles' carries), else the tile kernel and
//!   a carry fix-up kernel; the tile partition is computed once, when preparing (`merge.rs`).
//! * COO, SEG-TILE: zero y (`cuMemsetD32Async`), then the kernel, which adds with atomics. The
//!   zeroing is part of the SpMV and is timed with it.
//! * HYB: the ELL kernel (writes every row), then, if the COO part has entries, the COO kernel
//!   adding onto it; on sm_90 and later the COO kernel is the ELL kernel's programmatic
//!   dependent (it starts while the ELL kernel runs and waits for it before adding;
//!   `SPARSECAST_NO_PDL=1` queues it plainly, `own.rs` `programmatic`).
//! * cuSPARSE: one `cusparseSpMV` call (β = 0). A matrix without entries is not handed to cuSPARSE:
//!   y is zeroed instead.
//!
//! Byte counts: [`PreparedSpmv::footprint_bytes`] is the format's footprint as the format module
//! reports it (32-bit indices, `T` values); [`PreparedSpmv::effective_bytes`] adds x and y once.
//! Auxiliary device arrays — the merge kernel's tile partition, carries and flags (16–20 bytes per
//! tile of `block × 6` items), cuSPARSE's external buffer — are counted in the memory check but not
//! in either figure.
//!
//! Files: `kernel.rs` (the [`Kernel`] of a prepared matrix and its launch sequence), `args.rs`
//! (the argument lists of the one-launch kernels, in the order of their signatures), `own.rs`
//! (set-up of our kernels), `merge.rs` (merge-path CSR: set-up and launches), `vendor.rs`
//! (set-up of cuSPARSE), `synthetic.rs` (benchmark matrices generated on the device),
//! `rowdist.rs` (the statistical models' benchmark matrices generated on the device; reading a
//! kernel's arrays back), `on_device.rs` (a format's arrays on the device: converted there or
//! uploaded), `check.rs` (the check against the reference, on the device), `shared.rs` (the
//! arrays kernels of one matrix share).

mod args;
mod check;
mod kernel;
mod merge;
mod on_device;
mod own;
mod rowdist;
mod shared;
mod synthetic;
mod vendor;

use super::launch;
use super::memory;
use super::sources::MERGE_ITEMS_PER_THREAD;
use super::timing::memset_u32;
use super::{cuda, zeros, CudaBackend, CudaScalar};
use crate::backend::cuda::convert::CsrOnDevice;
use crate::backend::{KernelConfig, PreparedSpmv, Timing, TimingProtocol, Variant, VendorAlg};
use crate::formats::{vector_bytes, AnyFormat, FormatKind, SparseFormat, Summary};
use crate::{Csr, Error, Result};
pub use args::Dumped;
pub(crate) use check::DeviceReference;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DevicePtrMut, DeviceRepr};
use kernel::{launch_kernel, Kernel};
pub(crate) use on_device::converts_on_device;
use on_device::DevFormat;
use own::own_kernel;
pub(crate) use shared::SharedArrays;
use shared::Uploader;
use std::sync::Arc;
use vendor::vendor_kernel;

/// NaN in both f32 and f64 when written as 32-bit words (exponent bits all ones, mantissa ≠ 0).
pub const POISON_WORD: u32 = 0x7FF8_7FF8;

/// Copy a host array to the device (one element, zeroed, for an empty array: CUDA refuses
/// zero-byte allocations and kernels never read it).
fn upload<U: DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    stream: &Arc<CudaStream>,
    data: &[U],
) -> Result<CudaSlice<U>> {
    if data.is_empty() {
        zeros(stream, 1, "cuMemAlloc")
    } else {
        stream.clone_htod(data).map_err(cuda(format!(
            "copying {} bytes to the device",
            std::mem::size_of_val(data)
        )))
    }
}

/// A matrix prepared for one kernel on one CUDA device.
pub struct CudaPrepared<'a, T: CudaScalar> {
    be: &'a CudaBackend,
    cfg: KernelConfig,
    nrows: usize,
    ncols: usize,
    footprint: u64,
    effective: u64,
    kernel: Kernel<T>,
    x: CudaSlice<T>,
    y: CudaSlice<T>,
}

impl<'a, T: CudaScalar> CudaPrepared<'a, T> {
    /// Convert, check memory, upload, and set up the launches of `cfg` for `csr`.
    pub fn new(be: &'a CudaBackend, csr: &Csr<T>, cfg: &KernelConfig) -> Result<Self> {
        let variant = cfg.variant;
        let block = cfg.block_size;
        launch::check_index_range(csr.nrows, csr.ncols, csr.nnz())?;
        let tpr = match variant {
            Variant::Csr { threads_per_row } => check_threads_per_row(threads_per_row)?,
            _ => 1,
        };
        if !variant.is_vendor() {
            launch::check_block_size(block, be.info.max_threads_per_block, tpr)?;
        }
        if variant.is_vendor() && !be.supports_vendor() {
            return Err(Error::Unsupported(format!(
                "{variant}: the cuSPARSE library was not found"
            )));
        }
        // While sharing is on, the cache holds this configuration's group (format and
        // parameters) of this matrix and its CSR arrays: what it already holds is memory this
        // kernel need not allocate.
        let mut guard = be.shared.lock().unwrap_or_else(|e| e.into_inner());
        let mut shared = guard.as_mut();
        let format_kind = variant.format();
        let params = adjusted_params(cfg);
        let group = format_kind.conversion_key(&params);
        let (held, base) = shared.as_mut().map_or((0, 0), |s| s.enter(csr, &group));
        let reads_csr = format_kind == FormatKind::Csr;
        let free = be
            .free_memory()?
            .saturating_add(held)
            .saturating_add(if reads_csr { base } else { 0 });
        let xy_bytes = vector_bytes(csr.nrows as u64, csr.ncols as u64, T::BYTES as u64);
        // Formats whose footprint follows from the matrix summary (all but DIA, SELL, BSR and
        // ELL-BRO, which need a pass over the entries) are checked before the conversion
        // allocates anything.
        let summary = match shared.as_mut() {
            Some(s) => s.summary(csr, params.hyb.width),
            None => Summary::of(csr, params.hyb.width),
        };
        if let Ok(est) = format_kind.footprint(&summary, &params, T::BYTES as u64) {
            memory::check_fits(&variant.name(), est, xy_bytes, free)?;
        }
        let stream = &be.stream;
        let mut up = Uploader { stream, shared };
        // CSR kernels read the CSR arrays; every other format is converted (on the device
        // where it can be, `on_device`), once per group while sharing is on.
        let converted = std::time::Instant::now();
        let cached = up.shared.as_ref().and_then(|s| s.format::<DevFormat<T>>());
        let format = match (format_kind, cached) {
            (FormatKind::Csr, _) => None,
            (_, Some(f)) => Some(f),
            (k, None) => {
                let space = Space {
                    what: variant.name(),
                    free,
                    xy_bytes,
                };
                let f = Arc::new(to_device(be, &mut up, csr, &summary, k, &params, &space)?);
                if let Some(s) = up.shared.as_mut() {
                    s.keep_format(f.clone(), f.footprint_bytes(false));
                }
                Some(f)
            }
        };
        crate::util::trace(|| format!("convert {}", format_kind.name()), converted);
        let vendor_sell = variant == Variant::Vendor(VendorAlg::SellAlg1);
        let footprint = match format.as_deref() {
            Some(f) => f.footprint_bytes(vendor_sell),
            None => SparseFormat::<T>::footprint_bytes(csr),
        };
        if let Some(f) = format.as_deref() {
            launch::check_index_range(csr.nrows, csr.ncols, f.stored_entries())?;
        }
        let aux = aux_bytes(variant, csr, block, T::BYTES as u32)?;
        // Allocated by now unless the format came from the cache (then `held` covers it).
        memory::check_fits(&variant.name(), footprint + aux, xy_bytes, free)?;

        let set_up = std::time::Instant::now();
        let (x, y) = alloc_xy(stream, csr.nrows, csr.ncols)?;
        let format = format.as_deref();
        let kernel = if csr.nrows == 0 {
            Kernel::Empty
        } else if let Variant::Vendor(alg) = variant {
            vendor_kernel(be, &mut up, csr, format, alg, &x, &y)?
        } else {
            own_kernel(be, &mut up, csr, format, variant, block)?
        };
        drop(guard);
        stream
            .synchronize()
            .map_err(cuda(format!("preparing {variant}")))?;
        crate::util::trace(|| format!("upload and set up {variant}"), set_up);
        Ok(CudaPrepared {
            be,
            cfg: cfg.clone(),
            nrows: csr.nrows,
            ncols: csr.ncols,
            footprint,
            effective: footprint + xy_bytes,
            kernel,
            x,
            y,
        })
    }

    /// After the stream is idle: fail if a merge-path look-back gave up waiting.
    fn check_kernel_error(&mut self) -> Result<()> {
        match &self.kernel {
            Kernel::Merge(m) => m.check_error(&self.be.stream),
            _ => Ok(()),
        }
    }

    /// Queue one SpMV (no synchronization).
    fn launch(&mut self) -> Result<()> {
        let stream = self.be.stream.clone();
        let y_words = self.nrows * T::BYTES / 4;
        launch_kernel(
            &mut self.kernel,
            &stream,
            self.cfg.block_size,
            y_words,
            &self.x,
            &mut self.y,
        )
    }
}

/// The device memory a conversion may use: `free` bytes (with what the shared cache holds for
/// the kernel), less x and y.
struct Space {
    what: String,
    free: u64,
    xy_bytes: u64,
}

impl Space {
    fn fits(&self, bytes: u64) -> Result<()> {
        memory::check_fits(&self.what, bytes, self.xy_bytes, self.free)
    }
}

/// `csr` in format `kind` on the device: converted there from its CSR arrays (uploaded first if
/// the shared cache does not hold them) when [`on_device::converts_on_device`] and host
/// conversions are not asked for (`SPARSECAST_HOST_CONVERSION=1`), else converted on the host
/// and uploaded — also when the CSR arrays would not fit beside the format.
fn to_device<T: CudaScalar>(
    be: &CudaBackend,
    up: &mut Uploader,
    csr: &Csr<T>,
    summary: &Summary,
    kind: FormatKind,
    params: &crate::formats::FormatParams,
    space: &Space,
) -> Result<DevFormat<T>> {
    if on_device::converts_on_device(kind) && !be.host_conversion() {
        let resident = up.shared.as_ref().is_some_and(|s| {
            s.array::<u32>("row_ptr").is_some()
                && s.array::<u32>("col").is_some()
                && s.array::<T>("val").is_some()
        });
        let csr_bytes = if resident {
            0
        } else {
            SparseFormat::<T>::footprint_bytes(csr)
        };
        let scratch = on_device::scratch_bytes(kind, csr.nrows);
        if space.fits(csr_bytes + scratch).is_ok() {
            let row_ptr = up.up("row_ptr", || row_ptr_u32(&csr.row_ptr))?;
            let col = up.up("col", || &csr.col_idx)?;
            let val = up.up("val", || &csr.values)?;
            let dev = CsrOnDevice {
                nrows: csr.nrows as u32,
                row_ptr: &row_ptr,
                col: &col,
                val: &val,
            };
            let fits = |bytes: u64| space.fits(bytes + csr_bytes);
            match DevFormat::convert(be, csr, &dev, summary, kind, params, &fits) {
                // Beside the CSR arrays it does not fit; alone it may.
                Err(Error::Unsupported(_)) if csr_bytes > 0 => {}
                r => return r,
            }
        }
    }
    let f = AnyFormat::convert(csr, kind, params)?;
    space.fits(f.as_dyn().footprint_bytes())?;
    DevFormat::upload(be, &f)
}

/// `SPARSECAST_HOST_CONVERSION=1`: convert every format on the host and upload it (the way
/// before session 22; `selftest` compares the two ways).
pub(crate) fn host_conversion_asked() -> bool {
    std::env::var_os("SPARSECAST_HOST_CONVERSION").is_some_and(|v| v == "1")
}

/// The format parameters `cfg` is converted with ([`Variant::stored_params`]: cuSPARSE's
/// sliced ELL has no row permutation, σ = 1).
fn adjusted_params(cfg: &KernelConfig) -> crate::formats::FormatParams {
    cfg.variant.stored_params(&cfg.params)
}

/// Check a CSR kernel's threads per row (1, 2, 4, 8, 16 or 32) and return it.
fn check_threads_per_row(threads_per_row: u32) -> Result<u32> {
    if !matches!(threads_per_row, 1 | 2 | 4 | 8 | 16 | 32) {
        return Err(Error::Invalid(format!(
            "{threads_per_row} threads per row: expected 1, 2, 4, 8, 16 or 32"
        )));
    }
    Ok(threads_per_row)
}

/// Zeroed x (`ncols` values) and y (`nrows` values), each at least one value long.
fn alloc_xy<T: CudaScalar>(
    stream: &Arc<CudaStream>,
    nrows: usize,
    ncols: usize,
) -> Result<(CudaSlice<T>, CudaSlice<T>)> {
    let x = zeros(stream, ncols.max(1), "allocating x")?;
    let y = zeros(stream, nrows.max(1), "allocating y")?;
    Ok((x, y))
}

/// Auxiliary device bytes a variant needs beyond the format (see the module documentation).
fn aux_bytes(variant: Variant, csr: &Csr<impl CudaScalar>, block: u32, vb: u32) -> Result<u64> {
    Ok(match variant {
        Variant::CsrMerge => {
            let t = launch::merge_tiling(csr.nrows, csr.nnz(), block, MERGE_ITEMS_PER_THREAD, vb)?;
            (t.ntiles as u64 + 1) * 4 + t.ntiles as u64 * (8 + vb as u64)
        }
        _ => 0,
    })
}

fn row_ptr_u32(row_ptr: &[usize]) -> Vec<u32> {
    row_ptr.iter().map(|&p| p as u32).collect()
}

fn function<T: CudaScalar>(be: &CudaBackend, base: &str, block: u32) -> Result<CudaFunction> {
    let f = be.function(&format!("{base}_{}", T::PRECISION.name()))?;
    let max = f
        .max_threads_per_block()
        .map_err(cuda("cuFuncGetAttribute"))? as u32;
    launch::check_block_size(block, max, 1)?;
    Ok(f)
}

impl<T: CudaScalar> PreparedSpmv<T> for CudaPrepared<'_, T> {
    fn config(&self) -> &KernelConfig {
        &self.cfg
    }

    fn footprint_bytes(&self) -> u64 {
        self.footprint
    }

    fn effective_bytes(&self) -> u64 {
        self.effective
    }

    fn set_x(&mut self, x: &[T]) -> Result<()> {
        if x.len() != self.ncols {
            return Err(Error::Invalid(format!(
                "x has {} entries, the matrix {} columns",
                x.len(),
                self.ncols
            )));
        }
        if x.is_empty() {
            return Ok(());
        }
        let s = self.be.stream.clone();
        s.memcpy_htod(x, &mut self.x.slice_mut(0..x.len()))
            .map_err(cuda("copying x to the device"))?;
        s.synchronize().map_err(cuda("copying x to the device"))
    }

    fn poison_y(&mut self) -> Result<()> {
        let s = self.be.stream.clone();
        let words = self.nrows * T::BYTES / 4;
        let (ptr, _g) = self.y.device_ptr_mut(&s);
        // SAFETY: y holds nrows values.
        unsafe { memset_u32(ptr, POISON_WORD, words, &s)? };
        drop(_g);
        s.synchronize().map_err(cuda("poisoning y"))
    }

    fn run(&mut self) -> Result<()> {
        self.launch()?;
        self.be
            .stream
            .synchronize()
            .map_err(cuda(format!("running {}", self.cfg.variant)))?;
        self.check_kernel_error()
    }

    fn y(&mut self) -> Result<Vec<T>> {
        let s = self.be.stream.clone();
        let mut v = s
            .clone_dtoh(&self.y)
            .map_err(cuda("copying y to the host"))?;
        v.truncate(self.nrows);
        Ok(v)
    }

    fn check(&mut self, x: &[T], reference: &crate::backend::measure::Reference) -> Result<f64> {
        self.check_on_device(x, reference)
    }

    fn enqueue(&mut self) -> Result<()> {
        self.launch()
    }

    fn finish(&mut self) -> Result<()> {
        self.be
            .stream
            .synchronize()
            .map_err(cuda(format!("running {}", self.cfg.variant)))?;
        self.check_kernel_error()
    }

    fn time(&mut self, protocol: &TimingProtocol) -> Result<Timing> {
        let be = self.be;
        let t = be.time_spmv(protocol, &mut || self.launch())?;
        self.check_kernel_error()?;
        Ok(t)
    }
}
