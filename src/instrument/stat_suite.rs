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
        self.spread.validate()
    }

    /// Lay out the benchmarks of `dist` for a device and precision, within `memory_fraction` of
    /// its memory: per kernel of [`STAT_KERNELS`], sub-strip matrices first, then mean `P_NZ` by
    /// strip count.
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
            let mut shapes: Vec<(u64, u64, u64)> = Vec::new();
            for &d in &subs {
                shapes.extend(pnzs.iter().map(|&p| ((s / d).max(1), p, 1)));
            }
            for &p in pnzs.iter() {
                shapes.extend(strips.iter().map(|&i| (s * i, p, i)));
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
        Ok(Plan { points, skipped })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }
}
