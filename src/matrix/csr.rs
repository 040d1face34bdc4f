//! Compressed sparse row: the canonical in-memory form every other format is converted from.
//!
//! Host-side sizes are 64-bit (`row_ptr` is `usize`, so a matrix may hold more than 2^31 non-zeros);
//! column indices are `u32`, which bounds the column count by 2^32 − 1. Within a row, column indices
//! are strictly increasing (duplicates were summed when the matrix was built); explicit zeros are kept.

use crate::scalar::Scalar;
use crate::{Error, Result};
use rayon::prelude::*;

/// A sparse matrix in CSR form.
#[derive(Clone, Debug, PartialEq)]
pub struct Csr<T> {
    /// Number of rows.
    pub nrows: usize,
    /// Number of columns.
    pub ncols: usize,
    /// Row pointers, `nrows + 1` entries, `row_ptr[0] == 0`, non-decreasing.
    pub row_ptr: Vec<usize>,
    /// Column index of each stored entry; strictly increasing within a row.
    pub col_idx: Vec<u32>,
    /// Value of each stored entry.
    pub values: Vec<T>,
}

impl<T: Scalar> Csr<T> {
    /// Build from raw arrays, checking every invariant (lengths, monotone row pointers,
    /// in-range and strictly increasing column indices).
    pub fn new(
        nrows: usize,
        ncols: usize,
        row_ptr: Vec<usize>,
        col_idx: Vec<u32>,
        values: Vec<T>,
    ) -> Result<Self> {
        let m = Csr {
            nrows,
            ncols,
            row_ptr,
            col_idx,
            values,
        };
        m.validate()?;
        Ok(m)
    }

    /// An `nrows × ncols` matrix with no entries.
    pub fn zeros(nrows: usize, ncols: usize) -> Self {
        Csr {
            nrows,
            ncols,
            row_ptr: vec![0; nrows + 1],
            col_idx: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Check every structural invariant; returns a description of the first violation.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Invalid(format!("invalid CSR: {m}")));
        if self.row_ptr.len() != self.nrows + 1 {
            return bad(format!(
                "row_ptr has {} entries, expected {}",
                self.row_ptr.len(),
                self.nrows + 1
            ));
        }
        if self.row_ptr[0] != 0 {
            return bad("row_ptr[0] != 0".into());
        }
        let nnz = self.row_ptr[self.nrows];
        if self.col_idx.len() != nnz || self.values.len() != nnz {
            return bad(format!(
                "row_ptr ends at {nnz} but col_idx has {} and values {} entries",
                self.col_idx.len(),
                self.values.len()
            ));
        }
        if self.ncols > u32::MAX as usize {
            return bad(format!(
                "{} columns exceed 32-bit column indices",
                self.ncols
            ));
        }
        let ncols = self.ncols;
        let err = (0..self.nrows).into_par_iter().find_map_any(|i| {
            let (a, b) = (self.row_ptr[i], self.row_ptr[i + 1]);
            if b < a || b > nnz {
                return Some(format!("row_ptr not monotone at row {i}"));
            }
            let cols = &self.col_idx[a..b];
            for (k, &c) in cols.iter().enumerate() {
                if c as usize >= ncols {
                    return Some(format!("row {i}: column {c} out of range (ncols {ncols})"));
                }
                if k > 0 && cols[k - 1] >= c {
                    return Some(format!("row {i}: columns not strictly increasing"));
                }
            }
            None
        });
        match err {
            Some(m) => bad(m),
            None => Ok(()),
        }
    }

    /// Build from coordinate triplets (0-based). Entries may come in any order; duplicates are
    /// summed; explicit zeros are kept. `rows`, `cols` and `vals` must have equal length and be in
    /// range (checked).
    pub fn from_triplets(
        nrows: usize,
        ncols: usize,
        rows: &[u32],
        cols: &[u32],
        vals: &[T],
    ) -> Result<Self> {
        if rows.len() != cols.len() || rows.len() != vals.len() {
            return Err(Error::Invalid("triplet arrays differ in length".into()));
        }
        if let Some(k) = rows.iter().position(|&r| r as usize >= nrows) {
            return Err(Error::Invalid(format!(
                "triplet {k}: row {} out of range",
                rows[k]
            )));
        }
        if let Some(k) = cols.iter().position(|&c| c as usize >= ncols) {
            return Err(Error::Invalid(format!(
                "triplet {k}: column {} out of range",
                cols[k]
            )));
        }
        // Counting sort by row.
        let mut row_ptr = vec![0usize; nrows + 1];
        for &r in rows {
            row_ptr[r as usize + 1] += 1;
        }
        for i in 0..nrows {
            row_ptr[i + 1] += row_ptr[i];
        }
        let nnz = rows.len();
        let mut next = row_ptr.clone();
        let mut ci = vec![0u32; nnz];
        let mut cv = vec![T::zero(); nnz];
        for k in 0..nnz {
            let r = rows[k] as usize;
            let p = next[r];
            next[r] += 1;
            ci[p] = cols[k];
            cv[p] = vals[k];
        }
        Ok(Self::from_unsorted_rows(nrows, ncols, row_ptr, ci, cv))
    }

    /// Finish a CSR whose rows are grouped but not sorted by column and may hold duplicates:
    /// sort each row, sum duplicates (in their given order), compact. Used by
    /// [`Csr::from_triplets`] and the Matrix Market reader.
    ///
    /// Rows are processed in parallel in blocks of about 64 Ki entries; sorted rows without
    /// duplicates (the common case for files written in order) are only checked, and when no
    /// row had duplicates nothing is moved. `row_ptr` must be a valid row pointer array for
    /// `col_idx` and `values` (as built by the callers).
    pub fn from_unsorted_rows(
        nrows: usize,
        ncols: usize,
        row_ptr: Vec<usize>,
        mut col_idx: Vec<u32>,
        mut values: Vec<T>,
    ) -> Self {
        let blocks = row_blocks(&row_ptr, 1 << 16);
        let mut new_len = vec![0usize; nrows];
        // Per block: sort and merge every row, compacting towards the block start.
        let mut kept = vec![0usize; blocks.len()];
        {
            let mut parts = Vec::with_capacity(blocks.len());
            let mut ci_rest: &mut [u32] = &mut col_idx;
            let mut cv_rest: &mut [T] = &mut values;
            let mut nl_rest: &mut [usize] = &mut new_len;
            for &(r0, r1) in &blocks {
                let len = row_ptr[r1] - row_ptr[r0];
                let (ci, b) = std::mem::take(&mut ci_rest).split_at_mut(len);
                let (cv, d) = std::mem::take(&mut cv_rest).split_at_mut(len);
                let (nl, f) = std::mem::take(&mut nl_rest).split_at_mut(r1 - r0);
                ci_rest = b;
                cv_rest = d;
                nl_rest = f;
                parts.push((r0, r1, ci, cv, nl));
            }
            parts.into_par_iter().zip(kept.par_iter_mut()).for_each(
                |((r0, r1, ci, cv, nl), kept)| {
                    let base = row_ptr[r0];
                    let mut scratch = Vec::new();
                    let mut w = 0usize;
                    for r in r0..r1 {
                        let (a, b) = (row_ptr[r] - base, row_ptr[r + 1] - base);
                        let len = sort_merge_row(&mut ci[a..b], &mut cv[a..b], &mut scratch);
                        if w != a {
                            ci.copy_within(a..a + len, w);
                            cv.copy_within(a..a + len, w);
                        }
                        nl[r - r0] = len;
                        w += len;
                    }
                    *kept = w;
                },
            );
        }
        let total: usize = kept.iter().sum();
        if total == col_idx.len() {
            return Csr {
                nrows,
                ncols,
                row_ptr,
                col_idx,
                values,
            };
        }
        // Some rows shrank: move the blocks together and rebuild the row pointers.
        let mut w = 0usize;
        for (&(r0, _), &k) in blocks.iter().zip(&kept) {
            let start = row_ptr[r0];
            if w != start {
                col_idx.copy_within(start..start + k, w);
                values.copy_within(start..start + k, w);
            }
            w += k;
        }
        col_idx.truncate(w);
        values.truncate(w);
        let mut out_ptr = row_ptr;
        out_ptr[0] = 0;
        for i in 0..nrows {
            out_ptr[i + 1] = out_ptr[i] + new_len[i];
        }
        Csr {
            nrows,
            ncols,
            row_ptr: out_ptr,
            col_idx,
            values,
        }
    }

    /// Bytes of a `Csr<T>` of `nrows` rows and `nnz` entries as held in host memory (`usize` row
    /// pointers, `u32` columns, `T` values), saturating. (Its device footprint, with 32-bit row
    /// pointers, is the CSR format's: [`crate::formats::FormatKind::footprint`].)
    pub fn host_bytes(nrows: u64, nnz: u64) -> u64 {
        nrows
            .saturating_add(1)
            .saturating_mul(std::mem::size_of::<usize>() as u64)
            .saturating_add(nnz.saturating_mul(4 + T::BYTES as u64))
    }

    /// Number of stored entries (explicit zeros included).
    #[inline]
    pub fn nnz(&self) -> usize {
        self.row_ptr[self.nrows]
    }

    /// Number of stored entries in row `i`.
    #[inline]
    pub fn row_len(&self, i: usize) -> usize {
        self.row_ptr[i + 1] - self.row_ptr[i]
    }

    /// Column indices and values of row `i`.
    #[inline]
    pub fn row(&self, i: usize) -> (&[u32], &[T]) {
        let (a, b) = (self.row_ptr[i], self.row_ptr[i + 1]);
        (&self.col_idx[a..b], &self.values[a..b])
    }

    /// Length of every row.
    pub fn row_lengths(&self) -> Vec<usize> {
        self.row_ptr.windows(2).map(|w| w[1] - w[0]).collect()
    }

    /// The same matrix with values converted to another precision.
    pub fn cast<U: Scalar>(&self) -> Csr<U> {
        Csr {
            nrows: self.nrows,
            ncols: self.ncols,
            row_ptr: self.row_ptr.clone(),
            col_idx: self.col_idx.clone(),
            values: self
                .values
                .par_iter()
                .map(|v| U::cast_f64(v.as_f64()))
                .collect(),
        }
    }

    /// Rows `r0..r1` as a matrix of their own (same column count).
    pub fn slice_rows(&self, r0: usize, r1: usize) -> Csr<T> {
        assert!(r0 <= r1 && r1 <= self.nrows, "row range out of bounds");
        let (a, b) = (self.row_ptr[r0], self.row_ptr[r1]);
        Csr {
            nrows: r1 - r0,
            ncols: self.ncols,
            row_ptr: self.row_ptr[r0..=r1].iter().map(|p| p - a).collect(),
            col_idx: self.col_idx[a..b].to_vec(),
            values: self.values[a..b].to_vec(),
        }
    }

    /// The f64 reference SpMV, the oracle every kernel is tested against: `y = A·x` with values
    /// widened to f64 and accumulated in f64, one row at a time in order.
    pub fn spmv_reference(&self, x: &[f64]) -> Vec<f64> {
        assert_eq!(x.len(), self.ncols, "x has the wrong length");
        (0..self.nrows)
            .into_par_iter()
            .map(|i| {
                let (c, v) = self.row(i);
                c.iter()
                    .zip(v)
                    .map(|(&c, &v)| v.as_f64() * x[c as usize])
                    .sum()
            })
            .collect()
    }
}

/// Consecutive row ranges `(r0, r1)` covering all rows, each holding about `target` entries
/// (at least one row, at most `target` rows).
fn row_blocks(row_ptr: &[usize], target: usize) -> Vec<(usize, usize)> {
    let nrows = row_ptr.len() - 1;
    let mut out = Vec::new();
    let mut r0 = 0;
    while r0 < nrows {
        // Furthest row end within the entry budget, but at least one row.
        let limit = row_ptr[r0] + target;
        let mut r1 = row_ptr[r0 + 1..].partition_point(|&p| p <= limit) + r0;
        r1 = r1.clamp(r0 + 1, (r0 + target).min(nrows));
        out.push((r0, r1));
        r0 = r1;
    }
    out
}

/// Sort one row's entries by column (stable) and sum duplicates in place, in their given order;
/// returns the new length. `scratch` is reused between rows.
fn sort_merge_row<T: Scalar>(ci: &mut [u32], cv: &mut [T], scratch: &mut Vec<(u32, T)>) -> usize {
    let n = ci.len();
    if ci.windows(2).all(|w| w[0] < w[1]) {
        return n;
    }
    if !ci.windows(2).all(|w| w[0] <= w[1]) {
        if n <= 32 {
            // Insertion sort: stable and fast for short rows.
            for k in 1..n {
                let (c, v) = (ci[k], cv[k]);
                let mut m = k;
                while m > 0 && ci[m - 1] > c {
                    ci[m] = ci[m - 1];
                    cv[m] = cv[m - 1];
                    m -= 1;
                }
                ci[m] = c;
                cv[m] = v;
            }
        } else {
            scratch.clear();
            scratch.extend(ci.iter().copied().zip(cv.iter().copied()));
            scratch.sort_by_key(|p| p.0);
            for (k, &(c, v)) in scratch.iter().enumerate() {
                ci[k] = c;
                cv[k] = v;
            }
        }
    }
    let mut w = 0usize;
    for k in 1..n {
        if ci[k] == ci[w] {
            let v = cv[k];
            cv[w] += v;
        } else {
            w += 1;
            ci[w] = ci[k];
            cv[w] = cv[k];
        }
    }
    w + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triplets_sum_duplicates_and_keep_zeros() {
        let m = Csr::<f64>::from_triplets(
            3,
            4,
            &[2, 0, 0, 2, 0],
            &[1, 3, 0, 1, 2],
            &[1.0, 2.0, 3.0, 4.0, 0.0],
        )
        .unwrap();
        m.validate().unwrap();
        assert_eq!(m.row_ptr, vec![0, 3, 3, 4]);
        assert_eq!(m.col_idx, vec![0, 2, 3, 1]);
        assert_eq!(m.values, vec![3.0, 0.0, 2.0, 5.0]);
    }

    #[test]
    fn triplets_match_an_ordered_map_across_many_row_blocks() {
        // Enough entries for several 64 Ki-entry blocks in `from_unsorted_rows`, with many
        // duplicates and rows arriving out of order.
        let (nrows, ncols) = (700usize, 300usize);
        let mut x = 7u64;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as usize
        };
        let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
        let mut oracle = std::collections::BTreeMap::new();
        for _ in 0..200_000 {
            let (i, j) = (next() % nrows, next() % ncols);
            // Small multiples of 1/4: sums are exact in any order.
            let v = (next() % 64) as f64 / 4.0 - 8.0;
            rows.push(i as u32);
            cols.push(j as u32);
            vals.push(v);
            *oracle.entry((i, j)).or_insert(0.0) += v;
        }
        let m = Csr::<f64>::from_triplets(nrows, ncols, &rows, &cols, &vals).unwrap();
        m.validate().unwrap();
        let got: Vec<((usize, usize), f64)> = (0..nrows)
            .flat_map(|i| {
                let (c, v) = m.row(i);
                c.iter()
                    .zip(v)
                    .map(move |(&c, &v)| ((i, c as usize), v))
                    .collect::<Vec<_>>()
            })
            .collect();
        let want: Vec<((usize, usize), f64)> = oracle.into_iter().collect();
        assert_eq!(got, want);
    }

    #[test]
    fn reference_spmv() {
        let m = Csr::<f32>::from_triplets(2, 2, &[0, 0, 1], &[0, 1, 1], &[1.0, 2.0, 3.0]).unwrap();
        assert_eq!(m.spmv_reference(&[1.0, 10.0]), vec![21.0, 30.0]);
    }

    #[test]
    fn validate_rejects_bad_columns() {
        assert!(Csr::<f64>::new(1, 2, vec![0, 2], vec![1, 0], vec![1.0, 1.0]).is_err());
        assert!(Csr::<f64>::new(1, 2, vec![0, 1], vec![2], vec![1.0]).is_err());
        assert!(Csr::<f64>::new(2, 2, vec![0, 1], vec![0], vec![1.0]).is_err());
    }
}
