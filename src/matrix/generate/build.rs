//! Shared machinery of the generators: memory budget checks, deterministic row chunks, seeded
//! random streams, and the parallel fill of a CSR whose row pointers are already known.
//!
//! Determinism: every random draw comes from a ChaCha8 stream keyed by `(seed, phase)` and
//! selected by a chunk number. Chunk boundaries are a function of the parameters (and, for the
//! fill phase, of the row pointers) only — never of the thread count — so the output is
//! bit-identical whatever rayon pool runs it.

use crate::matrix::Csr;
use crate::{Error, Result};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use std::ops::Range;

/// Rows per chunk where a family draws per-row quantities (row lengths, Chung–Lu patterns).
pub(crate) const CHUNK_ROWS: usize = 1024;

/// Target non-zeros per chunk of the fill phase (see [`balanced_chunks`]).
const CHUNK_NNZ: usize = 1 << 16;

/// Independent random streams of one generator run.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Phase {
    /// Row lengths.
    Counts = 1,
    /// Column positions.
    Pattern = 2,
    /// Entry values.
    Values = 3,
}

/// The random stream of `phase`, chunk `stream`, for `seed`.
pub(crate) fn rng(seed: u64, phase: Phase, stream: u64) -> ChaCha8Rng {
    // Mix the phase into the key so that phases never share a keystream.
    let key = seed ^ (phase as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut r = ChaCha8Rng::seed_from_u64(key);
    r.set_stream(stream);
    r
}

/// A value uniform in `[-1, 1)`.
#[inline]
pub(crate) fn uniform_value(rng: &mut ChaCha8Rng) -> f64 {
    use rand::Rng;
    rng.random::<f64>() * 2.0 - 1.0
}

/// Bytes of a `Csr<f64>` with `nrows` rows and `nnz` entries as held in memory
/// ([`Csr::host_bytes`]; saturating, so a count beyond 64 bits is over any limit).
pub(crate) fn csr_bytes(nrows: u128, nnz: u128) -> u128 {
    let sat = |n: u128| u64::try_from(n).unwrap_or(u64::MAX);
    match Csr::<f64>::host_bytes(sat(nrows), sat(nnz)) {
        u64::MAX => u128::MAX,
        b => b as u128,
    }
}

/// Refuse a matrix whose CSR would exceed `max_bytes`, or whose sizes do not fit this machine's
/// `usize`; returns `nnz` as a `usize`. Called before any large allocation.
pub(crate) fn check_budget(what: &str, nrows: u128, nnz: u128, max_bytes: u64) -> Result<usize> {
    let bytes = csr_bytes(nrows, nnz);
    if bytes > max_bytes as u128 {
        return Err(Error::Invalid(format!(
            "{what}: {nrows} rows and {nnz} non-zeros need {:.2} GiB, over the limit of {:.2} GiB",
            bytes as f64 / (1u64 << 30) as f64,
            max_bytes as f64 / (1u64 << 30) as f64
        )));
    }
    usize::try_from(nnz)
        .ok()
        .filter(|_| usize::try_from(nrows).is_ok())
        .ok_or_else(|| Error::Invalid(format!("{what}: sizes overflow this machine's usize")))
}

/// Refuse a dimension that does not fit 32-bit column indices.
pub(crate) fn check_dim(what: &str, name: &str, n: u128) -> Result<usize> {
    if n > u32::MAX as u128 {
        return Err(Error::Invalid(format!(
            "{what}: {name} = {n} exceeds the 32-bit column-index limit ({})",
            u32::MAX
        )));
    }
    Ok(n as usize)
}

/// Row pointers from per-row counts (prefix sum).
pub(crate) fn prefix_sum(counts: &[usize]) -> Vec<usize> {
    let mut row_ptr = Vec::with_capacity(counts.len() + 1);
    let mut acc = 0usize;
    row_ptr.push(0);
    for &c in counts {
        acc += c;
        row_ptr.push(acc);
    }
    row_ptr
}

/// Fixed chunk boundaries `[0, CHUNK_ROWS, 2·CHUNK_ROWS, …, nrows]`.
pub(crate) fn fixed_chunks(nrows: usize) -> Vec<usize> {
    let mut b: Vec<usize> = (0..nrows).step_by(CHUNK_ROWS).collect();
    b.push(nrows);
    b
}

/// Chunk boundaries that close a chunk once it holds at least `CHUNK_NNZ` entries or
/// `CHUNK_ROWS` rows — a function of the row pointers only.
pub(crate) fn balanced_chunks(row_ptr: &[usize]) -> Vec<usize> {
    let nrows = row_ptr.len() - 1;
    let mut b = vec![0usize];
    let mut start = 0usize;
    for i in 0..nrows {
        if row_ptr[i + 1] - row_ptr[start] >= CHUNK_NNZ || i + 1 - start >= CHUNK_ROWS {
            b.push(i + 1);
            start = i + 1;
        }
    }
    if *b.last().unwrap() != nrows {
        b.push(nrows);
    }
    b
}

/// One chunk of rows handed to a fill callback.
pub(crate) struct Chunk<'a> {
    /// Index of the chunk in the boundary list.
    pub index: usize,
    /// Rows of the chunk.
    pub rows: Range<usize>,
    /// Global row pointers.
    pub row_ptr: &'a [usize],
    /// Column indices of the chunk's entries (starting at `row_ptr[rows.start]`).
    pub cols: &'a mut [u32],
    /// Values of the chunk's entries.
    pub vals: &'a mut [f64],
}

impl Chunk<'_> {
    /// Column and value slices of global row `i` (which must lie in `rows`).
    #[inline]
    pub fn row_mut(&mut self, i: usize) -> (&mut [u32], &mut [f64]) {
        let base = self.row_ptr[self.rows.start];
        let (a, b) = (self.row_ptr[i] - base, self.row_ptr[i + 1] - base);
        (&mut self.cols[a..b], &mut self.vals[a..b])
    }
}

/// Allocate the entry arrays for `row_ptr` and let `f` fill each chunk of `bounds` in parallel.
/// The caller guarantees (by construction) that `f` writes sorted, distinct, in-range columns.
pub(crate) fn fill_chunks<F>(
    nrows: usize,
    ncols: usize,
    row_ptr: Vec<usize>,
    bounds: &[usize],
    f: F,
) -> Csr<f64>
where
    F: Fn(Chunk<'_>) + Sync,
{
    let nnz = row_ptr[nrows];
    // `vec![0; n]` maps zeroed pages lazily, so the arrays are touched first by the parallel fill.
    let mut col_idx = vec![0u32; nnz];
    let mut values = vec![0f64; nnz];
    {
        let mut chunks = Vec::with_capacity(bounds.len().saturating_sub(1));
        let mut cr: &mut [u32] = &mut col_idx;
        let mut vr: &mut [f64] = &mut values;
        for (index, w) in bounds.windows(2).enumerate() {
            let len = row_ptr[w[1]] - row_ptr[w[0]];
            let (c, c_rest) = std::mem::take(&mut cr).split_at_mut(len);
            let (v, v_rest) = std::mem::take(&mut vr).split_at_mut(len);
            cr = c_rest;
            vr = v_rest;
            chunks.push((index, w[0]..w[1], c, v));
        }
        let rp = &row_ptr;
        chunks
            .into_par_iter()
            .for_each(|(index, rows, cols, vals)| {
                f(Chunk {
                    index,
                    rows,
                    row_ptr: rp,
                    cols,
                    vals,
                })
            });
    }
    Csr {
        nrows,
        ncols,
        row_ptr,
        col_idx,
        values,
    }
}

/// Per-row counts computed in parallel by `count(row)`, summed into row pointers.
pub(crate) fn counts_by<F>(nrows: usize, count: F) -> Vec<usize>
where
    F: Fn(usize) -> usize + Sync,
{
    let counts: Vec<usize> = (0..nrows).into_par_iter().map(&count).collect();
    prefix_sum(&counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balanced_chunks_cover_all_rows() {
        let counts: Vec<usize> = (0..5000)
            .map(|i| if i == 7 { 100_000 } else { i % 5 })
            .collect();
        let rp = prefix_sum(&counts);
        let b = balanced_chunks(&rp);
        assert_eq!(b[0], 0);
        assert_eq!(*b.last().unwrap(), 5000);
        assert!(b.windows(2).all(|w| w[0] < w[1]));
        // The huge row closes its chunk right after itself.
        assert!(b.contains(&8));
    }

    #[test]
    fn budget_refuses_large() {
        assert!(check_budget("t", 10, 1 << 40, 1 << 30).is_err());
        assert_eq!(check_budget("t", 10, 100, 1 << 30).unwrap(), 100);
        assert!(check_dim("t", "n", 1u128 << 32).is_err());
    }
}
