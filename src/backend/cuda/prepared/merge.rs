//! Merge-path CSR (`kernels/csr_merge.cu`): the tiling, the choice between one pass with
//! look-back and two passes with a carry fix-up, the tile partition (computed once, when
//! preparing), and the launches of one SpMV.

use super::kernel::cfg1;
use super::shared::{Dev, Uploader};
use super::{cuda, function, row_ptr_u32, zeros};
use crate::backend::cuda::launch::{self, MergeTiling};
use crate::backend::cuda::sources::MERGE_ITEMS_PER_THREAD;
use crate::backend::cuda::{CudaBackend, CudaScalar};
use crate::{Csr, Error, Result};
use cudarc::driver::sys::CUfunction_attribute as FnAttr;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, PushKernelArg};
use std::sync::Arc;

/// The device arrays and launch parameters of merge-path CSR.
pub(super) struct Merge<T> {
    f: CudaFunction,
    /// The fix-up kernel of the two-pass variant; `None` = single pass with look-back.
    fixup: Option<CudaFunction>,
    tiling: MergeTiling,
    nrows: u32,
    nnz: u32,
    row_ptr: Dev<u32>,
    col: Dev<u32>,
    val: Dev<T>,
    tile_row: CudaSlice<u32>,
    carry_val: CudaSlice<T>,
    carry_row: CudaSlice<u32>,
    /// Per-tile flags, stamped with the launch's epoch when the tile's carry is published.
    flags: CudaSlice<u32>,
    /// Bumped before every launch (never 0, the flags' initial value).
    epoch: u32,
    /// Set to 1 by a look-back that gave up waiting (checked after each run).
    error: CudaSlice<u32>,
}

impl<T: CudaScalar> Merge<T> {
    /// Tile the matrix, choose single- or two-pass, upload, and compute the tile partition
    /// (queued; the caller synchronizes).
    pub fn new(be: &CudaBackend, up: &mut Uploader, csr: &Csr<T>, block: u32) -> Result<Self> {
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
        let row_ptr = up.up("row_ptr", || row_ptr_u32(&csr.row_ptr))?;
        let tiles = tiling.ntiles.max(1) as usize;
        let mut tile_row = zeros(
            s,
            tiling.ntiles as usize + 1,
            "allocating the merge partition",
        )?;
        let flags = zeros(s, tiles, "allocating merge flags")?;
        let carry_row = zeros(s, tiles, "allocating merge carries")?;
        let error = zeros(s, 1, "allocating the merge error word")?;
        let carry_val = zeros(s, tiles, "allocating merge carries")?;
        let partition = be.function("merge_partition")?;
        let (nrows, nnz) = (csr.nrows as u32, csr.nnz() as u32);
        let grid = launch::blocks_for(tiling.ntiles as u64 + 1, 256)?;
        // SAFETY: argument list matches `merge_partition` in kernels/csr_merge.cu; tile_row holds
        // ntiles + 1 entries.
        unsafe {
            s.launch_builder(&partition)
                .arg(&nrows)
                .arg(&nnz)
                .arg(&*row_ptr)
                .arg(&tiling.tile_items)
                .arg(&tiling.ntiles)
                .arg(&mut tile_row)
                .launch(cfg1(grid, 256, 0))
        }
        .map_err(cuda("launching merge_partition"))?;
        Ok(Merge {
            f,
            fixup,
            tiling,
            nrows,
            nnz,
            row_ptr,
            col: up.up("col", || &csr.col_idx)?,
            val: up.up("val", || &csr.values)?,
            tile_row,
            carry_val,
            carry_row,
            flags,
            epoch: 0,
            error,
        })
    }

    /// Queue one SpMV with `block` threads per block.
    pub fn queue(
        &mut self,
        s: &Arc<CudaStream>,
        block: u32,
        x: &CudaSlice<T>,
        y: &mut CudaSlice<T>,
    ) -> Result<()> {
        let tiling = self.tiling;
        if tiling.ntiles == 0 {
            return Ok(());
        }
        self.epoch = match self.epoch.wrapping_add(1) {
            0 => 1,
            e => e,
        };
        // SAFETY (both launches): the argument lists match `SC_MERGE_ARGS` and `SC_FIXUP` in
        // kernels/csr_merge.cu; the tile arrays hold ntiles (+ 1) entries (set up in `new`).
        unsafe {
            s.launch_builder(&self.f)
                .arg(&self.nrows)
                .arg(&self.nnz)
                .arg(&*self.row_ptr)
                .arg(&*self.col)
                .arg(&*self.val)
                .arg(x)
                .arg(&mut *y)
                .arg(&self.tile_row)
                .arg(&mut self.carry_val)
                .arg(&mut self.carry_row)
                .arg(&mut self.flags)
                .arg(&self.epoch)
                .arg(&mut self.error)
                .launch(cfg1(tiling.ntiles, block, tiling.shared_bytes))
        }
        .map_err(cuda("launching csr-merge"))?;
        if let Some(fix) = &self.fixup {
            let grid = launch::blocks_for(tiling.ntiles as u64, block)?;
            unsafe {
                s.launch_builder(fix)
                    .arg(&self.nrows)
                    .arg(&tiling.ntiles)
                    .arg(&self.carry_row)
                    .arg(&self.carry_val)
                    .arg(y)
                    .launch(cfg1(grid, block, 0))
            }
            .map_err(cuda("kernel launch"))?;
        }
        Ok(())
    }

    /// After the stream is idle: fail if a look-back gave up waiting.
    pub fn check_error(&self, s: &Arc<CudaStream>) -> Result<()> {
        let e = s
            .clone_dtoh(&self.error)
            .map_err(cuda("reading the csr-merge error word"))?;
        if e.first().copied().unwrap_or(0) != 0 {
            return Err(Error::Cuda(
                "csr-merge: a tile waited too long for its predecessor's carry (tiles were not \
                 dispatched in order); the result is wrong"
                    .into(),
            ));
        }
        Ok(())
    }
}
