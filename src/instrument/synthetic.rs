//! The benchmark matrices of the instrumenting phase (004 §3.2.1): `R` rows, `C > P_NZ` columns,
//! exactly `P_NZ` non-zeros in every row, random values.
//!
//! Their layout is a pure function of `(row, k)` so that a GPU can fill them in place, with no
//! host round trip, and the host builds the very same matrix for the CPU backend and for checks.
//! **This is the contract for `Backend::prepare_synthetic`**; in C:
//!
//! ```c
//! // splitmix64's finaliser
//! uint64_t mix64(uint64_t z) {
//!     z += 0x9E3779B97F4A7C15ull;
//!     z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
//!     z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
//!     return z ^ (z >> 31);
//! }
//! // entry k (0 ≤ k < pnz) of row r:
//! uint64_t i      = (uint64_t)r * pnz + k;
//! uint64_t stride = cols / pnz;                      // ≥ 1 because cols ≥ pnz
//! uint32_t col    = k * stride + (mix64(i) >> 32) % stride;
//! double   value  = (double)(mix64(i ^ VALUE_SALT) >> 40) * 0x1p-23 - 1.0;  // in [-1, 1)
//! ```
//!
//! Every column falls in its own band `[k·stride, (k+1)·stride)`, so a row's columns are strictly
//! increasing and distinct without sorting, and they spread over the whole width of the matrix.
//! Values are multiples of 2⁻²³ in `[−1, 1)`, exactly representable in `f32`, so the `f32` and
//! `f64` matrices hold the same numbers. The input vector is `x[j] = value` computed with
//! `i = j ^ X_SALT`.

use crate::{Csr, Error, Result, Scalar};
use rayon::prelude::*;

/// Salt XOR-ed into the entry index for the value hash.
pub const VALUE_SALT: u64 = 0x5A17_5EED_0F1A_2B3C;
/// Salt XOR-ed into the column index for the input-vector hash.
pub const X_SALT: u64 = 0x0C0F_FEE0_D15E_A5E5;

/// splitmix64's output function (a bijective 64-bit mixer).
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A value in `[−1, 1)` with 24 significant bits (exact in `f32`) from a 64-bit hash input.
#[inline]
pub fn unit_value(i: u64) -> f64 {
    (mix64(i) >> 40) as f64 * (1.0 / (1u64 << 23) as f64) - 1.0
}

/// The column of entry `k` of row `r` (see the module documentation).
#[inline]
pub fn column(r: u64, k: u64, cols: u64, pnz: u64) -> u32 {
    let i = r * pnz + k;
    let stride = cols / pnz;
    (k * stride + (mix64(i) >> 32) % stride) as u32
}

/// The value of entry `k` of row `r`.
#[inline]
pub fn value(r: u64, k: u64, pnz: u64) -> f64 {
    unit_value((r * pnz + k) ^ VALUE_SALT)
}

/// The benchmark input vector `x` of length `cols`.
pub fn x_vector<T: Scalar>(cols: usize) -> Vec<T> {
    (0..cols as u64)
        .into_par_iter()
        .map(|j| T::cast_f64(unit_value(j ^ X_SALT)))
        .collect()
}

/// Check the shape of a benchmark matrix: `pnz ≥ 1`, `cols ≥ pnz`, `cols` within 32-bit column
/// indices, `rows × pnz` without overflow.
pub fn check_shape(rows: usize, cols: usize, pnz: usize) -> Result<()> {
    if pnz == 0 || cols < pnz {
        return Err(Error::Invalid(format!(
            "benchmark matrix {rows}×{cols} with {pnz} non-zeros per row: need 1 ≤ P_NZ ≤ columns"
        )));
    }
    if cols > u32::MAX as usize {
        return Err(Error::Invalid(format!(
            "benchmark matrix with {cols} columns exceeds 32-bit column indices"
        )));
    }
    if rows.checked_mul(pnz).is_none() {
        return Err(Error::Invalid(format!(
            "benchmark matrix {rows} rows × {pnz} non-zeros overflows"
        )));
    }
    Ok(())
}

/// Build the benchmark matrix on the host (in parallel). Refuses, before allocating, a matrix
/// whose host arrays would exceed `max_bytes`.
pub fn build_csr<T: Scalar>(
    rows: usize,
    cols: usize,
    pnz: usize,
    max_bytes: u64,
) -> Result<Csr<T>> {
    check_shape(rows, cols, pnz)?;
    let nnz = rows * pnz;
    let bytes = Csr::<T>::host_bytes(rows as u64, nnz as u64);
    if bytes > max_bytes {
        return Err(Error::Invalid(format!(
            "benchmark matrix {rows}×{cols} with {pnz} non-zeros per row needs {bytes} bytes on \
             the host, more than the {max_bytes}-byte limit"
        )));
    }
    let row_ptr: Vec<usize> = (0..=rows).map(|r| r * pnz).collect();
    let mut col_idx = vec![0u32; nnz];
    let mut values = vec![T::zero(); nnz];
    let (c64, p64) = (cols as u64, pnz as u64);
    col_idx
        .par_chunks_mut(pnz)
        .zip(values.par_chunks_mut(pnz))
        .enumerate()
        .for_each(|(r, (ci, cv))| {
            for k in 0..pnz {
                ci[k] = column(r as u64, k as u64, c64, p64);
                cv[k] = T::cast_f64(value(r as u64, k as u64, p64));
            }
        });
    Ok(Csr {
        nrows: rows,
        ncols: cols,
        row_ptr,
        col_idx,
        values,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn benchmark_matrix_is_valid_with_constant_rows() {
        for &(rows, cols, pnz) in &[(50, 100, 7), (10, 8, 8), (3, 1000, 1), (64, 129, 64)] {
            let m = build_csr::<f64>(rows, cols, pnz, u64::MAX).unwrap();
            m.validate().unwrap();
            assert!(m.row_lengths().iter().all(|&l| l == pnz));
            assert!(m.values.iter().all(|v| (-1.0..1.0).contains(v)));
        }
    }

    #[test]
    fn f32_and_f64_hold_the_same_values() {
        let a = build_csr::<f32>(20, 300, 9, u64::MAX).unwrap();
        let b = build_csr::<f64>(20, 300, 9, u64::MAX).unwrap();
        assert_eq!(a.col_idx, b.col_idx);
        assert!(a.values.iter().zip(&b.values).all(|(x, y)| *x as f64 == *y));
        let xa = x_vector::<f32>(300);
        let xb = x_vector::<f64>(300);
        assert!(xa.iter().zip(&xb).all(|(x, y)| *x as f64 == *y));
    }

    #[test]
    fn columns_spread_and_values_vary() {
        let m = build_csr::<f64>(1000, 4000, 4, u64::MAX).unwrap();
        // Column offsets within a band must not all be equal (the hash spreads them).
        let first: std::collections::HashSet<u32> = (0..1000).map(|r| m.col_idx[r * 4]).collect();
        assert!(
            first.len() > 500,
            "only {} distinct first columns",
            first.len()
        );
        let mean = m.values.iter().sum::<f64>() / m.values.len() as f64;
        assert!(mean.abs() < 0.1, "mean {mean}");
    }

    #[test]
    fn bad_shapes_and_memory_are_refused() {
        assert!(build_csr::<f64>(10, 4, 5, u64::MAX).is_err());
        assert!(build_csr::<f64>(10, 4, 0, u64::MAX).is_err());
        let e = build_csr::<f64>(1000, 1000, 100, 1000)
            .unwrap_err()
            .to_string();
        assert!(e.contains("limit"), "{e}");
    }
}
