//! Least-squares fits: the straight lines of the papers' "linear relationships", the two-piece
//! line of the CSR model (one line on each side of a threshold), and the multi-variable linear
//! fit of the learned models ([`LinearFit`], 002's linear regression on log features).
//!
//! The one-variable fits have a closed form; they are hand-written (a dozen lines) rather than
//! pulled from a linear-algebra crate, which would add a dependency for one formula. So is the
//! multi-variable fit: it has at most a dozen columns (002 Table 2), so the normal equations of
//! the standardized columns, solved by a Cholesky factorization of a ≤ 12 × 12 matrix, are exact
//! enough, and a small ridge term keeps them solvable when columns are collinear (minNnz =
//! modeNnz = medianNnz on every constant-row matrix). A linear-algebra crate (`faer`: about twenty
//! crates of SIMD kernels; `linfa-linear`: `ndarray` and `linfa`) would add minutes of compile
//! time on CI's two cores for forty lines.

use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// A straight line `y = slope · x + intercept`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Line {
    /// dy/dx.
    pub slope: f64,
    /// y at x = 0.
    pub intercept: f64,
}

impl Line {
    /// Ordinary least squares through the points `(xs[i], ys[i])`.
    ///
    /// Uses the centred closed form `slope = Σ(x−x̄)(y−ȳ) / Σ(x−x̄)²`, `intercept = ȳ − slope·x̄`,
    /// so points that lie exactly on a line are recovered to rounding. Needs at least two distinct
    /// x values and finite inputs; otherwise returns [`Error::Invalid`] naming `what`.
    pub fn fit(what: &str, xs: &[f64], ys: &[f64]) -> Result<Line> {
        if xs.len() != ys.len() {
            return Err(Error::Invalid(format!(
                "{what}: {} x values but {} y values",
                xs.len(),
                ys.len()
            )));
        }
        if let Some(v) = xs.iter().chain(ys).find(|v| !v.is_finite()) {
            return Err(Error::Invalid(format!("{what}: non-finite value {v}")));
        }
        let n = xs.len() as f64;
        if xs.is_empty() {
            return Err(Error::Invalid(format!("{what}: no points to fit")));
        }
        let mx = xs.iter().sum::<f64>() / n;
        let my = ys.iter().sum::<f64>() / n;
        let (mut sxx, mut sxy) = (0.0, 0.0);
        for (&x, &y) in xs.iter().zip(ys) {
            sxx += (x - mx) * (x - mx);
            sxy += (x - mx) * (y - my);
        }
        if sxx == 0.0 {
            return Err(Error::Invalid(format!(
                "{what}: needs at least two distinct x values to fit a line (got {} point(s))",
                xs.len()
            )));
        }
        let slope = sxy / sxx;
        Ok(Line {
            slope,
            intercept: my - slope * mx,
        })
    }

    /// Least squares constrained so that the line never falls and is never negative from `x0`
    /// on: `y = a·(x − x0) + b` with `a ≥ 0` and `b ≥ 0`.
    ///
    /// A time that falls with more work (a negative slope), or a per-unit cost that is negative
    /// where the model uses it (a line below zero at `x0`), is physically impossible; the
    /// unconstrained least-squares line is then rejected and the best line of the allowed set is
    /// taken instead (the active-set solution of this two-variable non-negative least squares:
    /// the unconstrained fit if allowed, else the better of `a = 0` (the mean) and `b = 0` (a
    /// line through `(x0, 0)`), else `y = 0`). Returns the line and whether a constraint was
    /// active (the unconstrained fit was rejected).
    pub fn fit_monotone(what: &str, xs: &[f64], ys: &[f64], x0: f64) -> Result<(Line, bool)> {
        let free = Line::fit(what, xs, ys)?;
        if free.slope >= 0.0 && free.eval(x0) >= 0.0 {
            return Ok((free, false));
        }
        let sse = |l: &Line| -> f64 {
            xs.iter()
                .zip(ys)
                .map(|(&x, &y)| (y - l.eval(x)) * (y - l.eval(x)))
                .sum()
        };
        let n = ys.len() as f64;
        let mut cands = vec![Line {
            slope: 0.0,
            intercept: 0.0,
        }];
        let mean = ys.iter().sum::<f64>() / n;
        if mean >= 0.0 {
            cands.push(Line {
                slope: 0.0,
                intercept: mean,
            });
        }
        let (sxy, sxx) = xs.iter().zip(ys).fold((0.0, 0.0), |(a, b), (&x, &y)| {
            (a + (x - x0) * y, b + (x - x0) * (x - x0))
        });
        if sxx > 0.0 && sxy >= 0.0 {
            let a = sxy / sxx;
            cands.push(Line {
                slope: a,
                intercept: -a * x0,
            });
        }
        let best = cands
            .into_iter()
            .min_by(|a, b| sse(a).total_cmp(&sse(b)))
            .expect("the zero line is always a candidate");
        Ok((best, true))
    }

    /// `slope · x + intercept`.
    #[inline]
    pub fn eval(&self, x: f64) -> f64 {
        self.slope * x + self.intercept
    }

    /// Coefficient of determination R² of this line on the points (1 = exact; may be negative
    /// for a line that fits worse than the mean). Returns 1 when every y is equal and matched.
    pub fn r_squared(&self, xs: &[f64], ys: &[f64]) -> f64 {
        let n = ys.len() as f64;
        if ys.is_empty() {
            return f64::NAN;
        }
        let my = ys.iter().sum::<f64>() / n;
        let ss_tot: f64 = ys.iter().map(|y| (y - my) * (y - my)).sum();
        let ss_res: f64 = xs
            .iter()
            .zip(ys)
            .map(|(&x, &y)| (y - self.eval(x)) * (y - self.eval(x)))
            .sum();
        if ss_tot == 0.0 {
            if ss_res == 0.0 {
                1.0
            } else {
                f64::NEG_INFINITY
            }
        } else {
            1.0 - ss_res / ss_tot
        }
    }

    /// Whether both coefficients are finite.
    pub fn is_finite(&self) -> bool {
        self.slope.is_finite() && self.intercept.is_finite()
    }
}

/// Two lines joined at a threshold: `low` for `x ≤ threshold`, `high` for `x > threshold`.
///
/// Fitting splits the points at the threshold and fits each side on its own; a point exactly at
/// the threshold belongs to *both* sides (the papers' figures show the `P_NZ = 1024` benchmark on
/// both the "≤ threshold" and the "≥ threshold" line). When the high side has fewer than two
/// distinct x values (the benchmark grid did not reach past the threshold), `high` is `None` and
/// the low line is extrapolated beyond the threshold.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct PiecewiseLine {
    /// Where the two pieces meet.
    pub threshold: f64,
    /// Line for `x ≤ threshold`.
    pub low: Line,
    /// Line for `x > threshold`, if the data reached past the threshold.
    pub high: Option<Line>,
}

impl PiecewiseLine {
    /// Fit both sides by least squares (see the type's documentation for the split).
    pub fn fit(what: &str, threshold: f64, xs: &[f64], ys: &[f64]) -> Result<PiecewiseLine> {
        if xs.len() != ys.len() {
            return Err(Error::Invalid(format!(
                "{what}: {} x values but {} y values",
                xs.len(),
                ys.len()
            )));
        }
        let side = |keep: &dyn Fn(f64) -> bool| points_where(xs, ys, keep);
        let (lx, ly) = side(&|x| x <= threshold);
        let (hx, hy) = side(&|x| x >= threshold);
        let low = Line::fit(&format!("{what} (x ≤ {threshold})"), &lx, &ly)?;
        let high = if distinct(&hx) >= 2 {
            Some(Line::fit(&format!("{what} (x ≥ {threshold})"), &hx, &hy)?)
        } else {
            None
        };
        Ok(PiecewiseLine {
            threshold,
            low,
            high,
        })
    }

    /// [`PiecewiseLine::fit`] with each side constrained by [`Line::fit_monotone`]: the low
    /// line never falls and is not negative from 0, the high line never falls and is not
    /// negative at the threshold. Returns the line and the names of the sides whose free fit was
    /// rejected.
    pub fn fit_monotone(
        what: &str,
        threshold: f64,
        xs: &[f64],
        ys: &[f64],
    ) -> Result<(PiecewiseLine, Vec<String>)> {
        let free = PiecewiseLine::fit(what, threshold, xs, ys)?;
        let side = |keep: &dyn Fn(f64) -> bool| points_where(xs, ys, keep);
        let mut rejected = Vec::new();
        let (lx, ly) = side(&|x| x <= threshold);
        let low_what = format!("{what} (x ≤ {threshold})");
        let (low, c) = Line::fit_monotone(&low_what, &lx, &ly, 0.0)?;
        if c {
            rejected.push(low_what);
        }
        let high = match free.high {
            Some(_) => {
                let (hx, hy) = side(&|x| x >= threshold);
                let high_what = format!("{what} (x ≥ {threshold})");
                let (h, c) = Line::fit_monotone(&high_what, &hx, &hy, threshold)?;
                if c {
                    rejected.push(high_what);
                }
                Some(h)
            }
            None => None,
        };
        Ok((
            PiecewiseLine {
                threshold,
                low,
                high,
            },
            rejected,
        ))
    }

    /// The line that applies at `x`.
    #[inline]
    pub fn piece(&self, x: f64) -> &Line {
        match &self.high {
            Some(h) if x > self.threshold => h,
            _ => &self.low,
        }
    }

    /// Whether `x` lies on the high side and a high line exists.
    #[inline]
    pub fn is_high(&self, x: f64) -> bool {
        self.high.is_some() && x > self.threshold
    }

    /// The value at `x`.
    #[inline]
    pub fn eval(&self, x: f64) -> f64 {
        self.piece(x).eval(x)
    }

    /// Whether every coefficient and the threshold are finite.
    pub fn is_finite(&self) -> bool {
        self.threshold.is_finite()
            && self.low.is_finite()
            && self.high.map_or(true, |h| h.is_finite())
    }
}

/// A linear function of several variables, `y = intercept + Σ coef[j] · x[j]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinearFit {
    /// y at x = 0.
    pub intercept: f64,
    /// One coefficient per column.
    pub coef: Vec<f64>,
}

impl LinearFit {
    /// Ridge least squares through the rows `xs[i] → ys[i]`: minimizes
    /// `Σ (y − ŷ)² + ridge · n · Σ β²` over the coefficients `β` of the *standardized* columns
    /// (each centred and divided by its standard deviation; the intercept is not penalized), so
    /// `ridge` is relative and unit-free; `ridge = 0` is ordinary least squares. A column that
    /// is constant gets coefficient 0. Needs at least one row, rows of equal length and finite
    /// values; otherwise [`Error::Invalid`] naming `what`.
    pub fn fit(what: &str, xs: &[Vec<f64>], ys: &[f64], ridge: f64) -> Result<LinearFit> {
        let n = xs.len();
        if n == 0 || n != ys.len() {
            return Err(Error::Invalid(format!(
                "{what}: {n} rows and {} values to fit",
                ys.len()
            )));
        }
        let d = xs[0].len();
        if xs.iter().any(|r| r.len() != d) {
            return Err(Error::Invalid(format!("{what}: rows of different lengths")));
        }
        if let Some(v) = xs.iter().flatten().chain(ys).find(|v| !v.is_finite()) {
            return Err(Error::Invalid(format!("{what}: non-finite value {v}")));
        }
        let nf = n as f64;
        let my = ys.iter().sum::<f64>() / nf;
        let mean: Vec<f64> = (0..d)
            .map(|j| xs.iter().map(|r| r[j]).sum::<f64>() / nf)
            .collect();
        let scale: Vec<f64> = (0..d)
            .map(|j| (xs.iter().map(|r| (r[j] - mean[j]).powi(2)).sum::<f64>() / nf).sqrt())
            .collect();
        let live: Vec<usize> = (0..d).filter(|&j| scale[j] > 1e-12).collect();
        let m = live.len();
        let z = |r: &[f64], k: usize| (r[live[k]] - mean[live[k]]) / scale[live[k]];
        // Normal equations (ZᵀZ + ridge·n·I) β = Zᵀ(y − ȳ).
        let mut a = vec![0.0; m * m];
        let mut b = vec![0.0; m];
        for (r, &y) in xs.iter().zip(ys) {
            for p in 0..m {
                let zp = z(r, p);
                b[p] += zp * (y - my);
                for q in 0..=p {
                    a[p * m + q] += zp * z(r, q);
                }
            }
        }
        for p in 0..m {
            a[p * m + p] += ridge.max(0.0) * nf + 1e-12 * nf;
            for q in 0..p {
                a[q * m + p] = a[p * m + q];
            }
        }
        let beta = cholesky_solve(&mut a, &mut b, m).ok_or_else(|| {
            Error::Invalid(format!(
                "{what}: the normal equations are singular (collinear columns; use a ridge > 0)"
            ))
        })?;
        let mut coef = vec![0.0; d];
        for (k, &j) in live.iter().enumerate() {
            coef[j] = beta[k] / scale[j];
        }
        let intercept = my - coef.iter().zip(&mean).map(|(c, m)| c * m).sum::<f64>();
        Ok(LinearFit { intercept, coef })
    }

    /// `intercept + Σ coef[j] · x[j]`.
    pub fn eval(&self, x: &[f64]) -> f64 {
        self.intercept + self.coef.iter().zip(x).map(|(c, v)| c * v).sum::<f64>()
    }

    /// Whether every coefficient is finite.
    pub fn is_finite(&self) -> bool {
        self.intercept.is_finite() && self.coef.iter().all(|c| c.is_finite())
    }
}

/// Solve `A x = b` for a symmetric positive definite `m × m` matrix `a` (row-major, overwritten
/// by its Cholesky factor); `None` when it is not positive definite.
fn cholesky_solve(a: &mut [f64], b: &mut [f64], m: usize) -> Option<Vec<f64>> {
    for j in 0..m {
        let mut d = a[j * m + j];
        for k in 0..j {
            d -= a[j * m + k] * a[j * m + k];
        }
        if d.is_nan() || d <= 0.0 {
            return None;
        }
        let d = d.sqrt();
        a[j * m + j] = d;
        for i in j + 1..m {
            let mut s = a[i * m + j];
            for k in 0..j {
                s -= a[i * m + k] * a[j * m + k];
            }
            a[i * m + j] = s / d;
        }
    }
    // L y = b, then Lᵀ x = y.
    for i in 0..m {
        for k in 0..i {
            b[i] -= a[i * m + k] * b[k];
        }
        b[i] /= a[i * m + i];
    }
    for i in (0..m).rev() {
        for k in i + 1..m {
            b[i] -= a[k * m + i] * b[k];
        }
        b[i] /= a[i * m + i];
    }
    Some(b.to_vec())
}

/// Number of distinct values in `xs`.
fn distinct(xs: &[f64]) -> usize {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v.len()
}

/// The points `(x, y)` whose `x` satisfies `keep`, as two vectors.
fn points_where(xs: &[f64], ys: &[f64], keep: &dyn Fn(f64) -> bool) -> (Vec<f64>, Vec<f64>) {
    xs.iter()
        .zip(ys)
        .filter(|(&x, _)| keep(x))
        .map(|(&x, &y)| (x, y))
        .unzip()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_linear_law_of_several_variables_is_recovered() {
        // y = 1.5 − 2 x0 + 0.5 x1 (+ a constant column and a collinear copy of x0, ridge 0).
        let xs: Vec<Vec<f64>> = (0..20)
            .map(|i| {
                let (a, b) = ((i % 7) as f64, (i * i % 11) as f64);
                vec![a, b, 3.0]
            })
            .collect();
        let ys: Vec<f64> = xs.iter().map(|r| 1.5 - 2.0 * r[0] + 0.5 * r[1]).collect();
        let f = LinearFit::fit("t", &xs, &ys, 0.0).unwrap();
        assert!((f.intercept - 1.5).abs() < 1e-9, "{f:?}");
        assert!((f.coef[0] + 2.0).abs() < 1e-9 && (f.coef[1] - 0.5).abs() < 1e-9);
        assert_eq!(f.coef[2], 0.0);
        assert!((f.eval(&[1.0, 2.0, 3.0]) - 0.5).abs() < 1e-9);
        // Collinear columns: a ridge keeps it solvable and the fit still matches the points.
        let xc: Vec<Vec<f64>> = xs.iter().map(|r| vec![r[0], r[0], r[1]]).collect();
        let g = LinearFit::fit("t", &xc, &ys, 1e-6).unwrap();
        let worst = xc
            .iter()
            .zip(&ys)
            .map(|(r, y)| (g.eval(r) - y).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-3, "{worst}");
        assert!(LinearFit::fit("t", &[], &[], 0.0).is_err());
        assert!(LinearFit::fit("t", &[vec![f64::NAN]], &[1.0], 0.0).is_err());
    }

    #[test]
    fn exact_line_is_recovered() {
        let xs = [1.0, 2.0, 3.0, 7.0, 10.0];
        let ys: Vec<f64> = xs.iter().map(|x| 2.5e-6 * x + 3.0e-6).collect();
        let l = Line::fit("t", &xs, &ys).unwrap();
        assert!((l.slope - 2.5e-6).abs() < 1e-18, "{l:?}");
        assert!((l.intercept - 3.0e-6).abs() < 1e-18, "{l:?}");
        assert!((l.r_squared(&xs, &ys) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn least_squares_of_noisy_points() {
        // Points off any line: the fit must satisfy the normal equations (residuals sum to zero
        // and are orthogonal to x), which characterise the least-squares solution.
        let xs = [0.0, 1.0, 2.0, 3.0];
        let ys = [1.0, 0.0, 3.0, 2.0];
        let l = Line::fit("t", &xs, &ys).unwrap();
        // Normal equations: Σ r = 0 and Σ x·r = 0 for the residuals r.
        let r: Vec<f64> = xs.iter().zip(&ys).map(|(&x, &y)| y - l.eval(x)).collect();
        assert!(r.iter().sum::<f64>().abs() < 1e-12);
        assert!(xs.iter().zip(&r).map(|(x, r)| x * r).sum::<f64>().abs() < 1e-12);
        assert!(l.r_squared(&xs, &ys) < 1.0);
    }

    #[test]
    fn monotone_fit_rejects_falling_or_negative_lines() {
        // Increasing data: the free fit is kept.
        let xs = [1.0, 2.0, 3.0];
        let (l, c) = Line::fit_monotone("t", &xs, &[2.0, 3.0, 4.0], 0.0).unwrap();
        assert!(!c && (l.slope - 1.0).abs() < 1e-12 && (l.intercept - 1.0).abs() < 1e-12);
        // Falling data: slope 0, the mean.
        let (l, c) = Line::fit_monotone("t", &xs, &[4.0, 3.0, 2.0], 0.0).unwrap();
        assert!(
            c && l.slope == 0.0 && (l.intercept - 3.0).abs() < 1e-12,
            "{l:?}"
        );
        // Rising but negative at x0 = 0 (the ELL f(y) case): a line through the origin.
        let ys = [0.5, 3.0, 5.5];
        let (l, c) = Line::fit_monotone("t", &xs, &ys, 0.0).unwrap();
        assert!(c && l.slope > 0.0 && l.intercept == 0.0, "{l:?}");
        assert!(l.eval(1.0) >= 0.0);
        // It is the least-squares line through the origin.
        let a = xs.iter().zip(&ys).map(|(x, y)| x * y).sum::<f64>()
            / xs.iter().map(|x| x * x).sum::<f64>();
        assert!((l.slope - a).abs() < 1e-12);
        // The constraint point is honoured: at x0 = 2 the line may be negative before 2 only.
        let (l, _) = Line::fit_monotone("t", &xs, &[-3.0, 1.0, 2.0], 2.0).unwrap();
        assert!(l.eval(2.0) >= -1e-12 && l.slope >= 0.0, "{l:?}");
    }

    #[test]
    fn degenerate_inputs_are_errors() {
        assert!(Line::fit("t", &[], &[]).is_err());
        assert!(Line::fit("t", &[2.0, 2.0], &[1.0, 3.0]).is_err());
        assert!(Line::fit("t", &[1.0, 2.0], &[1.0]).is_err());
        assert!(Line::fit("t", &[1.0, f64::NAN], &[1.0, 2.0]).is_err());
    }

    #[test]
    fn piecewise_splits_at_threshold_and_shares_it() {
        let thr = 1024.0;
        let lo = Line {
            slope: 1e-9,
            intercept: 4e-6,
        };
        // Continuous at the threshold: the shared point lies on both lines.
        let hi = Line {
            slope: 3e-9,
            intercept: lo.eval(thr) - 3e-9 * thr,
        };
        let xs = [4.0, 16.0, 64.0, 256.0, 1024.0, 2048.0, 4096.0];
        let ys: Vec<f64> = xs
            .iter()
            .map(|&x| if x <= thr { lo.eval(x) } else { hi.eval(x) })
            .collect();
        let p = PiecewiseLine::fit("t", thr, &xs, &ys).unwrap();
        let h = p.high.unwrap();
        assert!((p.low.slope - lo.slope).abs() < 1e-20);
        assert!((h.slope - hi.slope).abs() < 1e-20);
        for (&x, &y) in xs.iter().zip(&ys) {
            assert!((p.eval(x) - y).abs() <= 1e-15 * y, "x={x}");
        }
        assert!(!p.is_high(thr) && p.is_high(thr + 1.0));
    }

    #[test]
    fn piecewise_without_high_side_extrapolates_low() {
        let xs = [4.0, 16.0, 1024.0];
        let ys = [1.0, 2.0, 3.0];
        let p = PiecewiseLine::fit("t", 1024.0, &xs, &ys).unwrap();
        assert!(p.high.is_none());
        assert_eq!(p.eval(4096.0), p.low.eval(4096.0));
    }
}
