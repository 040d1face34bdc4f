//! Which benchmark matrices 003 measures on the target, chosen from the reference's suite.
//!
//! 003 fixes how many and what they vary, not their values; ours, from the whole-strip grid of
//! the reference profile (`I` strips of `S` rows each, no sub-strip matrices):
//!
//! * **CSR, 9 (§4.1.1).** `I_0` = the lower median of the measured strip counts, `I_1`/`I_2` =
//!   the fewest and the most. At `I_0` five `P_NZ`: `X_00` (the smallest), the middle of those
//!   below the threshold, the target's threshold (`N_0`), the reference's (`N_1`, the same
//!   matrix when both thresholds are equal, as on every NVIDIA GPU since 2.0 — then a second
//!   value above it takes its place), and the largest. `X_00` and the target's threshold again
//!   at `I_1` and `I_2` (the strip lines `C_2_LT`, `C_2_RT`; `M_1` and the anchors' fewest-strip
//!   times). 5 + 2 + 2 = 9. When the thresholds differ, `N_1` at `I_1` is a 10th. A grid with
//!   a single value above the threshold (the CPU's `--quick` suite) gives 4 at `I_0` (8 in all).
//! * **ELL, 5 (§4.2.1).** At `I_0` the smallest `P_NZ` (`X_1`), the lower-median one and the
//!   largest measured there; `X_1` again at the fewest and the most strips.
//! * **COO, 3 (§4.3.1).** One strip of rows, at the fewest, the median and the most non-zero
//!   strips.
//! * **HYB** reuses ELL's and COO's (§4.4.1).

use crate::backend::Variant;
use crate::instrument::{strip_size, DeviceLimits, Measurement};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fmt;

/// One benchmark matrix: kernel, whole strip count and `P_NZ`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Key {
    /// Kernel (the CSR vector kernel, ELL or COO).
    #[serde(with = "crate::instrument::measure::variant_name")]
    pub kernel: Variant,
    /// `I` (COO: strips of non-zeros).
    pub strips: u64,
    /// `P_NZ`.
    pub pnz: u64,
}

impl Key {
    /// The CSR vector kernel at `i` strips.
    pub fn csr(i: u64, pnz: u64) -> Key {
        Key {
            kernel: Variant::Csr {
                threads_per_row: 32,
            },
            strips: i,
            pnz,
        }
    }
    /// ELL at `i` strips.
    pub fn ell(i: u64, pnz: u64) -> Key {
        Key {
            kernel: Variant::Ell,
            strips: i,
            pnz,
        }
    }
    /// COO of one strip of rows, `s` strips of non-zeros.
    pub fn coo(s: u64) -> Key {
        Key {
            kernel: Variant::Coo,
            strips: s,
            pnz: s,
        }
    }
    /// Whether `m` is this benchmark on a device with `limits` (a whole-strip one: sub-strip
    /// matrices share `strips = 1`).
    pub fn matches(&self, m: &Measurement, limits: &DeviceLimits) -> bool {
        m.kernel == self.kernel
            && m.strips == self.strips
            && m.pnz == self.pnz
            && strip_size(limits, self.kernel).is_ok_and(|s| !m.is_sub_strip(s))
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} I={} P_NZ={}", self.kernel, self.strips, self.pnz)
    }
}

/// CSR's selection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CsrSel {
    /// `I_0`.
    pub i0: u64,
    /// The fewest strips `I_1`.
    pub imin: u64,
    /// `{I_1, I_0, I_2}`.
    pub strips: Vec<u64>,
    /// The five `P_NZ` at `I_0`.
    pub pnz_i0: Vec<u64>,
    /// `X_00`.
    pub x00: u64,
    /// The target's threshold.
    pub tar_thd: u64,
    /// The anchors `X_00`, target threshold, reference threshold (deduplicated).
    pub anchors: Vec<u64>,
}

/// ELL's selection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EllSel {
    /// `I_0`.
    pub i0: u64,
    /// `{I_1, I_0, I_2}`.
    pub strips: Vec<u64>,
    /// Three `P_NZ` at `I_0`.
    pub pnz_i0: Vec<u64>,
    /// `X_1`.
    pub x1: u64,
}

/// The benchmark matrices of 003.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Selection {
    /// CSR.
    pub csr: CsrSel,
    /// ELL.
    pub ell: EllSel,
    /// COO non-zero strip counts.
    pub coo: Vec<u64>,
}

/// Sorted distinct values.
fn distinct(mut v: Vec<u64>) -> Vec<u64> {
    v.sort_unstable();
    v.dedup();
    v
}

/// The lower median of a sorted list.
fn mid(v: &[u64]) -> Option<u64> {
    v.get(v.len().saturating_sub(1) / 2).copied()
}

impl Selection {
    /// Choose from the whole-strip benchmarks of `reference` (measured on a device with
    /// `ref_limits`) for a target with `tar_limits` (see the module documentation).
    pub fn choose(
        reference: &[Measurement],
        ref_limits: &DeviceLimits,
        tar_limits: &DeviceLimits,
    ) -> Result<Selection> {
        let short = |what: &str| {
            Error::Invalid(format!(
                "the reference profile's suite is too small for 003's {what} benchmarks"
            ))
        };
        let whole = |v: Variant| -> Result<Vec<&Measurement>> {
            let s = strip_size(ref_limits, v)?;
            Ok(reference
                .iter()
                .filter(|m| m.kernel == v && !m.is_sub_strip(s))
                .collect())
        };
        let csr_ms = whole(Key::csr(1, 1).kernel)?;
        let strips = distinct(csr_ms.iter().map(|m| m.strips).collect());
        let (imin, imax, i0) = match (strips.first(), strips.last(), mid(&strips)) {
            (Some(&a), Some(&b), Some(c)) if a < c && c < b => (a, b, c),
            _ => return Err(short("CSR (three strip counts)")),
        };
        let at = |ms: &[&Measurement], i: u64| -> Vec<u64> {
            distinct(ms.iter().filter(|m| m.strips == i).map(|m| m.pnz).collect())
        };
        let grid = at(&csr_ms, i0);
        let (tar_thd, ref_thd) = (
            tar_limits.max_threads_per_block,
            ref_limits.max_threads_per_block,
        );
        let x00 = *grid.first().ok_or_else(|| short("CSR"))?;
        let below: Vec<u64> = grid
            .iter()
            .copied()
            .filter(|&p| p > x00 && p < tar_thd)
            .collect();
        let above: Vec<u64> = grid.iter().copied().filter(|&p| p > ref_thd).collect();
        let mut pnz_i0 = vec![x00, tar_thd, ref_thd];
        pnz_i0.extend(mid(&below));
        pnz_i0.extend(above.last());
        if tar_thd == ref_thd {
            pnz_i0.extend(mid(&above[..above.len().saturating_sub(1)]));
        }
        let pnz_i0 = distinct(pnz_i0);
        if pnz_i0.len() < 4 || pnz_i0.iter().any(|p| !grid.contains(p)) {
            return Err(short("CSR (P_NZ on both sides of the threshold)"));
        }
        let csr = CsrSel {
            i0,
            imin,
            strips: vec![imin, i0, imax],
            pnz_i0,
            x00,
            tar_thd,
            anchors: distinct(vec![x00, tar_thd, ref_thd]),
        };
        let ell_ms = whole(Variant::Ell)?;
        let es = distinct(ell_ms.iter().map(|m| m.strips).collect());
        let (emin, emax, ei0) = match (es.first(), es.last(), mid(&es)) {
            (Some(&a), Some(&b), Some(c)) if a < c && c < b => (a, b, c),
            _ => return Err(short("ELL (three strip counts)")),
        };
        let eg = at(&ell_ms, ei0);
        if eg.len() < 3 {
            return Err(short("ELL (three P_NZ)"));
        }
        let x1 = eg[0];
        let ell = EllSel {
            i0: ei0,
            strips: vec![emin, ei0, emax],
            pnz_i0: vec![x1, mid(&eg).unwrap_or(x1), eg[eg.len() - 1]],
            x1,
        };
        let coo_ms = whole(Variant::Coo)?;
        let cs = distinct(coo_ms.iter().map(|m| m.strips).collect());
        let coo = match (cs.first(), mid(&cs), cs.last()) {
            (Some(&a), Some(b), Some(&c)) if a < b && b < c => vec![a, b, c],
            _ => return Err(short("COO (three strip counts)")),
        };
        Ok(Selection { csr, ell, coo })
    }

    /// Every selected benchmark (CSR, then ELL, then COO).
    pub fn keys(&self) -> Vec<Key> {
        let c = &self.csr;
        let mut k: Vec<Key> = c.pnz_i0.iter().map(|&p| Key::csr(c.i0, p)).collect();
        for &i in &c.strips {
            if i != c.i0 {
                k.push(Key::csr(i, c.x00));
                k.push(Key::csr(i, c.tar_thd));
            }
        }
        for &p in &c.anchors {
            if !k.contains(&Key::csr(c.imin, p)) {
                k.push(Key::csr(c.imin, p));
            }
        }
        let e = &self.ell;
        k.extend(e.pnz_i0.iter().map(|&p| Key::ell(e.i0, p)));
        k.extend(
            e.strips
                .iter()
                .filter(|&&i| i != e.i0)
                .map(|&i| Key::ell(i, e.x1)),
        );
        k.extend(self.coo.iter().map(|&s| Key::coo(s)));
        k
    }
}
