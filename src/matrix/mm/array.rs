//! Array layout: one value per line, column by column (only the lower triangle for symmetric
//! files, the strictly lower triangle for skew-symmetric ones).
//!
//! Every value of an array file is an explicit entry, so the CSR holds all of them, zeros
//! included (a dense `m × n` file gives `m·n` stored entries; a skew-symmetric file also stores
//! its zero diagonal).

use super::chunks::{self, ChunkSummary, LocalErr};
use super::header::Header;
use super::{alloc_zeroed, lex, Field, Symmetry};
use crate::{Csr, Error, Result, Scalar};
use rayon::prelude::*;
use std::ops::Range;

/// Values of one chunk.
struct Values<T> {
    lines: u64,
    values: Vec<T>,
    err: Option<LocalErr>,
}

impl<T> ChunkSummary for Values<T> {
    fn lines(&self) -> u64 {
        self.lines
    }
    fn entries(&self) -> u64 {
        self.values.len() as u64
    }
    fn err(&mut self) -> Option<LocalErr> {
        self.err.take()
    }
}

/// Parse the values of an array file in file order (column-major, packed by symmetry).
pub fn parse_values<T: Scalar>(
    name: &str,
    s: &[u8],
    h: &Header,
    forced_chunks: Option<usize>,
) -> Result<Vec<T>> {
    let packed = parse_packed(name, s, h, forced_chunks)?;
    let mut out: Vec<T> = alloc_zeroed(name, packed.len, "array values")?;
    packed.read(0, &mut out);
    Ok(out)
}

/// The values of an array file as parsed, chunk by chunk (not concatenated: [`to_csr`] reads
/// them in place, so that the values are held once, not twice, while the CSR is built).
pub struct Packed<T> {
    parts: Vec<Vec<T>>,
    /// Index of the first value of each part, plus the total.
    starts: Vec<usize>,
    len: usize,
}

impl<T: Copy> Packed<T> {
    /// Copy values `start..start + out.len()` (file order) into `out`.
    fn read(&self, start: usize, out: &mut [T]) {
        let mut p = self.starts.partition_point(|&s| s <= start) - 1;
        let (mut k, mut done) = (start, 0);
        while done < out.len() {
            let part = &self.parts[p];
            let off = k - self.starts[p];
            let n = (part.len() - off).min(out.len() - done);
            out[done..done + n].copy_from_slice(&part[off..off + n]);
            done += n;
            k += n;
            p += 1;
        }
    }
}

/// Parse the values of an array file, chunks in parallel.
pub fn parse_packed<T: Scalar>(
    name: &str,
    s: &[u8],
    h: &Header,
    forced_chunks: Option<usize>,
) -> Result<Packed<T>> {
    let n = chunks::count(s.len() - h.body, forced_chunks);
    let ranges = chunks::split(s, h.body, n);
    let mut parts: Vec<Values<T>> = ranges
        .par_iter()
        .map(|r| values_chunk(s, r.clone(), h.field))
        .collect();
    chunks::resolve(
        name,
        s,
        &ranges,
        &mut parts,
        h.body_line(),
        h.entries,
        h.size_line,
    )?;
    let mut starts = Vec::with_capacity(parts.len() + 1);
    let mut len = 0;
    for part in &parts {
        starts.push(len);
        len += part.values.len();
    }
    starts.push(len);
    let parts = parts.into_iter().map(|p| p.values).collect();
    Ok(Packed { parts, starts, len })
}

/// Parse one chunk's values.
fn values_chunk<T: Scalar>(s: &[u8], r: Range<usize>, field: Field) -> Values<T> {
    // A value line takes at least 2 bytes: reserving for that many values up front avoids the
    // copies of a growing vector; the pages of unused capacity are never touched (a hint: on
    // failure the vector grows as needed).
    let mut values = Vec::new();
    let _ = values.try_reserve_exact(r.len() / 2 + 1);
    let (mut p, mut lines) = (r.start, 0u64);
    let mut err = None;
    while p < r.end {
        let q = lex::skip_blanks(s, p);
        if q >= r.end || s[q] == b'\n' || s[q] == b'%' {
            p = lex::next_line(s, q);
            lines += 1;
            continue;
        }
        let parsed = match field {
            Field::Integer => lex::parse_integer_value::<T>(s, q),
            _ => lex::parse_real::<T>(s, q),
        };
        let what = match field {
            Field::Integer => "an integer value",
            _ => "a real value",
        };
        let local = |msg: String, values: &Vec<T>| LocalErr {
            line: lines,
            entry: values.len() as u64,
            msg,
        };
        let Some((v, q)) = parsed else {
            err = Some(local(
                format!("expected {what}, found {}", lex::show_token(s, q)),
                &values,
            ));
            break;
        };
        let Some(next) = lex::line_rest_is_blank(s, q) else {
            err = Some(local(
                format!(
                    "unexpected {} after the value: expected one value per line in an array file",
                    lex::show_token(s, q)
                ),
                &values,
            ));
            break;
        };
        values.push(v);
        p = next;
        lines += 1;
    }
    Values { lines, values, err }
}

/// Rows per block of [`to_csr`]: the values of one column within a block are contiguous in
/// the file, so a block reads runs of this many values.
const ROW_BLOCK: usize = 64;

/// Expand packed array values (column-major) into a CSR that stores every entry.
///
/// Blocks of [`ROW_BLOCK`] rows are filled in parallel, column by column: column `j`'s values
/// for the rows of a block are one contiguous run of the file (for symmetric files, the part of
/// the block on or below the diagonal; the part above it is row `j`'s run, read row by row).
/// A row-by-row fill read every value of a row from a different column, a cache miss each:
/// `sparsecast features` on a dense 12,000² file took 2.9–3.0 s that way and 1.7–2.2 s this
/// way (2 cores; most of the rest is the kernel zeroing the fresh pages of the arrays).
pub fn to_csr<T: Scalar>(name: &str, h: &Header, packed: &Packed<T>) -> Result<Csr<T>> {
    let (m, n) = (h.nrows, h.ncols);
    let nnz = m
        .checked_mul(n)
        .ok_or_else(|| Error::Invalid(format!("{name}: {m} × {n} entries overflow")))?;
    let mut row_ptr: Vec<usize> = alloc_zeroed(name, m + 1, "row pointers")?;
    for (i, p) in row_ptr.iter_mut().enumerate() {
        *p = i * n;
    }
    let mut col_idx: Vec<u32> = alloc_zeroed(name, nnz, "column indices")?;
    let mut values: Vec<T> = alloc_zeroed(name, nnz, "values")?;
    if nnz > 0 {
        // `d` = 0 (symmetric: the diagonal is stored) or 1 (skew: strictly lower).
        let d = usize::from(h.symmetry == Symmetry::SkewSymmetric);
        // Packed offset of column c of a lower triangle.
        let col_start = |c: usize| c * (n - d) - c * c.saturating_sub(1) / 2;
        col_idx
            .par_chunks_mut(n * ROW_BLOCK)
            .zip(values.par_chunks_mut(n * ROW_BLOCK))
            .enumerate()
            .for_each_init(
                || vec![T::zero(); ROW_BLOCK.max(n)],
                |run, (b, (ci, cv))| {
                    let i0 = b * ROW_BLOCK;
                    let rows = ci.len() / n;
                    for r in 0..rows {
                        for (j, c) in ci[r * n..(r + 1) * n].iter_mut().enumerate() {
                            *c = j as u32;
                        }
                    }
                    if h.symmetry == Symmetry::General {
                        for j in 0..n {
                            packed.read(j * m + i0, &mut run[..rows]);
                            for r in 0..rows {
                                cv[r * n + j] = run[r];
                            }
                        }
                        return;
                    }
                    // Above the diagonal (j > i): the mirror, row i's run of column i.
                    for r in 0..rows {
                        let i = i0 + r;
                        let len = n - i - 1;
                        let row = &mut cv[r * n + i + 1..(r + 1) * n];
                        packed.read(col_start(i) + 1 - d, row);
                        if d == 1 {
                            row.iter_mut().for_each(|v| *v = -*v);
                        }
                        debug_assert_eq!(row.len(), len);
                    }
                    // On and below the diagonal (j ≤ i, j < i if skew): column j's run.
                    for j in 0..(i0 + rows).min(n) {
                        let first = i0.max(j + d); // first row of the block stored in column j
                        if first >= i0 + rows {
                            continue;
                        }
                        let len = i0 + rows - first;
                        packed.read(col_start(j) + first - j - d, &mut run[..len]);
                        for (k, &v) in run[..len].iter().enumerate() {
                            cv[(first - i0 + k) * n + j] = v;
                        }
                    }
                },
            );
    }
    Ok(Csr {
        nrows: m,
        ncols: n,
        row_ptr,
        col_idx,
        values,
    })
}
