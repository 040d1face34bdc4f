//! The papers' benchmark matrices: `R × C`, each row holding a number of non-zeros that is either
//! constant (Guo et al., TPDS 2014 §3.2) or drawn from a uniform or normal distribution (Wang,
//! Gu & Li, JCC 2017 §3.1), at distinct column positions chosen uniformly at random. Values are
//! uniform in `[-1, 1)` ("the value of each non-zero element is random").

use super::build::{self, Phase};
use crate::matrix::Csr;
use crate::{Error, Result};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// How many non-zeros each row of a benchmark matrix holds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "dist", rename_all = "lowercase")]
pub enum RowLength {
    /// Every row holds exactly `nnz` entries (the `P_NZ` of Guo et al.).
    Constant {
        /// Entries per row.
        nnz: usize,
    },
    /// Row lengths uniform on the integers `min..=max`.
    Uniform {
        /// Smallest row length.
        min: usize,
        /// Largest row length.
        max: usize,
    },
    /// Row lengths drawn from `N(mean, std²)`, rounded to the nearest integer (ties away from
    /// zero) and clamped to `[0, C]`. Wang et al. treat the mean as `P_NZ`; they do not give the
    /// standard deviation, so it is a parameter here. Clamping moves the realised mean slightly
    /// when `mean` lies within a few `std` of 0 or `C`.
    Normal {
        /// Mean row length.
        mean: f64,
        /// Standard deviation of the row length.
        std: f64,
    },
}

impl RowLength {
    /// Check the distribution against the column count.
    fn validate(&self, rows: usize, cols: usize) -> Result<()> {
        let bad = |m: String| Err(Error::Invalid(format!("random matrix: {m}")));
        match *self {
            RowLength::Constant { nnz } => {
                if nnz > cols {
                    return bad(format!("{nnz} non-zeros per row exceed the {cols} columns"));
                }
                if rows == 0 && nnz > 0 {
                    return bad(format!("0 rows cannot hold {nnz} non-zeros per row"));
                }
            }
            RowLength::Uniform { min, max } => {
                if min > max {
                    return bad(format!("uniform row length: min {min} > max {max}"));
                }
                if max > cols {
                    return bad(format!(
                        "uniform row length: max {max} exceeds the {cols} columns"
                    ));
                }
                if rows == 0 && max > 0 {
                    return bad("0 rows cannot hold non-zeros".into());
                }
            }
            RowLength::Normal { mean, std } => {
                if !mean.is_finite() || !std.is_finite() || std < 0.0 || mean < 0.0 {
                    return bad(format!(
                        "normal row length needs a finite mean ≥ 0 and std ≥ 0, got mean {mean}, std {std}"
                    ));
                }
                if mean > cols as f64 {
                    return bad(format!(
                        "normal row length: mean {mean} exceeds the {cols} columns"
                    ));
                }
                if rows == 0 && mean > 0.0 {
                    return bad("0 rows cannot hold non-zeros".into());
                }
            }
        }
        Ok(())
    }

    /// Expected non-zeros of `rows` rows (exact for a constant length).
    fn expected_nnz(&self, rows: usize) -> u128 {
        let r = rows as u128;
        match *self {
            RowLength::Constant { nnz } => r * nnz as u128,
            RowLength::Uniform { min, max } => r * ((min as u128 + max as u128) / 2),
            RowLength::Normal { mean, .. } => (rows as f64 * mean) as u128,
        }
    }

    /// The largest row length this distribution can produce with `cols` columns.
    fn max_len(&self, cols: usize) -> usize {
        match *self {
            RowLength::Constant { nnz } => nnz,
            RowLength::Uniform { max, .. } => max,
            RowLength::Normal { .. } => cols,
        }
    }

    /// Short label for matrix names: `k16`, `u8-24`, `n16-4`.
    pub(crate) fn label(&self) -> String {
        match *self {
            RowLength::Constant { nnz } => format!("k{nnz}"),
            RowLength::Uniform { min, max } => format!("u{min}-{max}"),
            RowLength::Normal { mean, std } => format!("n{mean}-{std}"),
        }
    }
}

/// Generate an `rows × cols` benchmark matrix with row lengths from `row_len`, columns uniformly
/// random (distinct, sorted) and values uniform in `[-1, 1)`. Deterministic in `seed`; refuses
/// (before allocating) a matrix whose CSR would exceed `max_bytes`.
pub fn random(
    rows: usize,
    cols: usize,
    row_len: RowLength,
    seed: u64,
    max_bytes: u64,
) -> Result<Csr<f64>> {
    const WHAT: &str = "random matrix";
    build::check_dim(WHAT, "columns", cols as u128)?;
    row_len.validate(rows, cols)?;
    // The expected size must fit before anything is drawn; the exact size is checked again
    // before the entries are allocated.
    build::check_budget(WHAT, rows as u128, row_len.expected_nnz(rows), max_bytes)?;
    let counts = draw_counts(rows, cols, row_len, seed);
    let row_ptr = build::prefix_sum(&counts);
    drop(counts);
    let nnz = row_ptr[rows];
    build::check_budget(WHAT, rows as u128, nnz as u128, max_bytes)?;
    debug_assert!(row_len.max_len(cols) <= cols);
    let bounds = build::balanced_chunks(&row_ptr);
    let c = cols as u32;
    Ok(build::fill_chunks(
        rows,
        cols,
        row_ptr,
        &bounds,
        |mut ch| {
            let first = ch.rows.start as u64;
            let mut pat = build::rng(seed, Phase::Pattern, first);
            let mut val = build::rng(seed, Phase::Values, first);
            let mut scratch = Scratch::default();
            for i in ch.rows.clone() {
                let (ci, cv) = ch.row_mut(i);
                sample_sorted(&mut pat, c, ci, &mut scratch);
                for v in cv {
                    *v = build::uniform_value(&mut val);
                }
            }
        },
    ))
}

/// Row lengths, drawn in fixed chunks of rows so the result does not depend on the thread count.
fn draw_counts(rows: usize, cols: usize, row_len: RowLength, seed: u64) -> Vec<usize> {
    let mut counts = vec![0usize; rows];
    counts
        .par_chunks_mut(build::CHUNK_ROWS)
        .enumerate()
        .for_each(|(k, out)| match row_len {
            RowLength::Constant { nnz } => out.fill(nnz),
            RowLength::Uniform { min, max } => {
                let mut r = build::rng(seed, Phase::Counts, k as u64);
                for c in out {
                    *c = r.random_range(min..=max);
                }
            }
            RowLength::Normal { mean, std } => {
                let mut r = build::rng(seed, Phase::Counts, k as u64);
                // Validated: finite mean, finite std ≥ 0.
                let d = Normal::new(mean, std).expect("validated normal parameters");
                for c in out {
                    let x: f64 = d.sample(&mut r);
                    *c = x.round().clamp(0.0, cols as f64) as usize;
                }
            }
        });
    counts
}

/// Reusable buffers of [`sample_sorted`].
#[derive(Default)]
pub(crate) struct Scratch {
    list: Vec<u32>,
    bits: Vec<u64>,
}

/// Fill `out` with `out.len()` distinct column indices from `0..c`, sorted, every subset equally
/// likely. Rows holding more than half the columns draw the `m = c − k` excluded columns
/// instead, so `m ≤ c/2` values are drawn either way:
/// * dense draws (`c ≤ 64·m`): rejection into a bitmap of `c` bits, then a scan of the bitmap
///   (`O(m)` draws and `c/64 ≤ m` words);
/// * sparse draws: [`draw_distinct`] (sort-based, `O(m log m)`, collisions are rare).
pub(crate) fn sample_sorted(rng: &mut ChaCha8Rng, c: u32, out: &mut [u32], s: &mut Scratch) {
    let k = out.len();
    let cu = c as usize;
    debug_assert!(k <= cu);
    if k == 0 {
        return;
    }
    let invert = 2 * k > cu;
    let m = if invert { cu - k } else { k };
    if cu <= 64 * m {
        let words = cu.div_ceil(64);
        s.bits.clear();
        s.bits.resize(words, 0);
        let mut drawn = 0usize;
        while drawn < m {
            let j = rng.random_range(0..c) as usize;
            let (w, b) = (j / 64, 1u64 << (j % 64));
            if s.bits[w] & b == 0 {
                s.bits[w] |= b;
                drawn += 1;
            }
        }
        let mut o = 0usize;
        for (w, &word) in s.bits.iter().enumerate() {
            let mut x = if invert { !word } else { word };
            if w + 1 == words && cu % 64 != 0 {
                x &= (1u64 << (cu % 64)) - 1;
            }
            while x != 0 {
                out[o] = (w * 64) as u32 + x.trailing_zeros();
                o += 1;
                x &= x - 1;
            }
        }
        debug_assert_eq!(o, k);
    } else if !invert {
        draw_distinct(rng, c, k, &mut s.list);
        out.copy_from_slice(&s.list);
    } else {
        draw_distinct(rng, c, m, &mut s.list);
        // Emit 0..c minus the (sorted) excluded columns.
        let mut w = 0usize;
        let mut ex = s.list.iter().copied().peekable();
        for j in 0..c {
            if ex.peek() == Some(&j) {
                ex.next();
            } else {
                out[w] = j;
                w += 1;
            }
        }
        debug_assert_eq!(w, k);
    }
}

/// `k ≤ c/2` distinct values from `0..c`, sorted, into `buf`: draw with replacement, sort, drop
/// duplicates, top up, repeat. The process is symmetric under permutations of `0..c`, so every
/// `k`-subset is equally likely. Used for `k < c/64`, where a round loses fewer than 1/128 of
/// its draws to collisions.
fn draw_distinct(rng: &mut ChaCha8Rng, c: u32, k: usize, buf: &mut Vec<u32>) {
    buf.clear();
    while buf.len() < k {
        let need = k - buf.len();
        buf.extend((0..need).map(|_| rng.random_range(0..c)));
        buf.sort_unstable();
        buf.dedup();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_is_sorted_distinct_and_complete_for_dense_rows() {
        let mut r = build::rng(3, Phase::Pattern, 0);
        let mut s = Scratch::default();
        for &(c, k) in &[
            (10u32, 10usize),
            (10, 9),
            (10, 5),
            (10, 1),
            (1000, 999),
            (1000, 3),
            (100_000, 99_999),
            (100_000, 99_000),
            (100_000, 40_000),
            (100_000, 10),
            (64, 33),
            (130, 2),
        ] {
            let mut out = vec![0u32; k];
            sample_sorted(&mut r, c, &mut out, &mut s);
            assert!(out.windows(2).all(|w| w[0] < w[1]), "{c} {k}: {out:?}");
            assert!(out.iter().all(|&j| j < c));
            assert_eq!(out.len(), k);
        }
    }

    #[test]
    fn every_path_spreads_evenly() {
        // Sparse sort path, inverted sparse path, inverted bitmap path: hits per tenth of the
        // columns should be trials·k/10 within 5 standard deviations (binomial bound).
        let mut r = build::rng(5, Phase::Pattern, 1);
        let mut s = Scratch::default();
        for &(c, k, trials) in &[
            (10_000u32, 20usize, 2000usize),
            (10_000, 9990, 200),
            (1000, 700, 200),
        ] {
            let mut hits = [0f64; 10];
            let mut out = vec![0u32; k];
            for _ in 0..trials {
                sample_sorted(&mut r, c, &mut out, &mut s);
                for &j in &out {
                    hits[(j as usize * 10) / c as usize] += 1.0;
                }
            }
            let expect = (trials * k) as f64 / 10.0;
            let p_out = 1.0 - k as f64 / c as f64;
            let sd = (expect * 0.9 * p_out.max(0.01)).sqrt() + 1.0;
            for h in hits {
                assert!((h - expect).abs() < 5.0 * sd, "{c} {k}: {hits:?}");
            }
        }
    }

    #[test]
    fn sample_covers_columns_evenly() {
        // 20 000 draws of 3 out of 10: each column should be hit ~6 000 times.
        let mut r = build::rng(9, Phase::Pattern, 0);
        let mut s = Scratch::default();
        let mut hits = [0u32; 10];
        for _ in 0..20_000 {
            let mut out = [0u32; 3];
            sample_sorted(&mut r, 10, &mut out, &mut s);
            for j in out {
                hits[j as usize] += 1;
            }
        }
        for h in hits {
            assert!((5700..6300).contains(&h), "{hits:?}");
        }
    }
}
