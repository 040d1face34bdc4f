//! [`CudaPrepared::new_distributed`]: the statistical models' benchmark matrices, generated on
//! the device (`crate::backend::cuda::rowdist`) and launched like uploaded ones; and
//! [`CudaPrepared::arrays`], which reads a prepared kernel's arrays back for the generation
//! check (`crate::backend::cuda::rowdist_check`).

use super::args::{self, Dumped, Launch};
use super::kernel::Kernel;
use super::{alloc_xy, check_threads_per_row, cuda, function, CudaPrepared};
use crate::backend::cuda::{launch, memory, rowdist, synthetic, CudaBackend, CudaScalar};
use crate::backend::{KernelConfig, Variant};
use crate::formats::{FormatKind, Summary};
use crate::instrument::RowLengths;
use crate::{Error, Result};

impl<'a, T: CudaScalar> CudaPrepared<'a, T> {
    /// Generate the statistical benchmark matrix (`rows × cols`, row lengths of mean `mean`
    /// drawn as [`crate::instrument::rowdist`] defines) directly on the device for `cfg`, with x
    /// set to the contract's input vector. Supports CSR with any threads per row, ELL of the
    /// longest row's width (a given `--ell-width` is [`Error::Unsupported`]) and JAD; the
    /// arrays, footprint and effective bytes are those [`CudaPrepared::new`] gives the
    /// host-built matrix. Refusals (a format's limits, device memory) are those of
    /// [`CudaPrepared::new`], checked once the lengths are drawn and before the entries are
    /// allocated.
    pub fn new_distributed(
        be: &'a CudaBackend,
        rows: usize,
        cols: usize,
        mean: usize,
        lengths: &RowLengths,
        cfg: &KernelConfig,
    ) -> Result<Self> {
        let variant = cfg.variant;
        let block = cfg.block_size;
        let tpr = match variant {
            Variant::Csr { threads_per_row } => check_threads_per_row(threads_per_row)?,
            Variant::Ell if cfg.params.ell.width.is_none() => 1,
            Variant::Jad => 1,
            v => {
                return Err(Error::Unsupported(format!(
                    "{v}: row-length benchmark matrices are generated on the device only for \
                     CSR, ELL (of the longest row's width) and JAD"
                )))
            }
        };
        crate::instrument::synthetic::check_shape(rows, cols, mean.max(1))?;
        launch::check_index_range(rows, cols, 0)?;
        launch::check_block_size(block, be.info.max_threads_per_block, tpr)?;
        let free = be.free_memory()?;
        let (r32, c32) = (rows as u32, cols as u32);
        let mut lens = rowdist::row_lengths(be, r32, c32, mean as u64, lengths)?;
        let summary = Summary {
            nnz: lens.nnz,
            max_row_len: lens.max,
            ..Summary::constant(rows as u64, cols as u64, 0)
        };
        let vb = T::BYTES as u64;
        let kind = variant.format();
        // The conversion's checks, as `CudaPrepared::new` meets them (CSR is not converted).
        if kind != FormatKind::Csr {
            kind.admit(&summary, &cfg.params, vb)?;
        }
        let footprint = kind.footprint(&summary, &cfg.params, vb)?;
        let stored = match kind {
            FormatKind::Ell => lens.max.saturating_mul(rows as u64),
            _ => lens.nnz,
        };
        launch::check_index_range(rows, cols, usize::try_from(stored).unwrap_or(usize::MAX))?;
        // Beyond the format: the row pointers of ELL and JAD, JAD's count table.
        let aux = match kind {
            FormatKind::Csr => 0,
            FormatKind::Jad => {
                (rows as u64 + 1 + rowdist::jad_table_len(rows as u64, lens.max)) * 4
            }
            _ => (rows as u64 + 1) * 4,
        };
        let xy_bytes = summary.vector_bytes(vb);
        memory::check_fits(&variant.name(), footprint + aux, xy_bytes, free)?;

        let stream = &be.stream;
        let (mut x, y) = alloc_xy(stream, rows, cols)?;
        synthetic::fill_x(be, &mut x, c32)?;
        lens.scan(be, rows)?;
        let kernel = if rows == 0 {
            Kernel::Empty
        } else {
            match variant {
                Variant::Csr { threads_per_row: t } => {
                    let f = function::<T>(be, &format!("csr_t{t}"), block)?;
                    let (col, val) = rowdist::fill_csr::<T>(be, r32, c32, lens.nnz, &lens.row_ptr)?;
                    Kernel::Rows(Launch {
                        f,
                        grid: launch::csr_grid(rows, t, block)?,
                        args: args::csr(r32, lens.row_ptr, col, val),
                    })
                }
                Variant::Ell => {
                    let f = function::<T>(be, "ell", block)?;
                    let width = lens.max as u32;
                    let (col, val) = rowdist::fill_ell::<T>(be, r32, c32, width, &lens.row_ptr)?;
                    Kernel::Rows(Launch {
                        f,
                        grid: launch::row_grid(rows, block)?,
                        args: args::ell(r32, width, col, val),
                    })
                }
                _ => {
                    let f = function::<T>(be, "jad", block)?;
                    let j = rowdist::fill_jad::<T>(be, r32, c32, &lens)?;
                    Kernel::Rows(Launch {
                        f,
                        grid: launch::row_grid(rows, block)?,
                        args: args::jad(r32, lens.max as u32, j.perm, j.jd_ptr, j.col, j.val),
                    })
                }
            }
        };
        stream.synchronize().map_err(cuda(format!(
            "generating the row-length benchmark matrix for {variant}"
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

    /// The arguments of the kernel's launches, arrays read back from the device (empty for a
    /// matrix without rows): a one-launch kernel's, COO's, HYB's ELL then COO launch, and the
    /// arrays handed to cuSPARSE; [`Error::Unsupported`] for merge-path CSR.
    pub fn arrays(&self) -> Result<Vec<Dumped<T>>> {
        dump(&self.kernel, &self.be.stream, &self.cfg.variant)
    }
}

fn dump<T: CudaScalar>(
    k: &Kernel<T>,
    s: &std::sync::Arc<cudarc::driver::CudaStream>,
    variant: &crate::backend::Variant,
) -> Result<Vec<Dumped<T>>> {
    let err = |e| Error::Cuda(format!("reading kernel arrays back: {e:?}"));
    match k {
        Kernel::Empty => Ok(Vec::new()),
        Kernel::Rows(l) | Kernel::Adding { launch: l, .. } | Kernel::Dependent(l) => l.download(s),
        Kernel::Hyb { ell, coo } => {
            let mut out = dump(ell, s, variant)?;
            if let Some(c) = coo {
                out.extend(dump(c, s, variant)?);
            }
            Ok(out)
        }
        Kernel::Vendor {
            _index_arrays,
            _values,
            ..
        } => {
            let mut out = Vec::new();
            for a in _index_arrays {
                out.push(Dumped::Idx(s.clone_dtoh(&**a).map_err(err)?));
            }
            out.push(Dumped::Val(s.clone_dtoh(&**_values).map_err(err)?));
            Ok(out)
        }
        Kernel::Merge(_) => Err(Error::Unsupported(format!(
            "{variant}: reading the arrays back covers all but merge-path CSR"
        ))),
    }
}
