//! `optimize` on a model of full features (`sparsecast` by default; [`crate::optimize::learned`]):
//! the answer (plan or best single configuration, and why), one line per block, and with
//! `--measure` the plan, the answer, every single configuration and cuSPARSE timed alike.

use super::search::{candidate_plans, reordered, variant_plans, Candidate, Tried, TUNE_ROUNDS};
use super::{race, Args};
use crate::backend::measure::{measure_kernel, Reference, Status};
use crate::backend::{
    Backend, BackendScalar, KernelConfig, Opened, Overlap, PreparedSpmv, TimingProtocol,
};
use crate::cli::common::{self, fmt_seconds as fs};
use crate::model::Model;
use crate::optimize::learned::{bandwidth_seconds, predict_block, SinglePrediction};
use crate::optimize::{
    optimize_learned, LearnedBlock, LearnedOptimum, LearnedOptions, MatrixIdentity, Plan, PlanRule,
    PreparedPlan, Provenance,
};
use crate::Csr;
use serde::Serialize;
use std::ops::Range;

/// One block as reported.
#[derive(Debug, Serialize)]
pub struct BlockOut {
    pub rows: [usize; 2],
    pub nnz: usize,
    pub config: String,
    pub predicted_seconds: f64,
    pub sigma: f64,
    /// The block's bytes at the bandwidth ceiling, seconds (reported beside a concurrent plan's
    /// blocks; not part of the plan's time, see `optimize::rule`).
    pub bandwidth_seconds: Option<f64>,
}

/// One plan timed both ways (`--overlap-splits`): the DP's plan, or the best single
/// configuration of ours cut into `blocks` blocks of equal non-zeros.
#[derive(Debug, Serialize)]
pub struct OverlapRow {
    /// `dp` or `split-K`.
    pub plan: String,
    pub blocks: usize,
    /// The blocks' configurations, `+`-joined.
    pub configs: String,
    /// Measured warm mean, seconds, each mode (`None`: failed, see `error`).
    pub serial_seconds: Option<f64>,
    pub concurrent_seconds: Option<f64>,
    /// Whether the concurrent timing really overlapped the blocks (a fork/join graph).
    pub overlapped: bool,
    /// Largest error of y against the f64 reference over both modes (poisoned y first).
    pub max_relative_error: f64,
    /// Predicted by the serial and the concurrent rule.
    pub predicted_serial_seconds: f64,
    pub predicted_concurrent_seconds: f64,
    /// Σ of the blocks' bytes at the bandwidth ceiling, seconds (for reference).
    pub bandwidth_seconds: f64,
    /// Σ of the blocks' predicted work beyond the launch floor, `Σ max(T_b − floor, 0)`, seconds:
    /// what the per-branch cost is fitted against.
    pub work_seconds: f64,
    pub error: Option<String>,
}

/// Measured times of one matrix (seconds, warm mean).
#[derive(Debug, Serialize, Default)]
pub struct MeasuredOut {
    /// The DP's plan (where it has two blocks or more).
    pub plan_seconds: Option<f64>,
    /// Its blocks timed alone.
    pub plan_block_seconds: Vec<f64>,
    /// The plan timed with each block left out in turn, in its mode (`PreparedPlan::time_left_out`):
    /// `plan_seconds` less the `k`-th is what block `k` costs inside the plan, beside the others.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub plan_left_out_seconds: Vec<f64>,
    /// What `optimize` answers (the plan if adopted, else the best single configuration).
    pub answer_seconds: Option<f64>,
    pub max_relative_error: f64,
    /// Every single configuration: (label, seconds or None, error).
    pub singles: Vec<(String, Option<f64>, Option<String>)>,
    pub best_single: Option<(String, f64)>,
    pub best_ours: Option<(String, f64)>,
    pub best_vendor: Option<(String, f64)>,
    /// Calibration: the best single configuration cut at the strips (same configuration in
    /// every block): (blocks, plan seconds, Σ work of the blocks alone beyond the floor).
    pub split_sample: Option<(usize, f64, f64)>,
    /// `--overlap-splits`: plans timed serially and concurrently.
    #[serde(default)]
    pub overlap: Vec<OverlapRow>,
    /// `--tune`: the answer by measurement.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tuned: Option<TunedOut>,
}

/// The tuned answer (`--tune`): the fastest measured of the candidate plans and the shortlist of
/// single configurations ([`crate::model::shortlist`]), the close ones raced in placements
/// ([`race`]).
#[derive(Debug, Serialize)]
pub struct TunedOut {
    /// `plan (N blocks, MODE)` (the DP's plan), `plan #K (N blocks, MODE)` (another candidate
    /// plan) or a configuration's label.
    pub answer: String,
    /// Its time in the search, seconds (warm mean, one placement).
    pub seconds: f64,
    /// The race among the candidates within [`race::RACE_BAND`] of the fastest of the search
    /// (at most [`race::RACE_MAX`], fastest first): (label, seconds over all its placements, or
    /// None when it failed). Empty when one candidate was that close; the answer is the race's
    /// fastest.
    pub raced: Vec<(String, Option<f64>)>,
    /// In how many memory placements each entrant of `raced` was timed (1 for one too slow or
    /// too large for more, [`TimingProtocol::wants_placements`]; 0: it failed).
    pub raced_placements: Vec<usize>,
    /// With --measure: the answer timed again after the choice, seconds (pooled over
    /// placements, side by side with the best single configuration) — free of the bias of
    /// taking the fastest of several noisy times, so it is what the summary compares.
    pub retimed_seconds: Option<f64>,
    /// With --measure: the best single configuration of the sweep timed again beside the
    /// answer, in placements — the fair comparison (the sweep's best is the fastest of many
    /// noisy times, biased low).
    pub best_single_retimed_seconds: Option<f64>,
    /// With --measure: whether those two times disagreed by more than [`race::FAIR_AGAIN`], so
    /// that the pair was raced again and each one's samples of both races pooled.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub fair_raced_twice: bool,
    /// What was timed, the plans first (the DP's plan in its mode, the same blocks in the other
    /// mode, the alternate rules' plans), then the shortlist in prediction order: (label,
    /// seconds or None when it could not be run).
    pub timed: Vec<(String, Option<f64>)>,
    /// Where the answer is a plan of two blocks or more: its blocks (first row, end row,
    /// configuration).
    pub blocks: Vec<(u64, u64, String)>,
}

/// One matrix's result.
#[derive(Debug, Serialize)]
pub struct LearnedReport {
    pub input: String,
    pub nrows: usize,
    pub nnz: usize,
    pub precision: crate::Precision,
    pub model: String,
    pub rule: PlanRule,
    pub cuts: Vec<usize>,
    pub feature_passes: f64,
    pub optimize_seconds: f64,
    pub plan: Vec<BlockOut>,
    pub plan_predicted: f64,
    pub plan_uncertainty: f64,
    pub best_single: Option<(String, f64)>,
    /// The other single configurations predicted within the best one's uncertainty (label,
    /// seconds): too close to tell apart by prediction (`--tune` times them).
    pub within_uncertainty: Vec<(String, f64)>,
    pub adopted: bool,
    pub verdict: String,
    pub answer_predicted: f64,
    pub measured: Option<MeasuredOut>,
}

fn blocks_out(b: &[LearnedBlock]) -> Vec<BlockOut> {
    b.iter()
        .map(|b| BlockOut {
            rows: [b.rows.start, b.rows.end],
            nnz: b.nnz,
            config: b.config.label(),
            predicted_seconds: b.predicted,
            sigma: b.sigma,
            bandwidth_seconds: b.bandwidth_s,
        })
        .collect()
}

/// A plan of `blocks` for `m`, run as `overlap` says.
pub(super) fn plan_of<T: crate::Scalar>(
    m: &Csr<T>,
    source: &str,
    by: &Provenance,
    blocks: &[(Range<usize>, KernelConfig, f64)],
    total: f64,
    overlap: Overlap,
) -> anyhow::Result<Plan> {
    let spec: Vec<(Range<usize>, KernelConfig)> = blocks
        .iter()
        .map(|(r, c, _)| (r.clone(), c.clone()))
        .collect();
    let mut p = Plan::by_rows(MatrixIdentity::of(source, m), by.precision, &spec)?;
    p.model = by.model.clone();
    p.profile = by.profile.clone();
    p.device = by.device.clone();
    p.predicted_seconds = Some(total);
    p.overlap = overlap;
    for (pb, (_, _, t)) in p.blocks.iter_mut().zip(blocks) {
        pb.predicted_seconds = Some(*t);
    }
    Ok(p)
}

pub(super) fn triples(b: &[LearnedBlock]) -> Vec<(Range<usize>, KernelConfig, f64)> {
    b.iter()
        .map(|b| (b.rows.clone(), b.config.clone(), b.predicted))
        .collect()
}

/// Optimize (and measure) one matrix.
#[allow(clippy::too_many_arguments)]
pub fn one<T: BackendScalar>(
    a: &Args,
    model: &dyn Model,
    opts: &LearnedOptions,
    by: &Provenance,
    measure: Option<&(Opened, TimingProtocol)>,
    source: &str,
    m: &Csr<T>,
    quiet: bool,
) -> anyhow::Result<LearnedReport> {
    let pb = common::progress(0, &format!("optimizing {source}"));
    pb.set_message("non-zeros of candidate blocks (features)");
    let opt = optimize_learned(m, model, opts, &|d, t| {
        pb.set_length(t);
        pb.set_position(d);
    });
    pb.finish_and_clear();
    let opt = opt.map_err(|e| anyhow::anyhow!("{source}: {e}"))?;
    if opt.seconds > 30.0 && !quiet {
        eprintln!(
            "note: {source}: {:.1} feature passes took {:.0} s; --feature-passes lowers it",
            opt.feature_passes, opt.seconds
        );
    }
    let chosen = opt.chosen();
    let plan = plan_of(
        m,
        source,
        by,
        &triples(&chosen),
        opt.chosen_predicted(),
        opt.rule.overlap,
    )?;
    let tune = a.tune.map(|k| k.unwrap_or(crate::model::SHORTLIST));
    if let (Some(p), None) = (&a.save_plan, tune) {
        plan.save(p)?;
    }
    let (measured, tuned_plan) = match measure {
        Some((be, protocol)) => {
            let (ms, tp) = measure_all(
                m,
                source,
                by,
                model,
                opts,
                &opt,
                &plan,
                be.get::<T>(),
                protocol,
                a,
                tune,
            )?;
            (Some(ms), tp)
        }
        None => (None, None),
    };
    if let (Some(p), Some(_)) = (&a.save_plan, tune) {
        // The tuned answer; the predicted one where nothing of the shortlist could be run.
        tuned_plan.as_ref().unwrap_or(&plan).save(p)?;
    }
    Ok(LearnedReport {
        input: source.to_string(),
        nrows: m.nrows,
        nnz: m.nnz(),
        precision: by.precision,
        model: by.model.clone(),
        rule: opt.rule,
        cuts: opt.cuts.clone(),
        feature_passes: opt.feature_passes,
        optimize_seconds: opt.seconds,
        plan: blocks_out(&opt.plan),
        plan_predicted: opt.plan_predicted,
        plan_uncertainty: opt.plan_uncertainty,
        best_single: opt
            .best_single()
            .map(|s| (s.config.label(), s.seconds.unwrap_or(f64::NAN))),
        within_uncertainty: opt
            .close_to_best()
            .iter()
            .map(|s| (s.config.label(), s.seconds.unwrap_or(f64::NAN)))
            .collect(),
        adopted: opt.adopted,
        verdict: opt.verdict.clone(),
        answer_predicted: opt.chosen_predicted(),
        measured,
    })
}

/// One configuration on every row, as a plan (predicted as the model predicts it, else 0).
fn single_plan<T: crate::Scalar>(
    m: &Csr<T>,
    source: &str,
    by: &Provenance,
    opt: &LearnedOptimum,
    s: &SinglePrediction,
) -> anyhow::Result<Plan> {
    let pred = s.seconds.unwrap_or(0.0);
    let whole = [(0..m.nrows, s.config.clone(), pred)];
    plan_of(m, source, by, &whole, pred, opt.rule.overlap)
}

/// A timed plan's label: `plan (N blocks, serial)` or `… concurrent` (the other candidate plans
/// of `--tune` are numbered and say where they come from: `plan #2 (N blocks, concurrent; the
/// DP's plan)`).
fn plan_label(p: &Plan, number: Option<(usize, &str)>) -> String {
    let (k, why) = number.map_or((String::new(), String::new()), |(k, why)| {
        (format!("#{k} "), format!("; {why}"))
    });
    format!(
        "plan {k}({} blocks, {}{why})",
        p.blocks.len(),
        p.overlap.name()
    )
}

/// The same blocks (rows and configurations) run the same way.
pub(super) fn same_plan(p: &Plan, q: &Plan) -> bool {
    p.overlap == q.overlap
        && p.launch_order == q.launch_order
        && p.blocks.len() == q.blocks.len()
        && p.blocks.iter().zip(&q.blocks).all(|(a, b)| {
            a.rows == b.rows
                && a.kernel == b.kernel
                && a.params == b.params
                && a.block_size == b.block_size
        })
}

/// The blocks' work beyond the launch floor, `Σ max(T_b − floor, 0)`, from their times alone:
/// what a plan's per-block (serial) or per-branch (concurrent) cost is fitted against.
fn work_beyond_floor(alone: &[f64], floor_s: f64) -> f64 {
    alone.iter().map(|&b| (b - floor_s).max(0.0)).sum()
}

/// Time a plan in its mode (checked against the reference first), its blocks alone, and with
/// `left_out` the plan with each block left out in turn (`PreparedPlan::time_left_out`; empty
/// otherwise): (warm mean, blocks alone, plan without each block, error).
fn time_plan<T: crate::Scalar>(
    be: &dyn Backend<T>,
    m: &Csr<T>,
    plan: &Plan,
    x: &[T],
    reference: &Reference,
    protocol: &TimingProtocol,
    left_out: bool,
) -> anyhow::Result<(f64, Vec<f64>, Vec<f64>, f64)> {
    let mut p = PreparedPlan::new(be, m, plan, "the plan")?;
    let err = p.check(x, reference)?;
    let t = p.time_blocks(protocol)?;
    let without = if left_out {
        p.time_left_out(protocol)?
    } else {
        Vec::new()
    };
    Ok((
        t.total.warm_mean(),
        t.blocks.iter().map(|b| b.warm_mean()).collect(),
        without.iter().map(|b| b.warm_mean()).collect(),
        err,
    ))
}

/// One prepared plan run and timed serially, then concurrently, its y checked against the
/// reference after a poisoned y in each mode: (serial, concurrent, overlapped, error).
fn time_both<T: crate::Scalar>(
    be: &dyn Backend<T>,
    m: &Csr<T>,
    plan: &Plan,
    x: &[T],
    reference: &Reference,
    protocol: &TimingProtocol,
) -> anyhow::Result<(f64, f64, bool, f64)> {
    let mut p = PreparedPlan::new(be, m, plan, "the plan")?;
    p.set_x(x)?;
    let (mut err, mut t) = (0.0f64, [0.0; 2]);
    let mut overlapped = false;
    for (k, mode) in [Overlap::Serial, Overlap::Concurrent]
        .into_iter()
        .enumerate()
    {
        p = p.with_overlap(mode);
        p.poison_y()?;
        p.run()?;
        err = err.max(reference.max_relative_error(&p.y()?));
        let timing = p.time(protocol)?;
        t[k] = timing.warm_mean();
        overlapped |= timing.concurrent;
    }
    Ok((t[0], t[1], overlapped, err))
}

/// Boundaries `[0, …, nrows]` of `k` blocks of about equal non-zeros, on 32-row groups.
fn equal_nnz_cuts(row_ptr: &[usize], k: usize) -> Vec<usize> {
    let nrows = row_ptr.len() - 1;
    let nnz = row_ptr[nrows];
    let mut cuts = vec![0];
    for q in 1..k {
        let target = nnz * q / k;
        let r = row_ptr.partition_point(|&p| p < target).min(nrows);
        let r = (r / 32 * 32).max(*cuts.last().unwrap_or(&0));
        if r > *cuts.last().unwrap_or(&0) && r < nrows {
            cuts.push(r);
        }
    }
    cuts.push(nrows);
    cuts
}

/// `--overlap-splits`: the DP's plan and the best single configuration of ours cut into each
/// number of blocks, timed both ways, with both rules' predictions.
#[allow(clippy::too_many_arguments)]
fn overlap_rows<T: crate::Scalar>(
    be: &dyn Backend<T>,
    m: &Csr<T>,
    source: &str,
    by: &Provenance,
    model: &dyn Model,
    opts: &LearnedOptions,
    opt: &LearnedOptimum,
    best_ours: Option<&SinglePrediction>,
    splits: &[usize],
    x: &[T],
    reference: &Reference,
    protocol: &TimingProtocol,
) -> Vec<OverlapRow> {
    let floor = opts.rule.floor_s;
    let rule_of = |mode: Overlap| match (mode == opts.rule.overlap, mode) {
        (true, _) => PlanRule {
            overlap: mode,
            ..opts.rule
        },
        (false, mode) => PlanRule::for_overlap(mode, floor),
    };
    let (serial, concurrent) = (rule_of(Overlap::Serial), rule_of(Overlap::Concurrent));
    let vb = model.precision().bytes() as u64;
    let gbs = opts.bounds.as_ref().map_or(f64::NAN, |b| {
        let csr = (m.nnz() as u64) * (4 + vb) + (m.nrows as u64 + 1) * 4;
        b.ceiling_gbs(csr + crate::formats::vector_bytes(m.nrows as u64, m.ncols as u64, vb))
    });
    // Each plan: its name and its blocks as (rows, config, predicted alone, bandwidth time).
    type Block = (Range<usize>, KernelConfig, f64, f64);
    let mut plans: Vec<(String, Vec<Block>)> = Vec::new();
    if opt.plan.len() >= 2 {
        plans.push((
            "dp".into(),
            opt.plan
                .iter()
                .map(|b| {
                    let f =
                        crate::features::Features::compute(&m.slice_rows(b.rows.start, b.rows.end));
                    let beta = bandwidth_seconds(&f, &b.config, vb, gbs);
                    (b.rows.clone(), b.config.clone(), b.predicted, beta)
                })
                .collect(),
        ));
    }
    if let Some(s) = best_ours {
        for &k in splits.iter().filter(|&&k| k >= 2) {
            let cuts = equal_nnz_cuts(&m.row_ptr, k);
            let blocks = cuts
                .windows(2)
                .map(|w| {
                    let f = crate::features::Features::compute(&m.slice_rows(w[0], w[1]));
                    let (t, _) = predict_block(model, &f, &s.config);
                    let beta = bandwidth_seconds(&f, &s.config, vb, gbs);
                    (w[0]..w[1], s.config.clone(), t.unwrap_or(f64::NAN), beta)
                })
                .collect::<Vec<_>>();
            plans.push((format!("split-{}", blocks.len()), blocks));
        }
    }
    plans
        .into_iter()
        .map(|(name, blocks)| {
            let times: Vec<f64> = blocks.iter().map(|b| b.2).collect();
            let betas: Vec<f64> = blocks.iter().map(|b| b.3).collect();
            let mut row = OverlapRow {
                plan: name,
                blocks: blocks.len(),
                configs: {
                    let mut l: Vec<String> = blocks.iter().map(|b| b.1.label()).collect();
                    l.dedup();
                    l.join("+")
                },
                serial_seconds: None,
                concurrent_seconds: None,
                overlapped: false,
                max_relative_error: f64::NAN,
                predicted_serial_seconds: serial.plan_time(&times),
                predicted_concurrent_seconds: concurrent.plan_time(&times),
                bandwidth_seconds: betas.iter().sum(),
                work_seconds: times.iter().map(|&t| (t - floor).max(0.0)).sum(),
                error: None,
            };
            // A block the model cannot predict is stored without a time (0).
            let spec: Vec<(Range<usize>, KernelConfig, f64)> = blocks
                .into_iter()
                .map(|(r, c, t, _)| (r, c, if t.is_finite() { t } else { 0.0 }))
                .collect();
            let res = plan_of(m, source, by, &spec, 0.0, Overlap::Serial)
                .and_then(|p| time_both(be, m, &p, x, reference, protocol));
            match res {
                Ok((s, c, o, e)) => {
                    row.serial_seconds = Some(s);
                    row.concurrent_seconds = Some(c);
                    row.overlapped = o;
                    row.max_relative_error = e;
                }
                Err(e) => row.error = Some(format!("{e:#}")),
            }
            row
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn measure_all<T: BackendScalar>(
    m: &Csr<T>,
    source: &str,
    by: &Provenance,
    model: &dyn Model,
    opts: &LearnedOptions,
    opt: &LearnedOptimum,
    answer: &Plan,
    be: &dyn Backend<T>,
    protocol: &TimingProtocol,
    a: &Args,
    tune: Option<usize>,
) -> anyhow::Result<(MeasuredOut, Option<Plan>)> {
    let x: Vec<T> = common::random_vector(m.ncols, a.seed);
    let reference = Reference::new(m, &x);
    let mut out = MeasuredOut::default();
    let (t, _, _, err) = time_plan(be, m, answer, &x, &reference, protocol, false)?;
    out.answer_seconds = Some(t);
    out.max_relative_error = err;
    let mut dp_plan = None;
    if opt.plan.len() >= 2 {
        let p = plan_of(
            m,
            source,
            by,
            &triples(&opt.plan),
            opt.plan_predicted,
            opt.rule.overlap,
        )?;
        let (t, blocks, without, err) = time_plan(be, m, &p, &x, &reference, protocol, true)?;
        out.plan_seconds = Some(t);
        out.plan_block_seconds = blocks;
        out.plan_left_out_seconds = without;
        out.max_relative_error = out.max_relative_error.max(err);
        dp_plan = Some(p);
    }
    // --tune alone times only the shortlist; --measure times every single configuration.
    // The recommended single configuration (first: the second stage's pick, which may lie
    // beyond the k fastest predictions) is always timed.
    let mut short: Option<Vec<usize>> = tune.map(|k| {
        let mut s = crate::model::shortlist(
            &opt.singles,
            k,
            |s| s.seconds,
            |s| s.config.variant.is_vendor(),
            |s| s.config.variant.format(),
        );
        if opt.best_single().is_some() && !s.contains(&0) {
            s.push(0);
        }
        s
    });
    // The index in `opt.singles` of each entry of `out.singles`.
    let mut timed_idx = Vec::new();
    let time_single = |i: usize, out: &mut MeasuredOut| {
        let config = &opt.singles[i].config;
        let k = measure_kernel(be, m, &x, &reference, config, protocol);
        let (t, e) = match (k.status, k.warm_mean_s) {
            (Status::Ok, Some(t)) => (Some(t), None),
            (st, _) => (
                None,
                Some(format!("{}: {}", st.name(), k.reason.unwrap_or_default())),
            ),
        };
        out.singles.push((config.label(), t, e));
    };
    for i in 0..opt.singles.len() {
        if a.measure || short.as_ref().is_some_and(|v| v.contains(&i)) {
            timed_idx.push(i);
            time_single(i, &mut out);
        }
    }
    // The shortlist's second step: the other block sizes of its fastest measured
    // configuration of ours (crate::model::block_size_siblings says why).
    if let Some(short) = short.as_mut() {
        let measured = |i: usize| {
            let j = timed_idx.iter().position(|&t| t == i)?;
            out.singles[j].1
        };
        let siblings = crate::model::block_size_siblings(
            &opt.singles,
            short,
            measured,
            |s| s.seconds,
            |s| s.config.variant.is_vendor(),
            |s| s.config.at_default_block_size(),
        );
        for i in siblings {
            if !timed_idx.contains(&i) {
                timed_idx.push(i);
                time_single(i, &mut out);
            }
            short.push(i);
        }
    }
    let best = |vendor: Option<bool>| {
        out.singles
            .iter()
            .zip(timed_idx.iter().map(|&i| &opt.singles[i]))
            .filter(|(_, s)| vendor.map_or(true, |v| s.config.variant.is_vendor() == v))
            .filter_map(|((l, t, _), _)| t.map(|t| (l.clone(), t)))
            .min_by(|x, y| x.1.total_cmp(&y.1))
    };
    // The best measured ones only where every configuration was timed.
    if a.measure {
        out.best_single = best(None);
        out.best_ours = best(Some(false));
        out.best_vendor = best(Some(true));
    }
    let mut tuned_plan = None;
    if let Some(short) = &short {
        // The plans first (the DP's plan in its mode, then the other candidate plans), then
        // the shortlist in prediction order.
        let mut tried = Tried::default();
        if let Some(p) = &dp_plan {
            tried.push(plan_label(p, None), p.clone(), out.plan_seconds, None);
        }
        // Time one more candidate plan, unless it is one already timed.
        let mut time_one = |(why, p, blocks): Candidate, tried: &mut Tried| {
            if tried.plans.iter().any(|q| same_plan(q, &p)) {
                return;
            }
            let t = match time_plan(be, m, &p, &x, &reference, protocol, false) {
                Ok((t, _, _, err)) => {
                    out.max_relative_error = out.max_relative_error.max(err);
                    Some(t)
                }
                Err(e) => {
                    eprintln!(
                        "note: {source}: a {} not timed: {e:#}",
                        plan_label(&p, None)
                    );
                    None
                }
            };
            let label = plan_label(&p, Some((tried.plans.len() + 1, why)));
            tried.push(label, p, t, blocks);
        };
        for c in candidate_plans(m, source, by, opt)? {
            time_one(c, &mut tried);
        }
        // Further rounds, best first: the variants of the fastest plan not yet varied, while it
        // is within SEARCH_BAND of the fastest plan.
        for _ in 0..TUNE_ROUNDS {
            let Some(blocks) = tried.next_to_expand() else {
                break;
            };
            let names = [
                "the fastest plan not yet varied, one block at another block size",
                "the fastest plan not yet varied, one block at its runner-up",
            ];
            for c in variant_plans(m, source, by, opt, &blocks, names)? {
                time_one(c, &mut tried);
            }
        }
        // The fastest concurrent plans launched longest-predicted block first.
        for c in reordered(&tried.plans, &tried.timed) {
            time_one(c, &mut tried);
        }
        let Tried {
            plans, mut timed, ..
        } = tried;
        for &i in short {
            let j = timed_idx.iter().position(|&t| t == i);
            timed.push((
                opt.singles[i].config.label(),
                j.and_then(|j| out.singles[j].1),
            ));
        }
        // The close candidates raced in placements (super::race); the answer is the race's
        // fastest (the search's fastest where nothing could be raced).
        let plan_at = |k: usize| -> anyhow::Result<Plan> {
            match plans.get(k) {
                Some(p) => Ok(p.clone()),
                None => single_plan(m, source, by, opt, &opt.singles[short[k - plans.len()]]),
            }
        };
        let times: Vec<Option<f64>> = timed.iter().map(|(_, t)| *t).collect();
        let close = race::entrants(&times);
        let (mut raced, mut raced_placements) = (Vec::new(), Vec::new());
        let mut answer = close.first().copied();
        if close.len() >= 2 {
            let entrants = close
                .iter()
                .map(|&k| plan_at(k))
                .collect::<anyhow::Result<Vec<_>>>()?;
            let r = race::race(be, m, &entrants, &x, &reference, protocol);
            out.max_relative_error = out.max_relative_error.max(r.max_relative_error);
            answer = close
                .iter()
                .zip(&r.seconds)
                .filter_map(|(&k, t)| t.as_ref().ok().map(|&t| (k, t)))
                .min_by(|x, y| x.1.total_cmp(&y.1))
                .map(|(k, _)| k)
                .or(answer);
            raced_placements = r.placements;
            raced = close
                .iter()
                .zip(r.seconds)
                .map(|(&k, t)| (timed[k].0.clone(), t.ok()))
                .collect();
        }
        if let Some(k) = answer {
            let t = timed[k].1.unwrap_or(f64::NAN);
            let p = plan_at(k)?;
            // With --measure: the answer and the best single configuration of the sweep timed
            // again, side by side in placements, after the choice (so neither time is the
            // fastest of several noisy ones): the fair comparison.
            let best = out
                .best_single
                .as_ref()
                .and_then(|(label, _)| opt.singles.iter().find(|s| &s.config.label() == label));
            let (mut retimed_seconds, mut best_single_retimed_seconds) = (None, None);
            let mut fair_raced_twice = false;
            if a.measure {
                let mut pair = vec![p.clone()];
                if let Some(s) = best {
                    pair.push(single_plan(m, source, by, opt, s)?);
                }
                let mut r = race::race(be, m, &pair, &x, &reference, protocol);
                if r.disagree(race::FAIR_AGAIN) {
                    let more = race::race(be, m, &pair, &x, &reference, protocol);
                    r = r.pool(more);
                    fair_raced_twice = true;
                }
                out.max_relative_error = out.max_relative_error.max(r.max_relative_error);
                let mut it = r.seconds.into_iter();
                retimed_seconds = Some(it.next().expect("the answer").map_err(anyhow::Error::msg)?);
                best_single_retimed_seconds = it.next().transpose().map_err(anyhow::Error::msg)?;
            }
            let blocks = match p.blocks.len() {
                1 => Vec::new(),
                _ => p
                    .blocks
                    .iter()
                    .map(|b| (b.rows[0], b.rows[1], b.kernel_config().label()))
                    .collect(),
            };
            out.tuned = Some(TunedOut {
                answer: timed[k].0.clone(),
                seconds: t,
                raced,
                raced_placements,
                retimed_seconds,
                best_single_retimed_seconds,
                fair_raced_twice,
                timed,
                blocks,
            });
            tuned_plan = Some(p);
        }
    }
    if let Some(splits) = &a.overlap_splits {
        // The best single configuration of ours as measured (else as predicted).
        let ours = out
            .best_ours
            .as_ref()
            .and_then(|(l, _)| opt.singles.iter().find(|s| &s.config.label() == l))
            .or_else(|| {
                opt.singles
                    .iter()
                    .find(|s| !s.config.variant.is_vendor() && s.seconds.is_some())
            });
        out.overlap = overlap_rows(
            be, m, source, by, model, opts, opt, ours, splits, &x, &reference, protocol,
        );
        for r in &out.overlap {
            if r.max_relative_error.is_finite() {
                out.max_relative_error = out.max_relative_error.max(r.max_relative_error);
            }
        }
    }
    if a.calibrate && opt.cuts.len() > 2 {
        // The best single configuration of ours cut at the strips, one block per strip, run
        // serially: what the serial rule's per-block cost is fitted on (cut into equal parts of
        // one configuration and run concurrently, the blocks cost ≈ nothing per branch, which
        // says nothing of the DP's plans: see optimize::rule).
        if let Some(s) = opt
            .singles
            .iter()
            .find(|s| !s.config.variant.is_vendor() && s.seconds.is_some())
        {
            let blocks: Vec<(Range<usize>, KernelConfig, f64)> = opt
                .cuts
                .windows(2)
                .map(|w| (w[0]..w[1], s.config.clone(), 0.0))
                .collect();
            let p = plan_of(m, source, by, &blocks, 0.0, Overlap::Serial)?;
            if let Ok((t, alone, _, _)) = time_plan(be, m, &p, &x, &reference, protocol, false) {
                let work = work_beyond_floor(&alone, opt.rule.floor_s);
                out.split_sample = Some((blocks.len(), t, work));
            }
        }
    }
    Ok((out, tuned_plan))
}

/// Print one matrix's plans under several models side by side: one line per block range (rows,
/// configuration, predicted time), then each model's answer.
pub fn print_side_by_side(rs: &[LearnedReport]) {
    let Some(r0) = rs.first() else { return };
    println!(
        "{}: {} rows, {} non-zeros, {}, {} model{}",
        r0.input,
        r0.nrows,
        r0.nnz,
        r0.precision,
        rs.len(),
        if rs.len() == 1 { "" } else { "s" }
    );
    let w = rs.iter().map(|r| r.model.len()).max().unwrap_or(5).max(5);
    println!(
        "  {:<w$}  {:>21}  {:<18} {:>10}",
        "model", "rows", "configuration", "predicted"
    );
    for r in rs {
        for (k, b) in r.plan.iter().enumerate() {
            println!(
                "  {:<w$}  {:>10}..{:<9}  {:<18} {:>10}",
                if k == 0 { r.model.as_str() } else { "" },
                b.rows[0],
                b.rows[1],
                b.config,
                fs(b.predicted_seconds)
            );
        }
        let single = r
            .best_single
            .as_ref()
            .map_or("-".into(), |(l, t)| format!("{l} {}", fs(*t)));
        println!(
            "  {:<w$}  → {}: plan {} vs best single {}",
            "",
            if r.adopted {
                "the plan"
            } else {
                "one configuration"
            },
            fs(r.plan_predicted),
            single
        );
    }
}

/// Print one matrix compactly.
pub fn print(r: &LearnedReport) {
    println!(
        "{}: {} rows, {} non-zeros, {} model, {} ({:.1} feature passes, {:.2} s)",
        r.input, r.nrows, r.nnz, r.model, r.precision, r.feature_passes, r.optimize_seconds
    );
    println!(
        "  plan ({} block{}, run {}, predicted {} ± {}):",
        r.plan.len(),
        if r.plan.len() == 1 { "" } else { "s" },
        r.rule.overlap,
        fs(r.plan_predicted),
        fs(r.plan_uncertainty)
    );
    for b in &r.plan {
        println!(
            "    rows {:>10}..{:<10} {:<18} {:>10}",
            b.rows[0],
            b.rows[1],
            b.config,
            fs(b.predicted_seconds)
        );
    }
    if let Some((l, t)) = &r.best_single {
        let close: Vec<String> = r
            .within_uncertainty
            .iter()
            .map(|(l, t)| format!("{l} ({})", fs(*t)))
            .collect();
        let close = match close.is_empty() {
            true => String::new(),
            false => format!("; within its uncertainty: {}", close.join(", ")),
        };
        println!("  best single configuration: {l} {}{close}", fs(*t));
    }
    println!(
        "  answer: {} — {}",
        if r.adopted {
            "the plan"
        } else {
            "one configuration"
        },
        r.verdict
    );
    let tuned = r.measured.as_ref().is_some_and(|m| m.tuned.is_some());
    if !r.adopted && !r.within_uncertainty.is_empty() && !tuned {
        println!(
            "  too close to call by prediction: `--tune` on the device times the {} \
             predicted-fastest, the fastest cuSPARSE algorithm and the DP's plans, and keeps the \
             fastest measured",
            crate::model::SHORTLIST
        );
    }
    if let Some(ms) = &r.measured {
        let o = |v: &Option<(String, f64)>| {
            v.as_ref()
                .map_or("-".into(), |(l, t)| format!("{l} {}", fs(*t)))
        };
        println!(
            "  measured: answer {}, plan {}, best single {}, best ours {}, best cuSPARSE {}",
            ms.answer_seconds.map_or("-".into(), fs),
            ms.plan_seconds.map_or("-".into(), fs),
            o(&ms.best_single),
            o(&ms.best_ours),
            o(&ms.best_vendor)
        );
        if let Some(t) = &ms.tuned {
            println!(
                "  tuned answer: {} — measured {}{}, the fastest of {} timed: {}",
                t.answer,
                fs(t.seconds),
                t.retimed_seconds.map_or(String::new(), |r| format!(
                    " (timed again: {}{}{})",
                    fs(r),
                    t.best_single_retimed_seconds
                        .map_or(String::new(), |b| format!(
                            "; the best single again: {}",
                            fs(b)
                        )),
                    match t.fair_raced_twice {
                        true => format!(
                            "; both twice, their first times more than {:.0} % apart",
                            100.0 * race::FAIR_AGAIN
                        ),
                        false => String::new(),
                    }
                )),
                t.timed.len(),
                common::fmt_timed(&t.timed)
            );
            if !t.raced.is_empty() {
                println!(
                    "    the {} within {:.0} % of the fastest, timed again side by side in \
                     memory placements (the answer is the fastest here): {}",
                    t.raced.len(),
                    race::RACE_BAND * 100.0,
                    common::fmt_timed(&t.raced)
                );
            }
            for (r0, r1, c) in &t.blocks {
                println!("    rows {:>10}..{:<10} {c}", r0, r1);
            }
        }
        if !ms.overlap.is_empty() {
            println!(
                "    {:<9} {:>6} {:>10} {:>10} {:>10}  {:<21} configs",
                "overlap", "blocks", "serial", "concurrent", "best", "predicted ser / conc"
            );
        }
        for o in &ms.overlap {
            let t = |v: Option<f64>| v.map_or("-".into(), fs);
            println!(
                "    {:<9} {:>6} {:>10} {:>10} {:>10}  {:<21} {}{}",
                o.plan,
                o.blocks,
                t(o.serial_seconds),
                t(o.concurrent_seconds),
                t(ms.best_single.as_ref().map(|b| b.1)),
                format!(
                    "{} / {}",
                    fs(o.predicted_serial_seconds),
                    fs(o.predicted_concurrent_seconds)
                ),
                o.configs,
                o.error
                    .as_ref()
                    .map_or(String::new(), |e| format!("  error: {e}"))
            );
        }
    }
}

/// The summary over matrices: shares and speed-ups against the targets of the issue.
#[derive(Debug, Serialize, Default)]
pub struct LearnedSummary {
    pub matrices: usize,
    pub adopted: usize,
    pub measured: usize,
    /// Answers within 1.02× of the best measured single configuration.
    pub within_102: usize,
    /// Answers ≥ 1.15× faster than the best measured single configuration.
    pub faster_115: usize,
    /// DP plans (≥ 2 blocks, adopted or not) ≥ 1.15× faster than the best single.
    pub plan_faster_115: usize,
    pub plans_measured: usize,
    /// Geometric means: best single / answer, best cuSPARSE / answer.
    pub geomean_vs_best_single: Option<f64>,
    pub geomean_vs_best_vendor: Option<f64>,
    pub worst_vs_best_single: Option<f64>,
    /// Median |predicted − measured| / measured of the answer.
    pub median_answer_error: Option<f64>,
    /// The per-block cost fitted on the calibration samples, and how many there were.
    pub fitted_block_s: Option<f64>,
    pub calibration_samples: usize,
    /// The concurrent rule's per-branch cost fitted on the DP plans of `--overlap-splits` run
    /// concurrently (chain `floor + Σ w_b + (blocks − 1)·block_s`), and how many there were.
    pub fitted_concurrent_block_s: Option<f64>,
    pub concurrent_samples: usize,
    /// `--measure --tune`: the tuned answer (timed again after the choice, in placements) on the matrices measured.
    pub tuned: Option<TunedSummary>,
}

/// The tuned answers against the best measured single configuration and cuSPARSE.
#[derive(Debug, Serialize, Default)]
pub struct TunedSummary {
    pub measured: usize,
    pub within_102: usize,
    /// Tuned answers ≥ 1.15× faster than the sweep's best single configuration.
    pub faster_115: usize,
    pub geomean_vs_best_single: f64,
    pub worst_vs_best_single: f64,
    pub geomean_vs_best_vendor: Option<f64>,
    /// The same against the best single configuration timed again beside it (fair: both timed after the choice, in placements).
    pub retimed: usize,
    pub within_102_retimed: usize,
    /// Tuned answers ≥ 1.15× faster than the best single configuration timed again beside them.
    pub faster_115_retimed: usize,
    pub geomean_vs_retimed_best_single: Option<f64>,
    pub worst_vs_retimed_best_single: Option<f64>,
}

/// `best single / tuned` and `best cuSPARSE / tuned` per matrix where both were measured.
fn tuned_summary(rs: &[LearnedReport]) -> Option<TunedSummary> {
    let pairs: Vec<(f64, Option<f64>, Option<f64>)> = rs
        .iter()
        .filter_map(|r| {
            let ms = r.measured.as_ref()?;
            let tu = ms.tuned.as_ref()?;
            let t = tu.retimed_seconds?;
            let (_, b) = ms.best_single.as_ref()?;
            Some((
                b / t,
                ms.best_vendor.as_ref().map(|(_, v)| v / t),
                tu.best_single_retimed_seconds.map(|b| b / t),
            ))
        })
        .collect();
    if pairs.is_empty() {
        return None;
    }
    let gm = |xs: &[f64]| (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp();
    let single: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let vendor: Vec<f64> = pairs.iter().filter_map(|p| p.1).collect();
    let again: Vec<f64> = pairs.iter().filter_map(|p| p.2).collect();
    let worst = |xs: &[f64]| xs.iter().copied().fold(f64::INFINITY, f64::min);
    Some(TunedSummary {
        measured: pairs.len(),
        within_102: single.iter().filter(|&&x| x >= 1.0 / 1.02).count(),
        faster_115: single.iter().filter(|&&x| x >= 1.15).count(),
        geomean_vs_best_single: gm(&single),
        worst_vs_best_single: worst(&single),
        geomean_vs_best_vendor: (!vendor.is_empty()).then(|| gm(&vendor)),
        retimed: again.len(),
        within_102_retimed: again.iter().filter(|&&x| x >= 1.0 / 1.02).count(),
        faster_115_retimed: again.iter().filter(|&&x| x >= 1.15).count(),
        geomean_vs_retimed_best_single: (!again.is_empty()).then(|| gm(&again)),
        worst_vs_retimed_best_single: (!again.is_empty()).then(|| worst(&again)),
    })
}

pub fn summarize(rs: &[LearnedReport]) -> LearnedSummary {
    let mut s = LearnedSummary {
        matrices: rs.len(),
        adopted: rs.iter().filter(|r| r.adopted).count(),
        ..Default::default()
    };
    let (mut g1, mut g2, mut n2, mut errs, mut worst) = (0.0, 0.0, 0, Vec::new(), f64::INFINITY);
    let (mut samples, mut conc) = (Vec::new(), Vec::new());
    for r in rs {
        let Some(ms) = &r.measured else { continue };
        if let (Some(p), Some((_, b))) = (ms.plan_seconds, &ms.best_single) {
            s.plans_measured += 1;
            s.plan_faster_115 += usize::from(b / p >= 1.15);
        }
        let (Some(t), Some((_, b))) = (ms.answer_seconds, &ms.best_single) else {
            continue;
        };
        s.measured += 1;
        s.within_102 += usize::from(t <= 1.02 * b);
        s.faster_115 += usize::from(b / t >= 1.15);
        g1 += (b / t).ln();
        worst = worst.min(b / t);
        if let Some((_, v)) = &ms.best_vendor {
            g2 += (v / t).ln();
            n2 += 1;
        }
        errs.push((r.answer_predicted - t).abs() / t);
        if let Some(x) = ms.split_sample {
            samples.push(x);
        }
        // The per-branch cost is fitted on the DP's plans, the ones the rule prices (equal
        // splits of one configuration overshoot their predicted work: see optimize::rule):
        // those run concurrently by `--overlap-splits`, and the DP's own plan where the rule is
        // concurrent (the default since session 48), from its blocks' times alone.
        if r.rule.overlap == Overlap::Concurrent && ms.plan_block_seconds.len() >= 2 {
            if let Some(t) = ms.plan_seconds {
                let work = work_beyond_floor(&ms.plan_block_seconds, r.rule.floor_s);
                conc.push((ms.plan_block_seconds.len(), t, work));
            }
        }
        for o in ms.overlap.iter().filter(|o| o.plan == "dp") {
            if let (Some(t), true, true) = (
                o.concurrent_seconds,
                o.overlapped,
                o.work_seconds.is_finite(),
            ) {
                conc.push((o.blocks, t, o.work_seconds));
            }
        }
    }
    if s.measured > 0 {
        s.geomean_vs_best_single = Some((g1 / s.measured as f64).exp());
        s.worst_vs_best_single = Some(worst);
        errs.sort_by(f64::total_cmp);
        s.median_answer_error = Some(errs[errs.len() / 2]);
    }
    if n2 > 0 {
        s.geomean_vs_best_vendor = Some((g2 / n2 as f64).exp());
    }
    s.tuned = tuned_summary(rs);
    s.calibration_samples = samples.len();
    s.concurrent_samples = conc.len();
    s.fitted_concurrent_block_s = rs
        .first()
        .and_then(|r| PlanRule::fit_block_s(r.rule.floor_s, &conc));
    s.fitted_block_s = rs
        .first()
        .and_then(|r| PlanRule::fit_block_s(r.rule.floor_s, &samples));
    s
}

pub fn print_summary(s: &LearnedSummary) {
    println!(
        "summary: {} matrices, plan adopted on {}; measured {}: answer ≤ 1.02× best single on {}, \
         ≥ 1.15× faster on {}; DP plans ≥ 1.15× faster on {} of {}",
        s.matrices,
        s.adopted,
        s.measured,
        s.within_102,
        s.faster_115,
        s.plan_faster_115,
        s.plans_measured
    );
    let x = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.3}×"));
    println!(
        "  speed of the answer: geomean {} of the best single (worst {}), {} of the best cuSPARSE; \
         median prediction error {}",
        x(s.geomean_vs_best_single),
        x(s.worst_vs_best_single),
        x(s.geomean_vs_best_vendor),
        s.median_answer_error
            .map_or("-".into(), |e| format!("{:.1} %", 100.0 * e))
    );
    if let Some(t) = &s.tuned {
        println!(
            "  tuned answer (--tune, timed again): ≤ 1.02× best single on {} of {}, ≥ 1.15× \
             faster on {}, geomean {} of the best single (worst {}), {} of the best cuSPARSE",
            t.within_102,
            t.measured,
            t.faster_115,
            x(Some(t.geomean_vs_best_single)),
            x(Some(t.worst_vs_best_single)),
            x(t.geomean_vs_best_vendor)
        );
        if t.retimed > 0 {
            println!(
                "  tuned answer against the best single timed again beside it: ≤ 1.02× on {} \
                 of {}, ≥ 1.15× faster on {}, geomean {} (worst {})",
                t.within_102_retimed,
                t.retimed,
                t.faster_115_retimed,
                x(t.geomean_vs_retimed_best_single),
                x(t.worst_vs_retimed_best_single)
            );
        }
    }
    if let Some(b) = s.fitted_concurrent_block_s {
        println!(
            "  concurrent: per-branch cost {:.2} µs from {} DP plans run concurrently \
             (optimize --overlap concurrent --block-cost-us {:.2})",
            b * 1e6,
            s.concurrent_samples,
            b * 1e6
        );
    }
    if let Some(b) = s.fitted_block_s {
        println!(
            "  calibration: serial per-block cost {:.2} µs from {} split plans run serially \
             (optimize --overlap serial --block-cost-us {:.2})",
            b * 1e6,
            s.calibration_samples,
            b * 1e6
        );
    }
}
