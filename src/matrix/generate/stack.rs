//! Heterogeneous matrices: generated matrices stacked on top of each other (rows of the first,
//! then rows of the second, …), e.g. a power-law block on a stencil block, or a few very long
//! rows under a bulk of short ones (circuit-like) — the kind of matrix where one format per row
//! block can beat any single format. The stacked matrix has the rows of all parts and as many
//! columns as the widest part; each part keeps its column indices.

use crate::matrix::Csr;
use crate::{Error, Result};

/// Stack matrices by rows (see the module documentation). Fails for an empty list, or when the
/// stacked CSR would exceed `max_bytes` (checked before it is allocated).
pub fn stack_rows_with_limit(parts: &[Csr<f64>], max_bytes: u64) -> Result<Csr<f64>> {
    if parts.is_empty() {
        return Err(Error::Invalid("a stack needs at least one part".into()));
    }
    let nrows: usize = parts.iter().map(|p| p.nrows).sum();
    let ncols = parts.iter().map(|p| p.ncols).max().unwrap_or(0);
    let nnz: usize = parts.iter().map(|p| p.nnz()).sum();
    let bytes = (nnz as u64).saturating_mul(12) + (nrows as u64 + 1) * 8;
    if bytes > max_bytes {
        return Err(Error::Invalid(format!(
            "the stacked matrix ({nrows} rows, {nnz} non-zeros) would take {bytes} bytes in CSR, \
             over the limit of {max_bytes}"
        )));
    }
    let mut row_ptr = Vec::with_capacity(nrows + 1);
    row_ptr.push(0);
    let mut col_idx = Vec::with_capacity(nnz);
    let mut values = Vec::with_capacity(nnz);
    for p in parts {
        let base = col_idx.len();
        row_ptr.extend(p.row_ptr[1..].iter().map(|&r| base + r));
        col_idx.extend_from_slice(&p.col_idx);
        values.extend_from_slice(&p.values);
    }
    Csr::new(nrows, ncols, row_ptr, col_idx, values)
}

/// [`stack_rows_with_limit`] under [`crate::formats::default_max_bytes`].
pub fn stack_rows(parts: &[Csr<f64>]) -> Result<Csr<f64>> {
    stack_rows_with_limit(parts, crate::formats::default_max_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacking_keeps_rows_and_products() {
        let a = Csr::from_triplets(2, 3, &[0, 1, 1], &[2, 0, 1], &[1.0, 2.0, 3.0]).unwrap();
        let b = Csr::from_triplets(1, 5, &[0], &[4], &[5.0]).unwrap();
        let s = stack_rows(&[a.clone(), b.clone()]).unwrap();
        assert_eq!((s.nrows, s.ncols, s.nnz()), (3, 5, 4));
        let x = [1.0, 10.0, 100.0, 1000.0, 10000.0];
        let mut want = a.spmv_reference(&x[..3]);
        want.extend(b.spmv_reference(&x));
        assert_eq!(s.spmv_reference(&x), want);
        assert!(stack_rows(&[]).is_err());
        let e = stack_rows_with_limit(&[a, b], 40).unwrap_err().to_string();
        assert!(e.contains("over the limit of 40"), "{e}");
    }
}
