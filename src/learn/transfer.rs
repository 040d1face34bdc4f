//! Cross-architecture transfer of our own model ([`super::own`]): keep what it learned about
//! matrices (the trees), refit what belongs to the device on at most 17 matrices measured on the
//! target — the same budget as 003's benchmark matrices.
//!
//! **Which matrices.** [`calibration`]: a fixed, size-stratified subset of the reference's
//! training table — its generated rows of one precision (a generator spec rebuilds them
//! anywhere, with no file: no real matrix nor Kronecker expansion) of at most
//! [`CALIBRATION_MAX_NNZ`] non-zeros, sorted by non-zeros, and the 17 at the quantiles 0, 1/16,
//! …, 1 (from a matrix of a few thousand entries, where the launch floor rules, to one far
//! beyond the L2, where the bandwidth does). Unlike 003's synthetic constant-row matrices they
//! have the features the trees read (x locality, imbalance). The cap keeps the target's
//! measurement to about a minute (`instrument --cross-from`); until session 16 the rule took any
//! row of the target's table up to 10⁸ non-zeros, which no target could rebuild without the
//! files. Their families are left out of every evaluation of the transfer.
//!
//! **What is refitted** ([`OwnModel::transfer`]):
//! 1. the device parameters — launch floor and streaming bandwidth, by a search for the pair
//!    that minimizes the mean `|ln(T̂ / T)|` over every configuration of the 17 rows with the
//!    trees held fixed ([`OwnModel::with_device`]); the L2 size from the target's name. (The
//!    corpus rule of [`super::own::fit_device`] — median fastest time of the matrices of ≤ 20,000
//!    non-zeros, 90th percentile of bytes / time of ≥ 256 MB — sees one or two of 17 matrices
//!    on each side; measured with it, H200 → H100 f64 missed the SuiteSparse files by 18 %
//!    median.)
//! 2. optionally ([`Scale::Family`]) one scalar per format family: the median over the 17 rows
//!    and the family's configurations of `ln(T_measured / T_predicted)`, added to each of its
//!    configurations' constant (`OwnConfig::base`). A per-configuration scalar would fit 30
//!    numbers on 17 matrices; a family (CSR, ELL, SELL, COO, HYB, …, cuSPARSE) shares its memory
//!    behaviour.
//! 3. on a target of fewer SMs than the reference ([`Scale::Config`], [`scale_for`]), per
//!    configuration an issue term ([`fit_issue`], `OwnConfig::issue_s`): the prediction becomes
//!    the larger of the transferred one and `floor + warp steps · issue`. Measured in session 21
//!    (offline, H100 → its 8-SM partition, the SuiteSparse files): `csr-vector` 49.8 → 3.7 %
//!    median (f32), `csr-t16` 26.1 → 9.3 %, every configuration 17.9 → 14.8 %; on the unseen
//!    generated draw measured through the product, neutral (docs/CROSS_ARCH.md). Tried and not
//!    kept: a per-configuration scalar or share of the bandwidth (both worse on the large
//!    matrices: the slowdown on few SMs follows the warp steps, not the bytes), and the issue
//!    term inside the trees' correction (which multiplied it).

use super::own::{l2_of, Device, OwnModel, Parts};
use crate::backend::KernelConfig;
use crate::corpus::table::TableRow;
use crate::evaluate::record::SourceInfo;
use crate::matrix::generate::GeneratorSpec;
use crate::Precision;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The most matrices measured on the target (003's 9 + 5 + 3).
pub const CALIBRATION: usize = 17;

/// The largest calibration matrix, non-zeros (see the module documentation).
pub const CALIBRATION_MAX_NNZ: u64 = 30_000_000;

/// Whether `spec` rebuilds its matrix without any file.
pub fn rebuildable(spec: &GeneratorSpec) -> bool {
    match spec {
        GeneratorSpec::Kronecker { .. } => false,
        GeneratorSpec::Stack { parts } => parts.iter().all(rebuildable),
        _ => true,
    }
}

/// The generator spec of a row that a target can rebuild (see [`rebuildable`]).
pub fn spec_of(row: &TableRow) -> Option<&GeneratorSpec> {
    match &row.source {
        SourceInfo::Generated(s) if rebuildable(s) => Some(s),
        _ => None,
    }
}

/// Whether the transfer also refits a scalar per format family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Device parameters only.
    None,
    /// Device parameters and one scalar per format family.
    Family,
    /// As [`Scale::Family`], then per configuration an issue term ([`fit_issue`]).
    Config,
}

/// The calibration rows of `precision` in `rows` (see the module documentation).
pub fn calibration<'a>(rows: &[&'a TableRow], precision: Precision) -> Vec<&'a TableRow> {
    let mut v: Vec<&TableRow> = rows
        .iter()
        .copied()
        .filter(|r| r.precision == precision)
        .filter(|r| r.features.nnz as u64 <= CALIBRATION_MAX_NNZ && spec_of(r).is_some())
        .collect();
    v.sort_by(|a, b| (a.features.nnz, &a.matrix).cmp(&(b.features.nnz, &b.matrix)));
    if v.len() <= CALIBRATION {
        return v;
    }
    let last = (v.len() - 1) as f64;
    let mut idx: Vec<usize> = (0..CALIBRATION)
        .map(|k| (k as f64 * last / (CALIBRATION - 1) as f64).round() as usize)
        .collect();
    idx.dedup();
    idx.into_iter().map(|i| v[i]).collect()
}

/// The format family of a configuration label (`cusparse` for every vendor algorithm).
pub fn family(label: &str) -> String {
    match KernelConfig::parse_label(label) {
        Ok(c) if c.variant.is_vendor() => "cusparse".into(),
        Ok(c) => c.variant.format().name().to_string(),
        Err(_) => label.to_string(),
    }
}

impl OwnModel {
    /// This model on the device of the calibration rows `cal` (measured on the target; see the
    /// module documentation). The trees are kept.
    pub fn transfer(&self, cal: &[&TableRow], scale: Scale) -> OwnModel {
        self.transfer_scalars(cal, scale).0
    }

    /// [`OwnModel::transfer`] and the scalar added per format family ([`family`]; none with
    /// [`Scale::None`]).
    pub fn transfer_scalars(
        &self,
        cal: &[&TableRow],
        scale: Scale,
    ) -> (OwnModel, BTreeMap<String, f64>) {
        let l2 = l2_of(cal.first().map_or("", |r| r.device.as_str()));
        let start = self.trained_on.unwrap_or(self.device);
        let mut m = self.with_device(Device {
            l2_bytes: l2,
            ..start
        });
        // (the prediction before the device, ln T measured, family, configuration) of every
        // calibration measurement.
        let pts: Vec<(Parts, f64, String, &str)> = cal
            .iter()
            .filter(|r| r.precision == self.precision)
            .flat_map(|r| {
                let m = &m;
                r.times.iter().filter_map(move |t| {
                    let s = t.time()?;
                    let p = m.parts(&r.features, &t.config).ok()?;
                    Some((p, s.ln(), family(&t.config), t.config.as_str()))
                })
            })
            .collect();
        m.device = refit_device(&start, l2, &pts);
        let mut scalars = BTreeMap::new();
        if scale != Scale::None {
            let d = m.device;
            let mut res: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
            for (p, y, fam, _) in &pts {
                let pred = p.ln_base(&d) + p.correction;
                res.entry(fam.as_str()).or_default().push(y - pred);
            }
            for (fam, v) in &mut res {
                v.sort_by(f64::total_cmp);
                if let Some(&med) = v.get(v.len() / 2) {
                    scalars.insert(fam.to_string(), med);
                }
            }
            for c in &mut m.configs {
                if let Some(&med) = scalars.get(&family(&c.config)) {
                    // Both halves of a blended correction (version 2) move by it.
                    c.base += med;
                    c.rel_base += med;
                }
            }
        }
        if scale == Scale::Config {
            // Per configuration, beside the family's scalar.
            let d = m.device;
            let mut pts_of: BTreeMap<&str, Vec<(Parts, f64)>> = BTreeMap::new();
            for (p, y, fam, label) in &pts {
                let s = scalars.get(fam).copied().unwrap_or(0.0);
                let p = Parts {
                    correction: p.correction + s,
                    ..*p
                };
                pts_of.entry(label).or_default().push((p, *y));
            }
            for c in &mut m.configs {
                if let Some(v) = pts_of.get(c.config.as_str()) {
                    c.issue_s = fit_issue(&d, v);
                }
            }
        }
        (m, scalars)
    }
}

/// Fewest calibration matrices a configuration needs for its own issue term.
const ISSUE_MIN_POINTS: usize = 8;

/// The issue term of a configuration, seconds per warp step, that minimizes
/// `Σ |y − ln T(issue)|` over its calibration points `(parts, y)` — `y` the measured `ln T`,
/// the parts' correction with the family's scalar, `T(issue)` the larger of that prediction and
/// `floor + steps · issue` ([`Parts::ln_time`]) — searched on a grid of `2^(i/4)` from 10⁻¹³ to
/// 10⁻⁶ s ([`ISSUE_RANGE`]), then refined; 0 (none) unless it lowers the mean `|ln error|` by
/// [`ISSUE_MIN_GAIN`] or more, or with fewer than [`ISSUE_MIN_POINTS`] points.
///
/// Why: the reference's model has no issue term — on 132 SMs a warp step costs far less than
/// its bytes — and one bandwidth carries every configuration to the target. On a GPU of 8 SMs
/// that fails where a kernel issues many warp steps per byte: measured on a partition of the
/// H100, the transfer predicted `csr-vector` (a warp per row) 2× too fast on short rows while
/// `csr-scalar` was within 5 %, both in one family; the term `steps · issue` binds there and
/// nowhere else (docs/CROSS_ARCH.md, session 21).
pub(super) fn fit_issue(d: &Device, pts: &[(Parts, f64)]) -> f64 {
    if pts.len() < ISSUE_MIN_POINTS {
        return 0.0;
    }
    let cost = |issue_s: f64| -> f64 {
        pts.iter()
            .map(|(p, y)| (y - Parts { issue_s, ..*p }.ln_time(d)).abs())
            .sum()
    };
    let none = cost(0.0);
    let mut best = (0.0, none);
    let consider = |best: &mut (f64, f64), v: f64| {
        let c = cost(v);
        if c < best.1 - 1e-9 {
            *best = (v, c);
        }
    };
    let mut v = ISSUE_RANGE.0;
    while v <= ISSUE_RANGE.1 {
        consider(&mut best, v);
        v *= 2f64.powf(0.25);
    }
    // Kept only where it pays beyond noise: a term that lowers the mean |ln error| by less than
    // ISSUE_MIN_GAIN fits the device refit's rounding (e.g. `csr-scalar` on exact synthetic
    // times) or a GPU's noise, not an issue limit.
    if (none - best.1) / (pts.len() as f64) < ISSUE_MIN_GAIN {
        return 0.0;
    }
    // Refined within a step of the grid's best (steps of 2^(1/32)).
    let centre = best.0;
    for i in -8..=8 {
        consider(&mut best, centre * 2f64.powf(i as f64 / 32.0));
    }
    best.0
}

/// The least fall of the mean `|ln error|` over a configuration's calibration matrices for which
/// [`fit_issue`] keeps an issue term (1 %; on 8 SMs `csr-vector`'s falls by ≈ 0.5).
const ISSUE_MIN_GAIN: f64 = 0.01;

/// Seconds per warp step [`fit_issue`] searches (10⁻¹³ to 10⁻⁶: on the whole H100 a warp step
/// costs ≈ 0.1 ns of issue, on 8 of its SMs ≈ 2 ns — `csr-vector` there takes 1.8–2.9 ns per
/// row from 10³ to 2.9·10⁶ rows).
const ISSUE_RANGE: (f64, f64) = (1e-13, 1e-6);

/// The number of SMs in a device's name (`… (sm_90, 8 SMs, 79 GiB)`); `None` where it says none
/// (a CPU).
pub fn sms_of(device: &str) -> Option<u32> {
    device
        .split(['(', ',', ')'])
        .filter_map(|t| t.trim().strip_suffix(" SMs"))
        .find_map(|n| n.trim().parse().ok())
}

/// The transfer's scale for a target of `target` from a reference of `reference` (device
/// names): [`Scale::Config`] — the issue term — where the target has fewer SMs than the
/// reference, else [`Scale::Family`]. Between two GPUs of as many SMs the issue term has nothing
/// to find and only fits noise: offline H200 → H100 it left the medians within ±1.5 points and
/// raised the mean error on the large matrices from 10.0 to 12.0 % (docs/CROSS_ARCH.md,
/// session 21).
pub fn scale_for(reference: &str, target: &str) -> Scale {
    match (sms_of(reference), sms_of(target)) {
        (Some(r), Some(t)) if t < r => Scale::Config,
        _ => Scale::Family,
    }
}

/// The floor and bandwidth that minimize the mean `|ln T̂ − ln T|` over the calibration points
/// `(bytes, correction, ln T)`, searched on a log grid of ×2^(±1) around `start` (steps of
/// 2^(1/32)) — recentred on the best while it lies on the grid's edge, up to
/// [`REFIT_MAX_OCTAVES`] octaves from `start` — then refined (steps of 2^(1/256)). With no
/// point, `start` with the new L2 size.
///
/// The recentring (session 20): a single octave stopped the bandwidth at 0.49× the full H100's
/// on green-context partitions of 8, 16 and 32 SMs alike (the grid's edge), where a DRAM-bound
/// SpMV runs several times slower; between two whole GPUs the best lies inside the first
/// octave and nothing changes.
fn refit_device(start: &Device, l2: f64, pts: &[(Parts, f64, String, &str)]) -> Device {
    let cost = |floor: f64, bw: f64| -> f64 {
        let d = Device {
            floor_s: floor,
            bandwidth: bw,
            l2_bytes: l2,
        };
        pts.iter()
            .map(|(p, y, _, _)| (p.ln_base(&d) + p.correction - y).abs())
            .sum::<f64>()
    };
    let mut best = (start.floor_s, start.bandwidth);
    if pts.is_empty() {
        return Device {
            l2_bytes: l2,
            ..*start
        };
    }
    // One octave each way around `centre`: the best point and whether it is on the edge.
    let search = |centre: (f64, f64), step: f64, span: i32| {
        let mut best = centre;
        let mut best_cost = cost(centre.0, centre.1);
        let mut edge = (false, false);
        for i in -span..=span {
            for j in -span..=span {
                let f = centre.0 * f64::powf(2.0, i as f64 * step);
                let w = centre.1 * f64::powf(2.0, j as f64 * step);
                let c = cost(f, w);
                if c < best_cost {
                    best_cost = c;
                    best = (f, w);
                    edge = (i.abs() == span, j.abs() == span);
                }
            }
        }
        (best, edge)
    };
    for _ in 0..REFIT_MAX_OCTAVES {
        let (b, edge) = search(best, 1.0 / 32.0, 32);
        best = b;
        let far = |x: f64, s: f64| (x / s).log2().abs() >= REFIT_MAX_OCTAVES as f64 - 1e-9;
        if !(edge.0 || edge.1) || far(best.0, start.floor_s) || far(best.1, start.bandwidth) {
            break;
        }
    }
    best = search(best, 1.0 / 256.0, 8).0;
    Device {
        floor_s: best.0,
        bandwidth: best.1,
        l2_bytes: l2,
    }
}

/// How far [`refit_device`] may move the floor and the bandwidth from the reference's, in
/// octaves (×2⁶ = 64 each way: a partition of 8 of 132 SMs is within it).
pub const REFIT_MAX_OCTAVES: usize = 6;

/// Neighbours of [`RatioMap::predict`].
const RATIO_NEIGHBOURS: usize = 3;

/// The target/reference time ratio of every configuration on the calibration matrices, indexed
/// by the bytes one SpMV moves ([`OwnModel`]'s count on the reference): a time measured on the
/// reference is carried to the target by the ratio of the same configuration on the calibration
/// matrices nearest in bytes (the median of the [`RATIO_NEIGHBOURS`] nearest in `ln bytes`).
///
/// Why bytes: the ratio of two GPUs of one architecture is the floor ratio for a tiny matrix,
/// about 1 while the working set fits both L2 caches, and the DRAM bandwidth ratio beyond them
/// (H200 → H100: 1.0 below 32 MB, 1.15–1.3 above); the physical base of [`OwnModel`] has one
/// bandwidth and no L2 term for the matrix, so its own ratio is flat in size (measured: 1.09 to
/// 1.17 against 1.0 to 1.3).
///
/// With [`RatioKey::Throughput`] the neighbours are nearest in the bytes per second the
/// configuration achieved on the reference instead: the two GPUs share SMs and clocks, so a run
/// far from the reference's bandwidth (launch floor, latency, a long row's chain) keeps its time
/// and a streaming one scales with the DRAM bandwidth — whatever its size.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RatioMap {
    /// Per configuration: `(key, ln(T_tar / T_ref))`.
    points: BTreeMap<String, Vec<(f64, f64)>>,
    /// What the neighbours are nearest in.
    key: RatioKey,
}

/// What [`RatioMap`] finds the nearest calibration matrices by.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RatioKey {
    /// `ln bytes` of one SpMV.
    #[default]
    Bytes,
    /// `ln(bytes / T_ref)`: the throughput achieved on the reference.
    Throughput,
}

impl RatioKey {
    fn of(self, bytes: f64, t_ref: f64) -> f64 {
        match self {
            RatioKey::Bytes => bytes.ln(),
            RatioKey::Throughput => (bytes / t_ref).ln(),
        }
    }
}

impl RatioMap {
    /// Pair the calibration rows measured on the reference (`cal_ref`) and on the target
    /// (`cal_tar`) by matrix and precision; `bytes(features, label)` counts the bytes of one
    /// SpMV on the reference (e.g. [`OwnModel::bytes_label`] of a model there).
    pub fn fit(
        bytes: impl Fn(&crate::features::Features, &str) -> Option<f64>,
        cal_ref: &[&TableRow],
        cal_tar: &[&TableRow],
        key: RatioKey,
    ) -> RatioMap {
        let mut points: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
        for r in cal_ref {
            let Some(t) = cal_tar
                .iter()
                .find(|t| t.matrix == r.matrix && t.precision == r.precision)
            else {
                continue;
            };
            for rt in &r.times {
                let (Some(a), Some(b)) = (rt.time(), t.get(&rt.config).and_then(|x| x.time()))
                else {
                    continue;
                };
                if let Some(bytes) = bytes(&r.features, &rt.config) {
                    points
                        .entry(rt.config.clone())
                        .or_default()
                        .push((key.of(bytes, a), (b / a).ln()));
                }
            }
        }
        RatioMap { points, key }
    }

    /// The target time of configuration `label` of a matrix whose SpMV moves `bytes` on the
    /// reference (the count [`RatioMap::fit`] was given), measured `t_ref` seconds there;
    /// `None` without calibration points for it.
    pub fn predict(&self, label: &str, bytes: f64, t_ref: f64) -> Option<f64> {
        let pts = self.points.get(label)?;
        let x = self.key.of(bytes, t_ref);
        let mut near: Vec<&(f64, f64)> = pts.iter().collect();
        near.sort_by(|a, b| (a.0 - x).abs().total_cmp(&(b.0 - x).abs()));
        let mut r: Vec<f64> = near.iter().take(RATIO_NEIGHBOURS).map(|p| p.1).collect();
        r.sort_by(f64::total_cmp);
        Some(t_ref * r.get(r.len() / 2)?.exp())
    }

    /// Every ratio finite.
    pub fn is_valid(&self) -> bool {
        self.points
            .values()
            .flatten()
            .all(|(k, r)| k.is_finite() && r.is_finite())
    }
}
