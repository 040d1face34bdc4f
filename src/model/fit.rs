//! One-dimensional least-squares fits: the straight lines of the papers' "linear relationships"
//! and the two-piece line of the CSR model (one line on each side of a threshold).
//!
//! These are two-parameter fits with a closed form; they are hand-written (a dozen lines) rather
//! than pulled from a linear-algebra crate, which would add a dependency for one formula.

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
        let side = |keep: &dyn Fn(f64) -> bool| -> (Vec<f64>, Vec<f64>) {
            xs.iter()
                .zip(ys)
                .filter(|(&x, _)| keep(x))
                .map(|(&x, &y)| (x, y))
                .unzip()
        };
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

/// Number of distinct values in `xs`.
fn distinct(xs: &[f64]) -> usize {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v.len()
}

#[cfg(test)]
mod tests {
    use super::*;

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
