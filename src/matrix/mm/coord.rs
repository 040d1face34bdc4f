//! Coordinate layout: parallel passes over the data lines build CSR directly.
//!
//! Rows are grouped into *row blocks* of 2^k consecutive rows, sized so that a block holds
//! about [`BLOCK_ENTRIES`] entries: a block's part of the CSR arrays then fits in a core's L2
//! cache.
//!
//! 1. **Count.** Each chunk of lines parses and checks the row index of its lines (and, in
//!    symmetric files, the column, to count the mirrored entry too) and counts its entries per
//!    row block.
//!    Nothing is allocated from the declared entry count: the exact number of stored entries is
//!    known only after this pass, so a size line that lies cannot make the reader allocate.
//! 2. **Scatter.** The counts give every (block, chunk) pair its own slice of the final CSR
//!    arrays — block by block, chunk by chunk within a block. Each chunk parses its lines again,
//!    columns (checked here for general files) and values included, and appends every entry to
//!    the slice of its block: column, value and
//!    row-within-block. Appends go to one sequential stream per block, which caches handle well;
//!    a direct scatter to each entry's row costs cache and TLB misses per entry on files sorted
//!    by column (as SuiteSparse files are): on the benchmark file (`docs/PERFORMANCE.md`) the
//!    whole read took about 1.5× the CPU time with a batched direct scatter, 6× with a plain
//!    one.
//! 3. **Group.** Each block, in parallel, counts its entries per row (giving the row pointers)
//!    and, unless they are already in row order, moves them to their rows with a stable
//!    counting sort, in cache.
//!
//! Within a row, entries are then in file order; rows are sorted by column and duplicates summed
//! in file order by [`Csr::from_unsorted_rows`]. Besides the CSR arrays, the reader holds one
//! `u32` per entry (the row within its block) and a copy of one block per worker thread; there
//! is no per-chunk, per-row state and no intermediate triplet list.

use super::chunks::{self, ChunkSummary, LocalErr};
use super::header::Header;
use super::lex::{self, BadIndex};
use super::{alloc_zeroed, Field, Symmetry};
use crate::{Csr, Error, Result, Scalar};
use rayon::prelude::*;
use std::ops::Range;

/// Target entries per row block.
const BLOCK_ENTRIES: usize = 1 << 15;

/// Upper bound on blocks × chunks, the number of slices handed to pass 2.
const MAX_SLICES: usize = 1 << 18;

/// Parse the data lines of a coordinate file into CSR. `forced_chunks` overrides the chunk count.
pub fn parse<T: Scalar>(
    name: &str,
    s: &[u8],
    h: &Header,
    forced_chunks: Option<usize>,
) -> Result<Csr<T>> {
    let body_len = s.len() - h.body;
    let n = chunks::count(body_len, forced_chunks);
    let ranges = chunks::split(s, h.body, n);
    // Entries estimated from the size line, bounded by what the file can hold.
    let mut est = h.entries.min(body_len as u64 / 4) as usize;
    if h.symmetry != Symmetry::General {
        est *= 2;
    }
    let blocks = RowBlocks::new(h.nrows, est, ranges.len());

    // Pass 1: check indices, count entries per row block.
    let mut scans: Vec<Count> = ranges
        .par_iter()
        .map(|r| count_chunk(s, r.clone(), h, &blocks))
        .collect();
    let line0 = chunks::resolve(
        name,
        s,
        &ranges,
        &mut scans,
        h.body_line(),
        h.entries,
        h.size_line,
    )?;
    let block_len: Vec<usize> = (0..blocks.count)
        .map(|b| scans.iter().map(|sc| sc.per_block[b]).sum())
        .collect();
    let nnz: usize = block_len.iter().sum();

    // Pass 2: append every entry to its (block, chunk) slice.
    let mut col_idx: Vec<u32> = alloc_zeroed(name, nnz, "column indices")?;
    let mut values: Vec<T> = alloc_zeroed(name, nnz, "values")?;
    let mut local_row: Vec<u32> = alloc_zeroed(name, nnz, "row numbers")?;
    let parts = carve_parts(
        &scans,
        blocks.count,
        &mut col_idx,
        &mut values,
        &mut local_row,
    );
    let results: Vec<Result<()>> = ranges
        .par_iter()
        .zip(parts.into_par_iter())
        .zip(line0.par_iter())
        .map(|((r, mut parts), &l0)| scatter_chunk(name, s, r.clone(), h, l0, &blocks, &mut parts))
        .collect();
    results.into_iter().collect::<Result<()>>()?;
    drop(scans);

    // Group each block's entries by row.
    let mut row_ptr: Vec<usize> = alloc_zeroed(name, h.nrows + 1, "row pointers")?;
    group_rows(
        &blocks,
        &block_len,
        &mut row_ptr,
        &mut col_idx,
        &mut values,
        &local_row,
    );
    drop(local_row);
    Ok(Csr::from_unsorted_rows(
        h.nrows, h.ncols, row_ptr, col_idx, values,
    ))
}

/// Cut the CSR arrays into one slice per (block, chunk), block by block and chunk by chunk
/// within a block; returns each chunk's slices, indexed by block.
fn carve_parts<'a, T>(
    scans: &[Count],
    nblocks: usize,
    col_idx: &'a mut [u32],
    values: &'a mut [T],
    local_row: &'a mut [u32],
) -> Vec<Vec<Part<'a, T>>> {
    let mut parts: Vec<Vec<Part<T>>> = (0..scans.len())
        .map(|_| Vec::with_capacity(nblocks))
        .collect();
    let (mut ci, mut cv, mut lr) = (col_idx, values, local_row);
    for b in 0..nblocks {
        for (c, sc) in scans.iter().enumerate() {
            let k = sc.per_block[b];
            let (a, rest_ci) = std::mem::take(&mut ci).split_at_mut(k);
            let (v, rest_cv) = std::mem::take(&mut cv).split_at_mut(k);
            let (r, rest_lr) = std::mem::take(&mut lr).split_at_mut(k);
            (ci, cv, lr) = (rest_ci, rest_cv, rest_lr);
            parts[c].push(Part {
                cols: a,
                vals: v,
                rows: r,
                n: 0,
            });
        }
    }
    parts
}

/// Step 3: fill `row_ptr` (all but its last element) and put every block's entries in row
/// order, blocks in parallel.
fn group_rows<T: Scalar>(
    blocks: &RowBlocks,
    block_len: &[usize],
    row_ptr: &mut [usize],
    col_idx: &mut [u32],
    values: &mut [T],
    local_row: &[u32],
) {
    let nrows = row_ptr.len() - 1;
    let mut jobs = Vec::with_capacity(blocks.count);
    let (mut ci, mut cv, mut lr) = (col_idx, values, local_row);
    let mut rp = &mut row_ptr[..nrows];
    let mut base = 0usize;
    for (b, &len) in block_len.iter().enumerate() {
        let rows = blocks.rows(b, nrows);
        let (a, rest_ci) = std::mem::take(&mut ci).split_at_mut(len);
        let (v, rest_cv) = std::mem::take(&mut cv).split_at_mut(len);
        let (r, rest_lr) = lr.split_at(len);
        let (p, rest_rp) = std::mem::take(&mut rp).split_at_mut(rows.len());
        (ci, cv, lr, rp) = (rest_ci, rest_cv, rest_lr, rest_rp);
        jobs.push((base, p, a, v, r));
        base += len;
    }
    jobs.into_par_iter().for_each_init(
        || (Vec::new(), Vec::new()),
        |(tc, tv), (base, rp, ci, cv, lr)| group_block(base, rp, ci, cv, lr, tc, tv),
    );
    row_ptr[nrows] = base;
}

/// Consecutive rows grouped by `row >> shift`.
struct RowBlocks {
    shift: u32,
    count: usize,
}

impl RowBlocks {
    /// Blocks of a power-of-two row count holding about [`BLOCK_ENTRIES`] of `est` entries,
    /// with at most [`MAX_SLICES`] / `chunks` blocks and at most 2^31 rows per block (so that
    /// a row within a block fits in `u32`).
    fn new(nrows: usize, est: usize, chunks: usize) -> Self {
        let per_block =
            (nrows as u128 * BLOCK_ENTRIES as u128 / est.max(1) as u128).clamp(1, 1 << 31) as usize;
        let mut shift = per_block.next_power_of_two().trailing_zeros().min(31);
        while shift < 31 && (nrows >> shift) * chunks > MAX_SLICES {
            shift += 1;
        }
        RowBlocks {
            shift,
            count: nrows.div_ceil(1 << shift),
        }
    }

    /// The rows of block `b`.
    fn rows(&self, b: usize, nrows: usize) -> Range<usize> {
        (b << self.shift)..((b + 1) << self.shift).min(nrows)
    }
}

/// Pass-1 result of one chunk.
struct Count {
    lines: u64,
    entries: u64,
    per_block: Vec<usize>,
    err: Option<LocalErr>,
}

impl ChunkSummary for Count {
    fn lines(&self) -> u64 {
        self.lines
    }
    fn entries(&self) -> u64 {
        self.entries
    }
    fn err(&mut self) -> Option<LocalErr> {
        self.err.take()
    }
}

/// Parse a 1-based index at `p` and check it against `max`; returns the 0-based index.
#[inline(always)]
fn index(
    s: &[u8],
    p: usize,
    what: &str,
    max: usize,
) -> std::result::Result<(usize, usize), String> {
    match lex::parse_uint(s, p) {
        Ok((v, q)) if v >= 1 && v <= max as u64 => Ok((v as usize - 1, q)),
        Ok((v, _)) => Err(format!(
            "{what} index {v} is out of range: expected 1..={max} (indices are 1-based)"
        )),
        Err(BadIndex::TooLarge) | Err(BadIndex::Negative) => Err(format!(
            "{what} index {} is out of range: expected 1..={max} (indices are 1-based)",
            lex::show_token(s, p)
        )),
        Err(BadIndex::NotInteger) => Err(format!(
            "expected a {what} index (an integer in 1..={max}), found {}",
            lex::show_token(s, p)
        )),
    }
}

/// Pass 1 over one chunk: check the indices and count entries per row block.
fn count_chunk(s: &[u8], r: Range<usize>, h: &Header, blocks: &RowBlocks) -> Count {
    let mut per_block = vec![0usize; blocks.count];
    let mirror = h.symmetry != Symmetry::General;
    let (mut p, mut lines, mut entries) = (r.start, 0u64, 0u64);
    let mut err = None;
    while p < r.end {
        let q = lex::skip_blanks(s, p);
        if q >= r.end || s[q] == b'\n' || s[q] == b'%' {
            p = lex::next_line(s, q);
            lines += 1;
            continue;
        }
        // The column is only needed here to count the mirror of a symmetric entry; for general
        // files pass 2 checks it.
        let res = index(s, q, "row", h.nrows).and_then(|(i, q)| {
            if !mirror {
                return Ok((i, i, q));
            }
            let q = lex::skip_blanks(s, q);
            index(s, q, "column", h.ncols).map(|(j, q)| (i, j, q))
        });
        match res {
            Ok((i, j, q)) => {
                per_block[i >> blocks.shift] += 1;
                if mirror && i != j {
                    per_block[j >> blocks.shift] += 1;
                }
                entries += 1;
                p = lex::next_line_short(s, q);
                lines += 1;
            }
            Err(msg) => {
                err = Some(LocalErr {
                    line: lines,
                    entry: entries,
                    msg,
                });
                break;
            }
        }
    }
    Count {
        lines,
        entries,
        per_block,
        err,
    }
}

/// One chunk's slice of one block's part of the CSR arrays, filled by pass 2.
struct Part<'a, T> {
    cols: &'a mut [u32],
    vals: &'a mut [T],
    rows: &'a mut [u32],
    n: usize,
}

/// Pass 2 over one chunk: parse values and append every entry (and its mirror) to the slice of
/// its block.
fn scatter_chunk<T: Scalar>(
    name: &str,
    s: &[u8],
    r: Range<usize>,
    h: &Header,
    line0: u64,
    blocks: &RowBlocks,
    parts: &mut [Part<T>],
) -> Result<()> {
    let (mut p, mut line) = (r.start, line0);
    let err = |line: u64, msg: String| Error::parse(name, line, msg);
    let internal = || Error::Invalid(format!("{name}: internal error: the two passes disagree"));
    let mask = (1usize << blocks.shift) - 1;
    // Append (i, j, v); false if the slice is full (only if the passes disagree).
    let mut put = |i: usize, j: usize, v: T| -> bool {
        let Some(part) = parts.get_mut(i >> blocks.shift) else {
            return false;
        };
        let k = part.n;
        if k >= part.cols.len() {
            return false;
        }
        part.cols[k] = j as u32;
        part.vals[k] = v;
        part.rows[k] = (i & mask) as u32;
        part.n = k + 1;
        true
    };
    while p < r.end {
        let q = lex::skip_blanks(s, p);
        if q >= r.end || s[q] == b'\n' || s[q] == b'%' {
            p = lex::next_line(s, q);
            line += 1;
            continue;
        }
        // The row was checked by pass 1.
        let (i, q) = lex::parse_uint(s, q).map_err(|_| internal())?;
        let i = i as usize - 1;
        let q = lex::skip_blanks(s, q);
        let (j, q) = index(s, q, "column", h.ncols).map_err(|m| err(line, m))?;
        let (v, q) = match h.field {
            Field::Pattern => (T::one(), q),
            Field::Real => {
                let q = lex::skip_blanks(s, q);
                lex::parse_real::<T>(s, q).ok_or_else(|| {
                    err(
                        line,
                        format!(
                            "expected a real value after the indices, found {}",
                            lex::show_token(s, q)
                        ),
                    )
                })?
            }
            Field::Integer => {
                let q = lex::skip_blanks(s, q);
                lex::parse_integer_value::<T>(s, q).ok_or_else(|| {
                    err(
                        line,
                        format!(
                            "expected an integer value after the indices, found {}",
                            lex::show_token(s, q)
                        ),
                    )
                })?
            }
        };
        p = lex::line_rest_is_blank(s, q).ok_or_else(|| {
            let what = match h.field {
                Field::Pattern => "'row column' (a pattern file has no values)",
                _ => "'row column value'",
            };
            err(
                line,
                format!(
                    "unexpected {} at the end of the entry: expected {what}",
                    lex::show_token(s, q)
                ),
            )
        })?;
        line += 1;
        let mut ok = put(i, j, v);
        if i != j {
            match h.symmetry {
                Symmetry::General => {}
                Symmetry::Symmetric => ok &= put(j, i, v),
                Symmetry::SkewSymmetric => ok &= put(j, i, -v),
            }
        }
        if !ok {
            return Err(internal());
        }
    }
    Ok(())
}

/// Group one block's entries by row: fill the block's row pointers (`rp`, one per row of the
/// block, offset by `base`) and, unless the entries are already in row order, reorder `ci`/`cv`
/// with a stable counting sort on the rows-within-block `lr` (`tc`/`tv` are scratch space).
fn group_block<T: Scalar>(
    base: usize,
    rp: &mut [usize],
    ci: &mut [u32],
    cv: &mut [T],
    lr: &[u32],
    tc: &mut Vec<u32>,
    tv: &mut Vec<T>,
) {
    for &r in lr {
        rp[r as usize] += 1;
    }
    let mut acc = 0usize;
    for x in rp.iter_mut() {
        let t = *x;
        *x = acc;
        acc += t;
    }
    if !lr.windows(2).all(|w| w[0] <= w[1]) {
        tc.clear();
        tc.extend_from_slice(ci);
        tv.clear();
        tv.extend_from_slice(cv);
        // `rp[r]` is the next free slot of row r; afterwards it is the end of row r.
        for (k, &r) in lr.iter().enumerate() {
            let p = rp[r as usize];
            rp[r as usize] = p + 1;
            ci[p] = tc[k];
            cv[p] = tv[k];
        }
        for i in (1..rp.len()).rev() {
            rp[i] = rp[i - 1];
        }
        if let Some(first) = rp.first_mut() {
            *first = 0;
        }
    }
    for x in rp.iter_mut() {
        *x += base;
    }
}
