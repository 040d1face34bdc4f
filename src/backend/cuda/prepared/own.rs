//! Set-up of our kernels (`kernels/*.cu`): uploads the CSR arrays (other formats are on the
//! device already, `on_device`), picks the grid and builds the argument list (`args.rs`); merge-path CSR is set up in `merge.rs`.

use super::args::{self, Launch};
use super::kernel::Kernel;
use super::merge::Merge;
use super::on_device::{DevCoo, DevEll, DevFormat};
use super::shared::Uploader;
use super::{function, row_ptr_u32};
use crate::backend::cuda::{launch, CudaBackend, CudaScalar};
use crate::backend::Variant;
use crate::{Csr, Error, Result};

pub(super) fn own_kernel<T: CudaScalar>(
    be: &CudaBackend,
    up: &mut Uploader,
    csr: &Csr<T>,
    format: Option<&DevFormat<T>>,
    variant: Variant,
    block: u32,
) -> Result<Kernel<T>> {
    let (nrows, ncols) = (csr.nrows, csr.ncols);
    Ok(match (variant, format) {
        (Variant::Csr { threads_per_row: t }, _) => Kernel::Rows(Launch {
            f: function::<T>(be, &format!("csr_t{t}"), block)?,
            grid: launch::csr_grid(nrows, t, block)?,
            args: args::csr(
                nrows as u32,
                up.up("row_ptr", || row_ptr_u32(&csr.row_ptr))?,
                up.up("col", || &csr.col_idx)?,
                up.up("val", || &csr.values)?,
            ),
        }),
        (Variant::CsrMerge, _) => Kernel::Merge(Box::new(Merge::new(be, up, csr, block)?)),
        (Variant::Coo, Some(DevFormat::Coo(m))) => coo_kernel(be, m, block, true)?,
        (Variant::Ell, Some(DevFormat::Ell(m))) => ell_kernel(be, m, block)?,
        (Variant::Hyb, Some(DevFormat::Hyb { ell, coo })) => {
            let ell = Box::new(ell_kernel(be, ell, block)?);
            let coo = if coo.val.len == 0 {
                None
            } else {
                Some(Box::new(coo_kernel(be, coo, block, false)?))
            };
            Kernel::Hyb { ell, coo }
        }
        (
            Variant::Jad,
            Some(DevFormat::Jad {
                perm,
                jd_ptr,
                col,
                val,
            }),
        ) => Kernel::Rows(Launch {
            f: function::<T>(be, "jad", block)?,
            grid: launch::row_grid(nrows, block)?,
            args: args::jad(
                nrows as u32,
                jd_ptr.len.saturating_sub(1) as u32,
                perm.dev.clone(),
                jd_ptr.dev.clone(),
                col.dev.clone(),
                val.dev.clone(),
            ),
        }),
        (
            Variant::Sell,
            Some(DevFormat::Sell {
                c,
                slice_ptr,
                slice_width,
                perm,
                col,
                val,
            }),
        ) => Kernel::Rows(Launch {
            f: function::<T>(be, "sell", block)?,
            grid: launch::row_grid(nrows, block)?,
            // C is not limited to the block (a slice may span blocks: 002 uses C = 512) nor to
            // powers of two; a C beyond u32::MAX only passes the conversion with no entries, as
            // one slice, which u32::MAX (≥ nrows) describes as well.
            args: args::sell(
                nrows as u32,
                (*c).min(u32::MAX as usize) as u32,
                slice_ptr.dev.clone(),
                slice_width.dev.clone(),
                perm.dev.clone(),
                col.dev.clone(),
                val.dev.clone(),
            ),
        }),
        (Variant::Dia, Some(DevFormat::Dia { offsets, val })) => Kernel::Rows(Launch {
            f: function::<T>(be, "dia", block)?,
            grid: launch::row_grid(nrows, block)?,
            args: args::dia(
                nrows as u32,
                ncols as u32,
                offsets.len as u32,
                offsets.dev.clone(),
                val.dev.clone(),
            ),
        }),
        (
            Variant::Bsr,
            Some(DevFormat::Bsr {
                block: b,
                row_ptr,
                col,
                val,
            }),
        ) => {
            if *b == 0 || *b > 32 {
                return Err(Error::Unsupported(format!(
                    "the CUDA BSR kernel handles blocks of 1 to 32 rows, not {b}"
                )));
            }
            let nbrows = row_ptr.len.saturating_sub(1);
            Kernel::Rows(Launch {
                f: function::<T>(be, "bsr", block)?,
                grid: launch::bsr_grid(nbrows, block)?,
                args: args::bsr(
                    nbrows as u32,
                    nrows as u32,
                    ncols as u32,
                    *b as u32,
                    row_ptr.dev.clone(),
                    col.dev.clone(),
                    val.dev.clone(),
                ),
            })
        }
        (
            Variant::EllBro,
            Some(DevFormat::EllBro {
                slice,
                col_ptr,
                sym_ptr,
                bits,
                symbols,
                val,
                ..
            }),
        ) => Kernel::Rows(Launch {
            f: function::<T>(be, "ell_bro", block)?,
            grid: launch::row_grid(nrows, block)?,
            // A slice taller than the matrix is one slice, as is one of u32::MAX rows.
            args: args::ell_bro(
                nrows as u32,
                (*slice).min(u32::MAX as usize) as u32,
                col_ptr.dev.clone(),
                sym_ptr.dev.clone(),
                bits.dev.clone(),
                symbols.dev.clone(),
                val.dev.clone(),
            ),
        }),
        (v, _) => {
            return Err(Error::Invalid(format!(
                "internal: no CUDA kernel set-up for {v} with this format"
            )))
        }
    })
}

fn ell_kernel<T: CudaScalar>(be: &CudaBackend, m: &DevEll<T>, block: u32) -> Result<Kernel<T>> {
    Ok(Kernel::Rows(Launch {
        f: function::<T>(be, "ell", block)?,
        grid: launch::row_grid(m.nrows, block)?,
        args: args::ell(
            m.nrows as u32,
            m.width as u32,
            m.col.dev.clone(),
            m.val.dev.clone(),
        ),
    }))
}

/// COO kernel; `zero_y` = zero y before adding (false for HYB's COO part).
fn coo_kernel<T: CudaScalar>(
    be: &CudaBackend,
    m: &DevCoo<T>,
    block: u32,
    zero_y: bool,
) -> Result<Kernel<T>> {
    let resident_warps = be.info.sm_count * be.info.max_warps_per_sm;
    let nnz = m.val.len;
    let chunks = launch::coo_chunks(nnz, resident_warps);
    Ok(Kernel::Coo {
        zero_y,
        launch: Launch {
            f: function::<T>(be, "coo", block)?,
            grid: launch::coo_grid(nnz, chunks, block)?,
            args: args::coo(
                nnz as u32,
                chunks,
                m.rows.dev.clone(),
                m.cols.dev.clone(),
                m.val.dev.clone(),
            ),
        },
    })
}
