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
    let mut out: Vec<T> = Vec::new();
    out.try_reserve_exact(h.entries as usize)
        .map_err(|_| oom(name))?;
    for part in parts {
        out.extend_from_slice(&part.values);
    }
    Ok(out)
}

fn oom(name: &str) -> Error {
    Error::Invalid(format!("{name}: not enough memory for the array values"))
}

/// Parse one chunk's values.
fn values_chunk<T: Scalar>(s: &[u8], r: Range<usize>, field: Field) -> Values<T> {
    let mut values = Vec::new();
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

/// Expand packed array values (column-major) into a CSR that stores every entry.
pub fn to_csr<T: Scalar>(name: &str, h: &Header, packed: &[T]) -> Result<Csr<T>> {
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
        // Packed offset of column c in a lower triangle with `d` = 0 (with diagonal) or 1 (strict).
        let col_start = |c: usize, d: usize| c * (n - d) - c * c.saturating_sub(1) / 2;
        col_idx
            .par_chunks_mut(n)
            .zip(values.par_chunks_mut(n))
            .enumerate()
            .for_each(|(i, (ci, cv))| {
                for j in 0..n {
                    ci[j] = j as u32;
                    cv[j] = match h.symmetry {
                        Symmetry::General => packed[j * m + i],
                        Symmetry::Symmetric => {
                            let (r, c) = if i >= j { (i, j) } else { (j, i) };
                            packed[col_start(c, 0) + (r - c)]
                        }
                        Symmetry::SkewSymmetric => {
                            if i == j {
                                T::zero()
                            } else if i > j {
                                packed[col_start(j, 1) + (i - j - 1)]
                            } else {
                                -packed[col_start(i, 1) + (j - i - 1)]
                            }
                        }
                    };
                }
            });
    }
    Ok(Csr {
        nrows: m,
        ncols: n,
        row_ptr,
        col_idx,
        values,
    })
}
