//! The evaluation loop: every matrix × precision × configuration, measured, predicted and
//! appended to `results.jsonl`, skipping what a previous run finished.
//!
//! Per matrix: the matrix is read or generated once (in f64; the f32 pass uses a cast copy), and
//! only if some of its configurations are still to do. Per precision: features, the models'
//! shape, x (seeded, uniform in [-1, 1)) and the f64 reference are computed once and shared by
//! every configuration. A matrix that cannot be read or built is recorded as `skipped` for every
//! configuration, with the reason, so that it shows in the report rather than vanishing.

use super::corpus::{self, CorpusEntry, MatrixSource};
use super::generated::{generated_set, GeneratedSet, Recipe};
use super::inputs::{self, Fingerprint};
use super::models::EvalModel;
use super::models::{self, plan_config};
use super::record::{ConfigKind, Key, Prediction, Record, SourceInfo, SCHEMA};
use super::store::{self, Appender};
use super::RunInfo;
use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::CudaBackend;
use crate::backend::measure::{
    measure_kernel, measure_prepared, KernelMeasurement, Reference, Status,
};
use crate::backend::{Backend, BackendKind, KernelConfig, TimingProtocol, Variant};
use crate::features::Features;
use crate::formats::FormatParams;
use crate::model::Model;
use crate::profile::Profile;
use crate::{Csr, Error, Precision, Result, Scalar};
use rand::{Rng, SeedableRng};
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::time::Instant;

/// What to evaluate and how.
#[derive(Clone, Debug)]
pub struct Options {
    /// Directories searched (recursively) for `.mtx` / `.mtx.gz` files.
    pub corpus: Vec<PathBuf>,
    /// Generated matrices to add.
    pub generated: GeneratedSet,
    /// Where to run.
    pub backend: BackendKind,
    /// Output directory (`results.jsonl`, `run.json`, `report.md`, plots).
    pub out: PathBuf,
    /// Precisions, in order.
    pub precisions: Vec<Precision>,
    /// Timing protocol of every configuration.
    pub protocol: TimingProtocol,
    /// Format parameters of every kernel (`max_bytes` caps each format's footprint).
    pub params: FormatParams,
    /// CUDA block size.
    pub block_size: u32,
    /// Seed of x.
    pub seed: u64,
    /// Measure again the configurations whose record says `failed` (a backend error, which may
    /// have been transient); the new record replaces the old one.
    pub retry_failed: bool,
    /// The profile's models to evaluate (`None`: every model).
    pub models: Option<Vec<String>>,
    /// Measure on a green-context partition of this many SMs (CUDA).
    pub sms: Option<u32>,
}

/// What a run did.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Matrices in the corpus and generated set.
    pub matrices: usize,
    /// Records found in `results.jsonl` at the start (not measured again).
    pub resumed: usize,
    /// Records written by this run.
    pub written: usize,
    /// Records in the file at the end.
    pub total: usize,
    /// Matrices that could not be read or built, with the reason (the command fails on them,
    /// after everything else was measured and reported).
    pub unreadable: Vec<(String, String)>,
}

/// The start of the reason of every record of a matrix that could not be read or built.
const CANNOT_BUILD: &str = "cannot build the matrix: ";

/// The backend, one object for both precisions.
pub(crate) enum Runner {
    Cpu(CpuBackend),
    Cuda(Box<CudaBackend>),
}

/// A value type the evaluation runs in.
pub(crate) trait EvalScalar: Scalar {
    fn backend(r: &Runner) -> &dyn Backend<Self>;
}

impl Runner {
    /// Open the backend `kind` (GPU 0 for CUDA), on a green-context partition of `sms` SMs
    /// where given ([`crate::backend::check_partition`]).
    pub(crate) fn open(kind: BackendKind, sms: Option<u32>) -> Result<Runner> {
        crate::backend::check_partition(kind, sms)?;
        Ok(match kind {
            BackendKind::Cpu => Runner::Cpu(CpuBackend::new()),
            BackendKind::Cuda => Runner::Cuda(Box::new(CudaBackend::open_on(0, sms)?)),
        })
    }
}

impl EvalScalar for f32 {
    fn backend(r: &Runner) -> &dyn Backend<f32> {
        match r {
            Runner::Cpu(b) => b,
            Runner::Cuda(b) => b.as_ref(),
        }
    }
}

impl EvalScalar for f64 {
    fn backend(r: &Runner) -> &dyn Backend<f64> {
        match r {
            Runner::Cpu(b) => b,
            Runner::Cuda(b) => b.as_ref(),
        }
    }
}

/// One configuration to measure.
#[derive(Clone, Debug)]
struct Config {
    name: String,
    kind: ConfigKind,
    variant: Option<Variant>,
}

/// The configurations of one precision: every kernel the backend supports, then the plans. On
/// CUDA every cuSPARSE algorithm is listed even where the library is missing, so that its absence
/// is recorded (as skipped, with the reason) rather than silent; the CPU backend has none by
/// design.
fn configs<T: EvalScalar>(
    runner: &Runner,
    profile: Option<(&str, &Profile)>,
    params: &FormatParams,
) -> Vec<Config> {
    let b = T::backend(runner);
    let cuda = matches!(runner, Runner::Cuda(_));
    let mut out: Vec<Config> = Variant::ours()
        .into_iter()
        .chain(Variant::vendor())
        .filter(|v| b.supports(*v) || (cuda && v.is_vendor()))
        .map(|v| Config {
            name: v.name(),
            kind: if v.is_vendor() {
                ConfigKind::Vendor
            } else {
                ConfigKind::Ours
            },
            variant: Some(v),
        })
        .collect();
    for p in models::planners::<T>(profile, T::PRECISION, params) {
        out.push(Config {
            name: plan_config(p.model()),
            kind: ConfigKind::Plan,
            variant: None,
        });
    }
    out
}

/// A vector of `n` values uniform in [-1, 1) from a seeded ChaCha8 stream (the same x as
/// `sparsecast bench --seed`).
pub(crate) fn random_vector<T: Scalar>(n: usize, seed: u64) -> Vec<T> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| T::cast_f64(rng.random_range(-1.0..1.0)))
        .collect()
}

/// Progress weight of one configuration of `e`: a fixed cost plus its non-zeros.
fn weight(e: &CorpusEntry) -> u64 {
    1 + e.est_nnz / 100_000
}

fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Everything the loop shares.
struct Ctx<'a> {
    opts: &'a Options,
    runner: &'a Runner,
    profile: Option<(&'a str, &'a Profile)>,
    models: BTreeMap<Precision, Vec<EvalModel>>,
    appender: Appender,
    records: Vec<Record>,
    written: usize,
    /// Records that replaced an earlier one that had not failed (a file that changed): the file
    /// is rewritten at the end, one record per configuration. (A retried failure is appended,
    /// and replaces its record when the file is read, as expected.)
    replaced: usize,
    device: String,
    pb: indicatif::ProgressBar,
}

impl Ctx<'_> {
    fn base_record(
        &self,
        entry: &CorpusEntry,
        source: &SourceInfo,
        precision: Precision,
        cfg: &Config,
    ) -> Record {
        Record {
            schema: SCHEMA,
            matrix: entry.id.clone(),
            source: source.clone(),
            precision,
            config: cfg.name.clone(),
            kind: cfg.kind,
            format: cfg.variant.map(|v| v.format().name().to_string()),
            status: Status::Skipped,
            reason: None,
            backend: self.opts.backend.name().to_string(),
            device: self.device.clone(),
            runs: self.opts.protocol.runs,
            warmup: self.opts.protocol.warmup,
            median_s: None,
            warm_mean_s: None,
            protocol: Some(self.opts.protocol.clone()),
            spread: None,
            per_batch: None,
            graph: None,
            placement_medians: Vec::new(),
            retimed: 0,
            footprint_bytes: None,
            effective_bytes: None,
            max_rel_error: None,
            prepare_s: None,
            features: None,
            predictions: BTreeMap::new(),
            plan: None,
        }
    }

    fn push(&mut self, r: Record, w: u64) -> Result<()> {
        self.appender.append(&r)?;
        // A configuration measured again (retried, or its file changed) replaces its earlier
        // record, as reading the file back does.
        let same =
            |x: &Record| x.matrix == r.matrix && x.precision == r.precision && x.config == r.config;
        match self.records.iter().position(same) {
            Some(i) => {
                if self.records[i].status != Status::Failed {
                    self.replaced += 1;
                }
                self.records[i] = r;
            }
            None => self.records.push(r),
        }
        self.written += 1;
        self.pb.inc(w);
        Ok(())
    }

    fn log(&self, line: String) {
        if self.pb.is_hidden() {
            eprintln!("{line}");
        } else {
            self.pb.println(line);
        }
    }
}

/// Build a matrix: read the file or run the generator.
fn build(entry: &CorpusEntry) -> (Result<Csr<f64>>, SourceInfo) {
    match &entry.source {
        MatrixSource::File(p) => (
            crate::matrix::mm::read::<f64>(p),
            SourceInfo::File(p.clone()),
        ),
        MatrixSource::Generated(recipe) => {
            match recipe.build(crate::formats::default_max_bytes()) {
                Ok((m, spec)) => (Ok(m), SourceInfo::Generated(spec)),
                Err(e) => {
                    let info = match recipe {
                        Recipe::Spec(s) => SourceInfo::Generated(s.clone()),
                        Recipe::KronTo {
                            base, target_nnz, ..
                        } => SourceInfo::Recipe(format!(
                            "Kronecker expansion of {} to ~{target_nnz} non-zeros",
                            base.display()
                        )),
                    };
                    (Err(e), info)
                }
            }
        }
    }
}

/// One model's prediction of a kernel (models that do not cover it give `None`).
/// `family`: the matrix's ([`super::record::family_of`]), to mark an in-sample prediction.
pub(super) fn predict(
    m: &EvalModel,
    family: &str,
    features: &Features,
    v: Variant,
    params: &FormatParams,
) -> Option<Prediction> {
    let model: &dyn Model = m.model.as_ref();
    if !model.variants().contains(&v) {
        return None;
    }
    let (seconds, uncertainty_s, note) = match model.predict_detail(features, v, params) {
        Ok(p) => (Some(p.seconds), p.uncertainty, None),
        Err(e) => (None, None, Some(e.to_string())),
    };
    Some(Prediction {
        seconds,
        statistic: m.statistic,
        note,
        in_sample: m.trained_on(family),
        picked: false,
        uncertainty_s,
    })
}

/// The configuration (its name) that `m`'s second stage recommends for the matrix of
/// `features` over its predicted-fastest ([`Model::pick`]), among every kernel it covers at
/// `params`; `None` where it has no second stage or keeps its predicted-fastest.
pub(super) fn stage_pick(
    m: &EvalModel,
    family: &str,
    features: &Features,
    params: &FormatParams,
) -> Option<String> {
    let model: &dyn Model = m.model.as_ref();
    let mut preds: Vec<(String, f64)> = model
        .variants()
        .into_iter()
        .filter_map(|v| Some((v.name(), model.predict(features, v, params).ok()?)))
        .collect();
    preds.sort_by(|a, b| a.1.total_cmp(&b.1));
    let i = model.pick(features, &preds, Some(family))?;
    (i > 0).then(|| preds.swap_remove(i).0)
}

/// Measure the configurations `todo` of one matrix in precision `T`.
fn run_precision<T: EvalScalar>(
    ctx: &mut Ctx,
    entry: &CorpusEntry,
    source: &SourceInfo,
    a: &Csr<T>,
    todo: &[Config],
) -> Result<(usize, usize)> {
    let p = T::PRECISION;
    let w = weight(entry);
    let features = Features::compute(a);
    let x: Vec<T> = random_vector(a.ncols, ctx.opts.seed);
    let reference = Reference::new(a, &x);
    let planners = models::planners::<T>(ctx.profile, p, &ctx.opts.params);
    let backend = T::backend(ctx.runner);
    let (mut ok, mut not_ok) = (0, 0);
    // Each model's second-stage pick of this matrix, over every kernel it covers (not only
    // those left to measure, so that a resumed run marks the same one).
    let family = super::record::family_of(&entry.id, source);
    let picks: Vec<(String, String)> = ctx
        .models
        .get(&p)
        .into_iter()
        .flatten()
        .filter_map(|m| {
            let pick = stage_pick(m, &family, &features, &ctx.opts.params)?;
            Some((m.model.name().to_string(), pick))
        })
        .collect();
    let picked = |model: &str, cfg: &str| picks.iter().any(|(m, c)| m == model && c == cfg);
    for (i, cfg) in todo.iter().enumerate() {
        ctx.pb.set_message(format!(
            "{} {p} {} ({}/{})",
            entry.short_name(),
            cfg.name,
            i + 1,
            todo.len()
        ));
        let mut rec = ctx.base_record(entry, source, p, cfg);
        rec.features = Some(features.clone());
        // Whether the model named `name` trained on this matrix's family (a plan's prediction).
        let in_sample = |name: &str| {
            ctx.models
                .get(&p)
                .into_iter()
                .flatten()
                .any(|m| m.model.name() == name && m.trained_on(&family))
        };
        match cfg.variant {
            Some(v) => {
                for m in ctx.models.get(&p).into_iter().flatten() {
                    if let Some(mut pr) = predict(m, &family, &features, v, &ctx.opts.params) {
                        pr.picked = picked(m.model.name(), &cfg.name);
                        rec.predictions.insert(m.model.name().to_string(), pr);
                    }
                }
                let kc = KernelConfig {
                    variant: v,
                    params: ctx.opts.params.clone(),
                    block_size: ctx.opts.block_size,
                };
                rec.set_measurement(measure_kernel(
                    backend,
                    a,
                    &x,
                    &reference,
                    &kc,
                    &ctx.opts.protocol,
                ));
            }
            None => {
                let planner = planners
                    .iter()
                    .find(|pl| plan_config(pl.model()) == cfg.name);
                let m = match planner {
                    None => KernelMeasurement::skipped("the optimizer is not in this build"),
                    Some(pl) => {
                        let start = Instant::now();
                        match pl.plan(backend, a) {
                            Ok(mut planned) => {
                                let prepare_s = start.elapsed().as_secs_f64();
                                rec.predictions.insert(
                                    pl.model().to_string(),
                                    Prediction {
                                        seconds: Some(planned.predicted),
                                        statistic: planned.statistic,
                                        note: None,
                                        in_sample: in_sample(pl.model()),
                                        picked: false,
                                        uncertainty_s: None,
                                    },
                                );
                                rec.plan = Some(planned.info.clone());
                                let mut m = measure_prepared(
                                    planned.kernel.as_mut(),
                                    &x,
                                    &reference,
                                    &ctx.opts.protocol,
                                );
                                m.prepare_s = Some(prepare_s);
                                m
                            }
                            Err(e) => {
                                let mut m = KernelMeasurement::skipped(e.to_string());
                                if !matches!(e, Error::FormatRefused { .. } | Error::Unsupported(_))
                                {
                                    m.status = Status::Failed;
                                }
                                m
                            }
                        }
                    }
                };
                rec.set_measurement(m);
            }
        }
        if rec.status == Status::Ok {
            ok += 1;
        } else {
            not_ok += 1;
        }
        ctx.push(rec, w)?;
    }
    Ok((ok, not_ok))
}

/// Refuse to mix results of another backend, device or timing protocol into `existing`.
fn check_consistent(
    existing: &[Record],
    backend: &str,
    device: &str,
    p: &TimingProtocol,
) -> Result<()> {
    if let Some(r) = existing
        .iter()
        .find(|r| r.backend != backend || r.device != device || r.protocol.as_ref() != Some(p))
    {
        let theirs = r
            .protocol
            .as_ref()
            .map_or("the old per-launch protocol".to_string(), |q| q.describe());
        return Err(Error::Invalid(format!(
            "results.jsonl holds results of the {} backend on {} timed with {theirs}, but this \
             run uses the {backend} backend on {device} timed with {}; use another --out, or \
             the same settings to resume",
            r.backend,
            r.device,
            p.describe()
        )));
    }
    Ok(())
}

/// Run the evaluation (resuming from `out/results.jsonl`), then write the report.
/// `profile` is the profile's name and content; `command` is recorded in `run.json`. An output
/// directory this call created is removed again if it fails before any result was written.
pub fn run(
    opts: &Options,
    profile: Option<(&str, &Profile)>,
    command: &[String],
) -> Result<Outcome> {
    let existed = opts.out.exists();
    let r = run_in(opts, profile, command);
    if r.is_err() && !existed {
        let results = opts.out.join(super::RESULTS);
        if std::fs::metadata(&results).map_or(true, |m| m.len() == 0) {
            let _ = std::fs::remove_dir_all(&opts.out);
        }
    }
    r
}

fn run_in(
    opts: &Options,
    profile: Option<(&str, &Profile)>,
    command: &[String],
) -> Result<Outcome> {
    let results = opts.out.join(super::RESULTS);
    let mut entries = corpus::discover(&opts.corpus)?;
    let generated = generated_set(opts.generated, &entries);
    entries.extend(generated);
    if entries.is_empty() {
        return Err(Error::Invalid(
            "nothing to evaluate: no .mtx/.mtx.gz file under --corpus and --generated none".into(),
        ));
    }
    let runner = Runner::open(opts.backend, opts.sms)?;
    let device = <f64 as EvalScalar>::backend(&runner).device_name();
    let profile_ref = profile.map(|p| p.1);
    if let Some((name, p)) = profile {
        p.check_backend(opts.backend.name())
            .map_err(|e| Error::Invalid(format!("{name}: {e}")))?;
        // HYB runs as the profile's model predicts it (one backend serves both precisions).
        <f64 as EvalScalar>::backend(&runner).follow_hyb_launch(p.hyb_launch());
    }
    std::fs::create_dir_all(&opts.out).map_err(|e| Error::io(&opts.out, e))?;

    let loaded = store::load(&results)?;
    for w in &loaded.warnings {
        eprintln!("warning: {w}");
    }
    check_consistent(
        &loaded.records,
        opts.backend.name(),
        &device,
        &opts.protocol,
    )?;
    // A file that changed since its records were written (fixed, or replaced) is measured
    // again.
    let mut prints = inputs::load(&opts.out);
    let changed: HashSet<&str> = entries
        .iter()
        .filter_map(|e| match &e.source {
            MatrixSource::File(p) => {
                let before = prints.get(&e.id)?;
                (Fingerprint::of(p).as_ref() != Some(before)).then_some(e.id.as_str())
            }
            MatrixSource::Generated(_) => None,
        })
        .collect();
    for id in &changed {
        eprintln!("{id}: the file changed since it was measured; measuring it again");
    }
    let done: HashSet<Key> = loaded
        .records
        .iter()
        .filter(|r| !(opts.retry_failed && r.status == Status::Failed))
        .filter(|r| !changed.contains(r.matrix.as_str()))
        .map(Record::key)
        .collect();
    let resumed = done.len();

    let mut cfgs: BTreeMap<Precision, Vec<Config>> = BTreeMap::new();
    let mut model_map: BTreeMap<Precision, Vec<EvalModel>> = BTreeMap::new();
    for &p in &opts.precisions {
        cfgs.insert(
            p,
            match p {
                Precision::F32 => configs::<f32>(&runner, profile, &opts.params),
                Precision::F64 => configs::<f64>(&runner, profile, &opts.params),
            },
        );
        let ms = models::models(profile_ref, p, opts.models.as_deref())?;
        if let (Some((name, _)), true) = (profile, ms.is_empty()) {
            eprintln!("warning: {name} has no {p} section: no predictions in {p}");
        }
        model_map.insert(p, ms);
    }
    let model_names: Vec<String> = {
        let mut v: Vec<String> = model_map
            .values()
            .flatten()
            .map(|m| {
                format!(
                    "{} ({}, predicts the {:?})",
                    m.model.name(),
                    m.model.precision(),
                    m.statistic
                )
            })
            .collect();
        v.dedup();
        v
    };
    let plan_names: Vec<String> = cfgs
        .values()
        .flatten()
        .filter(|c| c.kind == ConfigKind::Plan)
        .map(|c| c.name.clone())
        .collect();

    let mut info = RunInfo::load_or_default(&opts.out);
    info.invocations.push(super::Invocation {
        sparsecast_version: env!("CARGO_PKG_VERSION").to_string(),
        command: command.to_vec(),
        backend: opts.backend.name().to_string(),
        device: device.clone(),
        profile: profile.map(|p| p.0.to_string()),
        models: model_names,
        plans: plan_names,
        has_optimizer: models::HAS_OPTIMIZER,
        precisions: opts.precisions.clone(),
        protocol: opts.protocol.clone(),
        max_format_bytes: opts.params.max_bytes,
        generated: format!("{:?}", opts.generated).to_lowercase(),
        corpus: opts.corpus.clone(),
        started_unix: now_unix(),
        finished_unix: None,
        resumed,
        written: 0,
    });
    info.save(&opts.out)?;

    let total: u64 = entries
        .iter()
        .map(|e| {
            weight(e)
                * opts
                    .precisions
                    .iter()
                    .map(|p| cfgs[p].len() as u64)
                    .sum::<u64>()
        })
        .sum();
    let pb = indicatif::ProgressBar::new(total);
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "evaluate [{bar:30}] {percent}% {msg} (elapsed {elapsed}, eta {eta})",
        )
        .expect("static template")
        .progress_chars("=> "),
    );
    // Redrawn while one configuration of a large matrix runs, so the clock does not stop.
    pb.enable_steady_tick(std::time::Duration::from_millis(500));
    let appender = Appender::open(&results, loaded.valid_len)?;
    let mut ctx = Ctx {
        opts,
        runner: &runner,
        profile,
        models: model_map,
        appender,
        records: loaded.records,
        written: 0,
        replaced: 0,
        device,
        pb,
    };
    if resumed > 0 {
        ctx.log(format!(
            "resuming: {resumed} finished configurations in {} are kept",
            results.display()
        ));
    }

    let n = entries.len();
    let mut started = false;
    for (i, entry) in entries.iter().enumerate() {
        let todo: Vec<(Precision, Vec<Config>)> = opts
            .precisions
            .iter()
            .map(|&p| {
                let left = cfgs[&p]
                    .iter()
                    .filter(|c| !done.contains(&(entry.id.clone(), p, c.name.clone())))
                    .cloned()
                    .collect::<Vec<_>>();
                (p, left)
            })
            .filter(|(_, l)| !l.is_empty())
            .collect();
        let finished: u64 = opts
            .precisions
            .iter()
            .map(|p| cfgs[p].len() as u64)
            .sum::<u64>()
            - todo.iter().map(|t| t.1.len() as u64).sum::<u64>();
        ctx.pb.inc(finished * weight(entry));
        if todo.is_empty() {
            continue;
        }
        if !started {
            // The ETA counts from the first configuration measured, not from resumed ones.
            ctx.pb.reset_eta();
            started = true;
        }
        let t0 = Instant::now();
        ctx.pb
            .set_message(format!("{} (loading)", entry.short_name()));
        let (built, source) = build(entry);
        if let MatrixSource::File(p) = &entry.source {
            if let Some(f) = Fingerprint::of(p) {
                prints.insert(entry.id.clone(), f);
                inputs::save(&opts.out, &prints)?;
            }
        }
        let (mut ok, mut not_ok) = (0, 0);
        match built {
            Err(e) => {
                for (p, left) in &todo {
                    for cfg in left {
                        let mut rec = ctx.base_record(entry, &source, *p, cfg);
                        rec.reason = Some(format!("{CANNOT_BUILD}{e}"));
                        ctx.push(rec, weight(entry))?;
                        not_ok += 1;
                    }
                }
            }
            Ok(m) => {
                for (p, left) in &todo {
                    let (o, n) = match p {
                        Precision::F32 => {
                            run_precision::<f32>(&mut ctx, entry, &source, &m.cast(), left)?
                        }
                        Precision::F64 => run_precision::<f64>(&mut ctx, entry, &source, &m, left)?,
                    };
                    ok += o;
                    not_ok += n;
                }
            }
        }
        ctx.log(format!(
            "[{}/{n}] {}: {ok} measured, {not_ok} not ({:.1} s)",
            i + 1,
            entry.id,
            t0.elapsed().as_secs_f64()
        ));
    }
    ctx.pb.finish_and_clear();
    let written = ctx.written;
    if let Some(last) = info.invocations.last_mut() {
        last.finished_unix = Some(now_unix());
        last.written = written;
    }
    info.save(&opts.out)?;
    let total = ctx.records.len();
    if ctx.replaced > 0 {
        store::rewrite(&results, &ctx.records)?;
    }
    super::report::write(&opts.out, &ctx.records, Some(&info))?;
    let unreadable: BTreeMap<String, String> = ctx
        .records
        .iter()
        .filter_map(|r| {
            let why = r.reason.as_deref()?.strip_prefix(CANNOT_BUILD)?;
            Some((r.matrix.clone(), why.to_string()))
        })
        .collect();
    let unreadable = unreadable.into_iter().collect();
    Ok(Outcome {
        matrices: n,
        resumed,
        written,
        total,
        unreadable,
    })
}
