//! Offline cross-architecture evaluation (issue 15): two training tables of the same matrices
//! measured on a reference and on a target GPU, and the two devices' profiles (their benchmark
//! measurements). For every matrix measured on both, predict the target's time and compare it
//! with the target's measurement, with:
//!
//! * `003` — [`CrossModel`] fitted on the selected benchmark matrices of both profiles, applied
//!   to the time *measured* on the reference (CSR mappings, ELL, COO, HYB);
//! * `same` — the reference's time unchanged (what a user assumes without a model);
//! * `ours-ref` — the reference's measured time × the same configuration's target/reference
//!   ratio on the calibration matrices nearest in bytes ([`RatioMap`]);
//! * `ours-ratio` — the reference's measured time × our model's target/reference ratio:
//!   `T_Ref · M_Tar(f) / M_Ref(f)`, `M_Ref` our model trained on the reference table and `M_Tar`
//!   the same transferred to the target ([`OwnModel::transfer`]), both refitted on the
//!   calibration matrices (each on its own device's measurements);
//! * `ours-tput` — as `ours-ref`, the neighbours nearest in the throughput the configuration
//!   achieved on the reference (bytes / `T_Ref`, [`RatioKey::Throughput`]);
//! * `ours-mix` — the geometric mean of `ours-tput` and `ours-ratio` (what `predict
//!   --measured-on` predicted until session 33);
//! * `ours-bw` — the bandwidth transfer ([`crate::learn::cross_bw`]): the reference's measured
//!   time with its DRAM seconds re-timed at the target's bandwidth and L2 size (both profiles'
//!   bounds), of which it keeps [`crate::learn::cross_bw::EXPOSED_SHARE`] of the change;
//! * `ours-measured` — `ours-bw` for a streaming kernel, the geometric mean of `ours-bw` and
//!   `ours-mix` for the others: what `predict --measured-on` predicts with a profile of
//!   `instrument --cross-from` ([`OwnModel::from_measured`]; `ours-ratio`, `ours-tput`,
//!   `ours-bw` and `ours` come from the same transferred model, [`OwnModel::cross_fit`]);
//! * `ours` — `M_Tar(f)` alone: no time of the matrix on either device.
//!
//! Held out: our model is trained per family-grouped fold ([`fold_of`], as
//! [`crate::learn::cv`]) on the reference rows of the other folds, so no evaluated matrix (nor
//! its family) was trained on; the 17 calibration matrices ([`calibration`], chosen on the
//! reference among the matrices measured on both) and their families are left out of every
//! method's figures.

use crate::backend::KernelConfig;
use crate::corpus::table::TableRow;
use crate::learn::cross_bw::MemoryPair;
use crate::learn::dataset::fold_of;
use crate::learn::own::{fit_with, OwnModel};
use crate::learn::transfer::{calibration, RatioKey, RatioMap, Scale};
use crate::model::cross::Selection;
use crate::model::{CrossModel, Shape};
use crate::profile::Profile;
use crate::{Precision, Result};
use std::collections::{BTreeMap, HashMap, HashSet};

/// The configurations 003's method covers, as reported.
pub const CROSS_CONFIGS: [&str; 9] = [
    "csr-scalar",
    "csr-t2",
    "csr-t4",
    "csr-t8",
    "csr-t16",
    "csr-vector",
    "ell",
    "coo",
    "hyb",
];

/// The methods, in report order.
pub const METHODS: [&str; 10] = [
    "003",
    "same",
    "ours-ref",
    "ours-ratio",
    "ours-tput",
    "ours-mix",
    "ours-bw",
    "ours-measured",
    "ours",
    "ours-dev",
];

/// One prediction of one matrix × configuration.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Point {
    /// Precision.
    pub precision: Precision,
    /// `files` (SuiteSparse) or `large` (generated, ≥ 10⁶ non-zeros); other rows are not kept.
    pub set: &'static str,
    /// The configuration's label.
    pub config: String,
    /// The matrix id.
    pub matrix: String,
    /// Bytes of the format's arrays on the reference (the table's footprint).
    pub footprint: Option<u64>,
    /// The measured reference time.
    pub reference: f64,
    /// The measured target time.
    pub measured: f64,
    /// Predicted target time per method.
    pub predicted: BTreeMap<&'static str, f64>,
    /// Relative one-sigma of `ours` and `ours-mix` as the transferred model states it, and
    /// (`native`) the sigma the reference's model gives without the transfer's share.
    pub sigma: BTreeMap<&'static str, f64>,
}

/// What one direction produced.
pub struct Outcome {
    /// Reference and target device names.
    pub devices: (String, String),
    /// Every prediction.
    pub points: Vec<Point>,
    /// Calibration matrices per precision.
    pub calibration: Vec<(Precision, Vec<String>)>,
    /// 003's benchmark matrices measured on the target.
    pub benchmarks: usize,
}

/// The set a row is reported in.
fn set_of(r: &TableRow) -> Option<&'static str> {
    match crate::learn::dataset::matrix_set(&r.matrix) {
        "files" => Some("files"),
        _ if r.features.nnz >= 1_000_000 => Some("large"),
        _ => None,
    }
}

/// Evaluate reference → target with `folds` family-grouped folds; `tick` gets a message per
/// precision × fold.
pub fn run(
    (ref_rows, ref_profile): (&[TableRow], &Profile),
    (tar_rows, tar_profile): (&[TableRow], &Profile),
    folds: usize,
    tick: &(dyn Fn(String) + Sync),
) -> Result<Outcome> {
    let folds = folds.max(2);
    let mut points = Vec::new();
    let mut cals = Vec::new();
    let mut benchmarks = 0;
    for precision in [Precision::F32, Precision::F64] {
        let (Ok(rp), Ok(tp)) = (
            ref_profile.precision(precision),
            tar_profile.precision(precision),
        ) else {
            continue;
        };
        let sel = Selection::choose(&rp.measurements, &rp.limits, &tp.limits)?;
        let memory = MemoryPair::between(
            (&ref_profile.device_name, rp.bounds.as_ref()),
            (&tar_profile.device_name, tp.bounds.as_ref()),
        );
        benchmarks = sel.keys().len();
        let cross = CrossModel::fit(
            precision,
            sel,
            (&rp.limits, &rp.measurements),
            (&tp.limits, &tp.measurements),
            None,
        )?;
        let refs: Vec<&TableRow> = ref_rows
            .iter()
            .filter(|r| r.precision == precision)
            .collect();
        let tars: Vec<&TableRow> = tar_rows
            .iter()
            .filter(|r| r.precision == precision)
            .collect();
        if refs.is_empty() || tars.is_empty() {
            continue;
        }
        // Chosen on the reference among the matrices measured on both, as `train` chooses
        // the ones `instrument --cross-from` measures on a target.
        let tar_names: HashSet<&str> = tars.iter().map(|r| r.matrix.as_str()).collect();
        let both: Vec<&TableRow> = refs
            .iter()
            .copied()
            .filter(|r| tar_names.contains(r.matrix.as_str()))
            .collect();
        let cal_ref = calibration(&both, precision);
        let cal_names: HashSet<&str> = cal_ref.iter().map(|r| r.matrix.as_str()).collect();
        let mut cal: Vec<&TableRow> = tars
            .iter()
            .copied()
            .filter(|r| cal_names.contains(r.matrix.as_str()))
            .collect();
        cal.sort_by(|a, b| (a.features.nnz, &a.matrix).cmp(&(b.features.nnz, &b.matrix)));
        let cal_fams: HashSet<&str> = cal.iter().map(|r| r.family.as_str()).collect();
        cals.push((precision, cal.iter().map(|r| r.matrix.clone()).collect()));
        let tar_of: HashMap<&str, &TableRow> =
            tars.iter().map(|r| (r.matrix.as_str(), *r)).collect();
        for fold in 0..folds {
            tick(format!("{precision} fold {}/{folds}", fold + 1));
            let train: Vec<&TableRow> = refs
                .iter()
                .copied()
                .filter(|r| fold_of(&r.family, folds) != fold)
                .collect();
            let m_ref = fit_with(&train, precision, 0)?;
            let m_dev = m_ref.transfer(&cal, Scale::None);
            // The product's transfer (`instrument --cross-from`): the target's model with the
            // reference's side, both refitted on the calibration matrices.
            let m_tar = m_ref.cross_fit(&cal_ref, &cal, memory);
            // Refitted alike on the same matrices measured on the reference, so that the
            // estimator's bias cancels in `ours-ref`'s ratio.
            let m_ref = m_ref.transfer(&cal_ref, Scale::Family);
            let by_bytes = RatioMap::fit(
                |f, l| m_ref.bytes_label(f, l).ok(),
                &cal_ref,
                &cal,
                RatioKey::Bytes,
            );
            for r in refs.iter().filter(|r| fold_of(&r.family, folds) == fold) {
                let (Some(set), Some(t)) = (set_of(r), tar_of.get(r.matrix.as_str())) else {
                    continue;
                };
                if cal_fams.contains(r.family.as_str()) {
                    continue;
                }
                points.extend(predict_row(
                    (r, t, set),
                    &cross,
                    (&m_ref, &m_dev, &m_tar),
                    &by_bytes,
                ));
            }
        }
    }
    Ok(Outcome {
        devices: (
            ref_profile.device_name.clone(),
            tar_profile.device_name.clone(),
        ),
        points,
        calibration: cals,
        benchmarks,
    })
}

/// Every configuration of one matrix measured on both devices.
fn predict_row(
    (r, t, set): (&TableRow, &TableRow, &'static str),
    cross: &CrossModel,
    (m_ref, m_dev, m_tar): (&OwnModel, &OwnModel, &OwnModel),
    by_bytes: &RatioMap,
) -> Vec<Point> {
    let shape = Shape::from_features(&r.features);
    let mut out = Vec::new();
    for rt in &r.times {
        let (Some(t_ref), Some(t_tar)) = (rt.time(), t.get(&rt.config).and_then(|x| x.time()))
        else {
            continue;
        };
        let mut predicted = BTreeMap::new();
        predicted.insert("same", t_ref);
        if CROSS_CONFIGS.contains(&rt.config.as_str()) {
            if let Ok(cfg) = KernelConfig::parse_label(&rt.config) {
                if let Ok(p) = cross.transfer(&shape, cfg.variant, &cfg.params, t_ref) {
                    predicted.insert("003", p);
                }
            }
        }
        let f = &r.features;
        let mut sigma = BTreeMap::new();
        if let (Ok(b), Ok(c)) = (
            m_tar.predict_label(f, &rt.config),
            m_dev.predict_label(f, &rt.config),
        ) {
            predicted.insert("ours", b);
            predicted.insert("ours-dev", c);
            if let Some(u) = m_tar.uncertainty_label(f, &rt.config) {
                sigma.insert("ours", u / b);
            }
            if let Some(u) = m_ref.uncertainty_label(f, &rt.config) {
                let t = m_ref.predict_label(f, &rt.config).unwrap_or(f64::NAN);
                sigma.insert("native", u / t);
            }
        }
        if let Some(m) = m_tar.measured_parts(f, &rt.config, t_ref) {
            predicted.insert("ours-ratio", m.ratio);
            if let Some(tp) = m.tput {
                predicted.insert("ours-tput", tp);
                predicted.insert("ours-mix", m.mix);
            }
            if let Some(b) = m.bw {
                predicted.insert("ours-bw", b);
            }
            predicted.insert("ours-measured", m.value);
            if let Some(s) = m_tar.measured_sigma(&rt.config) {
                sigma.insert("ours-measured", s);
            }
        }
        if let Some(p) = m_ref
            .bytes_label(f, &rt.config)
            .ok()
            .and_then(|b| by_bytes.predict(&rt.config, b, t_ref))
        {
            predicted.insert("ours-ref", p);
        }
        out.push(Point {
            precision: r.precision,
            set,
            config: rt.config.clone(),
            matrix: r.matrix.clone(),
            footprint: rt.footprint_bytes,
            reference: t_ref,
            measured: t_tar,
            predicted,
            sigma,
        });
    }
    out
}

/// The share of `pts` whose `method` prediction lies within the one-sigma `sigma` states for it
/// (`|ln(p / m)| ≤ σ`), and the count. Each sigma is the one-sigma quantile of held-out
/// `|ln error|`s ([`crate::learn::own::one_sigma`]), so a calibrated one covers about 68 % (the
/// median, ≈ 50 %, in profiles trained before session 32).
pub fn coverage<'a>(
    pts: impl Iterator<Item = &'a Point>,
    method: &str,
    sigma: &str,
) -> Option<(f64, usize)> {
    let hits: Vec<bool> = pts
        .filter_map(|p| {
            let s = p.sigma.get(sigma)?;
            Some((p.predicted.get(method)? / p.measured).ln().abs() <= *s)
        })
        .collect();
    (!hits.is_empty()).then(|| {
        let k = hits.iter().filter(|&&h| h).count();
        (k as f64 / hits.len() as f64, hits.len())
    })
}

/// Mean and median difference rate `|p − m| / m` of `method` over `pts`, and the count.
pub fn rates<'a>(pts: impl Iterator<Item = &'a Point>, method: &str) -> Option<(f64, f64, usize)> {
    let mut v: Vec<f64> = pts
        .filter_map(|p| Some((p.predicted.get(method)? - p.measured).abs() / p.measured))
        .collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    Some((mean, v[v.len() / 2], v.len()))
}
