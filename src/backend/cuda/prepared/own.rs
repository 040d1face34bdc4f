//! Set-up of our kernels (`kernels/*.cu`): uploads the format's arrays, picks the grid and
//! builds the argument list (`args.rs`); merge-path CSR is set up in `merge.rs`.

use super::args::{self, Launch};
use super::kernel::Kernel;
use super::merge::Merge;
use super::shared::Uploader;
use super::{function, row_ptr_u32};
use crate::backend::cuda::{launch, CudaBackend, CudaScalar};
use crate::backend::Variant;
use crate::formats::AnyFormat;
use crate::{Csr, Error, Result};

pub(super) fn own_kernel<T: CudaScalar>(
    be: &CudaBackend,
    up: &mut Uploader,
    csr: &Csr<T>,
    format: Option<&AnyFormat<T>>,
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
        (Variant::Coo, Some(AnyFormat::Coo(m))) => coo_kernel(be, up, m, block, true)?,
        (Variant::Ell, Some(AnyFormat::Ell(m))) => ell_kernel(be, up, m, block)?,
        (Variant::Hyb, Some(AnyFormat::Hyb(m))) => {
            let ell = Box::new(ell_kernel(be, up, &m.ell, block)?);
            let coo = if m.coo.values.is_empty() {
                None
            } else {
                Some(Box::new(coo_kernel(be, up, &m.coo, block, false)?))
            };
            Kernel::Hyb { ell, coo }
        }
        (Variant::Jad, Some(AnyFormat::Jad(m))) => Kernel::Rows(Launch {
            f: function::<T>(be, "jad", block)?,
            grid: launch::row_grid(nrows, block)?,
            args: args::jad(
                nrows as u32,
                m.jd_ptr.len().saturating_sub(1) as u32,
                up.up("jad.perm", || &m.perm)?,
                up.up("jad.jd_ptr", || &m.jd_ptr)?,
                up.up("jad.col", || &m.col_idx)?,
                up.up("jad.val", || &m.values)?,
            ),
        }),
        (Variant::Sell, Some(AnyFormat::Sell(m))) => Kernel::Rows(Launch {
            f: function::<T>(be, "sell", block)?,
            grid: launch::row_grid(nrows, block)?,
            // C is not limited to the block (a slice may span blocks: 002 uses C = 512) nor to
            // powers of two; a C beyond u32::MAX only passes the conversion with no entries, as
            // one slice, which u32::MAX (≥ nrows) describes as well.
            args: args::sell(
                nrows as u32,
                m.c.min(u32::MAX as usize) as u32,
                up.up("sell.slice_ptr", || &m.slice_ptr)?,
                up.up("sell.slice_width", || &m.slice_width)?,
                up.up("sell.perm", || &m.perm)?,
                up.up("sell.col", || &m.col_idx)?,
                up.up("sell.val", || &m.values)?,
            ),
        }),
        (Variant::Dia, Some(AnyFormat::Dia(m))) => Kernel::Rows(Launch {
            f: function::<T>(be, "dia", block)?,
            grid: launch::row_grid(nrows, block)?,
            args: args::dia(
                nrows as u32,
                ncols as u32,
                m.offsets.len() as u32,
                up.up("dia.offsets", || &m.offsets)?,
                up.up("dia.val", || &m.values)?,
            ),
        }),
        (Variant::Bsr, Some(AnyFormat::Bsr(m))) => {
            if m.block == 0 || m.block > 32 {
                return Err(Error::Unsupported(format!(
                    "the CUDA BSR kernel handles blocks of 1 to 32 rows, not {}",
                    m.block
                )));
            }
            let nbrows = m.row_ptr.len().saturating_sub(1);
            Kernel::Rows(Launch {
                f: function::<T>(be, "bsr", block)?,
                grid: launch::bsr_grid(nbrows, block)?,
                args: args::bsr(
                    nbrows as u32,
                    nrows as u32,
                    ncols as u32,
                    m.block as u32,
                    up.up("bsr.row_ptr", || &m.row_ptr)?,
                    up.up("bsr.col", || &m.col_idx)?,
                    up.up("bsr.val", || &m.values)?,
                ),
            })
        }
        (Variant::EllBro, Some(AnyFormat::EllBro(m))) => Kernel::Rows(Launch {
            f: function::<T>(be, "ell_bro", block)?,
            grid: launch::row_grid(nrows, block)?,
            // A slice taller than the matrix is one slice, as is one of u32::MAX rows.
            args: args::ell_bro(
                nrows as u32,
                m.slice.min(u32::MAX as usize) as u32,
                up.up("bro.col_ptr", || &m.col_ptr)?,
                up.up("bro.sym_ptr", || &m.sym_ptr)?,
                up.up("bro.bits", || &m.bits)?,
                up.up("bro.symbols", || &m.symbols)?,
                up.up("bro.val", || &m.values)?,
            ),
        }),
        (v, _) => {
            return Err(Error::Invalid(format!(
                "internal: no CUDA kernel set-up for {v} with this format"
            )))
        }
    })
}

fn ell_kernel<T: CudaScalar>(
    be: &CudaBackend,
    up: &mut Uploader,
    m: &crate::formats::Ell<T>,
    block: u32,
) -> Result<Kernel<T>> {
    Ok(Kernel::Rows(Launch {
        f: function::<T>(be, "ell", block)?,
        grid: launch::row_grid(m.nrows, block)?,
        args: args::ell(
            m.nrows as u32,
            m.width as u32,
            up.up("ell.col", || &m.col_idx)?,
            up.up("ell.val", || &m.values)?,
        ),
    }))
}

/// COO kernel; `zero_y` = zero y before adding (false for HYB's COO part).
fn coo_kernel<T: CudaScalar>(
    be: &CudaBackend,
    up: &mut Uploader,
    m: &crate::formats::Coo<T>,
    block: u32,
    zero_y: bool,
) -> Result<Kernel<T>> {
    let resident_warps = be.info.sm_count * be.info.max_warps_per_sm;
    let chunks = launch::coo_chunks(m.values.len(), resident_warps);
    Ok(Kernel::Coo {
        zero_y,
        launch: Launch {
            f: function::<T>(be, "coo", block)?,
            grid: launch::coo_grid(m.values.len(), chunks, block)?,
            args: args::coo(
                m.values.len() as u32,
                chunks,
                up.up("coo.rows", || &m.rows)?,
                up.up("coo.cols", || &m.cols)?,
                up.up("coo.val", || &m.values)?,
            ),
        },
    })
}
