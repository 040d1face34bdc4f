//! The device arrays and launch parameters of each kernel, and the launch sequence of one SpMV
//! (see the module documentation of `prepared` for the sequences).

use super::args::Launch;
use super::cuda;
use super::merge::Merge;
use super::shared::Dev;
use crate::backend::cuda::cusparse::VendorSpmv;
use crate::backend::cuda::timing::memset_u32;
use crate::backend::cuda::CudaScalar;
use crate::Result;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtrMut, LaunchConfig};
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
    /// One kernel that writes every row: CSR (1–32 threads per row), ELL, JAD, SELL, DIA, BSR,
    /// ELL-BRO.
    Rows(Launch<T>),
    /// Merge-path CSR.
    Merge(Box<Merge<T>>),
    /// A kernel that adds into y with atomics: COO (`args::coo`) or SEG-TILE (`args::segtile`).
    Adding {
        /// Zero y first (COO, SEG-TILE); HYB's COO part adds onto the ELL part's output instead.
        zero_y: bool,
        /// The kernel; not launched when its grid is empty (no entries).
        launch: Launch<T>,
    },
    /// A kernel queued as the programmatic dependent of the launch before it (HYB's COO part
    /// after `ell_then_*`).
    Dependent(Launch<T>),
    Hyb {
        ell: Box<Kernel<T>>,
        coo: Option<Box<Kernel<T>>>,
    },
    /// cuSPARSE. `spmv` is declared first so its descriptors are destroyed before the arrays
    /// they point to are freed.
    Vendor {
        spmv: Option<VendorSpmv>,
        _index_arrays: Vec<Dev<u32>>,
        _values: Dev<T>,
    },
}

/// Queue the launches of `k` with `block` threads per block; y holds `y_words` 32-bit words.
pub(super) fn launch_kernel<T: CudaScalar>(
    k: &mut Kernel<T>,
    s: &Arc<CudaStream>,
    block: u32,
    y_words: usize,
    x: &CudaSlice<T>,
    y: &mut CudaSlice<T>,
) -> Result<()> {
    let res = match k {
        Kernel::Empty => Ok(()),
        Kernel::Rows(l) => l.queue(s, block, x, y),
        Kernel::Merge(m) => return m.queue(s, block, x, y),
        Kernel::Adding { zero_y, launch } => {
            if *zero_y {
                zero(y, y_words, s)?;
            }
            if launch.grid == 0 {
                return Ok(());
            }
            launch.queue(s, block, x, y)
        }
        Kernel::Dependent(l) => l.queue_dependent(s, block, x, y),
        Kernel::Hyb { ell, coo } => {
            launch_kernel(ell, s, block, y_words, x, y)?;
            if let Some(c) = coo {
                launch_kernel(c, s, block, y_words, x, y)?;
            }
            Ok(())
        }
        Kernel::Vendor { spmv, .. } => {
            return match spmv {
                Some(v) => v.launch(),
                None => zero(y, y_words, s),
            };
        }
    };
    res.map_err(cuda("kernel launch"))
}

/// Queue `y = 0`; y holds `y_words` 32-bit words.
fn zero<T>(y: &mut CudaSlice<T>, y_words: usize, s: &Arc<CudaStream>) -> Result<()> {
    let (ptr, _g) = y.device_ptr_mut(s);
    // SAFETY: y holds y_words 32-bit words.
    unsafe { memset_u32(ptr, 0, y_words, s) }
}
