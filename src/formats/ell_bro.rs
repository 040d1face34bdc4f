//! ELL-BRO: ELL with bit-representation-optimized column indices (Tang, Tan, Ray et al., SC'13;
//! the ELL-BRO of Lehnert et al., 002, with slices of 256 rows and 64-bit symbols).
//!
//! Layout, for slices of `h` consecutive rows (no sorting; the last slice may have fewer rows,
//! `lanes(s) = min(h, nrows − s·h)`; every slice before it has `h`):
//!
//! * **Widths.** Slice `s` is padded to its longest row: its columns (ELL columns of the slice) are
//!   `col_ptr[s] .. col_ptr[s+1]`, so its width is `col_ptr[s+1] − col_ptr[s]`.
//! * **Values** as in sliced ELL: entry `k` of lane `r` at `h·col_ptr[s] + k·lanes(s) + r`
//!   (column-major within the slice; padding holds 0).
//! * **Deltas.** Row `i` with columns `c_0 < c_1 < …` has deltas `d_0 = c_0 + 1`, `d_k = c_k −
//!   c_(k−1)`; all are ≥ 1, so the delta 0 marks padding (past the row's end). Every delta fits 32
//!   bits (`c_0 + 1 ≤ ncols ≤ u32::MAX`).
//! * **Bit widths**, one per slice column: `bits[col_ptr[s] + k]` = bits of the largest delta `k`
//!   of the slice's rows (1 ..= 32; padding counts 0), one byte each.
//! * **Symbols.** Each row's deltas `k = 0, 1, …, width − 1` (padding included, as 0) are
//!   concatenated, each in its column's bit width, least significant bit first, into 64-bit
//!   symbols ([`SYMBOL_BITS`]); a delta may straddle two symbols. All rows of a slice share the
//!   widths, so each has the same number of symbols, `sym_ptr[s+1] − sym_ptr[s]`; symbol `j` of
//!   lane `r` is at `h·sym_ptr[s] + j·lanes(s) + r`, so the threads of a slice (one per row)
//!   read their symbols coalesced.
//!
//! A kernel keeps, per row, the current symbol and its unread bits, takes each delta of the
//! slice column's width (loading the next symbol when the delta reaches into it), adds it to the
//! running column + 1, and stops at the first 0 delta.
//!
//! As in the SC'13 scheme (to our reading of it; its text is not in `shared/papers`, 002 only
//! names it): ELL slices, per-row delta coding of the column indices, one bit width per slice
//! column, packed symbols interleaved across the rows of a slice, values uncompressed. Our own
//! choices where it leaves them or to keep the kernel exact: the first delta is biased by one so
//! that 0 marks padding (padding then needs neither a stored row length nor a zero value, which an
//! infinite `x` would turn into NaN, and explicit zeros survive the round trip); symbols are
//! always 64 bits (002's setting); bit widths are plain bytes and the slice offsets 32-bit arrays;
//! rows are not reordered.

use super::refusal::{budget, offsets32, rows32};
use super::util::{csr_from_rows, row_cuts, split_at_cuts};
use super::{
    FormatKind, FormatParams, Missing, ParamError, Reason, Refusal, SparseFormat, Summary,
};
use crate::{Csr, Result, Scalar};
use codec::{bits_of, delta, pack, row_symbols, Unpacker};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::ops::Range;

mod codec;

pub use codec::SYMBOL_BITS;

/// ELL-BRO's parameter.
#[derive(clap::Args, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EllBroParams {
    /// ELL-BRO slice height (rows per slice; one bit width per column of a slice). Symbols are
    /// 64 bits.
    #[arg(id = "ell_bro_slice", long = "ell-bro-slice", value_name = "H", default_value_t = EllBroParams::DEFAULT_SLICE, value_parser = super::at_least_one())]
    #[serde(rename = "ell_bro_slice")]
    pub slice: usize,
}

impl EllBroParams {
    /// Default slice height (002's value).
    pub const DEFAULT_SLICE: usize = 256;
}

impl Default for EllBroParams {
    fn default() -> Self {
        EllBroParams {
            slice: Self::DEFAULT_SLICE,
        }
    }
}

/// What ELL-BRO's rules need beyond the matrix's size: its sizes for one slice height.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EllBroCount {
    /// Slice height.
    pub slice: usize,
    /// Slice columns `Σ width(s)` (bit widths stored).
    pub columns: u64,
    /// Value slots `Σ width(s) × lanes(s)`, padding included.
    pub slots: u64,
    /// 64-bit symbols `Σ symbols per row(s) × lanes(s)`.
    pub symbols: u64,
}

/// The rows of slice `s` of height `h`.
fn rows(nrows: usize, h: usize, s: usize) -> Range<usize> {
    let first = s * h;
    first..first.saturating_add(h).min(nrows)
}

/// The bit width of every column of slice `s` (as many as its longest row), into `out`.
fn slice_bits<T: Scalar>(csr: &Csr<T>, h: usize, s: usize, out: &mut Vec<u8>) {
    out.clear();
    for i in rows(csr.nrows, h, s) {
        let cols = csr.row(i).0;
        if out.len() < cols.len() {
            out.resize(cols.len(), 0);
        }
        for (k, b) in out.iter_mut().enumerate().take(cols.len()) {
            *b = (*b).max(bits_of(delta(cols, k)));
        }
    }
}

/// The bit widths of every slice of height `h ≥ 1` (a parallel pass over the entries) and the
/// count the rules read. The rows must fit 32-bit row indices.
pub(crate) fn analyze<T: Scalar>(csr: &Csr<T>, h: usize) -> (Vec<Vec<u8>>, EllBroCount) {
    let bits: Vec<Vec<u8>> = (0..csr.nrows.div_ceil(h))
        .into_par_iter()
        .map(|s| {
            let mut b = Vec::new();
            slice_bits(csr, h, s, &mut b);
            b
        })
        .collect();
    let mut n = EllBroCount {
        slice: h,
        columns: 0,
        slots: 0,
        symbols: 0,
    };
    for (s, b) in bits.iter().enumerate() {
        let lanes = rows(csr.nrows, h, s).len() as u64;
        n.columns += b.len() as u64;
        n.slots = n.slots.saturating_add(b.len() as u64 * lanes);
        n.symbols = n.symbols.saturating_add(row_symbols(b) as u64 * lanes);
    }
    (bits, n)
}

/// Footprint: `(nslices + 1) × 4 × 2 + columns × 1 + symbols × 8 + slots × value`, saturating.
fn bytes_for(nslices: u64, n: &EllBroCount, value_bytes: u64) -> u64 {
    nslices
        .saturating_add(1)
        .saturating_mul(8)
        .saturating_add(n.columns)
        .saturating_add(n.symbols.saturating_mul(8))
        .saturating_add(n.slots.saturating_mul(value_bytes))
}

/// The slice height of `params`, refusing 0.
fn slice(params: &FormatParams) -> Result<usize, Refusal> {
    match params.ell_bro.slice {
        0 => Err(Refusal::new(
            FormatKind::EllBro,
            Reason::Param(ParamError::EllBroSlice),
        )),
        h => Ok(h),
    }
}

/// The summary's count for `params`' slice height.
fn count(s: &Summary, params: &FormatParams) -> Result<EllBroCount, Refusal> {
    let h = slice(params)?;
    match s.counts.ell_bro {
        Some(n) if n.slice == h => Ok(n),
        _ => Err(Refusal::new(
            FormatKind::EllBro,
            Reason::Unknown(Missing::EllBroSymbols { slice: h }),
        )),
    }
}

/// The device footprint of the matrix summarized by `s`, which must hold its count for
/// `params`' slice height (see [`FormatKind::footprint`]).
pub fn footprint(s: &Summary, params: &FormatParams, value_bytes: u64) -> Result<u64, Refusal> {
    let n = count(s, params)?;
    Ok(bytes_for(s.nrows.div_ceil(n.slice as u64), &n, value_bytes))
}

/// Slice height at least 1, rows within 32-bit row indices, value slots and symbols within
/// 32-bit offsets, footprint within `params.max_bytes` (see [`FormatKind::admit`]).
pub fn admit(s: &Summary, params: &FormatParams, value_bytes: u64) -> Result<(), Refusal> {
    let kind = FormatKind::EllBro;
    slice(params)?;
    rows32(kind, s.nrows)?;
    let n = count(s, params)?;
    offsets32(kind, "value slots (Σ slice width × rows)", n.slots as u128)?;
    offsets32(kind, "64-bit symbols", n.symbols as u128)?;
    budget(kind, footprint(s, params, value_bytes)?, params.max_bytes)
}

/// ELL-BRO (see the module documentation for the layout). Device footprint: `(nslices + 1) × 4
/// (col_ptr) + (nslices + 1) × 4 (sym_ptr) + columns × 1 (bits) + symbols × 8 + slots × sizeof T`.
#[derive(Clone, Debug, PartialEq)]
pub struct EllBro<T> {
    pub nrows: usize,
    pub ncols: usize,
    /// Slice height h.
    pub slice: usize,
    /// Real (non-padding) entries.
    pub nnz: usize,
    /// First slice column of each slice; `nslices + 1` entries.
    pub col_ptr: Vec<u32>,
    /// Symbols per row before each slice; `nslices + 1` entries. Slice `s` starts at symbol
    /// `h × sym_ptr[s]`.
    pub sym_ptr: Vec<u32>,
    /// Bit width (1 ..= 32) of every slice column.
    pub bits: Vec<u8>,
    /// The packed deltas.
    pub symbols: Vec<u64>,
    /// Values; padding holds 0.
    pub values: Vec<T>,
}

/// Where slice `s` starts in an array of `total` items laid out by `ptr` (`h × ptr[s]`; `total` for
/// the end, `s = nslices`).
fn start(h: usize, ptr: &[u32], s: usize, total: usize) -> usize {
    if s + 1 >= ptr.len() {
        total
    } else {
        h * ptr[s] as usize
    }
}

/// Where ELL-BRO puts every entry ([`EllBro::from_csr`] fills it on the host, the CUDA backend on
/// the device): the slice offsets and the bit width of every slice column. Entry `k` of row `i`
/// (slice `s = i / h`, lane `r = i mod h`) has its value at `h × col_ptr[s] + k × lanes(s) + r`
/// and its delta packed into the row's symbols `h × sym_ptr[s] + j × lanes(s) + r`.
pub(crate) struct EllBroPlan {
    /// First slice column of each slice; `nslices + 1` entries.
    pub col_ptr: Vec<u32>,
    /// Symbols per row before each slice; `nslices + 1` entries.
    pub sym_ptr: Vec<u32>,
    /// Bit width of every slice column (slice `s`'s at `col_ptr[s]..col_ptr[s + 1]`).
    pub bits: Vec<u8>,
    /// The sizes the rules read.
    pub count: EllBroCount,
}

/// The layout of `csr` (summarized by `s`) as ELL-BRO with slices of `params.ell_bro.slice`
/// rows, refused as [`admit`] says before anything the size of the entries is allocated.
pub(crate) fn plan<T: Scalar>(
    csr: &Csr<T>,
    s: &Summary,
    params: &FormatParams,
    value_bytes: u64,
) -> Result<EllBroPlan> {
    let h = slice(params)?;
    rows32(FormatKind::EllBro, csr.nrows as u64)?;
    let (per_slice, count) = analyze(csr, h);
    let mut s = s.clone();
    s.counts.ell_bro = Some(count);
    admit(&s, params, value_bytes)?;
    let (mut col_ptr, mut sym_ptr) = (vec![0u32], vec![0u32]);
    let mut bits = Vec::with_capacity(count.columns as usize);
    for b in &per_slice {
        col_ptr.push(col_ptr[col_ptr.len() - 1] + b.len() as u32);
        sym_ptr.push(sym_ptr[sym_ptr.len() - 1] + row_symbols(b) as u32);
        bits.extend_from_slice(b);
    }
    Ok(EllBroPlan {
        col_ptr,
        sym_ptr,
        bits,
        count,
    })
}

impl EllBroPlan {
    /// The footprint of the format laid out so, with values of `value_bytes` bytes.
    pub(crate) fn footprint(&self, value_bytes: u64) -> u64 {
        bytes_for(self.col_ptr.len() as u64 - 1, &self.count, value_bytes)
    }
}

impl<T: Scalar> EllBro<T> {
    /// Convert from CSR (which must satisfy [`Csr::validate`]) with slices of
    /// `params.ell_bro.slice` rows. Refused, before the arrays are allocated, as [`admit`] says.
    pub fn from_csr(csr: &Csr<T>, params: &FormatParams) -> Result<Self> {
        let h = slice(params)?;
        let EllBroPlan {
            col_ptr,
            sym_ptr,
            bits,
            count: n,
        } = plan(csr, &Summary::of(csr, None), params, T::BYTES as u64)?;
        let nslices = col_ptr.len() - 1;
        let mut symbols = vec![0u64; n.symbols as usize];
        let mut values = vec![T::zero(); n.slots as usize];
        let vstart = |s| start(h, &col_ptr, s, values.len());
        let cuts = row_cuts(nslices, values.len(), vstart);
        let at = |ptr: &[u32], total| -> Vec<usize> {
            cuts.iter().map(|&s| start(h, ptr, s, total)).collect()
        };
        let (vpos, spos) = (at(&col_ptr, values.len()), at(&sym_ptr, symbols.len()));
        split_at_cuts(&mut symbols, &spos)
            .into_par_iter()
            .zip(split_at_cuts(&mut values, &vpos))
            .zip(cuts.par_windows(2))
            .for_each(|((ss, vs), w)| {
                let mut words = Vec::new();
                let (s0, v0) = (h * sym_ptr[w[0]] as usize, h * col_ptr[w[0]] as usize);
                for s in w[0]..w[1] {
                    let b = &bits[col_ptr[s] as usize..col_ptr[s + 1] as usize];
                    let lane_rows = rows(csr.nrows, h, s);
                    let lanes = lane_rows.len();
                    let (so, vo) = (h * sym_ptr[s] as usize - s0, h * col_ptr[s] as usize - v0);
                    for (r, i) in lane_rows.enumerate() {
                        let (cols, vals) = csr.row(i);
                        pack(cols, b, &mut words);
                        for (j, &word) in words.iter().enumerate() {
                            ss[so + j * lanes + r] = word;
                        }
                        for (k, &v) in vals.iter().enumerate() {
                            vs[vo + k * lanes + r] = v;
                        }
                    }
                }
            });
        Ok(EllBro {
            nrows: csr.nrows,
            ncols: csr.ncols,
            slice: h,
            nnz: csr.nnz(),
            col_ptr,
            sym_ptr,
            bits,
            symbols,
            values,
        })
    }

    /// Number of slices.
    pub fn nslices(&self) -> usize {
        self.col_ptr.len() - 1
    }

    /// The count of this matrix, as [`analyze`] gives it.
    fn count(&self) -> EllBroCount {
        EllBroCount {
            slice: self.slice,
            columns: self.bits.len() as u64,
            slots: self.values.len() as u64,
            symbols: self.symbols.len() as u64,
        }
    }

    /// Call `f(column, value slot)` for every entry of lane `r` of slice `s`, in order.
    fn for_each_entry(&self, s: usize, r: usize, mut f: impl FnMut(u32, usize)) {
        let h = self.slice;
        let lanes = rows(self.nrows, h, s).len();
        let (c0, c1) = (self.col_ptr[s] as usize, self.col_ptr[s + 1] as usize);
        let mut u = Unpacker::new(&self.symbols, h * self.sym_ptr[s] as usize + r, lanes);
        let mut pos = 0u64;
        for k in 0..c1 - c0 {
            let d = u.take(self.bits[c0 + k] as u32);
            if d == 0 {
                break;
            }
            pos += d;
            f((pos - 1) as u32, h * c0 + k * lanes + r);
        }
    }

    /// Convert back to CSR (padding dropped); the exact inverse of [`EllBro::from_csr`].
    pub fn to_csr(&self) -> Csr<T> {
        let h = self.slice;
        let lens: Vec<usize> = (0..self.nrows)
            .into_par_iter()
            .map(|i| {
                let mut n = 0;
                self.for_each_entry(i / h, i % h, |_, _| n += 1);
                n
            })
            .collect();
        csr_from_rows(self.nrows, self.ncols, &lens, |i, cs, vs| {
            let mut t = 0;
            self.for_each_entry(i / h, i % h, |c, q| {
                cs[t] = c;
                vs[t] = self.values[q];
                t += 1;
            });
        })
    }
}

impl<T: Scalar> SparseFormat<T> for EllBro<T> {
    fn kind(&self) -> FormatKind {
        FormatKind::EllBro
    }
    fn nrows(&self) -> usize {
        self.nrows
    }
    fn ncols(&self) -> usize {
        self.ncols
    }
    fn nnz(&self) -> usize {
        self.nnz
    }
    fn stored_entries(&self) -> usize {
        self.values.len()
    }
    fn footprint_bytes(&self) -> u64 {
        bytes_for(self.nslices() as u64, &self.count(), T::BYTES as u64)
    }
    /// Parallel over chunks of whole slices (each owns the contiguous piece of `y` of its rows);
    /// each row decodes its own deltas, as a GPU thread does.
    fn spmv(&self, x: &[T], y: &mut [T]) {
        assert_eq!(x.len(), self.ncols, "x has the wrong length");
        assert_eq!(y.len(), self.nrows, "y has the wrong length");
        let (h, n) = (self.slice, self.nslices());
        let cuts = row_cuts(n, self.values.len(), |s| {
            start(h, &self.col_ptr, s, self.values.len())
        });
        let ycuts: Vec<usize> = cuts
            .iter()
            .map(|&s| rows(self.nrows, h, s).start.min(self.nrows))
            .collect();
        split_at_cuts(y, &ycuts)
            .into_par_iter()
            .zip(cuts.par_windows(2))
            .for_each(|(ys, w)| {
                for s in w[0]..w[1] {
                    for (r, i) in rows(self.nrows, h, s).enumerate() {
                        let mut sum = T::zero();
                        self.for_each_entry(s, r, |c, q| sum += self.values[q] * x[c as usize]);
                        ys[i - w[0] * h] = sum;
                    }
                }
            });
    }
}
