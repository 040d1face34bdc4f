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

mod measure;
mod print;
mod summary;
use measure::*;
pub use print::{print, print_side_by_side};
pub use summary::{print_summary, summarize};

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
/// ([`race`]) and chosen among by the race pooled with the search ([`race::with_search`]).
#[derive(Debug, Serialize)]
pub struct TunedOut {
    /// `plan (N blocks, MODE)` (the DP's plan), `plan #K (N blocks, MODE)` (another candidate
    /// plan) or a configuration's label.
    pub answer: String,
    /// Its time in the search, seconds (warm mean, one placement).
    pub seconds: f64,
    /// The race among the candidates within [`race::RACE_BAND`] of the fastest of the search
    /// (at most [`race::RACE_MAX`], fastest first): (label, seconds over all its placements, or
    /// None when it failed). Empty when one candidate was that close; the answer is the fastest
    /// by `raced_pooled`.
    pub raced: Vec<(String, Option<f64>)>,
    /// In how many memory placements each entrant of `raced` was timed (1 for one too slow or
    /// too large for more, [`TimingProtocol::wants_placements`]; 0: it failed).
    pub raced_placements: Vec<usize>,
    /// Each entrant's race time pooled with its search time by placements
    /// ([`race::with_search`]), seconds: what the answer is chosen by (None: it failed).
    pub raced_pooled: Vec<Option<f64>>,
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
