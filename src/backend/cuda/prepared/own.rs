//! Set-up of our kernels (`kernels/*.cu`): uploads the CSR arrays (other formats are on the
//! device already, `on_device`), picks the grid and builds the argument list (`args.rs`); merge-path CSR is set up in `merge.rs`.

use super::args::{self, Launch};
use super::kernel::Kernel;
use super::merge::Merge;
use super::on_device::{Arr, DevCoo, DevEll, DevFormat};
use super::shared::Uploader;
use super::{function, row_ptr_u32, upload};
use crate::backend::cuda::{launch, sell_split, zeros, CudaBackend, CudaScalar};
use crate::backend::Variant;
use crate::{Csr, Error, Result};
use std::sync::Arc;

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
        (Variant::Coo, Some(DevFormat::Coo(m))) => coo_kernel(be, m, block, After::Memset, false)?,
        (Variant::Ell, Some(DevFormat::Ell(m))) => ell_kernel(be, m, block, "ell")?,
        (
            Variant::Hyb,
            Some(DevFormat::Hyb {
                ell,
                coo,
                line_carries,
            }),
        ) => {
            // The COO part, if any, follows the ELL kernel in the stream, or as its
            // programmatic dependent where that is asked for; its walk merged per block where
            // that is asked for and its carries onto one line of y reach the cut.
            let dependent = coo.val.len > 0 && programmatic(be);
            let merged = be.hyb_launch().merges() && *line_carries >= launch::merge_from();
            let coo = if coo.val.len == 0 {
                None
            } else {
                let after = if dependent {
                    After::Release
                } else {
                    After::Kernel
                };
                Some(Box::new(coo_kernel(be, coo, block, after, merged)?))
            };
            let ell = Box::new(ell_kernel(
                be,
                ell,
                block,
                if dependent { "ell_then" } else { "ell" },
            )?);
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
                widths,
                slice_ptr,
                slice_width,
                perm,
                col,
                val,
            }),
        ) => sell_kernel(
            be,
            nrows,
            *c,
            widths,
            [slice_ptr, slice_width, perm, col],
            val,
            block,
        )?,
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
        (
            Variant::SegTile,
            Some(DevFormat::SegTile {
                width,
                seg_ptr,
                col,
                val,
            }),
        ) => segtile_kernel(be, nrows, ncols, *width, seg_ptr, col, val, block)?,
        (v, _) => {
            return Err(Error::Invalid(format!(
                "internal: no CUDA kernel set-up for {v} with this format"
            )))
        }
    })
}

/// ELL; `name` is `ell`, or `ell_then` for HYB's ELL part followed by a programmatic
/// dependent (kernels/ell.cu).
fn ell_kernel<T: CudaScalar>(
    be: &CudaBackend,
    m: &DevEll<T>,
    block: u32,
    name: &str,
) -> Result<Kernel<T>> {
    Ok(Kernel::Rows(Launch {
        f: function::<T>(be, name, block)?,
        grid: launch::row_grid(m.nrows, block)?,
        args: args::ell(
            m.nrows as u32,
            m.width as u32,
            m.col.dev.clone(),
            m.val.dev.clone(),
        ),
    }))
}

/// SELL-C-σ: a thread per sorted row position, and the wide slices' width split over warps
/// (`sell_split.rs`; the units' blocks come first in the grid). C is not limited to the block (a
/// slice may span blocks: 002 uses C = 512) nor to powers of two; a C beyond u32::MAX only passes
/// the conversion with no entries, as one slice, which u32::MAX (≥ nrows) describes as well.
fn sell_kernel<T: CudaScalar>(
    be: &CudaBackend,
    nrows: usize,
    c: usize,
    widths: &[u32],
    [slice_ptr, slice_width, perm, col]: [&Arr<u32>; 4],
    val: &Arr<T>,
    block: u32,
) -> Result<Kernel<T>> {
    let resident_warps = be.info.sm_count * be.info.max_warps_per_sm;
    let rule = sell_split::Rule::from_env()?;
    let split = sell_split::plan(widths, c, nrows, resident_warps, rule)?;
    let s = &be.stream;
    let unit_blocks = launch::blocks_for(split.units() as u64 * launch::WARP as u64, block)?;
    let row_blocks = launch::row_grid(nrows, block)?;
    let grid = unit_blocks
        .checked_add(row_blocks)
        .filter(|&g| g as u64 <= launch::MAX_GRID_X)
        .ok_or_else(|| {
            Error::Unsupported(format!(
                "SELL: {unit_blocks} blocks of split slices and {row_blocks} of rows exceed the CUDA grid"
            ))
        })?;
    let arrivals = zeros::<u32>(s, split.ngroups().max(1), "allocating SELL counters")?;
    let acc = zeros::<T>(
        s,
        (split.ngroups() * 32).max(1),
        "allocating SELL accumulators",
    )?;
    Ok(Kernel::Rows(Launch {
        f: function::<T>(be, "sell", block)?,
        grid,
        args: args::sell(
            [
                nrows as u32,
                c.min(u32::MAX as usize) as u32,
                split.split_above,
                split.units() as u32,
                unit_blocks,
            ],
            [
                slice_ptr.dev.clone(),
                slice_width.dev.clone(),
                perm.dev.clone(),
                col.dev.clone(),
            ],
            val.dev.clone(),
            [
                Arc::new(upload(s, &split.unit_group)?),
                Arc::new(upload(s, &split.groups)?),
            ],
            Arc::new(arrivals),
            Arc::new(acc),
        ),
    }))
}

/// COO's adding kernel over the COO arrays `m`, after `after` ([`coo_sequence`]); its walk
/// block-merged where `merged` (`coo_merged_*`, kernels/coo.cu).
fn coo_kernel<T: CudaScalar>(
    be: &CudaBackend,
    m: &DevCoo<T>,
    block: u32,
    after: After,
    merged: bool,
) -> Result<Kernel<T>> {
    coo_sequence(be, m.val.len, block, after, merged, |chunks| {
        args::coo(
            m.val.len as u32,
            chunks,
            m.rows.dev.clone(),
            m.cols.dev.clone(),
            m.val.dev.clone(),
        )
    })
}

/// What precedes COO's adding kernel, which adds onto y.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum After {
    /// A memset node that zeroes y (the COO format).
    Memset,
    /// A kernel that wrote every row, queued before it in the stream (HYB's ELL part).
    Kernel,
    /// A kernel that wrote every row and releases it as its programmatic dependent
    /// (`ell_then_*`, [`programmatic`]).
    Release,
}

/// The launch sequence of COO's adding kernel over `nnz` entries after `after` (`args` builds
/// the argument list for a number of chunks per warp): [`Kernel::Adding`], or
/// [`Kernel::Dependent`] after [`After::Release`]; the block-merged walk where `merged`.
pub(super) fn coo_sequence<T: CudaScalar>(
    be: &CudaBackend,
    nnz: usize,
    block: u32,
    after: After,
    merged: bool,
    args: impl FnOnce(u32) -> Vec<args::Arg<T>>,
) -> Result<Kernel<T>> {
    let chunks = launch::coo_chunks(nnz, be.resident_warps());
    let grid = launch::coo_grid(nnz, chunks, block)?;
    let name = match (after == After::Release, merged) {
        (true, false) => "coo_dependent",
        (false, false) => "coo",
        (true, true) => "coo_dependent_merged",
        (false, true) => "coo_merged",
    };
    let launch = Launch {
        f: function::<T>(be, name, block)?,
        grid,
        args: args(chunks),
    };
    Ok(match after {
        After::Release => Kernel::Dependent(launch),
        _ => Kernel::Adding {
            zero_y: after == After::Memset,
            launch,
        },
    })
}

/// Whether kernels may be launched as programmatic dependents of the kernel before them
/// (Hopper's programmatic dependent launch: compute capability 9.0 and later), as the backend's
/// HYB sequence says ([`CudaBackend::hyb_launch`]: the profile's, or [`launch::PDL_VAR`]'s).
/// Today only HYB uses it.
pub(super) fn programmatic(be: &CudaBackend) -> bool {
    be.hyb_launch().is_programmatic()
}

/// SEG-TILE (a tile's rows in `groups` interleaved groups, a thread block each). With x staged in
/// shared memory (where the tile's values fit
/// [`SHARED_BYTES`](crate::formats::segtile::SHARED_BYTES)) each thread block stages its tile
/// once, so the rows of a tile are cut into as few groups as fill one wave: `min(2048 / block,
/// 4)` blocks per SM over the tiles, rounded to the nearest. Measured on the H100 (session 37, a
/// comparison of 1–16 groups at 256/512/1,024 threads on 200 rows of 5·10³–4·10⁴ entries and 50
/// rows of 2·10⁵, f32 and f64), that rule (then rounding down) picked the fastest group count in
/// all twelve cases; rounding to the nearest keeps a second group where a tile count just above
/// half a wave left one block per tile. Through the L1 a block costs nothing to start: two rows
/// per warp. The launch zeroes y first.
#[allow(clippy::too_many_arguments)]
fn segtile_kernel<T: CudaScalar>(
    be: &CudaBackend,
    nrows: usize,
    ncols: usize,
    width: usize,
    seg_ptr: &Arr<u32>,
    col: &Arr<u16>,
    val: &Arr<T>,
    block: u32,
) -> Result<Kernel<T>> {
    let shared =
        (width as u64).saturating_mul(T::BYTES as u64) <= crate::formats::segtile::SHARED_BYTES;
    let f = function::<T>(
        be,
        if shared { "segtile_smem" } else { "segtile_l1" },
        block,
    )?;
    let ntiles = ncols.div_ceil(width.max(1));
    let warps = (block / 32).max(1) as usize;
    let row_groups = nrows.div_ceil(warps).max(1);
    let groups = if shared {
        let per_sm = (2048 / block.max(1)).clamp(1, 4) as usize;
        let wave = be.info.sm_count as usize * per_sm;
        ((wave + ntiles / 2) / ntiles.max(1)).clamp(1, row_groups)
    } else {
        nrows.div_ceil(2 * warps).max(1)
    };
    let grid = u32::try_from(groups * ntiles)
        .ok()
        .filter(|&g| g <= i32::MAX as u32)
        .ok_or_else(|| {
            Error::Unsupported(format!(
                "SEG-TILE: {groups} row groups × {ntiles} tiles exceed the CUDA grid"
            ))
        })?;
    Ok(Kernel::Adding {
        zero_y: true,
        launch: Launch {
            f,
            grid,
            args: args::segtile(
                nrows as u32,
                ncols as u32,
                width as u32,
                groups as u32,
                seg_ptr.dev.clone(),
                col.dev.clone(),
                val.dev.clone(),
            ),
        },
    })
}
