//! `sparsecast predict`: predict, rank and optionally measure every modeled kernel of a matrix.

use super::common;
use super::instrument::PrecisionArg;
use crate::backend::{Backend, BackendKind, KernelConfig, Opened, TimingProtocol};
use crate::features::Features;
use crate::formats::{EllParams, FormatParams, HybParams};
use crate::instrument::{synthetic, Statistic};
use crate::model::accuracy::{difference_rate, summarize, Sample};
use crate::model::{rank_with, Coverage, Model, Ranked};
use crate::{Csr, Precision, Scalar};
use anyhow::bail;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Instant;

mod print;
use print::*;

/// Predict, rank and optionally measure every modeled configuration for matrices.
///
/// Predict the SpMV time of every configuration a device profile's model covers (default:
/// `sparsecast`, our own, covering every kernel at each CUDA block size, SELL-C-σ's parameter
/// sets and every cuSPARSE algorithm; the papers' models with --models), rank them by
/// predicted time and show the predicted effective bandwidth. The recommendation is rank 1,
/// unless the model's second stage (trained into `sparsecast` by `train --folds`) picks another
/// of the predicted-fastest from what was measured on the most similar training matrices: the
/// output then says so. With --measure, run each kernel on the backend and show the
/// measured time and the difference rate |predicted − measured| / measured.
///
/// Without --profile the profile built into the binary is used (and named). Inputs are Matrix
/// Market files (plain or gzip) or generator specs (`.json`: one spec, in the JSON that
/// `sparsecast generate spec` reads, a stack of generated parts `{"stack": [spec, …]}` as
/// `optimize` reads it, or an array of those); an input that cannot be read is reported and
/// skipped, and the command exits with an error at the end naming it.
///
/// Examples:
///   sparsecast predict matrix.mtx.gz
///   sparsecast predict --profile profiles/cpu-example.json --precision f64 a.mtx b.mtx.gz
///   sparsecast predict --measure --backend cuda ../shared/matrices/suitesparse/*.mtx.gz
///   sparsecast predict --json --measure big-matrices.json > accuracy.json
///   sparsecast predict --tune --backend cuda matrix.mtx.gz   # time only the shortlist
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Matrix Market files or generator-spec JSON files (specs, stacks, arrays of them).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    #[command(flatten)]
    profile: common::ProfileArgs,
    /// The profile's models to use, comma-separated (default: `sparsecast`, our own model, where
    /// the profile has it, else every model of the profile); e.g. `sparsecast,analytical,gb`.
    #[arg(long, value_delimiter = ',')]
    models: Option<Vec<String>>,
    /// Precision(s) to predict; default: every precision in the profile.
    #[arg(long, value_enum)]
    precision: Option<PrecisionArg>,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// Also run and time every kernel on the backend.
    #[arg(long)]
    measure: bool,
    /// Tune instead of measuring everything: time only the N predicted-fastest configurations
    /// (default 5), the predicted-fastest cuSPARSE algorithm, the fastest of each storage format
    /// those N leave out if predicted within 20 % of the fastest, and the second stage's pick,
    /// on the backend, then the other block sizes of the fastest measured of ours; recommend the
    /// fastest measured of them. On matrices the profile never saw (seed 14) this puts the
    /// recommendation within 2 % of the best configuration on 99.5–99.8 % of them and within 5 %
    /// on 99.8–99.9 %, against 90–92 % within 5 % for the prediction alone (docs/ACCURACY.md),
    /// for about 6 runs instead of ≈ 60.
    #[arg(long, value_name = "N", num_args = 0..=1, conflicts_with = "measure")]
    tune: Option<Option<usize>>,
    /// Backend for --measure; default: the profile's (a profile of another backend is refused).
    #[arg(long, value_enum)]
    backend: Option<BackendKind>,
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    device: usize,
    /// β for --measure (default: the profile's).
    #[arg(long)]
    runs: Option<usize>,
    /// α for --measure (default: the profile's).
    #[arg(long)]
    warmup: Option<usize>,
    // --hyb-width, as HYB declares it.
    #[command(flatten)]
    hyb: HybParams,
    // --ell-width, as ELL declares it.
    #[command(flatten)]
    ell: EllParams,
    /// With --measure and several inputs: print only the accuracy summary.
    #[arg(long)]
    summary_only: bool,
    /// Times measured on a reference GPU for the profile's cross-architecture model (003;
    /// `instrument --cross-from`): `bench --json` output (one report or an array) or a training
    /// table, matched to the inputs by file name. The `cross` model then carries those times to
    /// the profile's device instead of the reference's predicted ones.
    #[arg(long, value_name = "REF_RESULTS")]
    measured_on: Option<PathBuf>,
}

/// One kernel of one matrix in one precision by one model, as printed.
#[derive(Debug, Serialize)]
struct KernelResult {
    /// The model that predicted it.
    model: String,
    #[serde(flatten)]
    ranked: Ranked,
    /// Measured seconds (papers' warm-up-excluding mean).
    measured_seconds: Option<f64>,
    /// |predicted − measured| / measured.
    difference_rate: Option<f64>,
    /// Why it could not be measured.
    measure_error: Option<String>,
    /// The predicted effective bandwidth against the device's ceiling for these bytes (the L2's
    /// when they fit in it, else DRAM's; the profile's measured bounds): 0.44 = 44 %.
    #[serde(skip_serializing_if = "Option::is_none")]
    bandwidth_share: Option<f64>,
    /// Which ceiling that is: `L2` or `DRAM`.
    #[serde(skip_serializing_if = "Option::is_none")]
    ceiling: Option<Ceiling>,
    /// The model trained on this matrix's family: its difference rate here is no measure of its
    /// accuracy, and the summary leaves it out.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    in_sample: bool,
}

/// A device's bandwidth ceiling for one working set.
#[derive(Clone, Debug, Serialize)]
struct Ceiling {
    /// `L2` or `DRAM`.
    level: &'static str,
    gbs: f64,
}

/// The share of `bounds`' ceiling that `ranked`'s predicted effective bandwidth reaches.
fn bandwidth_share(
    bounds: Option<&crate::model::DeviceBounds>,
    ranked: &Ranked,
) -> (Option<f64>, Option<Ceiling>) {
    let (Some(b), Some(bytes), Some(gbs)) = (bounds, ranked.bytes, ranked.effective_gbs) else {
        return (None, None);
    };
    // The stepped ceiling (L2 or DRAM) people read a share of; a prediction for a working set a
    // little larger than the L2 may pass 100 % of the DRAM's, as the bound allows
    // (`DeviceBounds::effective_ceiling_gbs`).
    let ceiling = b.ceiling_gbs(bytes);
    let level = if b.l2_bytes > 0 && bytes <= b.l2_bytes {
        "L2"
    } else {
        "DRAM"
    };
    (
        Some(gbs / ceiling),
        Some(Ceiling {
            level,
            gbs: ceiling,
        }),
    )
}

/// One matrix in one precision.
#[derive(Debug, Serialize)]
struct MatrixResult {
    input: String,
    precision: Precision,
    nrows: usize,
    ncols: usize,
    nnz: usize,
    features_seconds: f64,
    predict_seconds: f64,
    kernels: Vec<KernelResult>,
    /// With --tune: each model's tuned recommendation.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tuned: Vec<Tuned>,
}

/// A tuned recommendation (`--tune`): the fastest measured of a model's shortlist.
#[derive(Debug, Serialize)]
struct Tuned {
    model: String,
    /// The configuration recommended: the fastest measured of the shortlist.
    recommendation: String,
    measured_seconds: f64,
    /// The model's prediction for it.
    predicted_seconds: Option<f64>,
    /// The shortlist, fastest prediction first: `(configuration, measured seconds or None when
    /// it could not be run)`.
    timed: Vec<(String, Option<f64>)>,
}

#[derive(Debug, Serialize)]
struct Report {
    profile: String,
    backend: String,
    device: String,
    results: Vec<MatrixResult>,
    /// Inputs that could not be read: `(input, error)`.
    skipped: Vec<(String, String)>,
    summary: Vec<ModelSummary>,
}

/// The difference-rate statistics of one model's kernel and precision.
#[derive(Debug, Serialize)]
struct ModelSummary {
    /// The model.
    model: String,
    #[serde(flatten)]
    summary: crate::model::accuracy::Summary,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let tune = a.tune.map(|k| k.unwrap_or(crate::model::SHORTLIST));
    anyhow::ensure!(
        tune != Some(0),
        "--tune 0 would time no configuration of ours: give N ≥ 1 (default {})",
        crate::model::SHORTLIST
    );
    let timing = a.measure || tune.is_some();
    let want_cuda = timing && a.backend != Some(BackendKind::Cpu);
    let (profile_name, profile) = a.profile.load(want_cuda, a.device)?;
    let precisions = match a.precision {
        Some(p) => p.list(),
        None => profile.precisions.iter().map(|s| s.precision()).collect(),
    };
    // Default: our own model where the profile has it (the others with --models), else every
    // model of the profile.
    let own = precisions.iter().all(|&p| {
        profile
            .precision(p)
            .is_ok_and(|s| s.models.iter().any(|m| m.name == "sparsecast"))
    });
    let mut a = a;
    if a.models.is_none() && own {
        a.models = Some(vec!["sparsecast".to_string()]);
    }
    for &p in &precisions {
        profile
            .precision(p)?
            .bounded_model_refs(a.models.as_deref())?;
    }
    // Whether measured times can be compared with the predictions (same backend).
    let mut comparable = true;
    let runner = if timing {
        let kind = match a.backend {
            Some(k) => k,
            None if profile.backend == "cuda" => BackendKind::Cuda,
            None => BackendKind::Cpu,
        };
        if profile.check_backend(kind.name()).is_err() {
            comparable = false;
            // Measure anyway (the times are real), but a prediction for another device is no
            // estimate of them: no difference rate.
            eprintln!(
                "note: the profile was measured with the {} backend ({}); measuring on the {} \
                 backend shows the measured times beside that device's predictions, without a \
                 difference rate (for one, pass --profile with a profile of this backend: \
                 `sparsecast instrument --backend {} --out FILE`)",
                profile.backend,
                profile.device_name,
                kind.name(),
                kind.name()
            );
        }
        // One backend for every matrix and precision (crate::backend::Opened says why), running
        // HYB as the profile's model predicts it.
        let opened = Opened::open(kind, a.device)?;
        opened.follow_hyb_launch(profile.hyb_launch());
        Some(opened)
    } else {
        None
    };
    let protocol = TimingProtocol {
        runs: a.runs.unwrap_or(profile.timing.runs),
        warmup: a.warmup.unwrap_or(profile.timing.warmup),
        ..profile.timing.clone()
    };
    if protocol.warmup >= protocol.runs {
        bail!(
            "--warmup {} leaves none of --runs {} to time",
            protocol.warmup,
            protocol.runs
        );
    }
    let params = FormatParams {
        ell: a.ell.clone(),
        hyb: a.hyb.clone(),
        ..FormatParams::default()
    };
    let reference = match &a.measured_on {
        Some(p) => {
            let has_cross = profile.precisions.iter().any(|s| {
                s.models.iter().any(|m| match &m.model {
                    crate::model::StoredModel::Cross(_) => true,
                    crate::model::StoredModel::Sparsecast(o) => o.cross.is_some(),
                    _ => false,
                })
            });
            if !has_cross {
                bail!(
                    "--measured-on needs a profile with a cross-architecture model (measure one \
                     on the target: `sparsecast instrument --cross-from REFERENCE_PROFILE`)"
                );
            }
            Some(super::measured_on::ReferenceTimes::load(p)?)
        }
        None => None,
    };
    let mut results = Vec::new();
    let mut skipped = Vec::new();
    let inputs = expand_inputs(&a.inputs)?;
    let total = inputs.len();
    for (name, family, load) in inputs {
        let a64 = match load() {
            Ok(m) => m,
            Err(e) => {
                eprintln!("skipping {name}: {e}");
                skipped.push((name, e.to_string()));
                continue;
            }
        };
        for &p in &precisions {
            let section = profile.precision(p)?;
            let r = match p {
                Precision::F32 => {
                    let m = a64.cast::<f32>();
                    one(
                        (&name, &family, reference.as_ref()),
                        &m,
                        section,
                        a.models.as_deref(),
                        &params,
                        runner.as_ref().map(Opened::get::<f32>),
                        &protocol,
                        tune,
                    )
                }
                Precision::F64 => one(
                    (&name, &family, reference.as_ref()),
                    &a64,
                    section,
                    a.models.as_deref(),
                    &params,
                    runner.as_ref().map(Opened::get::<f64>),
                    &protocol,
                    tune,
                ),
            }?;
            let mut r = r;
            if !comparable {
                for k in &mut r.kernels {
                    k.difference_rate = None;
                }
            }
            let quiet = a.json || (a.summary_only && timing);
            if !quiet {
                print_result(&r);
            }
            results.push(r);
        }
    }
    // Statistics per model: each model's kernels apart from every other model's.
    let mut model_names: Vec<&str> = Vec::new();
    for k in results.iter().flat_map(|r| &r.kernels) {
        if !model_names.contains(&k.model.as_str()) {
            model_names.push(&k.model);
        }
    }
    let summary: Vec<ModelSummary> = model_names
        .iter()
        .flat_map(|&model| {
            let samples: Vec<Sample> = results
                .iter()
                .flat_map(|r| {
                    r.kernels
                        .iter()
                        .filter(|k| k.model == model && !k.in_sample)
                        .filter_map(move |k| {
                            k.difference_rate?;
                            Some(Sample {
                                input: r.input.clone(),
                                variant: k.ranked.config.variant,
                                label: k.ranked.config.label(),
                                precision: r.precision,
                                predicted: k.ranked.seconds?,
                                measured: k.measured_seconds?,
                            })
                        })
                })
                .collect();
            summarize(&samples)
                .into_iter()
                .map(|summary| ModelSummary {
                    model: model.to_string(),
                    summary,
                })
                .collect::<Vec<_>>()
        })
        .collect();
    // Like `optimize`: every readable input is reported first, then the command fails if any
    // could not be read (so that a script notices), naming them.
    let failure = (!skipped.is_empty()).then(|| {
        format!(
            "{} of {} input(s) could not be read: {}",
            skipped.len(),
            total,
            skipped
                .iter()
                .map(|(i, _)| i.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    });
    if a.json {
        let report = Report {
            profile: profile_name,
            backend: profile.backend.clone(),
            device: profile.device_name.clone(),
            results,
            skipped,
            summary,
        };
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        if timing && !summary.is_empty() {
            print_summary(&summary);
        }
    }
    match failure {
        Some(msg) => Err(anyhow::anyhow!(msg)),
        None => Ok(()),
    }
}

type Loader = Box<dyn FnOnce() -> crate::Result<Csr<f64>>>;

/// Matrix Market files as they are; generator-spec files expanded to one input per spec.
/// Each input's name, matrix family (as the training tables name it: a file's stem, a Kronecker
/// expansion's file's stem, a generated matrix's own name) and loader.
fn expand_inputs(inputs: &[PathBuf]) -> anyhow::Result<Vec<(String, String, Loader)>> {
    use crate::evaluate::record::{family_of, SourceInfo::*};
    let mut out: Vec<(String, String, Loader)> = Vec::new();
    for path in inputs {
        if path.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(path).map_err(|e| crate::Error::io(path, e))?;
            let specs =
                crate::optimize::stack::specs_from_json(&text, &path.display().to_string())?;
            for s in specs {
                let family = family_of(&format!("gen/{}", s.name()), &Generated(s.clone()));
                out.push((s.name(), family, Box::new(move || s.generate())));
            }
        } else {
            let p = path.clone();
            let name = path.file_name().map_or_else(
                || path.display().to_string(),
                |n| n.to_string_lossy().into(),
            );
            let family = family_of(&name, &File(p.clone()));
            out.push((
                name,
                family,
                Box::new(move || crate::matrix::mm::read::<f64>(&p)),
            ));
        }
    }
    Ok(out)
}

/// Predict (and measure) one matrix in one precision.
#[allow(clippy::too_many_arguments)]
fn one<T: Scalar>(
    (name, family, ref_times): (&str, &str, Option<&super::measured_on::ReferenceTimes>),
    a: &Csr<T>,
    section: &crate::profile::PrecisionProfile,
    names: Option<&[String]>,
    params: &FormatParams,
    backend: Option<&dyn Backend<T>>,
    protocol: &TimingProtocol,
    tune: Option<usize>,
) -> anyhow::Result<MatrixResult> {
    let t = Instant::now();
    let mut features = Features::compute(a);
    let features_seconds = t.elapsed().as_secs_f64();
    if let Some(w) = params.hyb.width {
        // The features hold HYB's split at Bell & Garland's width; re-split at the one asked for.
        features.split_hyb_at(a, w);
    }
    let models = section.bounded_model_refs(names)?;
    let stat = section.statistic;
    let x = synthetic::x_vector::<T>(a.ncols);
    let reference = backend.map(|_| crate::backend::measure::Reference::new(a, &x));
    let mut predict_seconds = 0.0;
    let mut measured: Vec<(String, Option<f64>, Option<String>)> = Vec::new();
    let mut kernels = Vec::new();
    let mut tuned = Vec::new();
    // Which models trained on this matrix's family (their predictions here are in-sample).
    let named = crate::model::registry::select(&section.models, names)?;
    for (model, named) in models.iter().zip(named) {
        let in_sample = named.trained_on(family);
        let (swapped, swapped_own);
        let model: &dyn Model = match (&model.model, ref_times) {
            (crate::model::StoredModel::Cross(c), Some(r)) => {
                swapped = crate::model::cross::MeasuredCross {
                    cross: c,
                    times: r.of(name, T::PRECISION),
                };
                &swapped
            }
            (crate::model::StoredModel::Sparsecast(o), Some(r)) if o.cross.is_some() => {
                swapped_own = crate::learn::cross_own::MeasuredOwn {
                    model: o,
                    times: r.labels_of(name, T::PRECISION),
                };
                &swapped_own
            }
            _ => model,
        };
        let ranking = rank_with(model, &features, params, Coverage::Configs, Some(family));
        predict_seconds += ranking.predict_seconds;
        // With --tune only the shortlist is timed (and the second stage's pick); otherwise
        // every configuration (--measure).
        let mut timed: Option<Vec<String>> = tune.map(|k| {
            let mut t: Vec<String> = crate::model::shortlist(
                &ranking.rows,
                k,
                |r| r.seconds,
                |r| r.config.variant.is_vendor(),
                |r| r.config.variant.format(),
            )
            .into_iter()
            .map(|i| ranking.rows[i].config.label())
            .collect();
            if let Some(p) = ranking.rows.iter().find(|r| r.picked) {
                if !t.contains(&p.config.label()) {
                    t.push(p.config.label());
                }
            }
            t
        });
        let first_kernel = kernels.len();
        // Each configuration is measured once, whatever the number of models: its time (or
        // why not), run now where `time_it` and not run before.
        let mut measure_once = |config: &KernelConfig, time_it: bool| {
            let label = config.label();
            match measured.iter().find(|(v, ..)| *v == label) {
                Some((_, m, e)) => (*m, e.clone()),
                None if !time_it => (None, None),
                None => {
                    let (m, e) = match backend {
                        None => (None, None),
                        Some(be) => {
                            let reference = reference.as_ref().expect("built with the backend");
                            match measure(be, a, config, &x, reference, protocol, stat) {
                                Ok(t) => (Some(t), None),
                                Err(e) => (None, Some(e.to_string())),
                            }
                        }
                    };
                    measured.push((label, m, e.clone()));
                    (m, e)
                }
            }
        };
        for ranked in ranking.rows {
            let time_it = timed
                .as_ref()
                .map_or(true, |t| t.contains(&ranked.config.label()));
            let (m, err) = measure_once(&ranked.config, time_it);
            let (share, ceiling) = bandwidth_share(section.bounds.as_ref(), &ranked);
            kernels.push(KernelResult {
                model: model.name().to_string(),
                difference_rate: ranked.seconds.zip(m).map(|(p, m)| difference_rate(p, m)),
                measured_seconds: m,
                measure_error: err,
                ranked,
                bandwidth_share: share,
                ceiling,
                in_sample,
            });
        }
        // The shortlist's second step: the other block sizes of its fastest measured
        // configuration of ours (crate::model::block_size_siblings says why), timed and
        // added to what the tuned pick chooses from.
        if let (Some(timed), Some(_)) = (timed.as_mut(), backend) {
            let ks = &kernels[first_kernel..];
            let in_timed: Vec<usize> = (0..ks.len())
                .filter(|&i| timed.contains(&ks[i].ranked.config.label()))
                .collect();
            let siblings = crate::model::block_size_siblings(
                ks,
                &in_timed,
                |i| ks[i].measured_seconds,
                |k| k.ranked.seconds,
                |k| k.ranked.config.variant.is_vendor(),
                |k| k.ranked.config.at_default_block_size(),
            );
            for i in siblings {
                let k = &mut kernels[first_kernel + i];
                let (m, e) = measure_once(&k.ranked.config, true);
                k.measured_seconds = m;
                k.measure_error = e;
                k.difference_rate = k.ranked.seconds.zip(m).map(|(p, m)| difference_rate(p, m));
                timed.push(k.ranked.config.label());
            }
        }
        if let Some(timed) = &timed {
            let ks = &kernels[first_kernel..];
            let of = |v: &String| {
                ks.iter()
                    .find(|k: &&KernelResult| k.ranked.config.label() == *v)
            };
            let best = timed
                .iter()
                .filter_map(|v| of(v).and_then(|k| k.measured_seconds.map(|m| (m, k))))
                .min_by(|a, b| a.0.total_cmp(&b.0));
            if let Some((m, k)) = best {
                tuned.push(Tuned {
                    model: model.name().to_string(),
                    recommendation: k.ranked.config.label(),
                    measured_seconds: m,
                    predicted_seconds: k.ranked.seconds,
                    timed: timed
                        .iter()
                        .map(|v| (v.clone(), of(v).and_then(|k| k.measured_seconds)))
                        .collect(),
                });
            }
        }
    }
    Ok(MatrixResult {
        input: name.to_string(),
        precision: T::PRECISION,
        nrows: a.nrows,
        ncols: a.ncols,
        nnz: a.nnz(),
        features_seconds,
        predict_seconds,
        kernels,
        tuned,
    })
}

/// Run and time one kernel through the shared measuring path
/// ([`crate::backend::measure::measure_kernel`]: prepared, checked against the f64 reference,
/// then timed); the profile's statistic of the runs.
fn measure<T: Scalar>(
    be: &dyn Backend<T>,
    a: &Csr<T>,
    cfg: &KernelConfig,
    x: &[T],
    reference: &crate::backend::measure::Reference,
    protocol: &TimingProtocol,
    stat: Statistic,
) -> crate::Result<f64> {
    use crate::backend::measure::{measure_kernel, Status};
    let variant = cfg.variant;
    let m = measure_kernel(be, a, x, reference, cfg, protocol);
    let t = match (m.status, stat) {
        (Status::Ok, Statistic::WarmMean) => m.warm_mean_s,
        (Status::Ok, Statistic::Median) => m.median_s,
        _ => None,
    };
    t.ok_or_else(|| {
        crate::Error::Invalid(format!(
            "{} ({variant})",
            m.reason.unwrap_or_else(|| m.status.name().to_string())
        ))
    })
}
