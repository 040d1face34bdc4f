//! The statistical models' benchmark matrices (001 §3.1): `R` rows whose lengths follow a normal
//! or a uniform distribution with mean `P_NZ` — or are all `P_NZ` long (the constant-row
//! benchmarks of Guo & Wang, the third column of 001's comparison) — generated on the device
//! or built on the host ([`super::stat_source::DistributedSource`]).
//!
//! **The contract** extends the constant-row one of [`super::synthetic`]: every number is a pure
//! function of the row index, so the matrix is the same wherever it is built.
//!
//! * Row length of row `r` with mean `P` and standard deviation `σ` ([`Spread`]), with
//!   `u_j = (mix64(r·16 + j ^ LEN_SALT) >> 40) · 2⁻²⁴` (24-bit uniforms in `[0, 1)`, exact in
//!   `f64`):
//!   - normal: `z = Σ_{j<12} u_j − 6` (Irwin–Hall: mean 0, variance 1, within ±6, exact in
//!     `f64`, so no transcendental function whose last bit differs between libraries), length
//!     `round(P + σ·z)`;
//!   - uniform: the integers `P − w … P + w` with `w = min(round(√3·σ), P)` (so both
//!     distributions have about the same standard deviation), length `P − w + mix64(r ^ LEN_SALT)
//!     mod (2w + 1)`;
//!
//!   - constant: `P` (the constant-row contract of [`synthetic`], so these matrices can be
//!     generated on the device as the analytical suite's are);
//!
//!   then clamped to `[0, C]`.
//! * Entry `k` of row `r` has the flat index `i = row_ptr[r] + k`, the column
//!   `k·s + (mix64(i) >> 32) mod s` with `s = C / len(r)` and the value of [`synthetic::value`]'s
//!   hash of `i` — the constant-row contract when every length is `P`.
//!
//! **Generated on the device, built on the host.** The constant-row matrices need no pass over
//! the rows: their layout follows from the index alone. Here the CSR row pointers are a prefix
//! sum of the lengths, ELL's width is the longest row and JAD needs the rows sorted by length,
//! so the CUDA backend (`Backend::prepare_distributed`, `kernels/rowdist.cu`) draws the lengths
//! (with the arithmetic above: the normal's sum is exact and `P + σ·z` is computed unfused, so
//! the lengths are bit for bit the host's), scans them into row pointers, reduces their
//! maximum, sorts the rows for JAD with a stable counting sort (longer rows first, equal
//! lengths in row order, as [`crate::formats::Jad`] orders them) and fills the layout in place.
//! The host builds the same CSR in parallel ([`RowLengths::build_csr`]) for the CPU backend,
//! for `instrument --source host` and as the reference; `sparsecast selftest --backend cuda`
//! compares the two array for array (its `gen …` rows). Where the matrices come from in a run:
//! [`super::stat_source`].

use super::synthetic::{self, mix64};
use crate::{Csr, Error, Result, Scalar};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Salt XOR-ed into the row index for the row-length hash.
pub const LEN_SALT: u64 = 0x1E57_0F20_11DE_5EED;

/// The distribution of the row lengths (001: "normal" and "uniform"; "constant" is the
/// constant-row benchmark of Guo & Wang that 001 compares them with).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum RowDist {
    /// Normal with mean `P_NZ` (the `statistical-normal` model).
    Normal,
    /// Uniform on the integers around `P_NZ` (the `statistical-uniform` model).
    Uniform,
    /// Every row `P_NZ` long (the `statistical-constant` model: 001's forms and grid fitted to
    /// constant-row matrices, the "Guo's model" column of 001's comparison).
    Constant,
}

impl RowDist {
    /// The paper's two, in its order (the default models).
    pub const ALL: [RowDist; 2] = [RowDist::Normal, RowDist::Uniform];

    /// `normal` or `uniform`.
    pub fn name(self) -> &'static str {
        match self {
            RowDist::Normal => "normal",
            RowDist::Uniform => "uniform",
            RowDist::Constant => "constant",
        }
    }
}

/// The standard deviation of the row lengths, which 001 leaves open.
///
/// The default, `σ = √P_NZ`, is the spread of the matrices 001 made with Matlab at "distribution
/// density `P = P_NZ / R`" (`sprand`/`sprandn`: each of the `C = R` positions of a row is a
/// non-zero with probability `P_NZ / R`, so a row holds Binomial(`R`, `P_NZ / R`) ≈
/// Poisson(`P_NZ`) entries, standard deviation ≈ `√P_NZ`). `Relative(c)` is `σ = c·P_NZ`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum Spread {
    /// `σ = √P_NZ`.
    #[default]
    Sqrt,
    /// `σ = cv · P_NZ`.
    Relative {
        /// Coefficient of variation.
        cv: f64,
    },
}

impl Spread {
    /// Parse `sqrt` or a coefficient of variation such as `0.25`.
    pub fn parse(s: &str) -> Result<Spread> {
        if s == "sqrt" {
            return Ok(Spread::Sqrt);
        }
        match s.parse::<f64>() {
            Ok(cv) if cv.is_finite() && cv >= 0.0 => Ok(Spread::Relative { cv }),
            _ => Err(Error::Invalid(format!(
                "row-length spread '{s}': expected 'sqrt' or a coefficient of variation ≥ 0"
            ))),
        }
    }

    /// `σ` for a mean of `mean`.
    pub fn sigma(self, mean: u64) -> f64 {
        match self {
            Spread::Sqrt => (mean as f64).sqrt(),
            Spread::Relative { cv } => cv * mean as f64,
        }
    }

    /// Check the value.
    pub fn validate(self) -> Result<()> {
        match self {
            Spread::Relative { cv } if !(cv.is_finite() && cv >= 0.0) => Err(Error::Invalid(
                format!("row-length spread: coefficient of variation {cv} must be ≥ 0"),
            )),
            _ => Ok(()),
        }
    }
}

impl std::fmt::Display for Spread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Spread::Sqrt => write!(f, "σ = √P_NZ"),
            Spread::Relative { cv } => write!(f, "σ = {cv}·P_NZ"),
        }
    }
}

/// The row lengths of one benchmark family: distribution, mean and spread.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RowLengths {
    /// Distribution.
    pub dist: RowDist,
    /// Spread.
    pub spread: Spread,
}

/// A 24-bit uniform in `[0, 1)`.
#[inline]
fn unit(i: u64) -> f64 {
    (mix64(i ^ LEN_SALT) >> 40) as f64 * (1.0 / (1u64 << 24) as f64)
}

impl RowLengths {
    /// Half-width `w` of the uniform distribution around `mean`.
    pub fn half_width(&self, mean: u64) -> u64 {
        ((3f64.sqrt() * self.spread.sigma(mean)).round() as u64).min(mean)
    }

    /// The length of row `r` of a matrix with mean row length `mean` and `cols` columns (see the
    /// module documentation).
    pub fn len(&self, r: u64, mean: u64, cols: u64) -> u64 {
        let l = match self.dist {
            RowDist::Normal => {
                let z = (0..12).map(|j| unit(r * 16 + j)).sum::<f64>() - 6.0;
                (mean as f64 + self.spread.sigma(mean) * z).round().max(0.0) as u64
            }
            RowDist::Uniform => {
                let w = self.half_width(mean);
                mean - w + mix64(r ^ LEN_SALT) % (2 * w + 1)
            }
            RowDist::Constant => mean,
        };
        l.min(cols)
    }

    /// An upper bound of every row length (for planning within memory before drawing).
    pub fn max_bound(&self, mean: u64, cols: u64) -> u64 {
        let b = match self.dist {
            RowDist::Normal => (mean as f64 + 6.0 * self.spread.sigma(mean)).ceil() as u64,
            RowDist::Uniform => mean + self.half_width(mean),
            RowDist::Constant => mean,
        };
        b.min(cols)
    }

    /// Every row length of a `rows`-row matrix (in parallel).
    pub fn lengths(&self, rows: u64, mean: u64, cols: u64) -> Vec<usize> {
        (0..rows)
            .into_par_iter()
            .map(|r| self.len(r, mean, cols) as usize)
            .collect()
    }

    /// Build the benchmark matrix on the host (in parallel); refuses, before allocating the
    /// entries, one whose host arrays would exceed `max_bytes`.
    pub fn build_csr<T: Scalar>(
        &self,
        rows: usize,
        cols: usize,
        mean: usize,
        max_bytes: u64,
    ) -> Result<Csr<T>> {
        synthetic::check_shape(rows, cols, mean.max(1))?;
        let lens = self.lengths(rows as u64, mean as u64, cols as u64);
        let mut row_ptr = Vec::with_capacity(rows + 1);
        row_ptr.push(0usize);
        for &l in &lens {
            row_ptr.push(row_ptr.last().copied().unwrap_or(0) + l);
        }
        let nnz = row_ptr[rows];
        let bytes = Csr::<T>::host_bytes(rows as u64, nnz as u64);
        if bytes > max_bytes {
            return Err(Error::Invalid(format!(
                "benchmark matrix {rows}×{cols} with {nnz} non-zeros needs {bytes} bytes on the \
                 host, more than the {max_bytes}-byte limit"
            )));
        }
        let mut col_idx = vec![0u32; nnz];
        let mut values = vec![T::zero(); nnz];
        let mut rows_out = Vec::with_capacity(rows);
        let (mut cs, mut vs) = (&mut col_idx[..], &mut values[..]);
        for &l in &lens {
            let (c, cr) = std::mem::take(&mut cs).split_at_mut(l);
            let (v, vr) = std::mem::take(&mut vs).split_at_mut(l);
            rows_out.push((c, v));
            (cs, vs) = (cr, vr);
        }
        rows_out
            .into_par_iter()
            .enumerate()
            .for_each(|(r, (c, v))| {
                let len = c.len() as u64;
                if len == 0 {
                    return;
                }
                let stride = cols as u64 / len;
                let base = row_ptr[r] as u64;
                for k in 0..len {
                    let i = base + k;
                    c[k as usize] = (k * stride + (mix64(i) >> 32) % stride) as u32;
                    v[k as usize] = T::cast_f64(synthetic::unit_value(i ^ synthetic::VALUE_SALT));
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(l: &[usize]) -> (f64, f64) {
        let n = l.len() as f64;
        let m = l.iter().sum::<usize>() as f64 / n;
        let v = l.iter().map(|&x| (x as f64 - m).powi(2)).sum::<f64>() / n;
        (m, v.sqrt())
    }

    #[test]
    fn lengths_have_the_mean_and_the_spread() {
        for dist in RowDist::ALL {
            for (spread, mean, sd) in [
                (Spread::Sqrt, 256, 16.0),
                (Spread::Relative { cv: 0.25 }, 64, 16.0),
            ] {
                let rl = RowLengths { dist, spread };
                let l = rl.lengths(20_000, mean, 100_000);
                let (m, s) = stats(&l);
                assert!((m - mean as f64).abs() < 0.5, "{dist:?} mean {m}");
                assert!((s / sd - 1.0).abs() < 0.05, "{dist:?} {spread} sd {s}");
                let b = rl.max_bound(mean, 100_000) as usize;
                assert!(l.iter().all(|&x| x <= b), "{dist:?} bound {b}");
            }
        }
        // No spread: the constant-row benchmark.
        let rl = RowLengths {
            dist: RowDist::Normal,
            spread: Spread::Relative { cv: 0.0 },
        };
        assert!(rl.lengths(100, 7, 50).iter().all(|&l| l == 7));
    }

    #[test]
    fn matrix_is_valid_and_constant_rows_match_the_constant_contract() {
        for dist in RowDist::ALL {
            let rl = RowLengths {
                dist,
                spread: Spread::Sqrt,
            };
            let a = rl.build_csr::<f64>(500, 1000, 16, u64::MAX).unwrap();
            a.validate().unwrap();
            let want = rl.lengths(500, 16, 1000);
            assert_eq!(a.row_lengths(), want);
            assert!(a.values.iter().all(|v| (-1.0..1.0).contains(v)));
        }
        let flat = RowLengths {
            dist: RowDist::Uniform,
            spread: Spread::Relative { cv: 0.0 },
        };
        let a = flat.build_csr::<f64>(50, 100, 7, u64::MAX).unwrap();
        let b = synthetic::build_csr::<f64>(50, 100, 7, u64::MAX).unwrap();
        assert_eq!(a, b);
        // The constant distribution is the constant-row contract whatever the spread.
        let constant = RowLengths {
            dist: RowDist::Constant,
            spread: Spread::Sqrt,
        };
        assert_eq!(constant.build_csr::<f64>(50, 100, 7, u64::MAX).unwrap(), b);
        assert_eq!(constant.max_bound(7, 100), 7);
        assert!(flat.build_csr::<f64>(1000, 1000, 100, 1000).is_err());
    }

    #[test]
    fn spread_parses() {
        assert_eq!(Spread::parse("sqrt").unwrap(), Spread::Sqrt);
        assert_eq!(Spread::parse("0.5").unwrap(), Spread::Relative { cv: 0.5 });
        assert!(Spread::parse("-1").is_err() && Spread::parse("wide").is_err());
    }
}
