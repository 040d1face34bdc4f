//! Our model carried to another GPU by the product (issue 15): what a profile stores of
//! [`super::transfer`] so that `instrument --cross-from` and `predict --measured-on` do what
//! `sparsecast crossarch` evaluates offline.
//!
//! * `train` keeps with each `sparsecast` model its **calibration matrices**
//!   ([`CalibrationRow`]): the 17 rows chosen by [`calibration`] — generator specs, so a target
//!   rebuilds them without any file — and the time of every configuration measured on the
//!   training device.
//! * `instrument --cross-from REFERENCE` rebuilds them on the target, measures every
//!   configuration (`collect`'s measurement path) and stores [`OwnModel::cross_fit`]: the
//!   reference's model with its device parameters and one scalar per format family refitted on
//!   the target's times, its trees kept. From a matrix's features alone it predicts the target
//!   (`ours` in docs/CROSS_ARCH.md).
//! * The transferred model also keeps the **reference's side** ([`ReferenceSide`]): the same
//!   model refitted on the reference's times of the same matrices, as a device and a scalar per
//!   family, and the target/reference ratio of every configuration on them keyed by the
//!   throughput reached on the reference ([`RatioMap`], [`RatioKey::Throughput`]). With a time
//!   `T_ref` measured on the reference (`predict --measured-on`), `ours-mix` is the geometric
//!   mean of `T_ref · M_tar / M_ref` and the calibration ratio; without one, `M_tar`.
//! * Since session 33 it also keeps both devices' memory systems ([`MemoryPair`]: DRAM
//!   bandwidth and L2 size from the two profiles' bounds, between GPUs of as many SMs), and
//!   [`OwnModel::from_measured`] predicts `ours-measured` ([`Measured::value`]): the bandwidth
//!   transfer ([`super::cross_bw`], `ours-bw`) for a streaming kernel, its geometric mean with
//!   `ours-mix` for the others; `ours-mix` where the memory is unknown. Offline on seed 12 it
//!   brought ELL from 8.3–11.5 % median to 3.5–4.4 % (docs/CROSS_ARCH.md, session 33).
//! * **Uncertainty.** A transferred prediction is less certain than a native one (session 16:
//!   the transfer's held-out error ≈ 1.3× the native model's). [`OwnModel::cross_fit`] measures
//!   it on the calibration matrices themselves, leaving each out in turn: the transfer is
//!   refitted on the other matrices and predicts the one left out, from its features (`ours`)
//!   and from its reference times (`ours-measured`). Per format family, the one-sigma quantile
//!   ([`super::own::one_sigma`]; the median before session 32) of the `|ln error|` of
//!   `ours` is added in quadrature to every configuration's native sigma (the trees were
//!   trained on those matrices, so this error is the transfer's own part); that of
//!   `ours-measured` is the sigma of a prediction from a measured time ([`ReferenceSide::sigma`]).
//!
//! The offline evaluation ([`crate::evaluate::crossarch`]) predicts with these same functions.

use super::cross_bw::{streaming, touched_bytes, MemoryPair};
use super::own::{one_sigma, OwnModel};
use super::transfer::{calibration, family, scale_for, spec_of, RatioKey, RatioMap, Scale};
use crate::backend::{KernelConfig, Variant};
use crate::corpus::table::TableRow;
use crate::features::Features;
use crate::formats::FormatParams;
use crate::instrument::Statistic;
use crate::matrix::generate::GeneratorSpec;
use crate::model::{Model, Prediction};
use crate::{Error, Precision, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One calibration matrix and its times on the device of the model that stores it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CalibrationRow {
    /// The matrix's id in the training table (`gen/…`).
    pub matrix: String,
    /// What rebuilds it.
    pub spec: GeneratorSpec,
    /// Its non-zeros.
    pub nnz: u64,
    /// Seconds of one SpMV per configuration label (the table's statistic, the median).
    pub times: BTreeMap<String, f64>,
}

/// The calibration rows of `precision` among `rows` ([`calibration`]) with their times.
pub fn calibration_rows(rows: &[&TableRow], precision: Precision) -> Vec<CalibrationRow> {
    calibration(rows, precision)
        .into_iter()
        .filter_map(|r| {
            Some(CalibrationRow {
                matrix: r.matrix.clone(),
                spec: spec_of(r)?.clone(),
                nnz: r.features.nnz as u64,
                times: r
                    .times
                    .iter()
                    .filter_map(|t| Some((t.config.clone(), t.time()?)))
                    .collect(),
            })
        })
        .collect()
}

/// The rows of `measured` (the same matrices measured on a target) with the times of `cal`
/// (measured on the reference) in their place; matrices of `measured` that `cal` lacks are
/// left out.
pub fn with_times(measured: &[TableRow], cal: &[CalibrationRow], device: &str) -> Vec<TableRow> {
    measured
        .iter()
        .filter_map(|r| {
            let c = cal.iter().find(|c| c.matrix == r.matrix)?;
            let mut r = r.clone();
            r.device = device.to_string();
            for t in &mut r.times {
                t.median_s = c.times.get(&t.config).copied();
                t.warm_mean_s = t.median_s;
            }
            Some(r)
        })
        .collect()
}

/// What a transferred model keeps of its reference device (see the module documentation).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ReferenceSide {
    /// The reference device's name.
    pub device_name: String,
    /// Its device parameters, refitted on the calibration matrices measured there.
    pub device: super::own::Device,
    /// Per format family, the reference's scalar minus the target's.
    pub shift: BTreeMap<String, f64>,
    /// Target/reference time ratios of the calibration matrices.
    pub ratio: RatioMap,
    /// Per format family, the relative one-sigma of a prediction from a time measured on the
    /// reference (the leave-one-out one-sigma `|ln error|` of `ours-mix` on the calibration
    /// matrices; empty in profiles written before it: the model's own sigma then).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sigma: BTreeMap<String, f64>,
    /// Both devices' memory systems, for the bandwidth transfer ([`super::cross_bw`]); absent
    /// between GPUs of different SM counts, where a bound is missing, and in profiles written
    /// before session 33 (their `--measured-on` prediction is `ours-mix`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryPair>,
}

/// The predictions of the target's time from a time measured on the reference
/// ([`OwnModel::measured_parts`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measured {
    /// `T_ref · M_tar / M_ref` (`ours-ratio`).
    pub ratio: f64,
    /// The calibration ratio nearest in throughput (`ours-tput`; `None` without calibration
    /// points for the configuration).
    pub tput: Option<f64>,
    /// The geometric mean of the two (`ours-mix`; `ours-ratio` without `ours-tput`).
    pub mix: f64,
    /// The bandwidth transfer (`ours-bw`, [`super::cross_bw`]; `None` without both devices'
    /// memory).
    pub bw: Option<f64>,
    /// What the product predicts (`ours-measured`): `ours-bw` for a streaming kernel, the
    /// geometric mean of `ours-bw` and `ours-mix` for the others, `ours-mix` without `ours-bw`.
    pub value: f64,
}

/// Fewest leave-one-out errors a format family needs for its own transfer sigma; families with
/// fewer take the median over every family.
const SIGMA_MIN_ERRORS: usize = 5;

impl OwnModel {
    /// This model (trained on the reference) transferred to the target of `cal_tar`, keeping
    /// the reference's side refitted on `cal_ref` — the same matrices measured on the
    /// reference (see the module documentation).
    pub fn cross_fit(
        &self,
        cal_ref: &[&TableRow],
        cal_tar: &[&TableRow],
        memory: Option<MemoryPair>,
    ) -> OwnModel {
        let mut tar = self.cross_fit_once(cal_ref, cal_tar, memory);
        let (own, mix) = self.leave_one_out(cal_ref, cal_tar, memory);
        for c in &mut tar.configs {
            let extra = own.get(&family(&c.config)).copied().unwrap_or(0.0);
            let add = |s: f64| s.hypot(extra);
            c.sigma = add(c.sigma);
            c.sigma_by_nnz = c.sigma_by_nnz.iter().map(|&s| add(s)).collect();
        }
        if let Some(side) = tar.cross.as_mut() {
            side.sigma = mix;
        }
        tar
    }

    /// Per format family, the one-sigma `|ln error|` of the transfer (`ours`) and of a prediction
    /// from a measured time (`ours-mix`) on each calibration matrix, the transfer refitted
    /// without it (see the module documentation).
    fn leave_one_out(
        &self,
        cal_ref: &[&TableRow],
        cal_tar: &[&TableRow],
        memory: Option<MemoryPair>,
    ) -> (BTreeMap<String, f64>, BTreeMap<String, f64>) {
        let (mut own, mut mix): (ErrsByFamily, ErrsByFamily) = Default::default();
        for out in cal_tar {
            let (kr, kt) = (without(cal_ref, out), without(cal_tar, out));
            if kt.len() < 2 || kt.len() == cal_tar.len() {
                continue;
            }
            let m = self.cross_fit_once(&kr, &kt, memory);
            let Some(r) = cal_ref.iter().find(|r| r.matrix == out.matrix) else {
                continue;
            };
            for t in &out.times {
                let Some(meas) = t.time() else { continue };
                let fam = family(&t.config);
                if let Ok(p) = m.predict_label(&out.features, &t.config) {
                    own.entry(fam.clone())
                        .or_default()
                        .push((p / meas).ln().abs());
                }
                let t_ref = r.times.iter().find(|x| x.config == t.config);
                if let Some(p) = t_ref
                    .and_then(|x| x.time())
                    .and_then(|tr| m.from_measured(&out.features, &t.config, tr))
                {
                    mix.entry(fam).or_default().push((p / meas).ln().abs());
                }
            }
        }
        (one_sigmas(own), one_sigmas(mix))
    }

    /// [`OwnModel::cross_fit`] without the uncertainty.
    fn cross_fit_once(
        &self,
        cal_ref: &[&TableRow],
        cal_tar: &[&TableRow],
        memory: Option<MemoryPair>,
    ) -> OwnModel {
        let name = |rows: &[&TableRow]| rows.first().map_or(String::new(), |r| r.device.clone());
        let scale = scale_for(&name(cal_ref), &name(cal_tar));
        let (mut tar, s_tar) = self.transfer_scalars(cal_tar, scale);
        // The reference side keeps no issue term (`reference_side`): its scalars are the same.
        let (rf, s_ref) = self.transfer_scalars(cal_ref, Scale::Family);
        let mut shift = BTreeMap::new();
        for fam in s_tar.keys().chain(s_ref.keys()) {
            let v = s_ref.get(fam).unwrap_or(&0.0) - s_tar.get(fam).unwrap_or(&0.0);
            shift.insert(fam.clone(), v);
        }
        let ratio = RatioMap::fit(
            |f, l| rf.bytes_label(f, l).ok(),
            cal_ref,
            cal_tar,
            RatioKey::Throughput,
        );
        let cal = calibration_rows(cal_tar, self.precision);
        tar.calibration = (!cal.is_empty()).then_some(cal);
        tar.cross = Some(ReferenceSide {
            device_name: cal_ref.first().map_or(String::new(), |r| r.device.clone()),
            device: rf.device,
            shift,
            ratio,
            sigma: BTreeMap::new(),
            memory,
        });
        tar
    }

    /// The relative one-sigma of a prediction of `label` from a time measured on the
    /// reference ([`ReferenceSide::sigma`]); `None` where the profile has none.
    pub fn measured_sigma(&self, label: &str) -> Option<f64> {
        self.cross.as_ref()?.sigma.get(&family(label)).copied()
    }

    /// The time our model predicts on the reference of a transferred model (`M_ref`); `None`
    /// on a model that was not transferred by [`OwnModel::cross_fit`].
    pub fn reference_time(&self, f: &Features, label: &str) -> Option<f64> {
        self.reference_side(f, label).map(|r| r.0)
    }

    /// `M_ref` and the bytes one SpMV moves on the reference, from one evaluation of the trees.
    fn reference_side(&self, f: &Features, label: &str) -> Option<(f64, f64)> {
        let side = self.cross.as_ref()?;
        let p = self.parts_with_l2(f, label, side.device.l2_bytes).ok()?;
        let shift = side.shift.get(&family(label)).copied().unwrap_or(0.0);
        // The reference has no issue term (its model is the one trained there).
        let ln = p.ln_base(&side.device) + p.correction + shift;
        Some((super::seconds("sparsecast", label, ln).ok()?, p.bytes))
    }

    /// The predictions of the target's time from `t_ref` measured on the reference
    /// ([`Measured`]; `None` on a model that was not transferred).
    pub fn measured_parts(&self, f: &Features, label: &str, t_ref: f64) -> Option<Measured> {
        self.measured_with(f, label, t_ref, self.predict_label(f, label).ok()?)
    }

    /// [`OwnModel::measured_parts`] given this model's own prediction `tar` (`M_tar`).
    fn measured_with(&self, f: &Features, label: &str, t_ref: f64, tar: f64) -> Option<Measured> {
        let side = self.cross.as_ref()?;
        let (m_ref, bytes) = self.reference_side(f, label)?;
        let ratio = t_ref * tar / m_ref;
        let tput = side.ratio.predict(label, bytes, t_ref);
        let mix = tput.map_or(ratio, |t| (t * ratio).sqrt());
        let cfg = KernelConfig::parse_label(label).ok();
        let bw = side.memory.zip(cfg.as_ref()).and_then(|(m, c)| {
            let vb = self.precision.bytes() as u64;
            Some(m.transfer(touched_bytes(f, c, vb, self.version)?, t_ref))
        });
        let value = match (bw, &cfg) {
            (Some(b), Some(c)) if streaming(c.variant) => b,
            (Some(b), _) => (b * mix).sqrt(),
            (None, _) => mix,
        };
        (ratio.is_finite() && mix.is_finite() && value.is_finite() && value > 0.0).then_some(
            Measured {
                ratio,
                tput,
                mix,
                bw,
                value,
            },
        )
    }

    /// The target's time of configuration `label` from `t_ref` seconds measured on the
    /// reference (`ours-measured`, [`Measured::value`]); `None` on a model that was not
    /// transferred.
    pub fn from_measured(&self, f: &Features, label: &str, t_ref: f64) -> Option<f64> {
        self.measured_parts(f, label, t_ref).map(|p| p.value)
    }
}

/// `rows` without the matrix of `out`.
fn without<'a>(rows: &[&'a TableRow], out: &TableRow) -> Vec<&'a TableRow> {
    rows.iter()
        .copied()
        .filter(|r| r.matrix != out.matrix)
        .collect()
}

/// Absolute log errors per format family.
type ErrsByFamily = BTreeMap<String, Vec<f64>>;

/// Per family, the one-sigma quantile of its errors ([`super::own::one_sigma`]), or (fewer
/// than [`SIGMA_MIN_ERRORS`]) that of all of them.
fn one_sigmas(errs: ErrsByFamily) -> BTreeMap<String, f64> {
    let mut all: Vec<f64> = errs.values().flatten().copied().collect();
    let Some(overall) = one_sigma(&mut all) else {
        return BTreeMap::new();
    };
    errs.into_iter()
        .map(|(fam, mut v)| {
            let own = if v.len() >= SIGMA_MIN_ERRORS {
                one_sigma(&mut v)
            } else {
                None
            };
            (fam, own.unwrap_or(overall))
        })
        .collect()
}

/// A transferred [`OwnModel`] with the times of one matrix measured on its reference
/// (`predict --measured-on`): configurations measured there are predicted from their time
/// ([`OwnModel::from_measured`]), the others from the features alone.
pub struct MeasuredOwn<'a> {
    /// The transferred model.
    pub model: &'a OwnModel,
    /// Seconds measured on the reference, per configuration label.
    pub times: Vec<(String, f64)>,
}

impl MeasuredOwn<'_> {
    fn time(&self, label: &str) -> Option<f64> {
        self.times.iter().find(|t| t.0 == label).map(|t| t.1)
    }

    /// Seconds and one-sigma seconds of `cfg`.
    fn detail(&self, f: &Features, cfg: &KernelConfig) -> Result<(f64, f64)> {
        let label = super::label_of("sparsecast", cfg)?;
        let (own, sigma) = self.model.detail(f, &label)?;
        let (t, sigma) = match self.time(&label) {
            Some(t_ref) => {
                let t = self
                    .model
                    .measured_with(f, &label, t_ref, own)
                    .map(|p| p.value)
                    .ok_or_else(|| {
                        Error::Unsupported(format!(
                            "{label}: this profile's sparsecast model was not transferred from a \
                         reference (instrument --cross-from)"
                        ))
                    })?;
                (t, self.model.measured_sigma(&label).unwrap_or(sigma))
            }
            None => (own, sigma),
        };
        Ok((t, t * sigma))
    }
}

impl Model for MeasuredOwn<'_> {
    fn name(&self) -> &str {
        "sparsecast"
    }
    fn precision(&self) -> Precision {
        self.model.precision
    }
    fn statistic(&self) -> Statistic {
        super::dataset::STATISTIC
    }
    fn variants(&self) -> Vec<Variant> {
        Model::variants(self.model)
    }
    fn configs(&self) -> Vec<KernelConfig> {
        Model::configs(self.model)
    }
    fn predict(&self, f: &Features, variant: Variant, params: &FormatParams) -> Result<f64> {
        self.predict_config(f, &config(variant, params))
    }
    fn predict_config(&self, f: &Features, cfg: &KernelConfig) -> Result<f64> {
        self.detail(f, cfg).map(|d| d.0)
    }
    fn uncertainty_config(&self, f: &Features, cfg: &KernelConfig) -> Option<f64> {
        self.detail(f, cfg).ok().map(|d| d.1)
    }
    fn uncertainty(&self, f: &Features, variant: Variant, params: &FormatParams) -> Option<f64> {
        self.uncertainty_config(f, &config(variant, params))
    }
    fn predict_detail(
        &self,
        f: &Features,
        variant: Variant,
        params: &FormatParams,
    ) -> Result<Prediction> {
        let (seconds, u) = self.detail(f, &config(variant, params))?;
        Ok(Prediction {
            seconds,
            uncertainty: Some(u),
            clamped: None,
        })
    }
    fn explain(&self, _: &Features, variant: Variant, params: &FormatParams) -> String {
        let label = super::label_of("sparsecast", &config(variant, params)).unwrap_or_default();
        let Some(t) = self.time(&label) else {
            return "not measured on the reference: from the features".into();
        };
        // Which way `measured_with` carries it, without evaluating the model again: the
        // re-timing needs both memories (and a format that takes the matrix, which the
        // prediction being explained already has).
        let memory = self.model.cross.as_ref().and_then(|c| c.memory).is_some();
        let how = match (memory, streaming(variant)) {
            (true, true) => format!(
                "its DRAM seconds re-timed at this GPU's bandwidth ({} of the change)",
                super::cross_bw::EXPOSED_SHARE
            ),
            (true, false) => {
                "the DRAM re-timing and the calibration's ratios, geometric mean".into()
            }
            (false, _) => "by the calibration's ratios".into(),
        };
        format!("from {:.2} µs measured on the reference; {how}", t * 1e6)
    }
}

/// `variant` with `params` at the default block size.
fn config(variant: Variant, params: &FormatParams) -> KernelConfig {
    KernelConfig {
        variant,
        params: params.clone(),
        block_size: KernelConfig::DEFAULT_BLOCK_SIZE,
    }
}
