//! BSR: square dense `b × b` blocks in a CSR structure over block rows; blocks stored row-major.

use super::refusal::{budget, offsets32, rows32};
use super::util::{csr_from_rows, row_cuts, split_at_cuts};
use super::{
    FormatKind, FormatParams, Missing, ParamError, Reason, Refusal, SparseFormat, Summary,
};
use crate::{Csr, Result, Scalar};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// BSR's parameter.
#[derive(clap::Args, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BsrParams {
    /// BSR block size (square blocks).
    #[arg(id = "bsr_block", long = "bsr-block", value_name = "B", default_value_t = BsrParams::DEFAULT_BLOCK, value_parser = super::at_least_one())]
    #[serde(rename = "bsr_block")]
    pub block: usize,
}

impl BsrParams {
    /// Default block size.
    pub const DEFAULT_BLOCK: usize = 4;
}

impl Default for BsrParams {
    fn default() -> Self {
        BsrParams {
            block: Self::DEFAULT_BLOCK,
        }
    }
}

/// What BSR's rules need beyond the matrix's size: its blocks for one block size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BsrCount {
    /// Block size.
    pub block: usize,
    /// Stored blocks.
    pub blocks: u64,
    /// The most blocks of one block row: the longest chain of the kernel's one warp per block
    /// row. 0 where unknown (features computed before session 30).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub max_row_blocks: u64,
    /// The kernel's warp loop trips, `Σ ⌈blocks of the block row / ⌊32 / b⌋⌉` over block rows
    /// (its lanes form `⌊32 / b⌋` groups, one block each per trip; `kernels/bsr.cu`). 0 where
    /// unknown.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub warp_trips: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl BsrCount {
    /// The count of one block size from the blocks of each block row (of the whole matrix or of
    /// consecutive block rows; [`BsrCount::merge`] adds them up).
    pub fn from_row_blocks(block: usize, row_blocks: impl IntoIterator<Item = usize>) -> BsrCount {
        let groups = (32 / block.max(1)).max(1) as u64;
        let mut c = BsrCount {
            block,
            blocks: 0,
            max_row_blocks: 0,
            warp_trips: 0,
        };
        for n in row_blocks {
            let n = n as u64;
            c.blocks += n;
            c.max_row_blocks = c.max_row_blocks.max(n);
            c.warp_trips += n.div_ceil(groups);
        }
        c
    }

    /// The count of the union of two disjoint runs of block rows (same block size).
    pub fn merge(self, o: BsrCount) -> BsrCount {
        debug_assert_eq!(self.block, o.block);
        BsrCount {
            block: self.block,
            blocks: self.blocks + o.blocks,
            max_row_blocks: self.max_row_blocks.max(o.max_row_blocks),
            warp_trips: self.warp_trips + o.warp_trips,
        }
    }
}

/// The blocks of every block row of `csr` for block size `b ≥ 1` (a parallel pass over the block
/// rows), and their total.
pub(crate) fn count<T: Scalar>(csr: &Csr<T>, b: usize) -> (Vec<usize>, BsrCount) {
    let nbrows = csr.nrows.div_ceil(b);
    let counts: Vec<usize> = (0..nbrows)
        .into_par_iter()
        .map_init(Vec::new, |scratch, br| {
            block_columns(csr, b, br, scratch);
            scratch.len()
        })
        .collect();
    let count = BsrCount::from_row_blocks(b, counts.iter().copied());
    (counts, count)
}

/// The summary's block count for `params`' block size, refusing a size of 0.
fn blocks(s: &Summary, params: &FormatParams) -> Result<BsrCount, Refusal> {
    let b = params.bsr.block;
    let kind = FormatKind::Bsr;
    if b == 0 {
        return Err(Refusal::new(kind, Reason::Param(ParamError::BsrBlock)));
    }
    match s.counts.bsr {
        Some(n) if n.block == b => Ok(n),
        _ => Err(Refusal::new(
            kind,
            Reason::Unknown(Missing::BsrBlocks { block: b }),
        )),
    }
}

/// The device footprint of the matrix summarized by `s`, which must hold its blocks for
/// `params`' block size (see [`FormatKind::footprint`]).
pub fn footprint(s: &Summary, params: &FormatParams, value_bytes: u64) -> Result<u64, Refusal> {
    let n = blocks(s, params)?;
    let nbrows = s.nrows.div_ceil(n.block as u64);
    Ok(bytes_for(nbrows, n.blocks, n.block as u64, value_bytes))
}

/// Block size at least 1, rows within 32-bit row indices, stored slots `blocks × b²` within
/// 32-bit offsets, footprint within `params.max_bytes` (see [`FormatKind::admit`]).
pub fn admit(s: &Summary, params: &FormatParams, value_bytes: u64) -> Result<(), Refusal> {
    let kind = FormatKind::Bsr;
    if params.bsr.block == 0 {
        return Err(Refusal::new(kind, Reason::Param(ParamError::BsrBlock)));
    }
    rows32(kind, s.nrows)?;
    let n = blocks(s, params)?;
    let b = n.block as u128;
    offsets32(kind, "stored slots (blocks × b²)", n.blocks as u128 * b * b)?;
    budget(kind, footprint(s, params, value_bytes)?, params.max_bytes)
}

/// Block sparse row. Device footprint: `(nbrows+1) × 4 + nblocks × 4 + nblocks × b² × sizeof T`.
#[derive(Clone, Debug, PartialEq)]
pub struct Bsr<T> {
    pub nrows: usize,
    pub ncols: usize,
    /// Block size b.
    pub block: usize,
    /// Real (non-padding) entries.
    pub nnz: usize,
    /// Block-row pointers, `ceil(nrows / b) + 1` entries.
    pub row_ptr: Vec<u32>,
    /// Block-column index of each block (increasing within a block row).
    pub col_idx: Vec<u32>,
    /// `b × b` values per block, row-major within the block; zero-filled where absent.
    pub values: Vec<T>,
}

/// Footprint: `(nbrows + 1) × 4 + nblocks × 4 + nblocks × b² × value`, saturating.
fn bytes_for(nbrows: u64, nblocks: u64, b: u64, value_bytes: u64) -> u64 {
    nbrows
        .saturating_add(1)
        .saturating_mul(4)
        .saturating_add(nblocks.saturating_mul(4))
        .saturating_add(
            nblocks
                .saturating_mul(b.saturating_mul(b))
                .saturating_mul(value_bytes),
        )
}

/// Sorted distinct block columns of block row `br` of `csr`, written into `out` (cleared first).
fn block_columns<T: Scalar>(csr: &Csr<T>, b: usize, br: usize, out: &mut Vec<u32>) {
    block_columns_of(
        csr,
        br * b..(br * b).saturating_add(b).min(csr.nrows),
        b,
        out,
    );
}

/// The distinct block columns (`column / b`) of the rows `rows` (one block row), into `out`:
/// what [`count`] counts per block row, also for block rows of a row range that starts at a
/// multiple of `b` (the strip scans of [`crate::features`]).
pub(crate) fn block_columns_of<T: Scalar>(
    csr: &Csr<T>,
    rows: std::ops::Range<usize>,
    b: usize,
    out: &mut Vec<u32>,
) {
    out.clear();
    for i in rows.clone() {
        // Columns are increasing within a row: skip repeats of the same block column.
        let mut last = u32::MAX;
        for &c in csr.row(i).0 {
            let bc = (c as usize / b) as u32;
            if bc != last {
                out.push(bc);
                last = bc;
            }
        }
    }
    if rows.len() > 1 {
        out.sort_unstable();
        out.dedup();
    }
}

/// Where BSR puts every entry ([`Bsr::from_csr`] fills it on the host, the CUDA backend on the
/// device): block row `br` holds the blocks `row_ptr[br]..row_ptr[br + 1]`, of block columns
/// `col_idx[…]` (increasing); entry (i, j) goes to `values[q × b² + (i mod b) × b + j mod b]`,
/// q its block; every other slot is 0.
pub(crate) struct BsrPlan {
    /// Block-row pointers, `ceil(nrows / b) + 1` entries.
    pub row_ptr: Vec<u32>,
    /// Block column of each block.
    pub col_idx: Vec<u32>,
}

/// The layout of `csr` (summarized by `s`) as BSR with `params.bsr.block`, refused as [`admit`]
/// says before anything the size of the slots is allocated.
pub(crate) fn plan<T: Scalar>(
    csr: &Csr<T>,
    s: &Summary,
    params: &FormatParams,
    value_bytes: u64,
) -> Result<BsrPlan> {
    let b = params.bsr.block;
    let kind = FormatKind::Bsr;
    if b == 0 {
        return Err(Refusal::new(kind, Reason::Param(ParamError::BsrBlock)).into());
    }
    rows32(kind, csr.nrows as u64)?;
    // One parallel pass over chunks of block rows (balanced by entries) finds every block row's
    // block columns; the blocks are at most the entries, so holding them before the admission
    // allocates nothing the size of the slots.
    let nbrows = csr.nrows.div_ceil(b);
    let entries_before = |br: usize| csr.row_ptr[br.saturating_mul(b).min(csr.nrows)];
    let cuts = row_cuts(nbrows, csr.nnz(), entries_before);
    let parts: Vec<(Vec<u32>, Vec<u32>)> = cuts
        .par_windows(2)
        .map(|w| {
            let (mut lens, mut cols, mut scratch) = (Vec::new(), Vec::new(), Vec::new());
            for br in w[0]..w[1] {
                block_columns(csr, b, br, &mut scratch);
                lens.push(scratch.len() as u32);
                cols.extend_from_slice(&scratch);
            }
            (lens, cols)
        })
        .collect();
    let count = BsrCount::from_row_blocks(
        b,
        parts.iter().flat_map(|p| p.0.iter().map(|&n| n as usize)),
    );
    let blocks = count.blocks as usize;
    let mut s = s.clone();
    s.counts.bsr = Some(count);
    admit(&s, params, value_bytes)?;
    let mut row_ptr = Vec::with_capacity(nbrows + 1);
    row_ptr.push(0u32);
    let mut acc = 0u32;
    for &k in parts.iter().flat_map(|p| &p.0) {
        acc += k;
        row_ptr.push(acc);
    }
    let mut col_idx = vec![0u32; blocks];
    let mut pos = vec![0usize];
    pos.extend(parts.iter().scan(0, |at, p| {
        *at += p.1.len();
        Some(*at)
    }));
    split_at_cuts(&mut col_idx, &pos)
        .into_par_iter()
        .zip(&parts)
        .for_each(|(out, p)| out.copy_from_slice(&p.1));
    Ok(BsrPlan { row_ptr, col_idx })
}

impl<T: Scalar> Bsr<T> {
    /// Convert from CSR (which must satisfy [`Csr::validate`]) with `b = params.bsr.block`.
    ///
    /// The last block row and block column may be partial (`nrows` or `ncols` not a multiple of
    /// `b`): their blocks are still `b × b`, zero-filled outside the matrix. Blocks are counted
    /// first (a parallel pass over block rows); the conversion is refused, before allocating, as
    /// [`admit`] says.
    pub fn from_csr(csr: &Csr<T>, params: &FormatParams) -> Result<Self> {
        let b = params.bsr.block;
        let nrows = csr.nrows;
        let BsrPlan { row_ptr, col_idx } =
            plan(csr, &Summary::of(csr, None), params, T::BYTES as u64)?;
        let nbrows = row_ptr.len() - 1;
        let bb = b.saturating_mul(b);
        let mut values = vec![T::zero(); col_idx.len() * bb];
        let cuts = row_cuts(nbrows, col_idx.len(), |br| row_ptr[br] as usize);
        let vpos: Vec<usize> = cuts.iter().map(|&br| row_ptr[br] as usize * bb).collect();
        split_at_cuts(&mut values, &vpos)
            .into_par_iter()
            .zip(cuts.par_windows(2))
            .for_each(|(vs, w)| {
                let base = row_ptr[w[0]] as usize;
                for br in w[0]..w[1] {
                    let first = row_ptr[br] as usize;
                    let blocks = &col_idx[first..row_ptr[br + 1] as usize];
                    let first = first - base;
                    for i in br * b..(br * b).saturating_add(b).min(nrows) {
                        let (c, v) = csr.row(i);
                        let mut q = 0;
                        for (&c, &v) in c.iter().zip(v) {
                            let bc = (c as usize / b) as u32;
                            while blocks[q] < bc {
                                q += 1;
                            }
                            vs[(first + q) * bb + (i - br * b) * b + c as usize % b] = v;
                        }
                    }
                }
            });
        Ok(Bsr {
            nrows,
            ncols: csr.ncols,
            block: b,
            nnz: csr.nnz(),
            row_ptr,
            col_idx,
            values,
        })
    }

    /// Number of stored blocks.
    pub fn nblocks(&self) -> usize {
        self.col_idx.len()
    }

    /// Block row `br`: the range of its blocks.
    fn blocks_of(&self, br: usize) -> std::ops::Range<usize> {
        self.row_ptr[br] as usize..self.row_ptr[br + 1] as usize
    }

    /// Columns of block `q` that lie inside the matrix: `col0..col0 + width`.
    fn block_cols(&self, q: usize) -> (usize, usize) {
        let col0 = self.col_idx[q] as usize * self.block;
        (col0, self.block.min(self.ncols - col0))
    }

    /// Convert back to CSR. BSR cannot tell an explicit zero from block fill: zero values are
    /// dropped, so this is the inverse of [`Bsr::from_csr`] for matrices without explicit zeros.
    pub fn to_csr(&self) -> Csr<T> {
        let b = self.block;
        let bb = b.saturating_mul(b);
        let entries = |i: usize| {
            let (br, rr) = (i / b, i % b);
            self.blocks_of(br).flat_map(move |q| {
                let (col0, width) = self.block_cols(q);
                (0..width).filter_map(move |cc| {
                    let v = self.values[q * bb + rr * b + cc];
                    (v != T::zero()).then_some(((col0 + cc) as u32, v))
                })
            })
        };
        let lens: Vec<usize> = (0..self.nrows)
            .into_par_iter()
            .map(|i| entries(i).count())
            .collect();
        csr_from_rows(self.nrows, self.ncols, &lens, |i, c, v| {
            for (t, (col, val)) in entries(i).enumerate() {
                c[t] = col;
                v[t] = val;
            }
        })
    }
}

impl<T: Scalar> SparseFormat<T> for Bsr<T> {
    fn kind(&self) -> FormatKind {
        FormatKind::Bsr
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
        bytes_for(
            self.row_ptr.len().saturating_sub(1) as u64,
            self.nblocks() as u64,
            self.block as u64,
            T::BYTES as u64,
        )
    }
    /// Parallel over chunks of block rows (about equal blocks each); each block multiplies its
    /// rows inside the matrix by its columns inside the matrix.
    fn spmv(&self, x: &[T], y: &mut [T]) {
        assert_eq!(x.len(), self.ncols, "x has the wrong length");
        assert_eq!(y.len(), self.nrows, "y has the wrong length");
        let b = self.block;
        let bb = b.saturating_mul(b);
        let nbrows = self.row_ptr.len().saturating_sub(1);
        let bcuts = row_cuts(nbrows, self.nblocks(), |br| self.row_ptr[br] as usize);
        let cuts: Vec<usize> = bcuts
            .iter()
            .map(|&br| br.saturating_mul(b).min(self.nrows))
            .collect();
        split_at_cuts(y, &cuts)
            .into_par_iter()
            .zip(bcuts.par_windows(2))
            .for_each(|(ys, w)| {
                ys.fill(T::zero());
                let r0 = w[0] * b;
                for br in w[0]..w[1] {
                    let rows = br * b..(br * b).saturating_add(b).min(self.nrows);
                    for q in self.blocks_of(br) {
                        let (col0, width) = self.block_cols(q);
                        let xs = &x[col0..col0 + width];
                        for (rr, i) in rows.clone().enumerate() {
                            let vals = &self.values[q * bb + rr * b..q * bb + rr * b + width];
                            let mut s = T::zero();
                            for (&v, &xv) in vals.iter().zip(xs) {
                                s += v * xv;
                            }
                            ys[i - r0] += s;
                        }
                    }
                }
            });
    }
}
