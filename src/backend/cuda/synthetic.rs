//! On-device generation of the instrumenting phase's benchmark matrices
//! ([`crate::instrument::synthetic`] is the contract): the fill kernels of `kernels/synthetic.cu`
//! write CSR, column-major ELL (width `P_NZ`, no padding) or row-sorted COO arrays, and the input
//! vector, straight into device memory. `CudaPrepared::new_synthetic` (in `prepared`) checks the
//! shape and the memory, calls these, and sets up the same launches as for an uploaded matrix.

use super::{cuda, launch, zeros, CudaBackend, CudaScalar};
use crate::{Error, Result};
use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

/// Threads per block of the fill kernels (grid-stride loops; any multiple of 32 works).
const FILL_BLOCK: u32 = 256;
/// Blocks per SM of the fill kernels: enough to saturate memory bandwidth.
const FILL_BLOCKS_PER_SM: u32 = 8;

/// The benchmark matrix's dimensions as the kernels take them. Built by [`Shape::new`], which
/// checks that every count fits the kernels' 32-bit indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Shape {
    /// Rows.
    pub rows: u32,
    /// Columns.
    pub cols: u32,
    /// Entries per row.
    pub pnz: u32,
    /// Column band width `cols / pnz` (≥ 1).
    pub stride: u32,
    /// Entries, `rows × pnz`.
    pub nnz: u32,
}

impl Shape {
    /// Check `rows × cols` with `pnz` per row (the contract's shape check and the CUDA kernels'
    /// index range) and convert.
    pub fn new(rows: usize, cols: usize, pnz: usize) -> Result<Shape> {
        crate::instrument::synthetic::check_shape(rows, cols, pnz)?;
        let nnz = rows * pnz; // no overflow: checked above
        launch::check_index_range(rows, cols, nnz)?;
        Ok(Shape {
            rows: rows as u32,
            cols: cols as u32,
            pnz: pnz as u32,
            stride: (cols / pnz) as u32,
            nnz: nnz as u32,
        })
    }
}

/// Allocate `n` (at least one) elements; every element is then written by a fill kernel.
pub(super) fn alloc<U: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    be: &CudaBackend,
    n: usize,
    what: &'static str,
) -> Result<CudaSlice<U>> {
    // Zeroed although the kernels overwrite everything: a memset costs little next to the fill
    // and keeps an unexpected short fill from exposing stale memory.
    zeros(&be.stream, n.max(1), what)
}

/// Launch shape for `n` grid-stride items.
pub(super) fn fill_config(be: &CudaBackend, n: u64) -> Result<LaunchConfig> {
    let want = launch::blocks_for(n.max(1), FILL_BLOCK)?;
    let cap = be.info.sm_count.max(1) * FILL_BLOCKS_PER_SM;
    Ok(LaunchConfig {
        grid_dim: (want.clamp(1, cap), 1, 1),
        block_dim: (FILL_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    })
}

fn entry<T: CudaScalar>(be: &CudaBackend, base: &str) -> Result<CudaFunction> {
    be.function(&format!("{base}_{}", T::PRECISION.name()))
}

/// Queue fill kernel `f` (`syn_{csr,ell,coo}_*` in kernels/synthetic.cu, signature
/// `(rows, pnz, stride, u32* idx…, T* val)`) over `items` grid-stride items.
///
/// # Safety
/// `idx` and `val` must be the kernel's arrays in its order, each as long as the kernel writes.
unsafe fn launch_fill<T: CudaScalar>(
    be: &CudaBackend,
    f: &CudaFunction,
    s: Shape,
    items: u64,
    idx: &mut [&mut CudaSlice<u32>],
    val: &mut CudaSlice<T>,
    what: &'static str,
) -> Result<()> {
    let cfg = fill_config(be, items)?;
    let mut b = be.stream.launch_builder(f);
    b.arg(&s.rows).arg(&s.pnz).arg(&s.stride);
    for a in idx.iter_mut() {
        b.arg(&mut **a);
    }
    b.arg(val);
    // SAFETY: the caller's contract (above).
    unsafe { b.launch(cfg) }.map_err(cuda(what))?;
    Ok(())
}

/// CSR arrays `(row_ptr, col, val)` of the benchmark matrix, filled on the device (queued; the
/// caller synchronizes).
pub(super) fn fill_csr<T: CudaScalar>(
    be: &CudaBackend,
    s: Shape,
) -> Result<(CudaSlice<u32>, CudaSlice<u32>, CudaSlice<T>)> {
    let f = entry::<T>(be, "syn_csr")?;
    let mut row_ptr = alloc::<u32>(be, s.rows as usize + 1, "allocating row_ptr")?;
    let mut col = alloc::<u32>(be, s.nnz as usize, "allocating columns")?;
    let mut val = alloc::<T>(be, s.nnz as usize, "allocating values")?;
    let items = (s.nnz as u64).max(s.rows as u64 + 1);
    // SAFETY: `syn_csr_*` takes row_ptr, col, val; row_ptr holds rows + 1 entries, col and val
    // rows × pnz (= nnz).
    unsafe {
        launch_fill(
            be,
            &f,
            s,
            items,
            &mut [&mut row_ptr, &mut col],
            &mut val,
            "launching the CSR fill kernel",
        )?
    };
    Ok((row_ptr, col, val))
}

/// Column-major ELL arrays `(col, val)` of width `pnz`, filled on the device (queued).
pub(super) fn fill_ell<T: CudaScalar>(
    be: &CudaBackend,
    s: Shape,
) -> Result<(CudaSlice<u32>, CudaSlice<T>)> {
    let f = entry::<T>(be, "syn_ell")?;
    let mut col = alloc::<u32>(be, s.nnz as usize, "allocating ELL columns")?;
    let mut val = alloc::<T>(be, s.nnz as usize, "allocating ELL values")?;
    // SAFETY: `syn_ell_*` takes col, val; both hold rows × pnz slots.
    unsafe {
        launch_fill(
            be,
            &f,
            s,
            s.nnz as u64,
            &mut [&mut col],
            &mut val,
            "launching the ELL fill kernel",
        )?
    };
    Ok((col, val))
}

/// Row-sorted COO arrays `(rows, cols, vals)`, filled on the device (queued).
pub(super) fn fill_coo<T: CudaScalar>(
    be: &CudaBackend,
    s: Shape,
) -> Result<(CudaSlice<u32>, CudaSlice<u32>, CudaSlice<T>)> {
    let f = entry::<T>(be, "syn_coo")?;
    let mut rows = alloc::<u32>(be, s.nnz as usize, "allocating COO rows")?;
    let mut col = alloc::<u32>(be, s.nnz as usize, "allocating COO columns")?;
    let mut val = alloc::<T>(be, s.nnz as usize, "allocating COO values")?;
    // SAFETY: `syn_coo_*` takes rows, col, val; every array holds nnz entries.
    unsafe {
        launch_fill(
            be,
            &f,
            s,
            s.nnz as u64,
            &mut [&mut rows, &mut col],
            &mut val,
            "launching the COO fill kernel",
        )?
    };
    Ok((rows, col, val))
}

/// Write the contract's input vector into the first `n` entries of `x` (queued).
pub(super) fn fill_x<T: CudaScalar>(be: &CudaBackend, x: &mut CudaSlice<T>, n: u32) -> Result<()> {
    if (x.len() as u64) < n as u64 {
        return Err(Error::Invalid(format!(
            "internal: x holds {} entries, {n} requested",
            x.len()
        )));
    }
    if n == 0 {
        return Ok(());
    }
    let f = entry::<T>(be, "syn_x")?;
    let cfg = fill_config(be, n as u64)?;
    // SAFETY: arguments match `syn_x_*`; x holds at least n entries (checked above).
    unsafe { be.stream.launch_builder(&f).arg(&n).arg(x).launch(cfg) }
        .map_err(cuda("launching the x fill kernel"))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_checks_the_contract_and_32_bit_indices() {
        let s = Shape::new(10, 100, 7).unwrap();
        assert_eq!(
            (s.rows, s.cols, s.pnz, s.stride, s.nnz),
            (10, 100, 7, 14, 70)
        );
        assert!(Shape::new(10, 4, 5).is_err());
        assert!(Shape::new(10, 4, 0).is_err());
        let e = Shape::new(1 << 20, 1 << 20, 1 << 12).unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)), "{e}");
    }
}
