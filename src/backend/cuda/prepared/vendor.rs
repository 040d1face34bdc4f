//! Set-up of a cuSPARSE SpMV: uploads the arrays cuSPARSE reads and prepares its descriptors.

use super::kernel::Kernel;
use super::on_device::DevFormat;
use super::row_ptr_u32;
use super::shared::{Dev, Uploader};
use crate::backend::cuda::cusparse::{VendorMatrix, VendorSpmv};
use crate::backend::cuda::{CudaBackend, CudaScalar};
use crate::backend::VendorAlg;
use crate::{Csr, Error, Result};
use cudarc::driver::{CudaSlice, DevicePtr};

pub(super) fn vendor_kernel<T: CudaScalar>(
    be: &CudaBackend,
    up: &mut Uploader,
    csr: &Csr<T>,
    format: Option<&DevFormat<T>>,
    alg: VendorAlg,
    x: &CudaSlice<T>,
    y: &CudaSlice<T>,
) -> Result<Kernel<T>> {
    // cuSPARSE is used through its 32-bit index API (our arrays are u32), which takes at most
    // i32::MAX rows, columns and non-zeros (counting stored entries, padding included):
    // refuse before uploading anything rather than fail inside cuSPARSE.
    let stored = format.map_or(csr.nnz(), |f| f.stored_entries());
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
    let (index_arrays, values, matrix_of): (Vec<Dev<u32>>, Dev<T>, _) = match alg {
        VendorAlg::CsrAlg1 | VendorAlg::CsrAlg2 => (
            vec![
                up.up("row_ptr", || row_ptr_u32(&csr.row_ptr))?,
                up.up("col", || &csr.col_idx)?,
            ],
            up.up("val", || &csr.values)?,
            0u8,
        ),
        VendorAlg::CooAlg1 | VendorAlg::CooAlg2 => match format {
            Some(DevFormat::Coo(m)) => (
                vec![m.rows.dev.clone(), m.cols.dev.clone()],
                m.val.dev.clone(),
                1u8,
            ),
            _ => {
                return Err(Error::Invalid(
                    "internal: cusparse-coo needs the COO format".into(),
                ))
            }
        },
        VendorAlg::SellAlg1 => match format {
            Some(DevFormat::Sell {
                slice_ptr,
                col,
                val,
                ..
            }) => (
                vec![slice_ptr.dev.clone(), col.dev.clone()],
                val.dev.clone(),
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
                let Some(DevFormat::Sell { c, val, .. }) = format else {
                    unreachable!("checked above")
                };
                VendorMatrix::SlicedEll {
                    slice_size: *c,
                    stored: val.len,
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
