//! The optimizer on any model of the profile that predicts from full [`Features`] — `sparsecast`
//! (our own model) by default, `gb`, `lr`, `knn` as well: every candidate block's features are
//! computed from its rows, every configuration the model covers is predicted on them, and a
//! dynamic program over plans with distinct adjacent configurations ([`super::merged`]) chooses
//! with the plan-time rule of the execution ([`super::rule`]: the blocks' work adds up, each
//! extra block costs the mode's per-block cost; a concurrent plan is never below its largest
//! block, found exactly by [`super::merged::solve_merged_max`]). The plan is adopted only when its
//! predicted gain over the best single configuration (cuSPARSE included) exceeds the models'
//! uncertainty.
//!
//! **Why features per block, not prefix structures** (the analytical path's [`super::features`]).
//! Our model reads, besides additive counts (rows, non-zeros, warp steps, x sectors per 32-row
//! group, row sectors, empty rows), counts that are *unions* over the rows and do not add up:
//! the distinct columns used (`cols_used`), the occupied diagonals (DIA's count, and the
//! `diagonals` feature), SELL-C-σ's sorting windows, BSR's block rows; and the bandwidth of a
//! row slice depends on where it starts. Prefix structures for unions cost as much memory as the
//! matrix per strip boundary, and would have to be kept bit-for-bit equal to
//! [`Features::compute`] as features are added. Computing the features of each candidate block
//! from its rows is exact by construction and its cost is known in advance: `Σ_blocks nnz(block)`,
//! `(N+1)(N+2)/6` passes over the matrix for `N` even strips. The strips are therefore few
//! ([`LearnedOptions::feature_passes`], default 10 passes: `N = 6`) and cut where the rows change
//! character ([`super::cuts`]). Measured on the 2-core build machine: see `docs/OPTIMIZER.md`.
//!
//! **Candidates**: every configuration the model covers (thread mappings, block sizes, SELL-C-σ
//! parameter sets, DIA, BSR, ELL-BRO, …); cuSPARSE algorithms too where the backend can run them
//! on a row block ([`LearnedOptions::vendor_blocks`]: `execute` prepares any configuration on
//! the block's rows). Formats whose conversion would refuse a block are not candidates.

use super::cuts::cut_rows;
use super::merged::{solve_merged, solve_merged_max};
use super::rule::PlanRule;
use crate::backend::{KernelConfig, Overlap, Variant};
use crate::features::Features;
use crate::formats::{FormatKind, Reason, Summary};
use crate::model::{DeviceBounds, Model};
use crate::{Csr, Error, Result, Scalar};
use std::ops::Range;
use std::time::Instant;

/// Default gain a plan needs, in summed one-sigma uncertainties. 1.0 adopted three plans that
/// lost (0.83×, 0.90×, 0.97× of the best single configuration) in session 5's device runs
/// (docs/{h200,h100}/optimizer). Replayed on the 11 measured DP plans of ≥ 2 blocks of those
/// runs with the default block cost ([`PlanRule::measured_default`]), 1.5 adopts the three that
/// ran 1.09–1.25× faster and none that lost (`scripts/replay_adoption.py`). Chosen in-sample on
/// 11 cases: the next device run is its test. That 1.5 was in sigmas that were the median
/// held-out `|ln error|`; since session 32 a sigma is the 68th percentile
/// ([`crate::learn::own::SIGMA_QUANTILE`]), 1.58–1.86× the median per configuration (1.73×
/// pooled, H100 version-6 records), so the same threshold is 1.5 / 1.73 ≈ 0.9 of them.
pub const DEFAULT_ADOPT_SIGMAS: f64 = 0.9;

/// Default factor on a row block's one-sigma uncertainty in a plan of two blocks or more. The
/// model's sigma is calibrated on whole matrices; measured row blocks of the recorded device
/// plans miss by more: median `|ln(predicted / measured)| / σ` is 1.08 over the 49 blocks of
/// session 12's runs (per-size sigma) and 1.84 over all 116 recorded blocks, where a calibrated
/// sigma gives 0.67 (×1.6–2.7), and 5.1 on slices of < 2 % of the rows (a power law's or a
/// stack's heavy head: predicted 16 % fast). Replayed on session 12's 20 measured plans, 2
/// adopts 3 instead of 5: the two ≥ 1.15× plans kept, the one that lost (0.76×) refused,
/// geomean against the best single 0.960 → 0.967 (`scripts/block_calibration.py`). Chosen on
/// recorded runs: the next device run is its test.
pub const DEFAULT_BLOCK_SIGMA: f64 = 2.0;

/// What the feature-based optimizer may spend and how it decides.
#[derive(Clone, Debug, PartialEq)]
pub struct LearnedOptions {
    /// Budget of feature passes over the matrix for all candidate blocks (sets `N`).
    pub feature_passes: f64,
    /// `N` itself, overriding the budget.
    pub strips: Option<usize>,
    /// The plan-time rule, with the execution mode it costs ([`PlanRule::overlap`]).
    pub rule: PlanRule,
    /// The device's measured bounds: the bandwidth ceiling gives each block's bandwidth time
    /// `β_b`, reported beside a concurrent plan's blocks (`None`: unknown; not part of the
    /// plan's time, see [`super::rule`]).
    pub bounds: Option<DeviceBounds>,
    /// Gain needed for a plan, in units of the summed one-sigma uncertainties.
    pub adopt_sigmas: f64,
    /// Factor on each block's one-sigma uncertainty in a plan of two blocks or more
    /// ([`DEFAULT_BLOCK_SIGMA`]).
    pub block_sigma: f64,
    /// cuSPARSE algorithms as candidates of row blocks.
    pub vendor_blocks: bool,
    /// Other programs to solve on the same block features (no feature pass more): their plans
    /// are [`LearnedOptimum::alternates`], candidates that `optimize --tune` times beside the
    /// rule's own plan. Empty by default.
    pub alternates: Vec<Alternate>,
    /// The matrix's family as the training tables name it (a file's stem): the model's second
    /// stage leaves it out of the matrices it compares with, as `predict` does, so that both
    /// recommend the same configuration. `None`: compared with every training matrix.
    pub family: Option<String>,
}

/// Another plan-time rule and candidate set for the same DP ([`LearnedOptions::alternates`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Alternate {
    pub rule: PlanRule,
    /// cuSPARSE algorithms as candidates of row blocks.
    pub vendor_blocks: bool,
    /// What it is, for people (`blocks of one floor`).
    pub name: &'static str,
}

impl LearnedOptions {
    /// Defaults with `floor_s` as the fixed cost of an SpMV, plans costed as they run by
    /// default ([`crate::backend::DEFAULT_OVERLAP`], [`PlanRule::for_overlap`]).
    pub fn new(floor_s: f64) -> LearnedOptions {
        LearnedOptions {
            feature_passes: 10.0,
            strips: None,
            rule: PlanRule::for_overlap(crate::backend::DEFAULT_OVERLAP, floor_s),
            bounds: None,
            adopt_sigmas: DEFAULT_ADOPT_SIGMAS,
            block_sigma: DEFAULT_BLOCK_SIGMA,
            vendor_blocks: false,
            alternates: Vec::new(),
            family: None,
        }
    }

    /// The most strips whose blocks cost at most the budget on even strips.
    pub fn strips_for_budget(&self) -> usize {
        let mut n = 1usize;
        while n < 64 && ((n + 2) * (n + 3)) as f64 / 6.0 <= self.feature_passes {
            n += 1;
        }
        n
    }
}

/// One configuration's prediction on the whole matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct SinglePrediction {
    pub config: KernelConfig,
    /// Seconds (`None`: refused or not predicted, see `note`).
    pub seconds: Option<f64>,
    /// Relative one-sigma uncertainty, where the model states one.
    pub sigma: Option<f64>,
    pub note: String,
}

/// The configurations of `singles` (the best single configuration first, as
/// [`LearnedOptimum::singles`]) other than the first whose predicted time lies within the first's
/// one-sigma uncertainty (`|t − t_best| ≤ σ_best · t_best`), in their order: what `optimize` calls
/// too close to tell apart by prediction, as `predict` does for its recommendation. Empty where
/// the first states no uncertainty or is not predicted.
pub fn within_uncertainty(singles: &[SinglePrediction]) -> Vec<&SinglePrediction> {
    let Some((best, rest)) = singles.split_first() else {
        return Vec::new();
    };
    let (Some(t), Some(sigma)) = (best.seconds, best.sigma) else {
        return Vec::new();
    };
    rest.iter()
        .filter(|s| s.seconds.is_some_and(|p| (p - t).abs() <= sigma * t))
        .collect()
}

/// One block of a plan.
#[derive(Clone, Debug, PartialEq)]
pub struct LearnedBlock {
    pub rows: Range<usize>,
    pub nnz: usize,
    pub config: KernelConfig,
    /// The block's predicted time alone, seconds.
    pub predicted: f64,
    /// Its relative one-sigma uncertainty (0 where the model states none).
    pub sigma: f64,
    /// Its bytes (format, x, y) at the device's bandwidth ceiling, seconds (`None`: unknown or
    /// not needed: a serial rule); reported only, not part of the plan's time ([`super::rule`]).
    pub bandwidth_s: Option<f64>,
    /// The next-fastest configurations predicted on the same rows among the candidates its
    /// program admits (up to [`RUNNERS_UP`], fastest first, with their predicted times alone,
    /// seconds); empty for a block not from the DP. For `optimize --tune`, which times the plan
    /// with one block at each of them.
    pub runners_up: Vec<(KernelConfig, f64)>,
}

/// How many runners-up each block of a DP plan keeps ([`LearnedBlock::runners_up`]). Two: each
/// costs one plan timing per block and search round under `--tune` (a few hundred ms), and a DP
/// plan has 2–4 blocks. Three, with four search rounds instead of two, timed twice the plans
/// on the H100's heterogeneous set (≈ 480 instead of ≈ 230, 413 s instead of 317 s) and changed
/// no answer by more than the noise (docs/OPTIMIZER.md, session 47).
pub const RUNNERS_UP: usize = 2;

/// A plan of the DP and its predicted time by its rule, seconds.
pub type SolvedPlan = (Vec<LearnedBlock>, f64);

/// The answer of [`optimize_learned`].
#[derive(Clone, Debug, PartialEq)]
pub struct LearnedOptimum {
    /// Strip boundaries `[0, …, nrows]`.
    pub cuts: Vec<usize>,
    pub rule: PlanRule,
    /// The cheapest plan of the program (one block where no split pays).
    pub plan: Vec<LearnedBlock>,
    /// Its time by the rule, and its one-sigma uncertainty (Σ σ_b·T_b), seconds.
    pub plan_predicted: f64,
    pub plan_uncertainty: f64,
    /// Every configuration on the whole matrix, fastest first (refused last) — except that the
    /// model's second stage's pick, where it is not the fastest, comes first (`put_pick_first`).
    pub singles: Vec<SinglePrediction>,
    /// Whether the plan is the answer (else the best single configuration is).
    pub adopted: bool,
    /// Why, in one sentence.
    pub verdict: String,
    /// The plans of [`LearnedOptions::alternates`], in that order: (the alternate, its plan,
    /// its predicted time by that rule; `None` where it refuses every plan). Never the answer
    /// by prediction: `optimize --tune` times them beside the plan.
    pub alternates: Vec<(Alternate, Option<SolvedPlan>)>,
    /// Feature passes spent (Σ nnz of the candidate blocks / nnz), blocks and seconds.
    pub feature_passes: f64,
    pub blocks_evaluated: usize,
    pub seconds: f64,
}

impl LearnedOptimum {
    /// The best single configuration (a predicted one), if any.
    pub fn best_single(&self) -> Option<&SinglePrediction> {
        self.singles.first().filter(|s| s.seconds.is_some())
    }

    /// The other single configurations predicted within the best one's uncertainty
    /// ([`within_uncertainty`]).
    pub fn close_to_best(&self) -> Vec<&SinglePrediction> {
        within_uncertainty(&self.singles)
    }

    /// What to run: the plan if adopted, else the best single configuration on every row.
    pub fn chosen(&self) -> Vec<LearnedBlock> {
        match (self.adopted, self.best_single()) {
            (false, Some(s)) => vec![LearnedBlock {
                rows: 0..*self.cuts.last().unwrap_or(&0),
                nnz: self.plan.iter().map(|b| b.nnz).sum(),
                config: s.config.clone(),
                predicted: s.seconds.unwrap_or(f64::NAN),
                sigma: s.sigma.unwrap_or(0.0),
                bandwidth_s: None,
                runners_up: Vec::new(),
            }],
            _ => self.plan.clone(),
        }
    }

    /// The predicted time of [`LearnedOptimum::chosen`].
    pub fn chosen_predicted(&self) -> f64 {
        match (self.adopted, self.best_single()) {
            (false, Some(s)) => s.seconds.unwrap_or(f64::NAN),
            _ => self.plan_predicted,
        }
    }
}

/// A prediction and its relative one-sigma uncertainty.
pub type Pred = (Option<f64>, Option<f64>);

/// `model`'s prediction of `cfg` on `f`, `None` where the format's conversion refuses the rows
/// (checked on the features' counts; a count the features lack does not refuse) or the model
/// cannot predict.
pub fn predict_block(model: &dyn Model, f: &Features, cfg: &KernelConfig) -> Pred {
    if !cfg.variant.is_vendor() {
        let s = Summary::for_params(f, &cfg.params);
        let vb = model.precision().bytes() as u64;
        if let Err(r) = cfg.variant.format().admit(&s, &cfg.params, vb) {
            if !matches!(r.reason, Reason::Unknown(_)) {
                return (None, None);
            }
        }
    }
    match model.predict_config(f, cfg) {
        Ok(t) if t.is_finite() && t >= 0.0 => {
            let sigma = model.uncertainty_config(f, cfg).map(|u| u / t.max(1e-300));
            (Some(t), sigma)
        }
        _ => (None, None),
    }
}

/// Bytes one SpMV of `cfg` moves at least on the rows of `f` (format, x, y), at `gbs`: the
/// block's bandwidth time `β_b` (NaN where the format's footprint cannot be told from the
/// features, or no bandwidth is known).
pub fn bandwidth_seconds(f: &Features, cfg: &KernelConfig, value_bytes: u64, gbs: f64) -> f64 {
    if !(gbs.is_finite() && gbs > 0.0) {
        return f64::NAN;
    }
    let mut s = Summary::from_features(f);
    if let Some(a) = &f.access {
        s = a.add_counts(s, &cfg.params);
    }
    let bytes = s
        .working_set(cfg.variant.format(), &cfg.params, value_bytes)
        .or_else(|_| s.working_set(FormatKind::Csr, &cfg.params, value_bytes));
    match bytes {
        Ok(b) => b as f64 / (gbs * 1e9),
        Err(_) => f64::NAN,
    }
}

/// Optimize `a` with `model` (see the module documentation). `progress(done, total)` counts
/// non-zeros of candidate blocks whose features are done.
pub fn optimize_learned<T: Scalar>(
    a: &Csr<T>,
    model: &dyn Model,
    opts: &LearnedOptions,
    progress: &dyn Fn(u64, u64),
) -> Result<LearnedOptimum> {
    if a.nrows == 0 {
        return Err(Error::Invalid(
            "the matrix has no rows: there is nothing to partition".into(),
        ));
    }
    let t0 = Instant::now();
    let all = model.configs();
    if all.is_empty() {
        return Err(Error::Invalid(format!(
            "the {} model has no configurations",
            model.name()
        )));
    }
    // Concurrent plans leave out csr-merge: its blocks ran up to 2.1× their serial time as graph
    // branches (H200, docs/OPTIMIZER.md), which no per-branch cost predicts. It stays a single
    // configuration (`singles`), and a serial plan's block. The candidates are predicted once
    // for every program (the main one and the alternates); a concurrent rule masks csr-merge,
    // a program without vendor blocks the cuSPARSE algorithms.
    let main = Alternate {
        rule: opts.rule,
        vendor_blocks: opts.vendor_blocks,
        name: "the rule",
    };
    let programs: Vec<&Alternate> = std::iter::once(&main).chain(&opts.alternates).collect();
    let any_vendor = programs.iter().any(|p| p.vendor_blocks);
    let cand: Vec<usize> = (0..all.len())
        .filter(|&k| any_vendor || !all[k].variant.is_vendor())
        .collect();
    let any_concurrent = programs
        .iter()
        .any(|p| p.rule.overlap == Overlap::Concurrent);
    let n_strips = opts
        .strips
        .unwrap_or_else(|| opts.strips_for_budget())
        .max(1);
    let cuts = cut_rows(&a.row_ptr, n_strips);
    let n = cuts.len() - 1;
    let nnz_of = |i: usize, j: usize| (a.row_ptr[cuts[j + 1]] - a.row_ptr[cuts[i]]) as u64;
    let total: u64 = (0..n)
        .flat_map(|i| (i..n).map(move |j| (i, j)))
        .map(|(i, j)| nnz_of(i, j).max(1))
        .sum();
    // e[i][j - i][k]: prediction and sigma of candidate k on strips i..=j; beta: its bytes at
    // the bandwidth ceiling of the whole matrix's working set (CSR), reported beside a concurrent
    // plan's blocks (not in its time: see super::rule).
    let mut e: Vec<Vec<Vec<Pred>>> = vec![Vec::new(); n];
    let mut beta: Vec<Vec<Vec<f64>>> = vec![Vec::new(); n];
    let vb = model.precision().bytes() as u64;
    let gbs = opts.bounds.as_ref().map_or(f64::NAN, |b| {
        let csr = (a.nnz() as u64) * (4 + vb) + (a.nrows as u64 + 1) * 4;
        b.ceiling_gbs(csr + crate::formats::vector_bytes(a.nrows as u64, a.ncols as u64, vb))
    });
    let mut whole: Vec<Pred> = Vec::new();
    let mut whole_features: Option<Features> = None;
    let mut done = 0u64;
    for (i, (row, brow)) in e.iter_mut().zip(beta.iter_mut()).enumerate() {
        for j in i..n {
            let (r0, r1) = (cuts[i], cuts[j + 1]);
            let f = if r0 == 0 && r1 == a.nrows {
                Features::compute(a)
            } else {
                Features::compute(&a.slice_rows(r0, r1))
            };
            if i == 0 && j == n - 1 {
                whole = all.iter().map(|c| predict_block(model, &f, c)).collect();
                row.push(cand.iter().map(|&k| whole[k]).collect());
                whole_features = Some(f.clone());
            } else {
                row.push(
                    cand.iter()
                        .map(|&k| predict_block(model, &f, &all[k]))
                        .collect(),
                );
            }
            brow.push(
                cand.iter()
                    .map(|&k| match any_concurrent {
                        true => bandwidth_seconds(&f, &all[k], vb, gbs),
                        false => f64::NAN,
                    })
                    .collect::<Vec<f64>>(),
            );
            done += nnz_of(i, j).max(1);
            progress(done, total);
        }
    }
    let solve = |program: &Alternate| -> Option<SolvedPlan> {
        let rule = &program.rule;
        let concurrent = rule.overlap == Overlap::Concurrent;
        let masked = |k: usize| {
            let v = all[cand[k]].variant;
            (concurrent && v == Variant::CsrMerge) || (!program.vendor_blocks && v.is_vendor())
        };
        let alone = |i: usize, j: usize, k: usize| match (masked(k), e[i][j - i][k].0) {
            (false, Some(t)) => t,
            _ => f64::INFINITY,
        };
        let w = |i: usize, j: usize, k: usize| match alone(i, j, k) {
            t if t.is_finite() => rule.block_cost(t),
            _ => f64::INFINITY,
        };
        // The concurrent rule: at least the largest block alone (exact, by bisection on it).
        let (blocks, predicted) = match rule.overlap {
            Overlap::Serial => {
                solve_merged(n, cand.len(), w).map(|(b, c)| (b, rule.offset() + c))?
            }
            Overlap::Concurrent => solve_merged_max(n, cand.len(), rule.offset(), w, alone)?,
        };
        let plan = blocks
            .iter()
            .map(|b| {
                let (t, s) = e[b.first][b.last - b.first][b.config];
                let mut runners_up: Vec<(KernelConfig, f64)> = (0..cand.len())
                    .filter(|&k| k != b.config)
                    .map(|k| (k, alone(b.first, b.last, k)))
                    .filter(|(_, t)| t.is_finite())
                    .map(|(k, t)| (all[cand[k]].clone(), t))
                    .collect();
                runners_up.sort_by(|x, y| x.1.total_cmp(&y.1));
                runners_up.truncate(RUNNERS_UP);
                LearnedBlock {
                    rows: cuts[b.first]..cuts[b.last + 1],
                    nnz: nnz_of(b.first, b.last) as usize,
                    config: all[cand[b.config]].clone(),
                    predicted: t.unwrap_or(f64::INFINITY),
                    sigma: s.unwrap_or(0.0),
                    bandwidth_s: Some(beta[b.first][b.last - b.first][b.config])
                        .filter(|b| concurrent && b.is_finite()),
                    runners_up,
                }
            })
            .collect();
        Some((plan, predicted))
    };
    let rule = opts.rule;
    let (plan, plan_predicted) = solve(&main).ok_or_else(|| {
        Error::Invalid(format!(
            "the {} model refuses every candidate configuration for part of the matrix",
            model.name()
        ))
    })?;
    let alternates = opts.alternates.iter().map(|p| (*p, solve(p))).collect();
    // A block of a split is a row slice, which the model's sigma (calibrated on whole matrices)
    // understates; a one-block plan is the whole matrix.
    let factor = if plan.len() >= 2 {
        opts.block_sigma
    } else {
        1.0
    };
    let plan_uncertainty = factor * plan.iter().map(|b| b.sigma * b.predicted).sum::<f64>();
    let mut singles: Vec<SinglePrediction> = all
        .iter()
        .zip(&whole)
        .map(|(c, &(t, s))| SinglePrediction {
            config: c.clone(),
            seconds: t,
            sigma: s,
            note: if t.is_none() {
                "refused (the format cannot hold the matrix, or the model has no prediction)".into()
            } else {
                String::new()
            },
        })
        .collect();
    singles.sort_by(|x, y| match (x.seconds, y.seconds) {
        (Some(p), Some(q)) => p.total_cmp(&q),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    if let Some(f) = &whole_features {
        put_pick_first(model, f, opts.family.as_deref(), &mut singles);
    }
    let (adopted, verdict) = adopt(&plan, plan_predicted, plan_uncertainty, &singles, opts);
    Ok(LearnedOptimum {
        feature_passes: total as f64 / a.nnz().max(1) as f64,
        blocks_evaluated: n * (n + 1) / 2,
        cuts,
        rule,
        plan,
        plan_predicted,
        plan_uncertainty,
        singles,
        adopted,
        verdict,
        alternates,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// The single answer is what `predict` recommends: where the model has a second stage
/// ([`Model::pick`]) and it picks another than the predicted-fastest, the pick goes first (the
/// others keep their order), so that the best single configuration, the plan's adoption and
/// `--tune` compare with it; `family` as [`LearnedOptions::family`].
fn put_pick_first(
    model: &dyn Model,
    f: &Features,
    family: Option<&str>,
    singles: &mut Vec<SinglePrediction>,
) {
    let ranked = singles.iter().map(|s| (s.config.label(), s.seconds));
    if let Some(i) = crate::model::stage_pick(model, f, ranked, family) {
        let fastest = singles[0].config.label();
        let predicted = singles.iter().take_while(|s| s.seconds.is_some()).count();
        let mut p = singles.remove(i);
        p.note = format!(
            "recommended by the model's second stage (predicted rank {} of {predicted}; \
             {fastest} is predicted fastest)",
            i + 1
        );
        singles.insert(0, p);
    }
}

/// The adoption rule: a plan of two blocks or more is the answer only when the best single
/// configuration's predicted time exceeds the plan's by more than `adopt_sigmas` × (the single's
/// one-sigma uncertainty + the plan's). Errors of one model on neighbouring blocks are not
/// independent, so the uncertainties are added, not combined in quadrature.
fn adopt(
    plan: &[LearnedBlock],
    t_plan: f64,
    u_plan: f64,
    singles: &[SinglePrediction],
    opts: &LearnedOptions,
) -> (bool, String) {
    let us = crate::util::fmt_seconds;
    let Some(best) = singles.first().filter(|s| s.seconds.is_some()) else {
        return (
            true,
            "no single configuration holds the whole matrix: the plan is the only answer".into(),
        );
    };
    let t_s = best.seconds.unwrap_or(f64::INFINITY);
    let u_s = best.sigma.unwrap_or(0.0) * t_s;
    // A predicted single has an empty note unless the second stage put it first.
    let label = match best.note.is_empty() {
        true => best.config.label(),
        false => format!("{} (the second stage's pick)", best.config.label()),
    };
    if plan.len() < 2 {
        return (
            false,
            format!("no split pays: one block; the best single configuration is {label}"),
        );
    }
    let need = opts.adopt_sigmas * (u_s + u_plan);
    let gain = t_s - t_plan;
    if gain > need {
        (
            true,
            format!(
                "the plan is predicted {} ({:.0} %) faster than {label}, more than the \
                 uncertainty {}",
                us(gain, "-"),
                100.0 * gain / t_s,
                us(need, "-")
            ),
        )
    } else {
        (
            false,
            format!(
                "the plan's predicted gain over {label} ({}) does not exceed the models' \
                 uncertainty ({} = {}× (σ of {label} + σ of the blocks)): {label} is the answer",
                us(gain, "-"),
                us(need, "-"),
                opts.adopt_sigmas
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn single(label: &str, seconds: Option<f64>, sigma: Option<f64>) -> SinglePrediction {
        SinglePrediction {
            config: KernelConfig::parse_label(label).unwrap(),
            seconds,
            sigma,
            note: String::new(),
        }
    }

    /// Within the best's one sigma (5 % of 10 µs: 9.5–10.5 µs), either side, the best excluded;
    /// refused ones never; nothing without a stated uncertainty.
    #[test]
    fn close_calls_are_the_others_within_the_best_ones_sigma() {
        let v = [
            single("csr-t4", Some(10e-6), Some(0.05)),
            single("csr-t8", Some(10.4e-6), Some(0.5)),
            single("ell", Some(10.6e-6), Some(0.01)),
            single("coo", Some(9.6e-6), None),
            single("dia", None, None),
        ];
        let labels = |v: Vec<&SinglePrediction>| -> Vec<String> {
            v.iter().map(|s| s.config.label()).collect()
        };
        assert_eq!(labels(within_uncertainty(&v)), ["csr-t8", "coo"]);
        let mut no_sigma = v.clone();
        no_sigma[0].sigma = None;
        assert!(within_uncertainty(&no_sigma).is_empty());
        assert!(within_uncertainty(&[]).is_empty());
        assert!(within_uncertainty(&v[..1]).is_empty());
    }
}
