//! The device arrays and launch parameters of each kernel, and the launch sequence of one SpMV
//! (see the module documentation of `prepared` for the sequences).

use super::cuda;
use crate::backend::cuda::cusparse::VendorSpmv;
use crate::backend::cuda::launch::{self, MergeTiling};
use crate::backend::cuda::timing::memset_u32;
use crate::backend::cuda::CudaScalar;
use crate::Result;
use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, DevicePtrMut, LaunchConfig, PushKernelArg,
};
use std::sync::Arc;

pub(super) fn cfg1(grid: u32, block: u32, shared: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: shared,
    }
}

/// The device arrays and launch parameters of one kernel.
pub(super) enum Kernel<T> {
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

/// Queue the launches of `k`. `dims` = (nrows, ncols, 32-bit words of y).
pub(super) fn launch_kernel<T: CudaScalar>(
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
