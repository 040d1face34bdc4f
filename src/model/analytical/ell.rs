//! The ELL model (004 §3.5.2, 000 §III-F2).
//!
//! **Step 1 — relationships**, all least-squares lines:
//! * Relationship-1, `T = f(y)·x + g(y)`: for every measured strip count `y`, time against
//!   `P_NZ = x` (kept in [`EllParams::rel1`]; only its slopes are used). Every strip count is
//!   fitted over the **same** `P_NZ` values (the common grid, [`EllParams::pnz_grid`]): the
//!   memory bounds drop the widest benchmarks at the larger strip counts, and lines fitted over
//!   different ranges are not comparable (on the H200 that moved the intercepts by 2.6×). Strip
//!   counts measured at too few of the grid's values are left out of Relationship-2.
//! * Relationship-2, `f(y)`: those slopes against `y`.
//! * Relationship-3, `e(y) = f(y)·x1 + g(y)`: time against strips at a fixed `P_NZ = x1`; we take
//!   the smallest measured `P_NZ` (the papers' Fig. 5c uses 4) among those measured at two or
//!   more strip counts. Hence `g(y) = e(y) − f(y)·x1`. (One sentence of the papers writes
//!   `g(Y) = e(Y) − f(Y)·Y`; `x1` is what the derivation means.)
//!
//! **Rejected fits.** A time may not fall with more work: a strip count whose Relationship-1
//! slope is negative is rejected (not used in Relationship-2) — unless fewer than two strip
//! counts rise, where each falling one enters Relationship-2 at its line constrained to a
//! non-negative slope (slope 0) rather than the fit failing (timing noise larger than the
//! work's growth: the quick suite on a busy CPU) — and `f(y)` and `e(y)` are
//! least-squares lines constrained to a non-negative slope and a non-negative value at the
//! fewest strips measured (`f` at the smallest `y` of the suite, 1 or a sub-strip fraction; `e`
//! at `y = 0`); below its range `f` is used no lower than 0
//! ([`Line::fit_monotone`]). (The free fit of `f` on the H200, f32, was `f(1) = −1.40 µs` per
//! `P_NZ`: wider ELL predicted faster at one strip.) What was rejected is listed in
//! [`EllParams::rejected`].
//!
//! **Step 2 — estimate.** With `X` = the longest row (the ELL width) and `Y = ⌈N_R / S_ELL⌉`:
//! `T0 = f(Y)·X + g(Y) = f(Y)·(X − x1) + e(Y)`.
//!
//! **Outside the benchmark range** the lines extrapolate linearly and `T0` is floored at the
//! suite's fastest benchmark (see [`super::AnalyticalModel::fit`]).

use super::min_strips;
use crate::instrument::{Measurement, Statistic};
use crate::model::fit::Line;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// Relationship-1 at one strip count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StripFit {
    /// `y` ([`crate::instrument::strip_count`]: a fraction for a sub-strip benchmark).
    pub strips: f64,
    /// `T = f(y)·x + g(y)` (slope `f(y)`, intercept `g(y)`).
    pub line: Line,
}

/// Fitted parameters of the ELL model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EllParams {
    /// `S_ELL`, rows per strip.
    pub strip_size: u64,
    /// Relationship-1 at every strip count measured at two or more `P_NZ` values.
    pub rel1: Vec<StripFit>,
    /// Relationship-2: `f(y)`.
    pub f: Line,
    /// `x1`, the `P_NZ` of Relationship-3.
    pub x1: u64,
    /// Relationship-3: `e(y)`.
    pub e: Line,
    /// The fewest strips among the benchmarks fitted (1, or a fraction with sub-strip benchmarks):
    /// a target's strip count is taken no lower, so the lines are never extrapolated below the
    /// measured range.
    #[serde(default = "super::one")]
    pub min_strips: f64,
    /// The suite's fastest benchmark time, the floor of every estimate.
    pub floor: f64,
    /// The common `P_NZ` grid Relationship-1 was fitted on at every strip count.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pnz_grid: Vec<u64>,
    /// Fits rejected because they made time fall with more work (see the module documentation).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rejected: Vec<String>,
}

impl EllParams {
    /// Fit from the ELL measurements.
    pub fn fit(
        strip_size: u64,
        floor: f64,
        stat: Statistic,
        ms: &[&Measurement],
    ) -> Result<EllParams> {
        if ms.is_empty() {
            return Err(Error::Invalid("ell: no benchmark measurements".into()));
        }
        // Strip counts are keyed by the benchmark's rows (one row count per strip count, whole
        // or fractional).
        let mut strips: Vec<u64> = ms.iter().map(|m| m.rows).collect();
        strips.sort_unstable();
        strips.dedup();
        let y_of = |rows: u64| crate::instrument::strip_count(rows, strip_size);
        let pnzs_at = |y: u64| -> Vec<u64> {
            let mut v: Vec<u64> = ms.iter().filter(|m| m.rows == y).map(|m| m.pnz).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        let (grid, used) = common_grid(&strips, &pnzs_at);
        let mut fits = Vec::new();
        for &y in &used {
            let (xs, ts): (Vec<f64>, Vec<f64>) = ms
                .iter()
                .filter(|m| m.rows == y && grid.contains(&m.pnz))
                .map(|m| (m.pnz as f64, m.time(stat)))
                .unzip();
            let y = y_of(y);
            let what = format!("ell Relationship-1 (I = {y})");
            let line = Line::fit(&what, &xs, &ts)?;
            fits.push((y, what, line, xs, ts));
        }
        let rising = fits.iter().filter(|f| f.2.slope >= 0.0).count();
        let mut rel1 = Vec::new();
        let mut rejected = Vec::new();
        for (y, what, line, xs, ts) in fits {
            if line.slope >= 0.0 {
                rel1.push(StripFit { strips: y, line });
            } else if rising >= 2 {
                rejected.push(format!("{what}: slope {:.3e} s per P_NZ", line.slope));
            } else {
                // Too few strip counts rise with P_NZ for Relationship-2 (timings whose noise
                // exceeds the work's growth, e.g. the quick suite on a busy CPU): each falling
                // one is kept at its least-squares line constrained to a non-negative slope
                // (slope 0, the mean time) instead of failing the fit.
                let x0 = xs.iter().copied().fold(f64::INFINITY, f64::min);
                let (flat, _) = Line::fit_monotone(&what, &xs, &ts, x0)?;
                rejected.push(format!(
                    "{what}: slope {:.3e} s per P_NZ, kept at {:.3e} (fewer than two strip \
                     counts rose with P_NZ)",
                    line.slope, flat.slope
                ));
                rel1.push(StripFit {
                    strips: y,
                    line: flat,
                });
            }
        }
        let (ys, fs): (Vec<f64>, Vec<f64>) = rel1.iter().map(|r| (r.strips, r.line.slope)).unzip();
        let (f, c) = Line::fit_monotone(
            "ell Relationship-2 f(y)",
            &ys,
            &fs,
            ys.iter().copied().fold(1.0, f64::min),
        )
        .map_err(|_| {
            Error::Invalid(
                "ell: Relationship-2 needs two strip counts each measured at two P_NZ values \
                 (of a common grid)"
                    .into(),
            )
        })?;
        if c {
            rejected.push("ell Relationship-2 f(y)".into());
        }
        let mut pnzs: Vec<u64> = ms.iter().map(|m| m.pnz).collect();
        pnzs.sort_unstable();
        pnzs.dedup();
        let x1 = pnzs
            .into_iter()
            .find(|&z| ms.iter().filter(|m| m.pnz == z).count() >= 2)
            .ok_or_else(|| {
                Error::Invalid(
                    "ell: Relationship-3 needs a P_NZ measured at two strip counts".into(),
                )
            })?;
        let (ys, es): (Vec<f64>, Vec<f64>) = ms
            .iter()
            .filter(|m| m.pnz == x1)
            .map(|m| (m.strip_count(strip_size), m.time(stat)))
            .unzip();
        let e_what = format!("ell Relationship-3 e(y) (P_NZ = {x1})");
        let (e, c) = Line::fit_monotone(&e_what, &ys, &es, 0.0)?;
        if c {
            rejected.push(e_what);
        }
        Ok(EllParams {
            min_strips: min_strips(ms, strip_size),
            strip_size,
            rel1,
            f,
            x1,
            e,
            floor,
            pnz_grid: grid,
            rejected,
        })
    }

    /// Estimated seconds for an ELL matrix `width` entries wide with `nrows` rows.
    pub fn predict(&self, width: f64, nrows: u64) -> f64 {
        let y = crate::instrument::strip_count(nrows, self.strip_size).max(self.min_strips);
        // A per-P_NZ cost is never negative, also where f is extrapolated below its range.
        let fy = self.f.eval(y).max(0.0);
        let gy = self.e.eval(y) - fy * self.x1 as f64;
        (fy * width + gy).max(self.floor)
    }

    /// Whether every number is finite and the floor positive.
    pub fn is_valid(&self) -> bool {
        self.strip_size > 0
            && self.f.is_finite()
            && self.e.is_finite()
            && self.rel1.iter().all(|r| r.line.is_finite())
            && self.floor.is_finite()
            && self.floor > 0.0
    }
}

/// The common `P_NZ` grid of Relationship-1 and the strip counts fitted on it: the `P_NZ` values
/// measured at every strip count kept, keeping as many strip counts as possible while the grid
/// has at least two values (strip counts measured at the fewest `P_NZ` values are dropped first;
/// among equals, the largest strip count).
fn common_grid(strips: &[u64], pnzs_at: &dyn Fn(u64) -> Vec<u64>) -> (Vec<u64>, Vec<u64>) {
    let mut used: Vec<(u64, Vec<u64>)> = strips
        .iter()
        .map(|&y| (y, pnzs_at(y)))
        .filter(|(_, p)| p.len() >= 2)
        .collect();
    loop {
        let grid: Vec<u64> = match used.first() {
            Some((_, first)) => first
                .iter()
                .copied()
                .filter(|z| used.iter().all(|(_, p)| p.contains(z)))
                .collect(),
            None => return (Vec::new(), Vec::new()),
        };
        if grid.len() >= 2 || used.len() <= 1 {
            return (grid, used.into_iter().map(|(y, _)| y).collect());
        }
        // Drop the strip count measured at the fewest P_NZ values (the largest on ties).
        let drop = used
            .iter()
            .enumerate()
            .min_by(|a, b| a.1 .1.len().cmp(&b.1 .1.len()).then(b.1 .0.cmp(&a.1 .0)))
            .map(|(i, _)| i)
            .expect("non-empty");
        used.remove(drop);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Variant;

    /// ELL benchmarks at 1, 2 and 4 strips of 1,000 rows, each at `P_NZ` 4, 16 and 64, the time
    /// of strip count `y` at `P_NZ` `x` given by `t(y, x)` seconds.
    fn benchmarks(t: &dyn Fn(u64, u64) -> f64) -> Vec<Measurement> {
        let mut v = Vec::new();
        for y in [1, 2, 4] {
            for x in [4, 16, 64] {
                let s = t(y, x);
                v.push(Measurement {
                    kernel: Variant::Ell,
                    rows: 1000 * y,
                    cols: 1000 * y,
                    pnz: x,
                    strips: y,
                    warm_mean: s,
                    median: s,
                    samples: vec![s; 3],
                });
            }
        }
        v
    }

    fn fit(ms: &[Measurement]) -> Result<EllParams> {
        let refs: Vec<&Measurement> = ms.iter().collect();
        EllParams::fit(1000, 1e-6, Statistic::Median, &refs)
    }

    #[test]
    fn a_falling_strip_count_is_rejected_while_two_rise() {
        // Strip count 4 falls with P_NZ (noise); 1 and 2 rise.
        let ms = benchmarks(&|y, x| match y {
            4 => 20e-6 - 0.01e-6 * x as f64,
            _ => 5e-6 * y as f64 + 0.1e-6 * y as f64 * x as f64,
        });
        let p = fit(&ms).unwrap();
        let kept: Vec<f64> = p.rel1.iter().map(|r| r.strips).collect();
        assert_eq!(kept, vec![1.0, 2.0]);
        assert_eq!(p.rejected.len(), 1, "{:?}", p.rejected);
        assert!(p.rejected[0].contains("I = 4"), "{:?}", p.rejected);
        assert!((p.f.eval(1.0) - 0.1e-6).abs() < 1e-12, "{:?}", p.f);
    }

    #[test]
    fn too_few_rising_strip_counts_enter_flat_instead_of_failing() {
        // Only strip count 1 rises: the other two enter Relationship-2 at slope 0 (their mean
        // time), so the fit succeeds where it used to fail, and says what it kept.
        let ms = benchmarks(&|y, x| match y {
            1 => 5e-6 + 0.1e-6 * x as f64,
            _ => 20e-6 * y as f64 - 0.01e-6 * x as f64,
        });
        let p = fit(&ms).unwrap();
        let slopes: Vec<(f64, f64)> = p.rel1.iter().map(|r| (r.strips, r.line.slope)).collect();
        assert_eq!(slopes.len(), 3, "{slopes:?}");
        assert!(slopes[0].1 > 0.0);
        assert_eq!((slopes[1].1, slopes[2].1), (0.0, 0.0), "{slopes:?}");
        let mean2 = (0..3)
            .map(|i| 40e-6 - 0.01e-6 * [4.0, 16.0, 64.0][i])
            .sum::<f64>()
            / 3.0;
        assert!((p.rel1[1].line.intercept - mean2).abs() < 1e-12);
        assert_eq!(
            p.rejected.iter().filter(|r| r.contains("kept at")).count(),
            2
        );
        assert!(p.f.slope >= 0.0 && p.is_valid());
        // Every estimate is a time no lower than the floor.
        for w in [1.0, 10.0, 100.0] {
            assert!(p.predict(w, 3000) >= 1e-6);
        }
    }

    #[test]
    fn common_grid_is_shared_by_every_strip_count() {
        let at = |y: u64| -> Vec<u64> {
            match y {
                1 => vec![4, 16, 64, 256],
                2 => vec![4, 16, 64],
                3 => vec![4, 16],
                4 => vec![4],
                _ => vec![],
            }
        };
        let (grid, used) = common_grid(&[1, 2, 3, 4], &at);
        assert_eq!(grid, vec![4, 16]);
        assert_eq!(used, vec![1, 2, 3]);
        // Disjoint grids: drop strip counts until two P_NZ values are shared.
        let at2 = |y: u64| -> Vec<u64> {
            match y {
                1 => vec![4, 16, 64],
                2 => vec![4, 16, 64],
                3 => vec![128, 256],
                _ => vec![],
            }
        };
        let (grid, used) = common_grid(&[1, 2, 3], &at2);
        assert_eq!((grid, used), (vec![4, 16, 64], vec![1, 2]));
    }
}
