//! BSR: square dense `b × b` blocks in a CSR structure over block rows; blocks stored row-major.

use super::util::{check_bytes, check_rows, check_u32, csr_from_rows, row_cuts, split_at_cuts};
use super::{FormatKind, FormatParams, SparseFormat};
use crate::{Csr, Error, Result, Scalar};
use rayon::prelude::*;

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

/// Footprint: `(nbrows + 1) × 4 + nblocks × 4 + nblocks × b² × sizeof T`.
fn bytes_for(nbrows: usize, nblocks: usize, b: usize, value_bytes: usize) -> u128 {
    (nbrows as u128 + 1) * 4
        + nblocks as u128 * 4
        + nblocks as u128 * (b as u128 * b as u128) * value_bytes as u128
}

/// Sorted distinct block columns of block row `br` of `csr`, written into `out` (cleared first).
fn block_columns<T: Scalar>(csr: &Csr<T>, b: usize, br: usize, out: &mut Vec<u32>) {
    out.clear();
    let rows = br * b..(br * b).saturating_add(b).min(csr.nrows);
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

impl<T: Scalar> Bsr<T> {
    /// Convert from CSR (which must satisfy [`Csr::validate`]) with `b = params.bsr_block`.
    ///
    /// The last block row and block column may be partial (`nrows` or `ncols` not a multiple of
    /// `b`): their blocks are still `b × b`, zero-filled outside the matrix. Blocks are counted
    /// first (a parallel pass over block rows); the conversion is refused, before allocating,
    /// when `b` is 0, when the stored slots `nblocks × b²` exceed 32-bit offsets or when the
    /// footprint exceeds `params.max_bytes`.
    pub fn from_csr(csr: &Csr<T>, params: &FormatParams) -> Result<Self> {
        let b = params.bsr_block;
        if b == 0 {
            return Err(Error::refused("bsr", "block size must be at least 1"));
        }
        let nrows = csr.nrows;
        check_rows("bsr", nrows)?;
        let nbrows = nrows.div_ceil(b);
        let counts: Vec<usize> = (0..nbrows)
            .into_par_iter()
            .map_init(Vec::new, |scratch, br| {
                block_columns(csr, b, br, scratch);
                scratch.len()
            })
            .collect();
        let nblocks: usize = counts.par_iter().sum();
        let slots = nblocks as u128 * b as u128 * b as u128;
        check_u32("bsr", "stored slots (blocks × b²)", slots)?;
        check_bytes(
            "bsr",
            bytes_for(nbrows, nblocks, b, T::BYTES),
            params.max_bytes,
        )?;
        let mut row_ptr = Vec::with_capacity(nbrows + 1);
        row_ptr.push(0u32);
        let mut acc = 0usize;
        for &k in &counts {
            acc += k;
            row_ptr.push(acc as u32);
        }
        let bb = b.saturating_mul(b);
        let mut col_idx = vec![0u32; nblocks];
        let mut values = vec![T::zero(); slots as usize];
        let cuts = row_cuts(nbrows, nblocks, |br| row_ptr[br] as usize);
        let pos: Vec<usize> = cuts.iter().map(|&br| row_ptr[br] as usize).collect();
        let vpos: Vec<usize> = pos.iter().map(|&p| p * bb).collect();
        split_at_cuts(&mut col_idx, &pos)
            .into_par_iter()
            .zip(split_at_cuts(&mut values, &vpos))
            .zip(cuts.par_windows(2))
            .for_each(|((cs, vs), w)| {
                let base = row_ptr[w[0]] as usize;
                let mut blocks = Vec::new();
                for br in w[0]..w[1] {
                    block_columns(csr, b, br, &mut blocks);
                    let first = row_ptr[br] as usize - base;
                    cs[first..first + blocks.len()].copy_from_slice(&blocks);
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
            self.row_ptr.len().saturating_sub(1),
            self.nblocks(),
            self.block,
            T::BYTES,
        ) as u64
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
