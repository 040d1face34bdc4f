//! Set-up of our kernels (`kernels/*.cu`): uploads the format's arrays and picks the grid; for
//! merge-path CSR also the tiling, the single- or two-pass choice and the tile partition.

use super::kernel::{cfg1, Kernel};
use super::{cuda, function, row_ptr_u32, upload};
use crate::backend::cuda::sources::MERGE_ITEMS_PER_THREAD;
use crate::backend::cuda::{launch, CudaBackend, CudaScalar};
use crate::backend::Variant;
use crate::formats::AnyFormat;
use crate::{Csr, Error, Result};
use cudarc::driver::sys::CUfunction_attribute as FnAttr;
use cudarc::driver::PushKernelArg;

pub(super) fn own_kernel<T: CudaScalar>(
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
