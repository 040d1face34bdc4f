//! The statistical models' benchmark suite (001 §3.1): which matrices with normally or
//! uniformly distributed row lengths ([`super::rowdist`]) are measured.
//!
//! * Kernels: CSR-V (`csr-t16`, 16 threads per row, `S = N_SM × half-warps/SM`), CSR-S
//!   (`csr-scalar`), ELL and JAD (`S = N_SM × threads/SM`), [`STAT_KERNELS`].
//! * `R = S × I` rows with the paper's `I = 1…10, 15…50` (CSR-V) and `1…10` (the others), and a
//!   mean row length `P_NZ` = 4, 8, 16 … 1024, 1536, 2048, 2560, 3072 (CSR-V) and 4 … 1024 (the
//!   others); square (`C = max(R, 2·P_NZ)`, as the constant-row suite).
//! * Sub-strip matrices (`S / d` rows, [`StatSuite::sub_strips`]) as in the constant-row suite
//!   (our extension, see [`super::SuiteConfig::sub_strips`]): so that the three models compared
//!   in `docs/ACCURACY.md` differ only in their row lengths.
//! * **The `small` grid** ([`StatSuite::small`]) is the one a device session measures: the
//!   paper's ends of `P_NZ`, fewer points, and for CSR-V only the benchmarks its fit uses
//!   ([`StatSuite::csrv_cross`]).
//! * **Order.** Cheapest first (fewest non-zeros), the kernels of one matrix next to each other:
//!   a session cut by its time budget loses the largest benchmarks, and a matrix built on the
//!   host serves CSR-S, ELL and JAD with one build ([`super::stat_source`]).
//! * **Scaling to the device.** The grids are the paper's; a point is left out (counted in
//!   `skipped`) where its working set with every row at the distribution's largest possible
//!   length ([`super::rowdist::RowLengths::max_bound`]) exceeds the memory fraction of the
//!   device, or its format's 32-bit offsets. On the H200 and H100 (132 SMs) every point of the
//!   paper's grid fits (the largest, ELL with 2,703,360 rows of mean 1,024 and at most 1,216
//!   entries, is 3.3 × 10⁹ slots, 39 GB in f64; the test
//!   `papers_grid_fits_the_h200_and_h100` checks the plan).

use super::rowdist::{RowDist, RowLengths, Spread};
use super::suite::{admitted, working_set_bytes, Plan};
use super::{strip_size, BenchmarkPoint, DeviceLimits};
use crate::backend::Variant;
use crate::{Error, Precision, Result};
use serde::{Deserialize, Serialize};

/// The kernels of the statistical models, in order: CSR-V, CSR-S, ELL, JAD.
pub const STAT_KERNELS: [Variant; 4] = [
    Variant::Csr {
        threads_per_row: 16,
    },
    Variant::Csr { threads_per_row: 1 },
    Variant::Ell,
    Variant::Jad,
];

/// Which benchmark matrices the statistical models are fitted to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatSuite {
    /// The distributions, one model each.
    pub distributions: Vec<RowDist>,
    /// The standard deviation of the row lengths.
    pub spread: Spread,
    /// Strip counts `I` for CSR-V.
    pub csrv_strips: Vec<u64>,
    /// Strip counts `I` for CSR-S, ELL and JAD.
    pub strips: Vec<u64>,
    /// Mean row lengths for CSR-V.
    pub csrv_pnz: Vec<u64>,
    /// Mean row lengths for CSR-S, ELL and JAD.
    pub pnz: Vec<u64>,
    /// Sub-strip divisors (see the module documentation).
    #[serde(default)]
    pub sub_strips: Vec<u64>,
    /// CSR-V measured only where its fit looks (001 §3.2.1): `T(P_NZ)` at this one strip count
    /// over [`StatSuite::csrv_pnz`], `E(I)` over [`StatSuite::csrv_strips`] (and the sub-strips)
    /// at the smallest `P_NZ` and the smallest `P_NZ ≥` the device's max threads per block —
    /// instead of the full cross product, of which the fit uses that one row and two columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csrv_cross: Option<u64>,
}

impl Default for StatSuite {
    /// The paper's grids, both distributions, `σ = √P_NZ`, the constant-row suite's sub-strips.
    fn default() -> Self {
        let pow2 = |hi: u32| (2..=hi).map(|e| 1u64 << e).collect::<Vec<_>>();
        StatSuite {
            distributions: RowDist::ALL.to_vec(),
            spread: Spread::default(),
            csrv_strips: (1..=10).chain((3..=10).map(|i| 5 * i)).collect(),
            strips: (1..=10).collect(),
            csrv_pnz: pow2(10)
                .into_iter()
                .chain([1536, 2048, 2560, 3072])
                .collect(),
            pnz: pow2(10),
            sub_strips: vec![64, 16, 4],
            csrv_cross: None,
        }
    }
}

impl StatSuite {
    /// The paper's grids thinned for a device session (about a quarter of the paper's non-zeros,
    /// see `docs/ACCURACY.md`): `I` = 1, 2, 4, 7, 10 (CSR-V also 20, 35, 50) and `P_NZ` = 4, 16,
    /// 64, 256, 1024 (CSR-V also 2048, 3072: both sides of the threshold), the same ends as the
    /// paper's.
    pub fn reduced() -> Self {
        StatSuite {
            csrv_strips: vec![1, 2, 4, 7, 10, 20, 35, 50],
            strips: vec![1, 2, 4, 7, 10],
            csrv_pnz: vec![4, 16, 64, 256, 1024, 2048, 3072],
            pnz: vec![4, 16, 64, 256, 1024],
            ..StatSuite::default()
        }
    }

    /// The grid of one GPU session (see `docs/ACCURACY.md` and `scripts/device_statistical.sh`
    /// for its estimated cost). Each fitted relationship is a line, which two points determine;
    /// every line gets three or more, with the paper's ends of `P_NZ`:
    /// * CSR-V (cross layout, [`StatSuite::csrv_cross`]): `T(P_NZ)` at `I = 10` over `P_NZ` = 4,
    ///   16, 64, 256, 1024 (low piece, 5 points) and 1024, 2048, 3072 (high piece, 3); `E(I)` at
    ///   `P_NZ` = 4 and 1024 over `I` = 1, 2, 5, 10, 20, 35, 50 — the paper's ends — and the
    ///   three sub-strips (10 points per line).
    /// * CSR-S, ELL, JAD: `P_NZ` = 4, 64, 256, 1024 (4 points per `T(P_NZ)` line) at `I` = 1, 2, 3
    ///   and the three sub-strips (6 points for `f(I)` and `e(I)`). The paper's `I` = 4…10 are
    ///   left out: up to 2.7 million rows of up to 1,024 entries, each built on the host, would
    ///   take most of a session. On 132 SMs a strip is 270,336 rows: every real matrix of the
    ///   corpus is smaller than one (the largest has 126,146 rows), so it falls among the
    ///   sub-strip benchmarks, and a third of the large generated ones exceed three strips,
    ///   where the lines extrapolate, as the paper's do beyond its `I`.
    pub fn small() -> Self {
        StatSuite {
            csrv_strips: vec![1, 2, 5, 10, 20, 35, 50],
            strips: vec![1, 2, 3],
            csrv_pnz: vec![4, 16, 64, 256, 1024, 2048, 3072],
            pnz: vec![4, 64, 256, 1024],
            csrv_cross: Some(10),
            ..StatSuite::default()
        }
    }

    /// A tiny suite for tests and CI: three strip counts, both sides of the CSR-V threshold.
    pub fn quick() -> Self {
        StatSuite {
            csrv_strips: vec![1, 2, 3],
            strips: vec![1, 2, 3],
            csrv_pnz: vec![4, 64, 1024, 2048],
            pnz: vec![4, 16, 64],
            sub_strips: Vec::new(),
            ..StatSuite::default()
        }
    }

    /// Check the lists (positive, strictly increasing), the distributions and the spread.
    pub fn validate(&self) -> Result<()> {
        let lists: [(&str, &[u64]); 4] = [
            ("csrv_strips", &self.csrv_strips),
            ("strips", &self.strips),
            ("csrv_pnz", &self.csrv_pnz),
            ("pnz", &self.pnz),
        ];
        for (name, l) in lists {
            if l.len() < 2 || l.contains(&0) || !l.windows(2).all(|w| w[0] < w[1]) {
                return Err(Error::Invalid(format!(
                    "statistical suite {name}: need two or more values ≥ 1, strictly \
                     increasing, got {l:?}"
                )));
            }
        }
        if self.sub_strips.iter().any(|&d| d < 2) {
            return Err(Error::Invalid(format!(
                "statistical suite sub_strips: each divisor must be ≥ 2, got {:?}",
                self.sub_strips
            )));
        }
        let d = &self.distributions;
        if (1..d.len()).any(|i| d[..i].contains(&d[i])) {
            return Err(Error::Invalid(format!(
                "statistical suite: distribution listed twice in {d:?}"
            )));
        }
        if let Some(i) = self.csrv_cross {
            if !self.csrv_strips.contains(&i) {
                return Err(Error::Invalid(format!(
                    "statistical suite csrv_cross: strip count {i} is not one of csrv_strips {:?}",
                    self.csrv_strips
                )));
            }
        }
        self.spread.validate()
    }

    /// Lay out the benchmarks of `dist` for a device and precision, within `memory_fraction` of
    /// its memory, cheapest first (see the module documentation).
    pub fn plan(
        &self,
        limits: &DeviceLimits,
        dist: RowDist,
        precision: Precision,
        memory_fraction: f64,
    ) -> Result<Plan> {
        limits.validate()?;
        self.validate()?;
        let lengths = RowLengths {
            dist,
            spread: self.spread,
        };
        let val = precision.bytes() as u64;
        let budget = (limits.global_mem_bytes as f64 * memory_fraction) as u64;
        let mut points = Vec::new();
        let mut skipped = 0;
        for variant in STAT_KERNELS {
            let s = strip_size(limits, variant)?;
            let (pnzs, strips) = match variant {
                Variant::Csr {
                    threads_per_row: 16,
                } => (&self.csrv_pnz, &self.csrv_strips),
                _ => (&self.pnz, &self.strips),
            };
            let mut subs = self.sub_strips.clone();
            subs.sort_unstable_by(|a, b| b.cmp(a));
            let cross = match (variant, self.csrv_cross) {
                (STAT_KERNELS_CSRV, Some(i)) => Some(i),
                _ => None,
            };
            // The P_NZ of the strip-count lines: all, or in the cross layout E(I)'s two.
            let threshold = limits.max_threads_per_block;
            let lines: Vec<u64> = match cross {
                None => pnzs.clone(),
                Some(_) => [pnzs.first(), pnzs.iter().find(|&&p| p >= threshold)]
                    .into_iter()
                    .flatten()
                    .copied()
                    .collect(),
            };
            let mut shapes: Vec<(u64, u64, u64)> = Vec::new();
            for &d in &subs {
                shapes.extend(lines.iter().map(|&p| ((s / d).max(1), p, 1)));
            }
            for &p in pnzs.iter() {
                for &i in strips.iter() {
                    if cross.is_none() || cross == Some(i) || lines.contains(&p) {
                        shapes.push((s * i, p, i));
                    }
                }
            }
            for (rows, pnz, i) in shapes {
                let cols = rows.max(2 * pnz);
                let widest = lengths.max_bound(pnz, cols);
                let fits = working_set_bytes(variant, rows, cols, widest, val) <= budget
                    && admitted(variant, rows, cols, widest, val)
                    && cols <= u32::MAX as u64;
                if !fits {
                    skipped += 1;
                    continue;
                }
                points.push(BenchmarkPoint {
                    variant,
                    rows,
                    cols,
                    pnz,
                    strips: i,
                });
            }
        }
        // Cheapest first; the kernels of one matrix next to each other, in STAT_KERNELS order.
        let order = |v: Variant| STAT_KERNELS.iter().position(|&k| k == v);
        points.sort_by_key(|p| (p.rows * p.pnz, p.rows, p.pnz, order(p.variant)));
        Ok(Plan { points, skipped })
    }
}

/// CSR-V, the first of [`STAT_KERNELS`].
const STAT_KERNELS_CSRV: Variant = Variant::Csr {
    threads_per_row: 16,
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::instrument::Statistic;

    #[test]
    fn papers_grids() {
        let s = StatSuite::default();
        s.validate().unwrap();
        assert_eq!(s.csrv_strips.len(), 18);
        assert_eq!(s.csrv_strips[10..], [15, 20, 25, 30, 35, 40, 45, 50]);
        assert_eq!(s.csrv_pnz.first(), Some(&4));
        assert_eq!(s.csrv_pnz.last(), Some(&3072));
        assert_eq!(s.csrv_pnz.len(), 13);
        assert_eq!(s.pnz.last(), Some(&1024));
        assert_eq!(s.pnz.len(), 9);
    }

    #[test]
    fn plan_on_the_c2050_uses_001_strip_sizes() {
        let d = DeviceLimits::tesla_c2050();
        let s = StatSuite {
            sub_strips: Vec::new(),
            ..StatSuite::default()
        };
        let p = s.plan(&d, RowDist::Normal, Precision::F32, 0.9).unwrap();
        let of = |v: Variant| p.points.iter().filter(move |q| q.variant == v);
        // CSR-V: 14 SMs × 96 half-warps = 1,344 rows per strip.
        assert!(of(STAT_KERNELS[0]).all(|q| q.rows == 1344 * q.strips));
        assert!(of(Variant::Jad).all(|q| q.rows == 21_504 * q.strips));
        assert_eq!(of(Variant::Csr { threads_per_row: 1 }).count(), 9 * 10);
        assert_eq!((of(STAT_KERNELS[0]).count(), p.skipped), (13 * 18, 0));
        // A third of its 3 GB: the widest matrices are left out, the rest fit.
        let p = s.plan(&d, RowDist::Normal, Precision::F64, 0.3).unwrap();
        assert!(p.skipped > 0 && p.points.len() + p.skipped == 13 * 18 + 3 * 9 * 10);
        let budget = (0.3 * (3u64 << 30) as f64) as u64;
        assert!(p.points.iter().all(|q| {
            let widest = (q.pnz as f64 + 6.0 * (q.pnz as f64).sqrt()).ceil() as u64;
            working_set_bytes(q.variant, q.rows, q.cols, widest, 8) <= budget
        }));
    }

    #[test]
    fn papers_grid_fits_the_h200_and_h100() {
        for mem in [150109880320, 85017493504] {
            let d = DeviceLimits {
                name: "132-SM GPU".into(),
                n_sm: 132,
                warps_per_sm: 64,
                threads_per_sm: 2048,
                max_threads_per_block: 1024,
                warp_size: 32,
                global_mem_bytes: mem,
            };
            for (suite, n) in [(StatSuite::default(), 624), (StatSuite::reduced(), 197)] {
                for dist in RowDist::ALL {
                    for prec in [Precision::F32, Precision::F64] {
                        let p = suite.plan(&d, dist, prec, 0.9).unwrap();
                        assert_eq!((p.points.len(), p.skipped), (n, 0), "{mem} {dist:?} {prec}");
                    }
                }
            }
        }
    }

    #[test]
    fn small_grid_measures_what_the_fits_use_cheapest_first() {
        let d = DeviceLimits {
            name: "132-SM GPU".into(),
            n_sm: 132,
            warps_per_sm: 64,
            threads_per_sm: 2048,
            max_threads_per_block: 1024,
            warp_size: 32,
            global_mem_bytes: 85017493504,
        };
        let s = StatSuite::small();
        s.validate().unwrap();
        let p = s.plan(&d, RowDist::Normal, Precision::F64, 0.9).unwrap();
        let csrv: Vec<_> = p
            .points
            .iter()
            .filter(|q| q.variant == STAT_KERNELS[0])
            .collect();
        // T(P_NZ) at I = 10 (7), E(I) at 4 and 1024 (2 × 7, two of them on that row), sub-strips.
        assert_eq!(csrv.len(), 7 + 2 * 7 - 2 + 3 * 2);
        assert!(csrv
            .iter()
            .all(|q| q.strips == 10 || [4, 1024].contains(&q.pnz)));
        assert_eq!(csrv.iter().filter(|q| q.strips == 10).count(), 7);
        for v in &STAT_KERNELS[1..] {
            assert_eq!(p.points.iter().filter(|q| q.variant == *v).count(), 6 * 4);
        }
        assert_eq!(p.skipped, 0);
        assert!(p.points.windows(2).all(|w| w[0].nnz() <= w[1].nnz()));
        // The three ELL-form kernels of one matrix are adjacent.
        let i = p
            .points
            .iter()
            .position(|q| q.variant == STAT_KERNELS[1])
            .unwrap();
        let same = |q: &BenchmarkPoint| (q.rows, q.pnz) == (p.points[i].rows, p.points[i].pnz);
        assert!(p.points[i..i + 3].iter().all(same));
        // The fits find their points: a model fitted to times linear in the work.
        let ms: Vec<_> = p
            .points
            .iter()
            .map(|q| {
                let t = 1e-6
                    + 1e-12
                        * (q.nnz() as f64)
                        * if q.variant == STAT_KERNELS[1] {
                            4.0
                        } else {
                            1.0
                        };
                crate::instrument::Measurement {
                    kernel: q.variant,
                    rows: q.rows,
                    cols: q.cols,
                    pnz: q.pnz,
                    strips: q.strips,
                    warm_mean: t,
                    median: t,
                    samples: vec![t; 3],
                }
            })
            .collect();
        let m = crate::model::StatisticalModel::fit(
            Precision::F64,
            &d,
            Statistic::WarmMean,
            RowDist::Normal,
            Spread::Sqrt,
            ms,
        )
        .unwrap();
        assert_eq!(m.csr_v.fixed_strips, 10);
        assert_eq!(m.csr_v.rel2_high.as_ref().map(|l| l.pnz), Some(1024));
        assert_eq!(m.ell.rel1.len(), 6);
    }

    #[test]
    fn invalid_suites_are_rejected() {
        let mut s = StatSuite::quick();
        s.pnz = vec![4];
        assert!(s.validate().is_err());
        let mut s = StatSuite::quick();
        s.distributions = vec![RowDist::Normal, RowDist::Normal];
        assert!(s.validate().is_err());
        let mut s = StatSuite::quick();
        s.spread = Spread::Relative { cv: -1.0 };
        assert!(s.validate().is_err());
        let mut s = StatSuite::small();
        s.csrv_cross = Some(3);
        assert!(s.validate().is_err());
    }
}
