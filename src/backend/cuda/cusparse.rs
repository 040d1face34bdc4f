//! A small safe wrapper around cuSPARSE's generic SpMV (`cusparseSpMV`), called through
//! `cudarc::cusparse::sys`: a handle, and a prepared SpMV holding the matrix and vector
//! descriptors and the external buffer.
//!
//! Computes `y = 1·A·x + 0·y` with the value type as compute type, 32-bit indices, base 0.
//! `cusparseSpMV_preprocess` is called once when preparing (as an iterative solver would), so the
//! timed calls are the steady-state calls. The device arrays the descriptors point to are owned
//! by the caller, which must keep them alive (and unmoved on the device) for the life of the
//! [`VendorSpmv`]; `prepared` does so by owning both.

use crate::backend::VendorAlg;
use crate::{Error, Precision, Result};
use cudarc::cusparse::sys::{
    self, cudaDataType, cusparseConstDnVecDescr_t, cusparseConstSpMatDescr_t, cusparseDnVecDescr_t,
    cusparseHandle_t, cusparseIndexBase_t, cusparseIndexType_t, cusparseOperation_t,
    cusparseSpMVAlg_t, cusparseStatus_t,
};
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};
use std::ffi::c_void;
use std::sync::Arc;

/// Whether the cuSPARSE library can be loaded.
pub fn present() -> bool {
    // SAFETY: only tries to open the library.
    unsafe { sys::is_culib_present() }
}

fn check(what: &str, s: cusparseStatus_t) -> Result<()> {
    s.result()
        .map_err(|e| Error::Cuda(format!("cuSPARSE {what}: {:?}", e.0)))
}

/// A cuSPARSE handle bound to one stream.
pub struct Handle {
    raw: cusparseHandle_t,
}

impl Handle {
    /// Create a handle whose work goes to `stream`.
    pub fn new(stream: &CudaStream) -> Result<Self> {
        let raw = cudarc::cusparse::result::create()
            .map_err(|e| Error::Cuda(format!("cusparseCreate: {:?}", e.0)))?;
        let h = Handle { raw };
        // SAFETY: live handle; the stream outlives the backend that owns the handle.
        check("cusparseSetStream", unsafe {
            sys::cusparseSetStream(h.raw, stream.cu_stream() as sys::cudaStream_t)
        })?;
        Ok(h)
    }

    /// cuSPARSE's version number (e.g. 12600 for 12.6.0).
    pub fn version(&self) -> Result<i32> {
        let mut v = 0;
        // SAFETY: live handle, out-parameter.
        check("cusparseGetVersion", unsafe {
            sys::cusparseGetVersion(self.raw, &mut v)
        })?;
        Ok(v)
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: created by cusparseCreate, destroyed once.
        let _ = unsafe { cudarc::cusparse::result::destroy(self.raw) };
    }
}

/// The matrix handed to cuSPARSE, as device pointers (32-bit indices).
#[derive(Clone, Copy, Debug)]
pub enum VendorMatrix {
    /// CSR: `nrows + 1` row offsets, `nnz` columns and values.
    Csr {
        /// Row offsets.
        row_ptr: CUdeviceptr,
        /// Column indices.
        col: CUdeviceptr,
        /// Values.
        val: CUdeviceptr,
    },
    /// COO sorted by row: `nnz` rows, columns and values.
    Coo {
        /// Row indices.
        rows: CUdeviceptr,
        /// Column indices.
        col: CUdeviceptr,
        /// Values.
        val: CUdeviceptr,
    },
    /// Sliced ELL, rows unpermuted: `nslices + 1` slice offsets, `stored` columns (-1 = padding)
    /// and values, column-major within each slice of `slice_size` rows.
    SlicedEll {
        /// Rows per slice.
        slice_size: usize,
        /// Stored slots, padding included.
        stored: usize,
        /// Slice offsets.
        slice_ptr: CUdeviceptr,
        /// Column indices.
        col: CUdeviceptr,
        /// Values.
        val: CUdeviceptr,
    },
}

/// A prepared cuSPARSE SpMV.
pub struct VendorSpmv {
    handle: cusparseHandle_t,
    mat: cusparseConstSpMatDescr_t,
    x: cusparseConstDnVecDescr_t,
    y: cusparseDnVecDescr_t,
    alg: cusparseSpMVAlg_t,
    dtype: cudaDataType,
    precision: Precision,
    buffer: Option<CudaSlice<u8>>,
    buffer_ptr: CUdeviceptr,
}

/// The signature shared by `cusparseSpMV` and `cusparseSpMV_preprocess`.
type SpmvFn = unsafe fn(
    cusparseHandle_t,
    cusparseOperation_t,
    *const c_void,
    cusparseConstSpMatDescr_t,
    cusparseConstDnVecDescr_t,
    *const c_void,
    cusparseDnVecDescr_t,
    cudaDataType,
    cusparseSpMVAlg_t,
    *mut c_void,
) -> cusparseStatus_t;

/// The cuSPARSE algorithm of a vendor variant.
pub fn algorithm(alg: VendorAlg) -> cusparseSpMVAlg_t {
    match alg {
        VendorAlg::CsrAlg1 => cusparseSpMVAlg_t::CUSPARSE_SPMV_CSR_ALG1,
        VendorAlg::CsrAlg2 => cusparseSpMVAlg_t::CUSPARSE_SPMV_CSR_ALG2,
        VendorAlg::CooAlg1 => cusparseSpMVAlg_t::CUSPARSE_SPMV_COO_ALG1,
        VendorAlg::CooAlg2 => cusparseSpMVAlg_t::CUSPARSE_SPMV_COO_ALG2,
        VendorAlg::SellAlg1 => cusparseSpMVAlg_t::CUSPARSE_SPMV_SELL_ALG1,
    }
}

impl VendorSpmv {
    /// Describe the matrix and vectors to cuSPARSE, allocate its buffer and preprocess.
    ///
    /// # Safety
    /// Every pointer must address a live device array of the stated size, valid for the life of
    /// the returned value; `x` holds `ncols` and `y` `nrows` values of `precision`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn new(
        handle: &Handle,
        stream: &Arc<CudaStream>,
        matrix: VendorMatrix,
        (nrows, ncols, nnz): (usize, usize, usize),
        x: CUdeviceptr,
        y: CUdeviceptr,
        precision: Precision,
        alg: VendorAlg,
    ) -> Result<Self> {
        let dtype = match precision {
            Precision::F32 => cudaDataType::CUDA_R_32F,
            Precision::F64 => cudaDataType::CUDA_R_64F,
        };
        let i32i = cusparseIndexType_t::CUSPARSE_INDEX_32I;
        let base = cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO;
        let (r, c, n) = (nrows as i64, ncols as i64, nnz as i64);
        let mut mat: cusparseConstSpMatDescr_t = std::ptr::null();
        let p = |d: CUdeviceptr| d as *const c_void;
        match matrix {
            VendorMatrix::Csr { row_ptr, col, val } => check(
                "cusparseCreateConstCsr",
                sys::cusparseCreateConstCsr(
                    &mut mat,
                    r,
                    c,
                    n,
                    p(row_ptr),
                    p(col),
                    p(val),
                    i32i,
                    i32i,
                    base,
                    dtype,
                ),
            )?,
            VendorMatrix::Coo { rows, col, val } => check(
                "cusparseCreateConstCoo",
                sys::cusparseCreateConstCoo(
                    &mut mat,
                    r,
                    c,
                    n,
                    p(rows),
                    p(col),
                    p(val),
                    i32i,
                    base,
                    dtype,
                ),
            )?,
            VendorMatrix::SlicedEll {
                slice_size,
                stored,
                slice_ptr,
                col,
                val,
            } => check(
                "cusparseCreateConstSlicedEll",
                sys::cusparseCreateConstSlicedEll(
                    &mut mat,
                    r,
                    c,
                    n,
                    stored as i64,
                    slice_size as i64,
                    p(slice_ptr),
                    p(col),
                    p(val),
                    i32i,
                    i32i,
                    base,
                    dtype,
                ),
            )?,
        }
        // From here on, Drop releases whatever was created.
        let mut me = VendorSpmv {
            handle: handle.raw,
            mat,
            x: std::ptr::null(),
            y: std::ptr::null_mut(),
            alg: algorithm(alg),
            dtype,
            precision,
            buffer: None,
            buffer_ptr: 0,
        };
        check(
            "cusparseCreateConstDnVec(x)",
            sys::cusparseCreateConstDnVec(&mut me.x, c, p(x), dtype),
        )?;
        check(
            "cusparseCreateDnVec(y)",
            sys::cusparseCreateDnVec(&mut me.y, r, y as *mut c_void, dtype),
        )?;
        let mut size = 0usize;
        let (alpha, beta) = me.scalars();
        check(
            "cusparseSpMV_bufferSize",
            sys::cusparseSpMV_bufferSize(
                me.handle,
                cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE,
                alpha.as_ptr() as *const c_void,
                me.mat,
                me.x,
                beta.as_ptr() as *const c_void,
                me.y,
                dtype,
                me.alg,
                &mut size,
            ),
        )?;
        if size > 0 {
            let buf = stream.alloc_zeros::<u8>(size).map_err(|e| {
                Error::Cuda(format!(
                    "allocating {size} bytes for cuSPARSE's buffer: {e:?}"
                ))
            })?;
            me.buffer_ptr = buf.device_ptr(stream).0;
            me.buffer = Some(buf);
        }
        me.call("cusparseSpMV_preprocess", sys::cusparseSpMV_preprocess)?;
        Ok(me)
    }

    /// α = 1 and β = 0 as bytes of the value type (cuSPARSE reads them from host memory).
    fn scalars(&self) -> ([u8; 8], [u8; 8]) {
        let mut a = [0u8; 8];
        match self.precision {
            Precision::F32 => a[..4].copy_from_slice(&1f32.to_ne_bytes()),
            Precision::F64 => a.copy_from_slice(&1f64.to_ne_bytes()),
        }
        (a, [0u8; 8])
    }

    /// Call `f` — `cusparseSpMV` or `cusparseSpMV_preprocess` (named `what`), which take the
    /// same arguments — on the prepared descriptors and buffer: `y = 1·A·x + 0·y`.
    ///
    /// # Safety
    /// The descriptors must be created and the buffer allocated (true once `new` has allocated
    /// the buffer, and for the life of the value), and `f` must be one of the two functions.
    unsafe fn call(&self, what: &str, f: SpmvFn) -> Result<()> {
        let (alpha, beta) = self.scalars();
        check(
            what,
            f(
                self.handle,
                cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE,
                alpha.as_ptr() as *const c_void,
                self.mat,
                self.x,
                beta.as_ptr() as *const c_void,
                self.y,
                self.dtype,
                self.alg,
                self.buffer_ptr as *mut c_void,
            ),
        )
    }

    /// Queue one `y = A·x` in the handle's stream.
    pub fn launch(&mut self) -> Result<()> {
        // SAFETY: descriptors and buffer are live (see `new`).
        unsafe { self.call("cusparseSpMV", sys::cusparseSpMV) }
    }

    /// Bytes of cuSPARSE's external buffer.
    pub fn buffer_bytes(&self) -> u64 {
        self.buffer.as_ref().map_or(0, |b| b.len() as u64)
    }
}

impl Drop for VendorSpmv {
    fn drop(&mut self) {
        // SAFETY: each descriptor was created once and is destroyed once.
        unsafe {
            if !self.y.is_null() {
                let _ = sys::cusparseDestroyDnVec(self.y);
            }
            if !self.x.is_null() {
                let _ = sys::cusparseDestroyDnVec(self.x);
            }
            if !self.mat.is_null() {
                let _ = sys::cusparseDestroySpMat(self.mat);
            }
        }
    }
}
