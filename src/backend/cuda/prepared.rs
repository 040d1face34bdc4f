//! A matrix prepared for one kernel on the device: conversion to the variant's format, the memory
//! check, the upload, and the launch sequence of one SpMV.
//!
//! Launch sequences (all in the backend's one stream):
//! * CSR (1–32 threads per row), ELL, JAD, SELL, DIA, BSR: one kernel, which writes every row.
//! * Merge-path CSR: one single-pass kernel when all tiles are resident at once (rows crossing
//!   tiles are finished by a look-back on the previous tiles' carries), else the tile kernel and
//!   a carry fix-up kernel; the tile partition is computed once, here, when preparing.
//! * COO: zero y (`cuMemsetD32Async`), then the kernel, which adds with atomics. The zeroing is
//!   part of the SpMV and is timed with it.
//! * HYB: the ELL kernel (writes every row), then, if the COO part has entries, the COO kernel
//!   adding onto it.
//! * cuSPARSE: one `cusparseSpMV` call (β = 0). A matrix without entries is not handed to cuSPARSE:
//!   y is zeroed instead.
//!
//! Byte counts: [`PreparedSpmv::footprint_bytes`] is the format's footprint as the format module
//! reports it (32-bit indices, `T` values); [`PreparedSpmv::effective_bytes`] adds x and y once.
//! Auxiliary device arrays — the merge kernel's tile partition, carries and flags (16–20 bytes per
//! tile of `block × 6` items), cuSPARSE's external buffer — are counted in the memory check but not
//! in either figure.

use super::cusparse::{VendorMatrix, VendorSpmv};
use super::launch::{self, MergeTiling};
use super::memory;
use super::sources::MERGE_ITEMS_PER_THREAD;
use super::synthetic;
use super::timing::{memset_u32, time_runs};
use super::{CudaBackend, CudaScalar};
use crate::backend::{KernelConfig, PreparedSpmv, Timing, TimingProtocol, Variant, VendorAlg};
use crate::formats::{AnyFormat, FormatKind, SparseFormat};
use crate::{Csr, Error, Result};
use cudarc::driver::sys::CUfunction_attribute as FnAttr;
use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig,
    PushKernelArg,
};
use std::sync::Arc;

/// NaN in both f32 and f64 when written as 32-bit words (exponent bits all ones, mantissa ≠ 0).
pub const POISON_WORD: u32 = 0x7FF8_7FF8;

fn cuda(what: impl Into<String>) -> impl FnOnce(cudarc::driver::DriverError) -> Error {
    let what = what.into();
    move |e| Error::Cuda(format!("{what}: {e:?}"))
}

/// Copy a host array to the device (one element, zeroed, for an empty array: CUDA refuses
/// zero-byte allocations and kernels never read it).
fn upload<U: DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    stream: &Arc<CudaStream>,
    data: &[U],
) -> Result<CudaSlice<U>> {
    if data.is_empty() {
        stream.alloc_zeros::<U>(1).map_err(cuda("cuMemAlloc"))
    } else {
        stream.clone_htod(data).map_err(cuda(format!(
            "copying {} bytes to the device",
            std::mem::size_of_val(data)
        )))
    }
}

fn cfg1(grid: u32, block: u32, shared: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: shared,
    }
}

/// The device arrays and launch parameters of one kernel.
enum Kernel<T> {
    /// No rows: nothing to do.
    Empty,
    Csr {
        f: CudaFunction,
        grid: u32,
        row_ptr: CudaSlice<u32>,
        col: CudaSlice<u32>,
        val: CudaSlice<T>,
    },
    Merge {
        f: CudaFunction,
        /// The fix-up kernel of the two-pass variant; `None` = single pass with look-back.
        fixup: Option<CudaFunction>,
        tiling: MergeTiling,
        nnz: u32,
        row_ptr: CudaSlice<u32>,
        col: CudaSlice<u32>,
        val: CudaSlice<T>,
        tile_row: CudaSlice<u32>,
        carry_val: CudaSlice<T>,
        carry_row: CudaSlice<u32>,
        /// Per-tile flags, stamped with the launch's epoch when the tile's carry is published.
        flags: CudaSlice<u32>,
        /// Bumped before every launch (never 0, the flags' initial value).
        epoch: u32,
        /// Set to 1 by a look-back that gave up waiting (checked after each run).
        error: CudaSlice<u32>,
    },
    Coo {
        f: CudaFunction,
        grid: u32,
        chunks: u32,
        nnz: u32,
        /// Zero y first (plain COO); HYB's COO part adds onto the ELL part's output instead.
        zero_y: bool,
        rows: CudaSlice<u32>,
        cols: CudaSlice<u32>,
        val: CudaSlice<T>,
    },
    Ell {
        f: CudaFunction,
        grid: u32,
        width: u32,
        col: CudaSlice<u32>,
        val: CudaSlice<T>,
    },
    Hyb {
        ell: Box<Kernel<T>>,
        coo: Option<Box<Kernel<T>>>,
    },
    Jad {
        f: CudaFunction,
        grid: u32,
        ndiag: u32,
        perm: CudaSlice<u32>,
        jd_ptr: CudaSlice<u32>,
        col: CudaSlice<u32>,
        val: CudaSlice<T>,
    },
    Sell {
        f: CudaFunction,
        grid: u32,
        c: u32,
        slice_ptr: CudaSlice<u32>,
        slice_width: CudaSlice<u32>,
        perm: CudaSlice<u32>,
        col: CudaSlice<u32>,
        val: CudaSlice<T>,
    },
    Dia {
        f: CudaFunction,
        grid: u32,
        ndiag: u32,
        offsets: CudaSlice<i32>,
        val: CudaSlice<T>,
    },
    Bsr {
        f: CudaFunction,
        grid: u32,
        b: u32,
        nbrows: u32,
        row_ptr: CudaSlice<u32>,
        bcol: CudaSlice<u32>,
        val: CudaSlice<T>,
    },
    /// cuSPARSE. `spmv` is declared first so its descriptors are destroyed before the arrays
    /// they point to are freed.
    Vendor {
        spmv: Option<VendorSpmv>,
        _index_arrays: Vec<CudaSlice<u32>>,
        _values: CudaSlice<T>,
    },
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
            Variant::Csr { threads_per_row } => {
                if !matches!(threads_per_row, 1 | 2 | 4 | 8 | 16 | 32) {
                    return Err(Error::Invalid(format!(
                        "{threads_per_row} threads per row: expected 1, 2, 4, 8, 16 or 32"
                    )));
                }
                threads_per_row
            }
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
        let free = be.free_memory()?;
        let xy_bytes = (csr.nrows as u64 + csr.ncols as u64) * T::BYTES as u64;
        // Formats whose size is known before converting are checked before the host conversion
        // allocates anything.
        if let Some(est) = memory::estimate_footprint(csr, variant.format(), &cfg.params, T::BYTES)
        {
            memory::check_fits(&variant.name(), est, xy_bytes, free)?;
        }
        let format_kind = variant.format();
        let mut params = cfg.params.clone();
        if variant == Variant::Vendor(VendorAlg::SellAlg1) {
            // cuSPARSE's sliced ELL has no row permutation.
            params.sell_sigma = 1;
        }
        // CSR kernels use the CSR directly (no copy); every other format is converted.
        let format = match format_kind {
            FormatKind::Csr => None,
            k => Some(AnyFormat::convert(csr, k, &params)?),
        };
        let footprint = match &format {
            // cuSPARSE's sliced ELL has no permutation and no slice widths: only the slice
            // offsets, columns and values are on the device.
            Some(AnyFormat::Sell(m)) if variant.is_vendor() => {
                m.slice_ptr.len() as u64 * 4 + m.values.len() as u64 * (4 + T::BYTES as u64)
            }
            Some(f) => f.as_dyn().footprint_bytes(),
            None => SparseFormat::<T>::footprint_bytes(csr),
        };
        if let Some(f) = &format {
            let stored = f.as_dyn().stored_entries();
            launch::check_index_range(csr.nrows, csr.ncols, stored)?;
        }
        let aux = aux_bytes(variant, csr, block, T::BYTES as u32)?;
        memory::check_fits(&variant.name(), footprint + aux, xy_bytes, free)?;

        let stream = &be.stream;
        let x = stream
            .alloc_zeros::<T>(csr.ncols.max(1))
            .map_err(cuda("allocating x"))?;
        let y = stream
            .alloc_zeros::<T>(csr.nrows.max(1))
            .map_err(cuda("allocating y"))?;
        let kernel = if csr.nrows == 0 {
            Kernel::Empty
        } else if let Variant::Vendor(alg) = variant {
            vendor_kernel(be, csr, format.as_ref(), alg, &x, &y)?
        } else {
            own_kernel(be, csr, format.as_ref(), variant, block)?
        };
        stream
            .synchronize()
            .map_err(cuda(format!("preparing {variant}")))?;
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

    /// Generate the instrumenting phase's benchmark matrix (`rows × cols`, `pnz` entries per
    /// row, see [`crate::instrument::synthetic`]) directly on the device for `cfg`, with x set to
    /// the contract's input vector. Supports the kernels the instrumenting phase times — CSR with
    /// any threads per row, ELL (width `pnz`, so an `ell_width` parameter other than `pnz` is
    /// refused) and COO; every other variant is [`Error::Unsupported`] (the caller then builds
    /// the matrix on the host). Checks, footprint and effective bytes are those of
    /// [`CudaPrepared::new`] for the same matrix.
    pub fn new_synthetic(
        be: &'a CudaBackend,
        rows: usize,
        cols: usize,
        pnz: usize,
        cfg: &KernelConfig,
    ) -> Result<Self> {
        let variant = cfg.variant;
        let block = cfg.block_size;
        let tpr = match variant {
            Variant::Csr { threads_per_row } => {
                if !matches!(threads_per_row, 1 | 2 | 4 | 8 | 16 | 32) {
                    return Err(Error::Invalid(format!(
                        "{threads_per_row} threads per row: expected 1, 2, 4, 8, 16 or 32"
                    )));
                }
                threads_per_row
            }
            Variant::Coo => 1,
            Variant::Ell if cfg.params.ell_width.unwrap_or(pnz) == pnz => 1,
            Variant::Ell => {
                return Err(Error::Unsupported(format!(
                    "ell: benchmark matrices are generated on the device with width {pnz}, not \
                     the requested {}",
                    cfg.params.ell_width.unwrap_or(pnz)
                )))
            }
            v => {
                return Err(Error::Unsupported(format!(
                    "{v}: benchmark matrices are generated on the device only for CSR, ELL and COO"
                )))
            }
        };
        let shape = synthetic::Shape::new(rows, cols, pnz)?;
        launch::check_block_size(block, be.info.max_threads_per_block, tpr)?;
        let vb = T::BYTES as u64;
        let (r, nnz) = (rows as u64, shape.nnz as u64);
        // The formats' own footprints (`Csr`, `Ell`, `Coo` `footprint_bytes`) for this matrix.
        let footprint = match variant {
            Variant::Csr { .. } => (r + 1) * 4 + nnz * (4 + vb),
            Variant::Ell => pnz as u64 * r * (4 + vb),
            _ => nnz * (8 + vb),
        };
        let xy_bytes = (r + cols as u64) * vb;
        memory::check_fits(&variant.name(), footprint, xy_bytes, be.free_memory()?)?;

        let stream = &be.stream;
        let mut x = stream
            .alloc_zeros::<T>(cols.max(1))
            .map_err(cuda("allocating x"))?;
        let y = stream
            .alloc_zeros::<T>(rows.max(1))
            .map_err(cuda("allocating y"))?;
        synthetic::fill_x(be, &mut x, shape.cols)?;
        let kernel = if rows == 0 {
            Kernel::Empty
        } else {
            match variant {
                Variant::Csr { threads_per_row: t } => {
                    let f = function::<T>(be, &format!("csr_t{t}"), block)?;
                    let (row_ptr, col, val) = synthetic::fill_csr::<T>(be, shape)?;
                    Kernel::Csr {
                        f,
                        grid: launch::csr_grid(rows, t, block)?,
                        row_ptr,
                        col,
                        val,
                    }
                }
                Variant::Ell => {
                    let f = function::<T>(be, "ell", block)?;
                    let (col, val) = synthetic::fill_ell::<T>(be, shape)?;
                    Kernel::Ell {
                        f,
                        grid: launch::row_grid(rows, block)?,
                        width: shape.pnz,
                        col,
                        val,
                    }
                }
                _ => {
                    let f = function::<T>(be, "coo", block)?;
                    let resident_warps = be.info.sm_count * be.info.max_warps_per_sm;
                    let chunks = launch::coo_chunks(nnz as usize, resident_warps);
                    let (rows_d, cols_d, val) = synthetic::fill_coo::<T>(be, shape)?;
                    Kernel::Coo {
                        f,
                        grid: launch::coo_grid(nnz as usize, chunks, block)?,
                        chunks,
                        nnz: shape.nnz,
                        zero_y: true,
                        rows: rows_d,
                        cols: cols_d,
                        val,
                    }
                }
            }
        };
        stream.synchronize().map_err(cuda(format!(
            "generating the benchmark matrix for {variant}"
        )))?;
        Ok(CudaPrepared {
            be,
            cfg: cfg.clone(),
            nrows: rows,
            ncols: cols,
            footprint,
            effective: footprint + xy_bytes,
            kernel,
            x,
            y,
        })
    }

    /// After the stream is idle: fail if a merge-path look-back gave up waiting.
    fn check_kernel_error(&mut self) -> Result<()> {
        if let Kernel::Merge { error, .. } = &self.kernel {
            let e = self
                .be
                .stream
                .clone_dtoh(error)
                .map_err(cuda("reading the csr-merge error word"))?;
            if e.first().copied().unwrap_or(0) != 0 {
                return Err(Error::Cuda(
                    "csr-merge: a tile waited too long for its predecessor's carry (tiles were not \
                     dispatched in order); the result is wrong"
                        .into(),
                ));
            }
        }
        Ok(())
    }

    /// Queue one SpMV (no synchronization).
    fn launch(&mut self) -> Result<()> {
        let stream = self.be.stream.clone();
        let y_words = self.nrows * T::BYTES / 4;
        launch_kernel(
            &mut self.kernel,
            &stream,
            self.cfg.block_size,
            (self.nrows, self.ncols, y_words),
            &self.x,
            &mut self.y,
        )
    }
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

fn own_kernel<T: CudaScalar>(
    be: &CudaBackend,
    csr: &Csr<T>,
    format: Option<&AnyFormat<T>>,
    variant: Variant,
    block: u32,
) -> Result<Kernel<T>> {
    let s = &be.stream;
    let nrows = csr.nrows;
    Ok(match (variant, format) {
        (Variant::Csr { threads_per_row: t }, _) => Kernel::Csr {
            f: function::<T>(be, &format!("csr_t{t}"), block)?,
            grid: launch::csr_grid(nrows, t, block)?,
            row_ptr: upload(s, &row_ptr_u32(&csr.row_ptr))?,
            col: upload(s, &csr.col_idx)?,
            val: upload(s, &csr.values)?,
        },
        (Variant::CsrMerge, _) => merge_kernel(be, csr, block)?,
        (Variant::Coo, Some(AnyFormat::Coo(m))) => coo_kernel(be, m, block, true)?,
        (Variant::Ell, Some(AnyFormat::Ell(m))) => ell_kernel(be, m, block)?,
        (Variant::Hyb, Some(AnyFormat::Hyb(m))) => {
            let ell = Box::new(ell_kernel(be, &m.ell, block)?);
            let coo = if m.coo.values.is_empty() {
                None
            } else {
                Some(Box::new(coo_kernel(be, &m.coo, block, false)?))
            };
            Kernel::Hyb { ell, coo }
        }
        (Variant::Jad, Some(AnyFormat::Jad(m))) => Kernel::Jad {
            f: function::<T>(be, "jad", block)?,
            grid: launch::row_grid(nrows, block)?,
            ndiag: m.jd_ptr.len().saturating_sub(1) as u32,
            perm: upload(s, &m.perm)?,
            jd_ptr: upload(s, &m.jd_ptr)?,
            col: upload(s, &m.col_idx)?,
            val: upload(s, &m.values)?,
        },
        (Variant::Sell, Some(AnyFormat::Sell(m))) => Kernel::Sell {
            f: function::<T>(be, "sell", block)?,
            grid: launch::row_grid(nrows, block)?,
            c: m.c as u32,
            slice_ptr: upload(s, &m.slice_ptr)?,
            slice_width: upload(s, &m.slice_width)?,
            perm: upload(s, &m.perm)?,
            col: upload(s, &m.col_idx)?,
            val: upload(s, &m.values)?,
        },
        (Variant::Dia, Some(AnyFormat::Dia(m))) => Kernel::Dia {
            f: function::<T>(be, "dia", block)?,
            grid: launch::row_grid(nrows, block)?,
            ndiag: m.offsets.len() as u32,
            offsets: upload(s, &m.offsets)?,
            val: upload(s, &m.values)?,
        },
        (Variant::Bsr, Some(AnyFormat::Bsr(m))) => {
            if m.block == 0 || m.block > 32 {
                return Err(Error::Unsupported(format!(
                    "the CUDA BSR kernel handles blocks of 1 to 32 rows, not {}",
                    m.block
                )));
            }
            let nbrows = m.row_ptr.len().saturating_sub(1);
            Kernel::Bsr {
                f: function::<T>(be, "bsr", block)?,
                grid: launch::bsr_grid(nbrows, block)?,
                b: m.block as u32,
                nbrows: nbrows as u32,
                row_ptr: upload(s, &m.row_ptr)?,
                bcol: upload(s, &m.col_idx)?,
                val: upload(s, &m.values)?,
            }
        }
        (v, _) => {
            return Err(Error::Invalid(format!(
                "internal: no CUDA kernel set-up for {v} with this format"
            )))
        }
    })
}

fn ell_kernel<T: CudaScalar>(
    be: &CudaBackend,
    m: &crate::formats::Ell<T>,
    block: u32,
) -> Result<Kernel<T>> {
    let s = &be.stream;
    Ok(Kernel::Ell {
        f: function::<T>(be, "ell", block)?,
        grid: launch::row_grid(m.nrows, block)?,
        width: m.width as u32,
        col: upload(s, &m.col_idx)?,
        val: upload(s, &m.values)?,
    })
}

/// COO kernel; `zero_y` = zero y before adding (false for HYB's COO part).
fn coo_kernel<T: CudaScalar>(
    be: &CudaBackend,
    m: &crate::formats::Coo<T>,
    block: u32,
    zero_y: bool,
) -> Result<Kernel<T>> {
    let s = &be.stream;
    let resident_warps = be.info.sm_count * be.info.max_warps_per_sm;
    let chunks = launch::coo_chunks(m.values.len(), resident_warps);
    Ok(Kernel::Coo {
        f: function::<T>(be, "coo", block)?,
        grid: launch::coo_grid(m.values.len(), chunks, block)?,
        chunks,
        nnz: m.values.len() as u32,
        zero_y,
        rows: upload(s, &m.rows)?,
        cols: upload(s, &m.cols)?,
        val: upload(s, &m.values)?,
    })
}

fn merge_kernel<T: CudaScalar>(be: &CudaBackend, csr: &Csr<T>, block: u32) -> Result<Kernel<T>> {
    let s = &be.stream;
    let tiling = launch::merge_tiling(
        csr.nrows,
        csr.nnz(),
        block,
        MERGE_ITEMS_PER_THREAD,
        T::BYTES as u32,
    )?;
    let resident = launch::resident_blocks(
        be.info.sm_count,
        be.info.max_threads_per_sm,
        be.info.max_blocks_per_sm,
        be.info.shared_mem_per_sm,
        block,
        tiling.shared_bytes,
    );
    let max_row = (0..csr.nrows).map(|i| csr.row_len(i)).max().unwrap_or(0);
    let (f, fixup) =
        if launch::merge_single_pass(tiling.ntiles, resident, max_row, tiling.tile_items) {
            (function::<T>(be, "csr_merge", block)?, None)
        } else {
            (
                function::<T>(be, "csr_merge_tp", block)?,
                Some(function::<T>(be, "merge_fixup", block)?),
            )
        };
    if tiling.shared_bytes > launch::DEFAULT_SHARED_LIMIT {
        if tiling.shared_bytes as u64 > be.info.shared_mem_per_block_optin {
            return Err(Error::Unsupported(format!(
                "csr-merge with {block} threads per block needs {} bytes of shared memory; this device allows {}",
                tiling.shared_bytes, be.info.shared_mem_per_block_optin
            )));
        }
        f.set_attribute(
            FnAttr::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            tiling.shared_bytes as i32,
        )
        .map_err(cuda("raising csr-merge's shared-memory limit"))?;
    }
    let row_ptr = upload(s, &row_ptr_u32(&csr.row_ptr))?;
    let mut tile_row = s
        .alloc_zeros::<u32>(tiling.ntiles as usize + 1)
        .map_err(cuda("allocating the merge partition"))?;
    let flags = s
        .alloc_zeros::<u32>(tiling.ntiles.max(1) as usize)
        .map_err(cuda("allocating merge flags"))?;
    let carry_row = s
        .alloc_zeros::<u32>(tiling.ntiles.max(1) as usize)
        .map_err(cuda("allocating merge carries"))?;
    let error = s
        .alloc_zeros::<u32>(1)
        .map_err(cuda("allocating the merge error word"))?;
    let carry_val = s
        .alloc_zeros::<T>(tiling.ntiles.max(1) as usize)
        .map_err(cuda("allocating merge carries"))?;
    let partition = be.function("merge_partition")?;
    let (nrows, nnz) = (csr.nrows as u32, csr.nnz() as u32);
    let grid = launch::blocks_for(tiling.ntiles as u64 + 1, 256)?;
    // SAFETY: argument list matches `merge_partition` in kernels/csr_merge.cu; tile_row holds
    // ntiles + 1 entries.
    unsafe {
        s.launch_builder(&partition)
            .arg(&nrows)
            .arg(&nnz)
            .arg(&row_ptr)
            .arg(&tiling.tile_items)
            .arg(&tiling.ntiles)
            .arg(&mut tile_row)
            .launch(cfg1(grid, 256, 0))
    }
    .map_err(cuda("launching merge_partition"))?;
    Ok(Kernel::Merge {
        f,
        fixup,
        tiling,
        nnz,
        row_ptr,
        col: upload(s, &csr.col_idx)?,
        val: upload(s, &csr.values)?,
        tile_row,
        carry_val,
        carry_row,
        flags,
        epoch: 0,
        error,
    })
}

fn vendor_kernel<T: CudaScalar>(
    be: &CudaBackend,
    csr: &Csr<T>,
    format: Option<&AnyFormat<T>>,
    alg: VendorAlg,
    x: &CudaSlice<T>,
    y: &CudaSlice<T>,
) -> Result<Kernel<T>> {
    // cuSPARSE is used through its 32-bit index API (our arrays are u32), which takes at most
    // i32::MAX rows, columns and non-zeros (counting stored entries, padding included):
    // refuse before uploading anything rather than fail inside cuSPARSE.
    let stored = format.map_or(csr.nnz(), |f| f.as_dyn().stored_entries());
    let largest = csr.nrows.max(csr.ncols).max(stored);
    if largest > i32::MAX as usize {
        return Err(Error::Unsupported(format!(
            "cuSPARSE with 32-bit indices takes at most {} rows, columns and stored entries; \
             this matrix has {} rows, {} columns and {stored} stored entries",
            i32::MAX,
            csr.nrows,
            csr.ncols
        )));
    }
    let s = &be.stream;
    let ptr_u32 = |a: &CudaSlice<u32>| a.device_ptr(s).0;
    let (index_arrays, values, matrix_of): (Vec<CudaSlice<u32>>, CudaSlice<T>, _) = match alg {
        VendorAlg::CsrAlg1 | VendorAlg::CsrAlg2 => (
            vec![
                upload(s, &row_ptr_u32(&csr.row_ptr))?,
                upload(s, &csr.col_idx)?,
            ],
            upload(s, &csr.values)?,
            0u8,
        ),
        VendorAlg::CooAlg1 | VendorAlg::CooAlg2 => match format {
            Some(AnyFormat::Coo(m)) => (
                vec![upload(s, &m.rows)?, upload(s, &m.cols)?],
                upload(s, &m.values)?,
                1u8,
            ),
            _ => {
                return Err(Error::Invalid(
                    "internal: cusparse-coo needs the COO format".into(),
                ))
            }
        },
        VendorAlg::SellAlg1 => match format {
            Some(AnyFormat::Sell(m)) => (
                vec![upload(s, &m.slice_ptr)?, upload(s, &m.col_idx)?],
                upload(s, &m.values)?,
                2u8,
            ),
            _ => {
                return Err(Error::Invalid(
                    "internal: cusparse-sell needs the SELL format".into(),
                ))
            }
        },
    };
    let spmv = if csr.nnz() == 0 {
        None
    } else {
        let (a0, a1, v) = (
            ptr_u32(&index_arrays[0]),
            ptr_u32(&index_arrays[1]),
            values.device_ptr(s).0,
        );
        let matrix = match matrix_of {
            0 => VendorMatrix::Csr {
                row_ptr: a0,
                col: a1,
                val: v,
            },
            1 => VendorMatrix::Coo {
                rows: a0,
                col: a1,
                val: v,
            },
            _ => {
                let Some(AnyFormat::Sell(m)) = format else {
                    unreachable!("checked above")
                };
                VendorMatrix::SlicedEll {
                    slice_size: m.c,
                    stored: m.values.len(),
                    slice_ptr: a0,
                    col: a1,
                    val: v,
                }
            }
        };
        let handle = be.cusparse()?;
        // SAFETY: the arrays live in the returned Kernel::Vendor next to the descriptors (and
        // are dropped after them); x and y live in the CudaPrepared that owns the kernel.
        Some(unsafe {
            VendorSpmv::new(
                handle,
                s,
                matrix,
                (csr.nrows, csr.ncols, csr.nnz()),
                x.device_ptr(s).0,
                y.device_ptr(s).0,
                T::PRECISION,
                alg,
            )?
        })
    };
    Ok(Kernel::Vendor {
        spmv,
        _index_arrays: index_arrays,
        _values: values,
    })
}

/// Queue the launches of `k`. `dims` = (nrows, ncols, 32-bit words of y).
fn launch_kernel<T: CudaScalar>(
    k: &mut Kernel<T>,
    s: &Arc<CudaStream>,
    block: u32,
    dims: (usize, usize, usize),
    x: &CudaSlice<T>,
    y: &mut CudaSlice<T>,
) -> Result<()> {
    let (nrows, ncols, y_words) = dims;
    let (nrows32, ncols32) = (nrows as u32, ncols as u32);
    let res = match k {
        Kernel::Empty => Ok(()),
        Kernel::Csr {
            f,
            grid,
            row_ptr,
            col,
            val,
        } => {
            // SAFETY (every launch below): the argument lists match the kernels' signatures in
            // kernels/*.cu, and every array has the length the kernel reads (set up above).
            unsafe {
                s.launch_builder(f)
                    .arg(&nrows32)
                    .arg(row_ptr)
                    .arg(col)
                    .arg(val)
                    .arg(x)
                    .arg(y)
                    .launch(cfg1(*grid, block, 0))
            }
            .map(|_| ())
        }
        Kernel::Merge {
            f,
            fixup,
            tiling,
            nnz,
            row_ptr,
            col,
            val,
            tile_row,
            carry_val,
            carry_row,
            flags,
            epoch,
            error,
        } => {
            if tiling.ntiles == 0 {
                return Ok(());
            }
            *epoch = match epoch.wrapping_add(1) {
                0 => 1,
                e => e,
            };
            unsafe {
                s.launch_builder(f)
                    .arg(&nrows32)
                    .arg(&*nnz)
                    .arg(&*row_ptr)
                    .arg(&*col)
                    .arg(&*val)
                    .arg(x)
                    .arg(&mut *y)
                    .arg(&*tile_row)
                    .arg(&mut *carry_val)
                    .arg(&mut *carry_row)
                    .arg(&mut *flags)
                    .arg(&*epoch)
                    .arg(&mut *error)
                    .launch(cfg1(tiling.ntiles, block, tiling.shared_bytes))
            }
            .map_err(cuda("launching csr-merge"))?;
            match fixup {
                None => Ok(()),
                Some(fix) => {
                    let grid = launch::blocks_for(tiling.ntiles as u64, block)?;
                    unsafe {
                        s.launch_builder(fix)
                            .arg(&nrows32)
                            .arg(&tiling.ntiles)
                            .arg(&*carry_row)
                            .arg(&*carry_val)
                            .arg(y)
                            .launch(cfg1(grid, block, 0))
                    }
                    .map(|_| ())
                }
            }
        }
        Kernel::Coo {
            f,
            grid,
            chunks,
            nnz,
            zero_y,
            rows,
            cols,
            val,
        } => {
            if *zero_y {
                let (ptr, _g) = y.device_ptr_mut(s);
                // SAFETY: y holds nrows values = y_words 32-bit words.
                unsafe { memset_u32(ptr, 0, y_words, s)? };
            }
            if *grid == 0 {
                return Ok(());
            }
            unsafe {
                s.launch_builder(f)
                    .arg(&*nnz)
                    .arg(&*chunks)
                    .arg(&*rows)
                    .arg(&*cols)
                    .arg(&*val)
                    .arg(x)
                    .arg(y)
                    .launch(cfg1(*grid, block, 0))
            }
            .map(|_| ())
        }
        Kernel::Ell {
            f,
            grid,
            width,
            col,
            val,
        } => unsafe {
            s.launch_builder(f)
                .arg(&nrows32)
                .arg(&*width)
                .arg(&*col)
                .arg(&*val)
                .arg(x)
                .arg(y)
                .launch(cfg1(*grid, block, 0))
        }
        .map(|_| ()),
        Kernel::Hyb { ell, coo } => {
            launch_kernel(ell, s, block, dims, x, y)?;
            if let Some(c) = coo {
                launch_kernel(c, s, block, dims, x, y)?;
            }
            Ok(())
        }
        Kernel::Jad {
            f,
            grid,
            ndiag,
            perm,
            jd_ptr,
            col,
            val,
        } => unsafe {
            s.launch_builder(f)
                .arg(&nrows32)
                .arg(&*ndiag)
                .arg(&*perm)
                .arg(&*jd_ptr)
                .arg(&*col)
                .arg(&*val)
                .arg(x)
                .arg(y)
                .launch(cfg1(*grid, block, 0))
        }
        .map(|_| ()),
        Kernel::Sell {
            f,
            grid,
            c,
            slice_ptr,
            slice_width,
            perm,
            col,
            val,
        } => unsafe {
            s.launch_builder(f)
                .arg(&nrows32)
                .arg(&*c)
                .arg(&*slice_ptr)
                .arg(&*slice_width)
                .arg(&*perm)
                .arg(&*col)
                .arg(&*val)
                .arg(x)
                .arg(y)
                .launch(cfg1(*grid, block, 0))
        }
        .map(|_| ()),
        Kernel::Dia {
            f,
            grid,
            ndiag,
            offsets,
            val,
        } => unsafe {
            s.launch_builder(f)
                .arg(&nrows32)
                .arg(&ncols32)
                .arg(&*ndiag)
                .arg(&*offsets)
                .arg(&*val)
                .arg(x)
                .arg(y)
                .launch(cfg1(*grid, block, 0))
        }
        .map(|_| ()),
        Kernel::Bsr {
            f,
            grid,
            b,
            nbrows,
            row_ptr,
            bcol,
            val,
        } => unsafe {
            s.launch_builder(f)
                .arg(&*nbrows)
                .arg(&nrows32)
                .arg(&ncols32)
                .arg(&*b)
                .arg(&*row_ptr)
                .arg(&*bcol)
                .arg(&*val)
                .arg(x)
                .arg(y)
                .launch(cfg1(*grid, block, 0))
        }
        .map(|_| ()),
        Kernel::Vendor { spmv, .. } => {
            return match spmv {
                Some(v) => v.launch(),
                None => {
                    let (ptr, _g) = y.device_ptr_mut(s);
                    // SAFETY: y holds y_words 32-bit words.
                    unsafe { memset_u32(ptr, 0, y_words, s) }
                }
            };
        }
    };
    res.map_err(cuda("kernel launch"))
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

    fn time(&mut self, protocol: &TimingProtocol) -> Result<Timing> {
        let be = self.be;
        be.warm_up_clocks()?;
        let mut flush_guard;
        let flush = if protocol.cold {
            flush_guard = be.l2_flush()?;
            flush_guard.as_mut()
        } else {
            None
        };
        let ctx = be.ctx.clone();
        let stream = be.stream.clone();
        let t = time_runs(&ctx, &stream, protocol, flush, &mut || self.launch())?;
        be.timed_now();
        self.check_kernel_error()?;
        Ok(t)
    }
}
