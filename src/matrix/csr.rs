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
    /// sort each row, sum duplicates, compact. Used by [`Csr::from_triplets`] and the reader.
    pub fn from_unsorted_rows(
        nrows: usize,
        ncols: usize,
        row_ptr: Vec<usize>,
        mut col_idx: Vec<u32>,
        mut values: Vec<T>,
    ) -> Self {
        // Split the arrays into per-row chunks and sort + merge duplicates in parallel.
        let mut new_len = vec![0usize; nrows];
        {
            let mut ci_rest: &mut [u32] = &mut col_idx;
            let mut cv_rest: &mut [T] = &mut values;
            let mut chunks = Vec::with_capacity(nrows);
            for i in 0..nrows {
                let len = row_ptr[i + 1] - row_ptr[i];
                let (a, b) = std::mem::take(&mut ci_rest).split_at_mut(len);
                let (c, d) = std::mem::take(&mut cv_rest).split_at_mut(len);
                ci_rest = b;
                cv_rest = d;
                chunks.push((a, c));
            }
            chunks
                .into_par_iter()
                .zip(new_len.par_iter_mut())
                .for_each(|((ci, cv), nl)| *nl = sort_merge_row(ci, cv));
        }
        // Compact.
        let mut out_ptr = Vec::with_capacity(nrows + 1);
        out_ptr.push(0usize);
        let mut w = 0usize;
        for i in 0..nrows {
            let start = row_ptr[i];
            for k in 0..new_len[i] {
                col_idx[w + k] = col_idx[start + k];
                values[w + k] = values[start + k];
            }
            w += new_len[i];
            out_ptr.push(w);
        }
        col_idx.truncate(w);
        values.truncate(w);
        Csr {
            nrows,
            ncols,
            row_ptr: out_ptr,
            col_idx,
            values,
        }
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

/// Sort one row's entries by column and sum duplicates in place; returns the new length.
fn sort_merge_row<T: Scalar>(ci: &mut [u32], cv: &mut [T]) -> usize {
    let n = ci.len();
    if n == 0 {
        return 0;
    }
    if !ci.windows(2).all(|w| w[0] < w[1]) {
        if !ci.windows(2).all(|w| w[0] <= w[1]) {
            let mut idx: Vec<(u32, T)> = ci.iter().copied().zip(cv.iter().copied()).collect();
            idx.sort_by_key(|p| p.0);
            for (k, (c, v)) in idx.into_iter().enumerate() {
                ci[k] = c;
                cv[k] = v;
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
        return w + 1;
    }
    n
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
