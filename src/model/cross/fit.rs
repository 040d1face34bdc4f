//! One device's side of 003's cross-architecture model: the few numbers 003 §4 reads off the
//! benchmark matrices of one GPU, fitted the same way on the reference and on the target.
//!
//! **Ambiguity — where the reference's numbers come from.** 003 takes `C_1.Ref`, `C_2.Ref`,
//! `B_0`, `C_Ref_ELL`, `E_Ref_ELL` and `C_Ref_COO` "from the parameterized baseline tool", i.e.
//! from the full analytical fit of the reference. We fit them from the *same* selected
//! benchmark matrices on the reference as on the target ([`DeviceFit::fit`] on both), so that
//! both sides of every ratio come from identical fits of identical matrices; the reference
//! profile holds every one of them (they are a subset of its suite).

use super::select::{Key, Selection};
use crate::backend::Variant;
use crate::instrument::{strip_size, DeviceLimits, Measurement};
use crate::model::fit::Line;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// CSR (003 §4.1): Relationship-1 on both sides of the threshold, the strip slopes, and the
/// times of the anchor matrices at `I_0` and at the fewest strips.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CsrFit {
    /// `S_CSR` of the device (rows per strip of the vector kernel).
    pub strip_size: u64,
    /// The device's CSR threshold (max threads per block).
    pub threshold: u64,
    /// `T = C_1·P_NZ + B_0` at `I_0` for `P_NZ ≤` threshold (`C_1_LT`, `B_0_LT`).
    pub low: Line,
    /// The same for `P_NZ ≥` threshold (`C_1_RT`, `B_0_RT`).
    pub high: Line,
    /// `C_2_LT`: seconds per strip at `P_NZ = X_00`.
    pub c2_low: f64,
    /// `C_2_RT`: seconds per strip at `P_NZ` = the target's threshold.
    pub c2_high: f64,
    /// `(P_NZ, time at I_0, time at the fewest strips)` of every anchor: `X_00`, the target's
    /// threshold (`N_0`) and the reference's (`N_1`) — `T_0.*` and `T_1*` / `T_0*` of 003.
    pub anchors: Vec<(u64, f64, f64)>,
}

/// ELL (003 §4.2): `C_ELL` per strip and `E_ELL(I)` at `P_NZ = X_1`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EllFit {
    /// `S_ELL`.
    pub strip_size: u64,
    /// `C_ELL`: Relationship-1's slope at `I_0`, **divided by `I_0`** — 003's
    /// `B = E(I) − C·X_1·I` multiplies it by the strip count, so it is read as per strip.
    pub c: f64,
    /// `X_1`, the smallest `P_NZ`.
    pub x1: u64,
    /// `E_ELL(I)`: time against strips at `P_NZ = X_1`.
    pub e: Line,
}

/// COO (003 §4.3): the slope of time against non-zero strips and the fewest strips' time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CooFit {
    /// `S_COO`.
    pub strip_size: u64,
    /// `C_COO`, seconds per strip of non-zeros.
    pub c: f64,
    /// `T_1` (`T_0` on the reference): time of the benchmark with the fewest strips.
    pub t_init: f64,
}

/// Every format's fit on one device.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceFit {
    /// CSR.
    pub csr: CsrFit,
    /// ELL.
    pub ell: EllFit,
    /// COO.
    pub coo: CooFit,
}

/// The median time of the selected benchmark `k` among `ms`.
fn time(ms: &[Measurement], k: &Key, lim: &DeviceLimits, what: &str) -> Result<f64> {
    ms.iter()
        .find(|m| k.matches(m, lim))
        .map(|m| m.median)
        .filter(|t| t.is_finite() && *t > 0.0)
        .ok_or_else(|| {
            Error::Invalid(format!(
                "{what}: no measurement of the benchmark {k} (003's selection)"
            ))
        })
}

/// A least-squares line through `(x, time)` of the keys, constrained to a non-negative slope.
fn line(
    (ms, lim): (&[Measurement], &DeviceLimits),
    keys: &[Key],
    x: impl Fn(&Key) -> f64,
    what: &str,
) -> Result<Line> {
    let (xs, ts): (Vec<f64>, Vec<f64>) = keys
        .iter()
        .map(|k| Ok((x(k), time(ms, k, lim, what)?)))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .unzip();
    Ok(Line::fit_monotone(what, &xs, &ts, 0.0)?.0)
}

impl DeviceFit {
    /// Fit from the selected benchmark measurements `ms` of a device with `limits` (`what`
    /// names the device in errors).
    pub fn fit(
        sel: &Selection,
        limits: &DeviceLimits,
        ms: &[Measurement],
        what: &str,
    ) -> Result<DeviceFit> {
        let vec = Key::csr(1, 1).kernel;
        let thd = limits.max_threads_per_block;
        let dev = (ms, limits);
        let c = &sel.csr;
        let at_i0 = |lo: u64, hi: u64| -> Vec<Key> {
            c.pnz_i0
                .iter()
                .filter(|&&p| p >= lo && p <= hi)
                .map(|&p| Key::csr(c.i0, p))
                .collect()
        };
        let low = line(
            dev,
            &at_i0(0, thd),
            |k| k.pnz as f64,
            &format!("{what} csr C1_LT"),
        )?;
        let high = line(
            dev,
            &at_i0(thd, u64::MAX),
            |k| k.pnz as f64,
            &format!("{what} csr C1_RT"),
        )?;
        let strips_line = |p: u64, w: &str| {
            let keys: Vec<Key> = c.strips.iter().map(|&i| Key::csr(i, p)).collect();
            line(dev, &keys, |k| k.strips as f64, w)
        };
        let c2_low = strips_line(c.x00, &format!("{what} csr C2_LT"))?.slope;
        let c2_high = strips_line(c.tar_thd, &format!("{what} csr C2_RT"))?.slope;
        let mut anchors = Vec::new();
        for &p in &c.anchors {
            anchors.push((
                p,
                time(ms, &Key::csr(c.i0, p), limits, what)?,
                time(ms, &Key::csr(c.imin, p), limits, what)?,
            ));
        }
        let e = &sel.ell;
        let ell_c = line(
            dev,
            &e.pnz_i0
                .iter()
                .map(|&p| Key::ell(e.i0, p))
                .collect::<Vec<_>>(),
            |k| k.pnz as f64,
            &format!("{what} ell C_ELL"),
        )?
        .slope
            / e.i0 as f64;
        let ell_e = line(
            dev,
            &e.strips
                .iter()
                .map(|&i| Key::ell(i, e.x1))
                .collect::<Vec<_>>(),
            |k| k.strips as f64,
            &format!("{what} ell E_ELL"),
        )?;
        let coo_keys: Vec<Key> = sel.coo.iter().map(|&s| Key::coo(s)).collect();
        let coo = line(
            dev,
            &coo_keys,
            |k| k.strips as f64,
            &format!("{what} coo C_COO"),
        )?;
        let first = sel.coo.iter().min().map(|&s| Key::coo(s));
        let t_init = time(ms, &first.unwrap_or(Key::coo(1)), limits, what)?;
        Ok(DeviceFit {
            csr: CsrFit {
                strip_size: strip_size(limits, vec)?,
                threshold: thd,
                low,
                high,
                c2_low,
                c2_high,
                anchors,
            },
            ell: EllFit {
                strip_size: strip_size(limits, Variant::Ell)?,
                c: ell_c,
                x1: e.x1,
                e: ell_e,
            },
            coo: CooFit {
                strip_size: strip_size(limits, Variant::Coo)?,
                c: coo.slope,
                t_init,
            },
        })
    }

    /// Whether every number is finite.
    pub fn is_valid(&self) -> bool {
        let c = &self.csr;
        c.low.is_finite()
            && c.high.is_finite()
            && c.c2_low.is_finite()
            && c.c2_high.is_finite()
            && c.anchors.iter().all(|a| a.1.is_finite() && a.2.is_finite())
            && self.ell.c.is_finite()
            && self.ell.e.is_finite()
            && self.coo.c.is_finite()
            && self.coo.t_init.is_finite()
    }
}

impl CsrFit {
    /// `(time at I_0, time at the fewest strips)` of the anchor with `P_NZ = p`.
    pub fn anchor(&self, p: u64) -> Option<(f64, f64)> {
        self.anchors.iter().find(|a| a.0 == p).map(|a| (a.1, a.2))
    }
}

impl EllFit {
    /// `B(I) = E(I) − C·X_1·I`, the initialization time at `I` strips (003 §4.2.3).
    pub fn init(&self, strips: f64) -> f64 {
        self.e.eval(strips) - self.c * self.x1 as f64 * strips
    }
}
