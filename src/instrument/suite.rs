//! The benchmark suite (004 §3.2.2): which benchmark matrices are measured.
//!
//! A benchmark matrix is fixed by its kernel, its strip count `I` and its `P_NZ`:
//!
//! * CSR and ELL: `R = S × I` rows for every `I` in [`SuiteConfig::strips`] (papers: 1…10) and
//!   every `P_NZ` of the kernel's grid — the full cross product, although the CSR model uses only
//!   one row and two columns of it (see [`crate::model::analytical::csr`]); the rest is kept as
//!   evidence in the profile.
//! * COO: one strip of rows, `R = S_COO`, and `P_NZ` = 1 … 9, 10, 20, … 100, so that the strip count
//!   *in non-zeros* `R·P_NZ / S_COO = P_NZ` grows instead.
//! * Columns: `C = max(R, 2·P_NZ)` — square like most real matrices, and always `C > P_NZ` as the
//!   papers require (every column band of the synthetic layout then has ≥ 2 choices).
//!
//! Each matrix must fit the papers' global-memory bound (004 §3.2.1), which we apply to the
//! whole working set rather than to the matrix alone: format arrays with 32-bit indices + `x` +
//! `y` ≤ [`SuiteConfig::memory_fraction`] × `G_M`. The formats store 32-bit offsets and refuse
//! more than `u32::MAX` stored entries, so a benchmark must be one its format admits
//! ([`crate::formats::FormatKind::admit`], without the host's byte limit). Points outside either
//! bound are skipped (and counted).

use super::{strip_size, DeviceLimits};
use crate::backend::Variant;
use crate::formats::{FormatParams, Summary};
use crate::{Error, Precision, Result};
use serde::{Deserialize, Serialize};

/// Which benchmark matrices to measure.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SuiteConfig {
    /// Strip counts `I` for CSR and ELL (papers: 1…10).
    pub strips: Vec<u64>,
    /// `P_NZ` grid for CSR. Papers: "4, 16 … 1024, 2048 …", read as powers of 4 up to the
    /// threshold 1,024 and powers of 2 beyond it, so both sides of the threshold have ≥ 4 points.
    pub csr_pnz: Vec<u64>,
    /// `P_NZ` grid for ELL (same reading as CSR).
    pub ell_pnz: Vec<u64>,
    /// `P_NZ` grid for COO (papers: 10, 20, … 100; we add 1 … 9, so that the one to nine
    /// non-zero strips of most real matrices on a large GPU are measured, not extrapolated).
    pub coo_pnz: Vec<u64>,
    /// CSR thread mappings to instrument (threads per row); the papers' vector kernel is 32.
    pub csr_threads: Vec<u32>,
    /// Fraction of global memory a benchmark's working set may use.
    pub memory_fraction: f64,
    /// Sub-strip benchmarks: for every divisor `d`, a matrix of `S / d` rows (CSR, ELL, at every
    /// `P_NZ` of the grid) and of `S_COO / d` non-zeros (COO, one per row), at the fractional
    /// strip count `1 / d` ([`super::strip_count`]). On a large GPU most real matrices are a
    /// fraction of one ELL or COO strip (S_ELL = 270,336 rows on an H200); these put them inside
    /// the fitted range instead of below it. Empty in profiles measured before schema 2.
    #[serde(default)]
    pub sub_strips: Vec<u64>,
    /// The statistical models' suite (001, [`super::stat_suite`]); `None` in profiles measured
    /// before them, or when they were not asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statistical: Option<super::StatSuite>,
}

impl Default for SuiteConfig {
    /// The papers' suite.
    fn default() -> Self {
        SuiteConfig {
            strips: (1..=10).collect(),
            csr_pnz: vec![4, 16, 64, 256, 1024, 2048, 4096, 8192],
            ell_pnz: vec![4, 16, 64, 256, 1024, 2048, 4096, 8192],
            coo_pnz: (1..10).chain((1..=10).map(|i| 10 * i)).collect(),
            csr_threads: vec![32],
            memory_fraction: 0.9,
            sub_strips: vec![64, 16, 4],
            statistical: Some(super::StatSuite::default()),
        }
    }
}

impl SuiteConfig {
    /// A tiny suite for tests and CI: three strip counts, both sides of the CSR threshold.
    pub fn quick() -> Self {
        SuiteConfig {
            strips: vec![1, 2, 3],
            csr_pnz: vec![4, 64, 1024, 2048],
            ell_pnz: vec![4, 16, 64],
            coo_pnz: vec![10, 20, 30],
            csr_threads: vec![32],
            memory_fraction: 0.9,
            sub_strips: Vec::new(),
            statistical: Some(super::StatSuite::quick()),
        }
    }

    /// Check the lists: non-empty where a model needs them, positive, strictly increasing.
    pub fn validate(&self) -> Result<()> {
        let lists: [(&str, &[u64]); 4] = [
            ("strips", &self.strips),
            ("csr_pnz", &self.csr_pnz),
            ("ell_pnz", &self.ell_pnz),
            ("coo_pnz", &self.coo_pnz),
        ];
        for (name, l) in lists {
            if l.contains(&0) {
                return Err(Error::Invalid(format!("suite {name}: values must be ≥ 1")));
            }
            if !l.windows(2).all(|w| w[0] < w[1]) {
                return Err(Error::Invalid(format!(
                    "suite {name}: values must be strictly increasing, got {l:?}"
                )));
            }
        }
        if self
            .csr_threads
            .iter()
            .any(|t| !t.is_power_of_two() || *t > 32)
        {
            return Err(Error::Invalid(format!(
                "suite csr_threads: each must be 1, 2, 4, 8, 16 or 32, got {:?}",
                self.csr_threads
            )));
        }
        if self.sub_strips.iter().any(|&d| d < 2) {
            return Err(Error::Invalid(format!(
                "suite sub_strips: each divisor must be ≥ 2, got {:?}",
                self.sub_strips
            )));
        }
        if let Some(st) = &self.statistical {
            st.validate()?;
        }
        if !(self.memory_fraction > 0.0 && self.memory_fraction <= 1.0) {
            return Err(Error::Invalid(format!(
                "suite memory_fraction must be in (0, 1], got {}",
                self.memory_fraction
            )));
        }
        Ok(())
    }

    /// The kernels this suite instruments, in order: the CSR mappings, ELL, COO.
    pub fn variants(&self) -> Vec<Variant> {
        let mut v: Vec<Variant> = self
            .csr_threads
            .iter()
            .map(|&t| Variant::Csr { threads_per_row: t })
            .collect();
        v.extend([Variant::Ell, Variant::Coo]);
        v
    }
}

/// One benchmark matrix and the kernel to time on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchmarkPoint {
    /// Kernel.
    pub variant: Variant,
    /// `R`.
    pub rows: u64,
    /// `C`.
    pub cols: u64,
    /// `P_NZ`.
    pub pnz: u64,
    /// Strip count: `I` for CSR/ELL, `R·P_NZ / S_COO` for COO.
    pub strips: u64,
}

impl BenchmarkPoint {
    /// Non-zeros `R × P_NZ`.
    pub fn nnz(&self) -> u64 {
        self.rows * self.pnz
    }
}

/// The planned suite: points to measure, and how many were skipped by the memory bounds.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Points in measuring order (kernel, then `P_NZ`, then strips).
    pub points: Vec<BenchmarkPoint>,
    /// Points left out because they exceed the global-memory or 32-bit bound.
    pub skipped: usize,
}

/// Bytes of a benchmark's working set on the device: the format's arrays (its footprint,
/// [`crate::formats::FormatKind::footprint`], with the default parameters: ELL's width is `pnz`)
/// plus `x` and `y`; saturating.
pub fn working_set_bytes(variant: Variant, rows: u64, cols: u64, pnz: u64, val: u64) -> u64 {
    Summary::constant(rows, cols, pnz)
        .working_set(variant.format(), &FormatParams::default(), val)
        .unwrap_or(u64::MAX)
}

/// Whether the format of `variant` holds the benchmark matrix (its 32-bit offsets; no byte
/// limit: the memory bound is the device's, above).
pub(super) fn admitted(variant: Variant, rows: u64, cols: u64, pnz: u64, val: u64) -> bool {
    let unlimited = FormatParams {
        max_bytes: u64::MAX,
        ..FormatParams::default()
    };
    let s = Summary::constant(rows, cols, pnz);
    variant.format().admit(&s, &unlimited, val).is_ok()
}

/// Lay out the suite for a device and precision.
pub fn plan(limits: &DeviceLimits, suite: &SuiteConfig, precision: Precision) -> Result<Plan> {
    limits.validate()?;
    suite.validate()?;
    let val = precision.bytes() as u64;
    let budget = (limits.global_mem_bytes as f64 * suite.memory_fraction) as u64;
    let mut points = Vec::new();
    let mut skipped = 0;
    for variant in suite.variants() {
        let s = strip_size(limits, variant)?;
        let (grid, strip_list): (&[u64], Vec<u64>) = match variant {
            Variant::Coo => (&suite.coo_pnz, vec![1]),
            Variant::Ell => (&suite.ell_pnz, suite.strips.clone()),
            _ => (&suite.csr_pnz, suite.strips.clone()),
        };
        // Sub-strip matrices first (rows = S / d; COO: S_COO / d rows of one entry).
        let mut subs = suite.sub_strips.clone();
        subs.sort_unstable_by(|a, b| b.cmp(a));
        for &d in &subs {
            let rows = (s / d).max(1);
            let pnzs: Vec<u64> = match variant {
                Variant::Coo => vec![1],
                _ => grid.to_vec(),
            };
            for pnz in pnzs {
                let cols = rows.max(2 * pnz);
                if working_set_bytes(variant, rows, cols, pnz, val) > budget
                    || rows * pnz >= s && variant == Variant::Coo
                {
                    skipped += 1;
                    continue;
                }
                points.push(BenchmarkPoint {
                    variant,
                    rows,
                    cols,
                    pnz,
                    strips: 1,
                });
            }
        }
        for &pnz in grid {
            for &i in &strip_list {
                let rows = s * i;
                let cols = rows.max(2 * pnz);
                let fits = working_set_bytes(variant, rows, cols, pnz, val) <= budget
                    && admitted(variant, rows, cols, pnz, val)
                    && cols <= u32::MAX as u64;
                if !fits {
                    skipped += 1;
                    continue;
                }
                let strips = match variant {
                    Variant::Coo => rows * pnz / s,
                    _ => i,
                };
                points.push(BenchmarkPoint {
                    variant,
                    rows,
                    cols,
                    pnz,
                    strips,
                });
            }
        }
    }
    Ok(Plan { points, skipped })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn papers_suite_on_c2050() {
        let d = DeviceLimits::tesla_c2050();
        let papers = SuiteConfig {
            sub_strips: Vec::new(),
            ..SuiteConfig::default()
        };
        let p = plan(&d, &papers, Precision::F32).unwrap();
        let csr: Vec<_> = p
            .points
            .iter()
            .filter(|q| matches!(q.variant, Variant::Csr { .. }))
            .collect();
        // R = 672 × I, and every row length of the grid where it fits 2.7 GB.
        assert!(csr
            .iter()
            .all(|q| q.rows == 672 * q.strips && q.cols > q.pnz));
        assert_eq!(csr.len(), 8 * 10);
        let coo: Vec<_> = p
            .points
            .iter()
            .filter(|q| q.variant == Variant::Coo)
            .collect();
        assert_eq!(coo.len(), 19);
        assert!(coo.iter().all(|q| q.rows == 21_504 && q.strips == q.pnz));
        // ELL at P_NZ = 8192 with 10 strips: 215,040 × 8192 × 8 B = 14 GB > 3 GB: skipped.
        assert!(p.skipped > 0);
        assert!(p
            .points
            .iter()
            .all(|q| working_set_bytes(q.variant, q.rows, q.cols, q.pnz, 4)
                <= (0.9 * (3u64 << 30) as f64) as u64));
    }

    #[test]
    fn sub_strip_benchmarks_come_first_at_one_strip() {
        let d = DeviceLimits::tesla_c2050();
        let p = plan(&d, &SuiteConfig::default(), Precision::F32).unwrap();
        let csr: Vec<_> = p
            .points
            .iter()
            .filter(|q| q.variant.name() == "csr-vector")
            .collect();
        // 672 / 64, / 16, / 4 rows at every P_NZ, then the papers' grid.
        assert_eq!(csr.len(), 3 * 8 + 8 * 10);
        assert_eq!((csr[0].rows, csr[0].strips), (10, 1));
        assert!(csr[..24].iter().all(|q| q.rows < 672 && q.strips == 1));
        // COO: 21,504 / d rows of one entry: fewer non-zeros than one strip.
        let coo: Vec<_> = p
            .points
            .iter()
            .filter(|q| q.variant == Variant::Coo)
            .collect();
        assert_eq!(coo.len(), 3 + 19);
        assert_eq!((coo[0].rows, coo[0].pnz), (336, 1));
    }

    #[test]
    fn invalid_suites_are_rejected() {
        let mut s = SuiteConfig::quick();
        s.strips = vec![2, 1];
        assert!(s.validate().is_err());
        let mut s = SuiteConfig::quick();
        s.csr_pnz = vec![0, 4];
        assert!(s.validate().is_err());
        let mut s = SuiteConfig::quick();
        s.csr_threads = vec![3];
        assert!(s.validate().is_err());
        let mut s = SuiteConfig::quick();
        s.memory_fraction = 0.0;
        assert!(s.validate().is_err());
    }
}
