//! [`CudaPrepared::new_synthetic`]: the instrumenting phase's benchmark matrices, generated on
//! the device by the fill kernels (`crate::backend::cuda::synthetic`) and launched like uploaded ones.

use super::args::{self, Launch};
use super::kernel::Kernel;
use super::{alloc_xy, check_threads_per_row, cuda, function, own, CudaPrepared};
use crate::backend::cuda::synthetic;
use crate::backend::cuda::{launch, memory, CudaBackend, CudaScalar};
use crate::backend::{KernelConfig, Variant};
use crate::formats::Summary;
use crate::{Error, Result};

impl<'a, T: CudaScalar> CudaPrepared<'a, T> {
    /// Generate the instrumenting phase's benchmark matrix (`rows × cols`, `pnz` entries per
    /// row, see [`crate::instrument::synthetic`]) directly on the device for `cfg`, with x set to
    /// the contract's input vector. Supports the kernels the instrumenting phase times — CSR with
    /// any threads per row, ELL (width `pnz`, so an ELL width parameter other than `pnz` is
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
            Variant::Csr { threads_per_row } => check_threads_per_row(threads_per_row)?,
            Variant::Coo => 1,
            Variant::Ell if cfg.params.ell.width.unwrap_or(pnz) == pnz => 1,
            Variant::Ell => {
                return Err(Error::Unsupported(format!(
                    "ell: benchmark matrices are generated on the device with width {pnz}, not \
                     the requested {}",
                    cfg.params.ell.width.unwrap_or(pnz)
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
        let nnz = shape.nnz as u64;
        // The format's own footprint for this matrix (ELL's width is `pnz`, checked above).
        let summary = Summary::constant(rows as u64, cols as u64, pnz as u64);
        let vb = T::BYTES as u64;
        let footprint = variant.format().footprint(&summary, &cfg.params, vb)?;
        let xy_bytes = summary.vector_bytes(vb);
        memory::check_fits(&variant.name(), footprint, xy_bytes, be.free_memory()?)?;

        let stream = &be.stream;
        let (mut x, y) = alloc_xy(stream, rows, cols)?;
        synthetic::fill_x(be, &mut x, shape.cols)?;
        let kernel = if rows == 0 {
            Kernel::Empty
        } else {
            match variant {
                Variant::Csr { threads_per_row: t } => {
                    let f = function::<T>(be, &format!("csr_t{t}"), block)?;
                    let (row_ptr, col, val) = synthetic::fill_csr::<T>(be, shape)?;
                    Kernel::Rows(Launch {
                        f,
                        grid: launch::csr_grid(rows, t, block)?,
                        args: args::csr(shape.rows, row_ptr, col, val),
                    })
                }
                Variant::Ell => {
                    let f = function::<T>(be, "ell", block)?;
                    let (col, val) = synthetic::fill_ell::<T>(be, shape)?;
                    Kernel::Rows(Launch {
                        f,
                        grid: launch::row_grid(rows, block)?,
                        args: args::ell(shape.rows, shape.pnz, col, val),
                    })
                }
                _ => {
                    let (rows_d, cols_d, val) = synthetic::fill_coo::<T>(be, shape)?;
                    own::coo_sequence(
                        be,
                        nnz as usize,
                        block,
                        own::After::Memset,
                        false,
                        |chunks| args::coo(shape.nnz, chunks, rows_d, cols_d, val),
                    )?
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
}
