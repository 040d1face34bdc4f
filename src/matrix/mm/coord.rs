//! Coordinate layout: two parallel passes over the data lines build CSR directly.
//!
//! 1. **Count.** Each chunk parses the row and column indices of its lines (checking them) and
//!    counts entries per row in its own `u32` array; symmetric files count the mirrored entry
//!    too. Nothing is allocated from the declared entry count: the exact number of stored entries
//!    is known only after this pass, so a size line that lies cannot make the reader allocate.
//! 2. **Scatter.** The per-chunk counts become, row by row, each chunk's offset within the row;
//!    each chunk parses its lines again, values included, and writes every entry straight to its
//!    final CSR slot. Within a row, entries are in file order.
//!
//! Rows are then sorted by column and duplicates summed in file order
//! ([`Csr::from_unsorted_rows`]). The peak memory is the CSR arrays plus one `u32` per row and
//! chunk (the chunk count is capped so that these counters never outweigh the CSR arrays) —
//! there is no intermediate triplet list.

use super::chunks::{self, ChunkSummary, LocalErr};
use super::header::Header;
use super::lex::{self, BadIndex};
use super::{alloc_zeroed, Field, Symmetry};
use crate::{Csr, Error, Result, Scalar};
use rayon::prelude::*;
use std::ops::Range;

/// Parse the data lines of a coordinate file into CSR. `forced_chunks` overrides the chunk count.
pub fn parse<T: Scalar>(
    name: &str,
    s: &[u8],
    h: &Header,
    forced_chunks: Option<usize>,
) -> Result<Csr<T>> {
    let body_len = s.len() - h.body;
    // Each chunk costs 4 bytes per row; keep that below the CSR arrays it helps build
    // (12 bytes per entry for f64; entries estimated from the size line, bounded by the file).
    let est_entries = h.entries.min(body_len as u64 / 4) as usize;
    let cap = 2 + 3 * est_entries / h.nrows.max(1);
    let n = chunks::count(body_len, cap, forced_chunks);
    let ranges = chunks::split(s, h.body, n);

    // Pass 1: count entries per row and chunk.
    let mut scans = ranges
        .par_iter()
        .map(|r| count_chunk(name, s, r.clone(), h))
        .collect::<Result<Vec<_>>>()?;
    let line0 = chunks::resolve(
        name,
        s,
        &ranges,
        &mut scans,
        h.body_line(),
        h.entries,
        h.size_line,
    )?;
    let mut cursors: Vec<Vec<u32>> = scans.into_iter().map(|sc| sc.counts).collect();
    let row_ptr = offsets(name, h.nrows, &mut cursors)?;
    let nnz = row_ptr[h.nrows];

    // Pass 2: scatter every entry to its slot.
    let mut col_idx: Vec<u32> = alloc_zeroed(name, nnz, "column indices")?;
    let mut values: Vec<T> = alloc_zeroed(name, nnz, "values")?;
    let out = Slots {
        cols: col_idx.as_mut_ptr(),
        vals: values.as_mut_ptr(),
    };
    let results: Vec<Result<()>> = ranges
        .par_iter()
        .zip(cursors.par_iter_mut())
        .zip(line0.par_iter())
        .map(|((r, cur), &l0)| scatter_chunk(name, s, r.clone(), h, l0, cur, &row_ptr, &out))
        .collect();
    results.into_iter().collect::<Result<()>>()?;
    drop(cursors);
    Ok(Csr::from_unsorted_rows(
        h.nrows, h.ncols, row_ptr, col_idx, values,
    ))
}

/// Pass-1 result of one chunk.
struct Count {
    lines: u64,
    entries: u64,
    counts: Vec<u32>,
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

/// Pass 1 over one chunk: check the indices and count entries per row.
fn count_chunk(name: &str, s: &[u8], r: Range<usize>, h: &Header) -> Result<Count> {
    let mut counts: Vec<u32> = alloc_zeroed(name, h.nrows, "row counters")?;
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
        let res = index(s, q, "row", h.nrows).and_then(|(i, q)| {
            let q = lex::skip_blanks(s, q);
            index(s, q, "column", h.ncols).map(|(j, q)| (i, j, q))
        });
        match res {
            Ok((i, j, q)) => {
                counts[i] += 1;
                if mirror && i != j {
                    counts[j] += 1;
                }
                entries += 1;
                p = lex::next_line(s, q);
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
    Ok(Count {
        lines,
        entries,
        counts,
        err,
    })
}

/// Turn per-chunk row counts into per-chunk offsets within each row (in place) and return the
/// row pointers.
fn offsets(name: &str, nrows: usize, counts: &mut [Vec<u32>]) -> Result<Vec<usize>> {
    const BLOCK: usize = 1 << 14;
    let mut row_ptr: Vec<usize> = alloc_zeroed(name, nrows + 1, "row pointers")?;
    // Regroup the chunk-major counters into row blocks holding every chunk's slice.
    let nblocks = nrows.div_ceil(BLOCK);
    let mut blocks: Vec<(Vec<&mut [u32]>, &mut [usize])> = row_ptr[1..]
        .chunks_mut(BLOCK)
        .map(|rp| (Vec::with_capacity(counts.len()), rp))
        .collect();
    debug_assert_eq!(blocks.len(), nblocks);
    for c in counts.iter_mut() {
        for (b, slice) in c.chunks_mut(BLOCK).enumerate() {
            blocks[b].0.push(slice);
        }
    }
    let too_long = blocks
        .into_par_iter()
        .enumerate()
        .find_map_any(|(b, (mut cs, rp))| {
            for (k, len) in rp.iter_mut().enumerate() {
                let mut acc = 0u64;
                for c in cs.iter_mut() {
                    let t = c[k];
                    c[k] = acc as u32;
                    acc += t as u64;
                }
                if acc > u32::MAX as u64 {
                    return Some(b * BLOCK + k);
                }
                *len = acc as usize;
            }
            None
        });
    if let Some(i) = too_long {
        return Err(Error::Invalid(format!(
            "{name}: row {} holds more than {} entries, which is not supported",
            i + 1,
            u32::MAX
        )));
    }
    for i in 0..nrows {
        row_ptr[i + 1] += row_ptr[i];
    }
    Ok(row_ptr)
}

/// Raw pointers to the CSR arrays, shared by the chunks of pass 2.
///
/// Safety: chunk `c` writes row `r` only at `row_ptr[r] + cursor` for cursors running from its
/// own offset to the next chunk's, so chunks write disjoint slots; every write is checked
/// against `row_ptr[r + 1]`, which keeps it inside the arrays (`row_ptr[nrows]` is their length).
struct Slots<T> {
    cols: *mut u32,
    vals: *mut T,
}
// SAFETY: see the type's documentation; the pointers outlive the parallel section that uses them.
unsafe impl<T: Send> Send for Slots<T> {}
unsafe impl<T: Send> Sync for Slots<T> {}

impl<T: Copy> Slots<T> {
    /// Append entry `(r, c, v)` to row `r` at this chunk's cursor; false if the row is full.
    #[inline(always)]
    fn put(&self, row_ptr: &[usize], cur: &mut [u32], r: usize, c: u32, v: T) -> bool {
        let pos = row_ptr[r] + cur[r] as usize;
        if pos >= row_ptr[r + 1] {
            return false;
        }
        cur[r] += 1;
        // SAFETY: `pos < row_ptr[nrows] == len` and no other chunk owns slot `pos`.
        unsafe {
            self.cols.add(pos).write(c);
            self.vals.add(pos).write(v);
        }
        true
    }
}

/// Pass 2 over one chunk: parse values and write every entry (and its mirror) to its slot.
#[allow(clippy::too_many_arguments)]
fn scatter_chunk<T: Scalar>(
    name: &str,
    s: &[u8],
    r: Range<usize>,
    h: &Header,
    line0: u64,
    cur: &mut [u32],
    row_ptr: &[usize],
    out: &Slots<T>,
) -> Result<()> {
    let (mut p, mut line) = (r.start, line0);
    let err = |line: u64, msg: String| Error::parse(name, line, msg);
    let internal = || Error::Invalid(format!("{name}: internal error: the two passes disagree"));
    while p < r.end {
        let q = lex::skip_blanks(s, p);
        if q >= r.end || s[q] == b'\n' || s[q] == b'%' {
            p = lex::next_line(s, q);
            line += 1;
            continue;
        }
        // Indices were checked by pass 1.
        let (i, q) = lex::parse_uint(s, q).map_err(|_| internal())?;
        let q = lex::skip_blanks(s, q);
        let (j, q) = lex::parse_uint(s, q).map_err(|_| internal())?;
        let (i, j) = (i as usize - 1, j as usize - 1);
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
        let mut ok = out.put(row_ptr, cur, i, j as u32, v);
        if i != j {
            match h.symmetry {
                Symmetry::General => {}
                Symmetry::Symmetric => ok &= out.put(row_ptr, cur, j, i as u32, v),
                Symmetry::SkewSymmetric => ok &= out.put(row_ptr, cur, j, i as u32, -v),
            }
        }
        if !ok {
            return Err(internal());
        }
    }
    Ok(())
}
