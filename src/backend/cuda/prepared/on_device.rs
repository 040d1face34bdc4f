//! A format's arrays on the device ([`DevFormat`]), made one of two ways:
//! * [`DevFormat::upload`]: the host conversion (`AnyFormat`) copied to the device — every format;
//! * [`DevFormat::convert`]: converted on the device from the CSR arrays already there — COO,
//!   ELL, HYB, SELL-C-σ, JAD, DIA, BSR and ELL-BRO. The host computes the layout (`formats::*::plan`,
//!   which also admits or refuses the conversion exactly as `from_csr` does) and the fill kernels
//!   of `kernels/convert.cu` move the entries ([`crate::backend::cuda::convert`]).
//!
//! Both give the same arrays, element for element, and the same footprint: `selftest --backend
//! cuda` checks it on every test matrix (`convert_check`). The backend converts on the device
//! unless `SPARSECAST_HOST_CONVERSION=1` is set (or the CSR arrays would not fit beside the
//! format).

use super::shared::Dev;
use super::{cuda, zeros};
use crate::backend::cuda::convert::{self, CsrOnDevice};
use crate::backend::cuda::timing::memset_u32;
use crate::backend::cuda::{CudaBackend, CudaScalar};
use crate::formats::{self, AnyFormat, FormatKind, FormatParams, Summary, PAD};
use crate::{Csr, Error, Result};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtrMut, DeviceRepr, ValidAsZeroBits};
use rayon::prelude::*;
use std::sync::Arc;

/// A device array and its length (the allocation holds at least one element: CUDA refuses
/// zero-byte allocations).
pub(super) struct Arr<U> {
    /// The array.
    pub dev: Dev<U>,
    /// Elements.
    pub len: usize,
}

impl<U> Clone for Arr<U> {
    fn clone(&self) -> Self {
        Arr {
            dev: self.dev.clone(),
            len: self.len,
        }
    }
}

impl<U> Arr<U> {
    fn bytes(&self) -> u64 {
        (self.len * std::mem::size_of::<U>()) as u64
    }
}

/// Copy a host array to the device.
fn up<U: DeviceRepr + ValidAsZeroBits>(s: &Arc<CudaStream>, data: &[U]) -> Result<Arr<U>> {
    Ok(Arr {
        dev: Arc::new(super::upload(s, data)?),
        len: data.len(),
    })
}

/// `n` elements of device memory, every 32-bit word `word` (0: zeros; [`PAD`]: padding columns).
fn filled<U: DeviceRepr + ValidAsZeroBits>(
    s: &Arc<CudaStream>,
    n: usize,
    word: u32,
    what: &str,
) -> Result<CudaSlice<U>> {
    let mut a = zeros::<U>(s, n.max(1), what)?;
    if word != 0 {
        let words = n * std::mem::size_of::<U>() / 4;
        let (ptr, g) = a.device_ptr_mut(s);
        // SAFETY: the allocation holds n elements of U, `words` 32-bit words.
        unsafe { memset_u32(ptr, word, words, s)? };
        drop(g);
    }
    Ok(a)
}

fn done<U>(a: CudaSlice<U>, len: usize) -> Arr<U> {
    Arr {
        dev: Arc::new(a),
        len,
    }
}

/// The runs of equal rows in `rows` (sorted), as [`crate::backend::cuda::launch::coo_line_carries`] reads them.
fn row_runs(rows: &[u32]) -> impl Iterator<Item = (usize, usize)> + '_ {
    rows.chunk_by(|a, b| a == b)
        .map(|run| (run[0] as usize, run.len()))
}

/// COO on the device.
pub(super) struct DevCoo<T> {
    pub rows: Arr<u32>,
    pub cols: Arr<u32>,
    pub val: Arr<T>,
}

/// ELL (or HYB's ELL part) on the device: column-major `nrows × width`.
pub(super) struct DevEll<T> {
    pub nrows: usize,
    pub width: usize,
    pub col: Arr<u32>,
    pub val: Arr<T>,
}

/// A format's arrays on the device (CSR's are the shared `row_ptr`, `col`, `val`).
pub(super) enum DevFormat<T> {
    Coo(DevCoo<T>),
    Ell(DevEll<T>),
    Hyb {
        ell: DevEll<T>,
        coo: DevCoo<T>,
        /// The COO part's carries onto one line of y ([`crate::backend::cuda::launch::coo_line_carries`]): where they
        /// reach [`crate::backend::cuda::launch::merge_from`] the merged sequence runs the block-merged walk.
        line_carries: u64,
    },
    Sell {
        c: usize,
        /// The slices' widths on the host too: the kernel's split of wide slices is planned
        /// from them (`sell_split.rs`).
        widths: Vec<u32>,
        slice_ptr: Arr<u32>,
        slice_width: Arr<u32>,
        perm: Arr<u32>,
        col: Arr<u32>,
        val: Arr<T>,
    },
    Jad {
        perm: Arr<u32>,
        jd_ptr: Arr<u32>,
        col: Arr<u32>,
        val: Arr<T>,
    },
    Dia {
        offsets: Arr<i32>,
        val: Arr<T>,
    },
    Bsr {
        block: usize,
        row_ptr: Arr<u32>,
        col: Arr<u32>,
        val: Arr<T>,
    },
    EllBro {
        slice: usize,
        col_ptr: Arr<u32>,
        sym_ptr: Arr<u32>,
        bits: Arr<u8>,
        symbols: Arr<u64>,
        val: Arr<T>,
        /// The format's own footprint (its symbol words are counted as the format counts them).
        footprint: u64,
    },
    SegTile {
        width: usize,
        seg_ptr: Arr<u32>,
        col: Arr<u16>,
        val: Arr<T>,
    },
}

/// Whether [`DevFormat::convert`] handles `kind`.
pub(crate) fn converts_on_device(kind: FormatKind) -> bool {
    matches!(
        kind,
        FormatKind::Coo
            | FormatKind::Ell
            | FormatKind::Hyb
            | FormatKind::Sell
            | FormatKind::Jad
            | FormatKind::Dia
            | FormatKind::Bsr
            | FormatKind::EllBro
    )
}

/// Device bytes a device conversion of `kind` allocates beyond the format's footprint: the
/// per-row layout arrays the fill kernels read (SELL's slot bases, JAD's positions, HYB's
/// remainder starts).
pub(super) fn scratch_bytes(kind: FormatKind, nrows: usize) -> u64 {
    match kind {
        FormatKind::Sell | FormatKind::Jad | FormatKind::Hyb => (nrows as u64 + 1) * 4,
        _ => 0,
    }
}

impl<T: CudaScalar> DevFormat<T> {
    /// The host conversion `f`, copied to the device.
    pub fn upload(be: &CudaBackend, f: &AnyFormat<T>) -> Result<Self> {
        let s = &be.stream;
        let coo = |m: &formats::Coo<T>| -> Result<DevCoo<T>> {
            Ok(DevCoo {
                rows: up(s, &m.rows)?,
                cols: up(s, &m.cols)?,
                val: up(s, &m.values)?,
            })
        };
        let ell = |m: &formats::Ell<T>| -> Result<DevEll<T>> {
            Ok(DevEll {
                nrows: m.nrows,
                width: m.width,
                col: up(s, &m.col_idx)?,
                val: up(s, &m.values)?,
            })
        };
        Ok(match f {
            AnyFormat::Coo(m) => DevFormat::Coo(coo(m)?),
            AnyFormat::Ell(m) => DevFormat::Ell(ell(m)?),
            AnyFormat::Hyb(m) => DevFormat::Hyb {
                ell: ell(&m.ell)?,
                coo: coo(&m.coo)?,
                line_carries: crate::backend::cuda::launch::coo_line_carries(
                    row_runs(&m.coo.rows),
                    m.coo.rows.len(),
                    T::BYTES,
                    be.resident_warps(),
                ),
            },
            AnyFormat::Sell(m) => DevFormat::Sell {
                c: m.c,
                widths: m.slice_width.clone(),
                slice_ptr: up(s, &m.slice_ptr)?,
                slice_width: up(s, &m.slice_width)?,
                perm: up(s, &m.perm)?,
                col: up(s, &m.col_idx)?,
                val: up(s, &m.values)?,
            },
            AnyFormat::Jad(m) => DevFormat::Jad {
                perm: up(s, &m.perm)?,
                jd_ptr: up(s, &m.jd_ptr)?,
                col: up(s, &m.col_idx)?,
                val: up(s, &m.values)?,
            },
            AnyFormat::Dia(m) => DevFormat::Dia {
                offsets: up(s, &m.offsets)?,
                val: up(s, &m.values)?,
            },
            AnyFormat::Bsr(m) => DevFormat::Bsr {
                block: m.block,
                row_ptr: up(s, &m.row_ptr)?,
                col: up(s, &m.col_idx)?,
                val: up(s, &m.values)?,
            },
            AnyFormat::EllBro(m) => DevFormat::EllBro {
                slice: m.slice,
                col_ptr: up(s, &m.col_ptr)?,
                sym_ptr: up(s, &m.sym_ptr)?,
                bits: up(s, &m.bits)?,
                symbols: up(s, &m.symbols)?,
                val: up(s, &m.values)?,
                footprint: f.as_dyn().footprint_bytes(),
            },
            AnyFormat::SegTile(m) => DevFormat::SegTile {
                width: m.width,
                seg_ptr: up(s, &m.seg_ptr)?,
                col: up(s, &m.col)?,
                val: up(s, &m.values)?,
            },
            AnyFormat::Csr(_) => {
                return Err(Error::Invalid(
                    "internal: CSR kernels read the CSR arrays, not a converted format".into(),
                ))
            }
        })
    }

    /// Convert `csr` into `kind` on the device from its arrays there (`dev`), `summary` being
    /// `csr`'s at `params.hyb.width`. Refused as the host conversion refuses it, and by `fits`
    /// (given the device bytes about to be allocated: the footprint and the layout arrays)
    /// before anything the size of the entries is allocated; queued (the caller synchronizes).
    /// `kind` must be one of [`converts_on_device`].
    pub fn convert(
        be: &CudaBackend,
        csr: &Csr<T>,
        dev: &CsrOnDevice<'_, T>,
        summary: &Summary,
        kind: FormatKind,
        params: &FormatParams,
        fits: &dyn Fn(u64) -> Result<()>,
    ) -> Result<Self> {
        let s = &be.stream;
        let vb = T::BYTES as u64;
        let nrows = csr.nrows;
        let nnz = csr.nnz();
        let scratch = scratch_bytes(kind, nrows);
        let slots_bytes = |slots: usize| slots as u64 * (4 + vb);
        // The ELL layout of `width`: entry k of row r at k × nrows + r.
        let ell = |width: usize| -> Result<DevEll<T>> {
            let slots = width * nrows;
            let mut col = filled::<u32>(s, slots, PAD, "allocating ELL columns")?;
            let mut val = filled::<T>(s, slots, 0, "allocating ELL values")?;
            convert::scatter(
                be,
                dev,
                None,
                nrows as u64,
                width as u32,
                &mut col,
                &mut val,
            )?;
            Ok(DevEll {
                nrows,
                width,
                col: done(col, slots),
                val: done(val, slots),
            })
        };
        Ok(match kind {
            FormatKind::Coo => {
                formats::coo::admit(summary, params, vb)?;
                fits(nnz as u64 * (8 + vb))?;
                let mut rows = filled::<u32>(s, nnz, 0, "allocating COO rows")?;
                convert::coo_rows(be, dev, &mut rows)?;
                // COO's columns and values are CSR's, in CSR's order: a copy of the CSR arrays.
                DevFormat::Coo(DevCoo {
                    rows: done(rows, nnz),
                    cols: done(s.clone_dtod(dev.col).map_err(cuda("copying columns"))?, nnz),
                    val: done(s.clone_dtod(dev.val).map_err(cuda("copying values"))?, nnz),
                })
            }
            FormatKind::Ell => {
                formats::ell::admit(summary, params, vb)?;
                let width = formats::ell::width(summary, params)? as usize;
                fits(slots_bytes(width * nrows))?;
                DevFormat::Ell(ell(width)?)
            }
            FormatKind::Hyb => {
                formats::hyb::admit(summary, params, vb)?;
                let width = summary.hyb_width as usize;
                let start = formats::hyb::remainder_starts(csr, width);
                let over = start[nrows];
                fits(slots_bytes(width * nrows) + over as u64 * (8 + vb) + scratch)?;
                let line_carries = crate::backend::cuda::launch::coo_line_carries(
                    (0..nrows).map(|i| (i, start[i + 1] - start[i])),
                    over,
                    T::BYTES,
                    be.resident_warps(),
                );
                let start: Vec<u32> = start.iter().map(|&v| v as u32).collect();
                let start = up(s, &start)?;
                let mut rows = filled::<u32>(s, over, 0, "allocating HYB's COO rows")?;
                let mut cols = filled::<u32>(s, over, 0, "allocating HYB's COO columns")?;
                let mut vals = filled::<T>(s, over, 0, "allocating HYB's COO values")?;
                convert::rest(
                    be,
                    dev,
                    width as u32,
                    &start.dev,
                    (&mut rows, &mut cols, &mut vals),
                )?;
                DevFormat::Hyb {
                    ell: ell(width)?,
                    coo: DevCoo {
                        rows: done(rows, over),
                        cols: done(cols, over),
                        val: done(vals, over),
                    },
                    line_carries,
                }
            }
            FormatKind::Sell => {
                let plan = formats::sell::plan(csr, summary, params, vb)?;
                let c = params.sell.c;
                let slots = *plan.slice_ptr.last().unwrap_or(&0) as usize;
                let nslices = plan.widths.len() as u64;
                fits(slots_bytes(slots) + (2 * nslices + 1 + nrows as u64) * 4 + scratch)?;
                // The slot of entry 0 of every row: its lane in its slice. The permutation
                // keeps every row in its window of σ rows, so the windows fill in parallel.
                let mut base = vec![0u32; nrows];
                let window = params.sell.sigma.max(1);
                base.par_chunks_mut(window)
                    .zip(plan.perm.par_chunks(window))
                    .enumerate()
                    .for_each(|(w, (out, rows))| {
                        for (q, &r) in rows.iter().enumerate() {
                            let p = w * window + q;
                            out[r as usize - w * window] = plan.slice_ptr[p / c] + (p % c) as u32;
                        }
                    });
                let base = up(s, &base)?;
                let mut col = filled::<u32>(s, slots, PAD, "allocating SELL columns")?;
                let mut val = filled::<T>(s, slots, 0, "allocating SELL values")?;
                convert::scatter(
                    be,
                    dev,
                    Some(&base.dev),
                    c as u64,
                    u32::MAX,
                    &mut col,
                    &mut val,
                )?;
                let widths: Vec<u32> = plan.widths.iter().map(|&w| w as u32).collect();
                DevFormat::Sell {
                    c,
                    slice_ptr: up(s, &plan.slice_ptr)?,
                    slice_width: up(s, &widths)?,
                    widths,
                    perm: up(s, &plan.perm)?,
                    col: done(col, slots),
                    val: done(val, slots),
                }
            }
            FormatKind::Jad => {
                formats::jad::admit(summary, params, vb)?;
                let plan = formats::jad::plan(csr);
                fits(slots_bytes(nnz) + (nrows + plan.jd_ptr.len()) as u64 * 4 + scratch)?;
                // Every row's sorted position, the inverse of the permutation, on the device.
                let perm = up(s, &plan.perm)?;
                let mut pos = filled::<u32>(s, nrows, 0, "allocating JAD positions")?;
                convert::inverse(be, nrows as u32, &perm.dev, &mut pos)?;
                let jd_ptr = up(s, &plan.jd_ptr)?;
                let mut col = filled::<u32>(s, nnz, 0, "allocating JAD columns")?;
                let mut val = filled::<T>(s, nnz, 0, "allocating JAD values")?;
                convert::jad(be, dev, &pos, &jd_ptr.dev, &mut col, &mut val)?;
                DevFormat::Jad {
                    perm,
                    jd_ptr,
                    col: done(col, nnz),
                    val: done(val, nnz),
                }
            }
            FormatKind::Dia => {
                let offsets = formats::dia::plan(csr, summary, params, vb)?;
                let slots = offsets.len() * nrows;
                fits(offsets.len() as u64 * 4 + slots as u64 * vb)?;
                let offsets = up(s, &offsets)?;
                let mut val = filled::<T>(s, slots, 0, "allocating DIA values")?;
                convert::dia(be, dev, offsets.len as u32, &offsets.dev, &mut val)?;
                DevFormat::Dia {
                    offsets,
                    val: done(val, slots),
                }
            }
            FormatKind::Bsr => {
                let plan = formats::bsr::plan(csr, summary, params, vb)?;
                let b = params.bsr.block;
                let slots = plan.col_idx.len() * b * b;
                fits(((plan.row_ptr.len() + plan.col_idx.len()) * 4) as u64 + slots as u64 * vb)?;
                let row_ptr = up(s, &plan.row_ptr)?;
                let col = up(s, &plan.col_idx)?;
                let mut val = filled::<T>(s, slots, 0, "allocating BSR values")?;
                convert::bsr(be, dev, b as u32, &row_ptr.dev, &col.dev, &mut val)?;
                DevFormat::Bsr {
                    block: b,
                    row_ptr,
                    col,
                    val: done(val, slots),
                }
            }
            FormatKind::EllBro => {
                let plan = formats::ell_bro::plan(csr, summary, params, vb)?;
                let footprint = plan.footprint(vb);
                fits(footprint)?;
                let n = plan.count;
                let col_ptr = up(s, &plan.col_ptr)?;
                let sym_ptr = up(s, &plan.sym_ptr)?;
                let bits = up(s, &plan.bits)?;
                let nsym = n.symbols as usize;
                let slots = n.slots as usize;
                let mut symbols = filled::<u64>(s, nsym, 0, "allocating ELL-BRO symbols")?;
                let mut val = filled::<T>(s, slots, 0, "allocating ELL-BRO values")?;
                convert::ell_bro(
                    be,
                    dev,
                    // A slice taller than the matrix is one slice (as the SpMV kernel reads it).
                    params.ell_bro.slice.min(u32::MAX as usize) as u32,
                    (&col_ptr.dev, &sym_ptr.dev, &bits.dev),
                    &mut symbols,
                    &mut val,
                )?;
                DevFormat::EllBro {
                    slice: params.ell_bro.slice,
                    col_ptr,
                    sym_ptr,
                    bits,
                    symbols: done(symbols, nsym),
                    val: done(val, slots),
                    footprint,
                }
            }
            k => {
                return Err(Error::Invalid(format!(
                    "internal: {} is not converted on the device",
                    k.name()
                )))
            }
        })
    }

    /// The format's device footprint: its arrays' bytes (for cuSPARSE's sliced ELL, `vendor_sell`,
    /// only the slice offsets, columns and values).
    pub fn footprint_bytes(&self, vendor_sell: bool) -> u64 {
        let coo = |m: &DevCoo<T>| m.rows.bytes() + m.cols.bytes() + m.val.bytes();
        let ell = |m: &DevEll<T>| m.col.bytes() + m.val.bytes();
        match self {
            DevFormat::Coo(m) => coo(m),
            DevFormat::Ell(m) => ell(m),
            DevFormat::Hyb { ell: e, coo: c, .. } => ell(e) + coo(c),
            DevFormat::Sell {
                slice_ptr,
                col,
                val,
                ..
            } if vendor_sell => slice_ptr.bytes() + col.bytes() + val.bytes(),
            DevFormat::Sell {
                slice_ptr,
                slice_width,
                perm,
                col,
                val,
                ..
            } => slice_ptr.bytes() + slice_width.bytes() + perm.bytes() + col.bytes() + val.bytes(),
            DevFormat::Jad {
                perm,
                jd_ptr,
                col,
                val,
            } => perm.bytes() + jd_ptr.bytes() + col.bytes() + val.bytes(),
            DevFormat::Dia { offsets, val } => offsets.bytes() + val.bytes(),
            DevFormat::Bsr {
                row_ptr, col, val, ..
            } => row_ptr.bytes() + col.bytes() + val.bytes(),
            DevFormat::EllBro { footprint, .. } => *footprint,
            DevFormat::SegTile {
                seg_ptr, col, val, ..
            } => seg_ptr.bytes() + col.bytes() + val.bytes(),
        }
    }

    /// Stored entries, padding included (what 32-bit offsets must reach).
    pub fn stored_entries(&self) -> usize {
        match self {
            DevFormat::Coo(m) => m.val.len,
            DevFormat::Ell(m) => m.val.len,
            DevFormat::Hyb { ell, coo, .. } => ell.val.len + coo.val.len,
            DevFormat::Sell { val, .. }
            | DevFormat::Jad { val, .. }
            | DevFormat::Dia { val, .. }
            | DevFormat::Bsr { val, .. }
            | DevFormat::EllBro { val, .. }
            | DevFormat::SegTile { val, .. } => val.len,
        }
    }
}
