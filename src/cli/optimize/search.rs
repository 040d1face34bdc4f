//! `optimize --tune`'s search over candidate plans (the plans timed besides the DP's own, their
//! one-block variants in best-first rounds, the fastest launched longest block first), split out
//! of [`super::learned`], which times them and races the close ones ([`super::race`]).

use super::learned::{plan_of, triples};
use crate::backend::{KernelConfig, Overlap};
use crate::optimize::learned::SinglePrediction;
use crate::optimize::{LearnedBlock, LearnedOptimum, Plan, PlanRule, Provenance};
use crate::Csr;

/// The plans `--tune` times besides the DP's own (duplicates are dropped by the caller): the DP's
/// plan run in the other mode (its blocks overlap where they ran in sequence, or the converse),
/// then the plan of each alternate program ([`crate::optimize::LearnedOptions::alternates`]) in its mode, then
/// the DP's plan's [`variants`] (concurrent). Only plans of two blocks or more. Measured, not
/// predicted, decides among them: the concurrent rule was fitted on few plans, and plans its DP
/// leaves out (csr-merge branches; blocks the default per-block cost refuses) ran 1.1–1.2×
/// faster than the best single configuration on stacks of a stencil and long rows
/// (docs/OPTIMIZER.md sessions 8–9). Each comes with its blocks where its own variants are yet
/// to be tried (`None`: the DP's plan in the other mode, whose variants are here), for the
/// caller's further rounds ([`TUNE_ROUNDS`]).
pub(super) fn candidate_plans<T: crate::Scalar>(
    m: &Csr<T>,
    source: &str,
    by: &Provenance,
    opt: &LearnedOptimum,
) -> anyhow::Result<Vec<Candidate>> {
    let mut out = Vec::new();
    if opt.plan.len() >= 2 {
        let other = opt.rule.overlap.other();
        // Predicted by the other mode's default rule.
        let times: Vec<f64> = opt.plan.iter().map(|b| b.predicted).collect();
        let t = PlanRule::for_overlap(other, opt.rule.floor_s).plan_time(&times);
        let p = plan_of(m, source, by, &triples(&opt.plan), t, other)?;
        out.push(("the DP's plan", p, None));
    }
    for (alt, solved) in &opt.alternates {
        if let Some((blocks, t)) = solved.as_ref().filter(|(b, _)| b.len() >= 2) {
            let p = plan_of(m, source, by, &triples(blocks), *t, alt.rule.overlap)?;
            out.push((alt.name, p, Some(blocks.clone())));
        }
    }
    let names = [
        "the DP's plan, one block at another block size",
        "the DP's plan, one block at its runner-up",
    ];
    out.extend(variant_plans(m, source, by, opt, &opt.plan, names)?);
    Ok(out)
}

/// A candidate plan of `--tune`: what it is, the plan, and its blocks where its own variants are
/// yet to be tried.
pub(super) type Candidate = (&'static str, Plan, Option<Vec<LearnedBlock>>);

/// The plans `--tune` timed, in order: each plan, its label and time (`timed`, which the
/// shortlist's single configurations then extend), and its blocks where its variants are yet to
/// be tried (`None`: tried, queued, or the DP's plan, whose variants are first-round candidates).
#[derive(Default)]
pub(super) struct Tried {
    pub(super) plans: Vec<Plan>,
    pub(super) timed: Vec<(String, Option<f64>)>,
    untried: Vec<Option<Vec<LearnedBlock>>>,
    /// The row cuts (each block's first row) of the plans whose variants were tried or queued.
    expanded: Vec<Vec<usize>>,
}

impl Tried {
    pub(super) fn push(
        &mut self,
        label: String,
        p: Plan,
        t: Option<f64>,
        blocks: Option<Vec<LearnedBlock>>,
    ) {
        self.timed.push((label, t));
        self.plans.push(p);
        self.untried.push(blocks);
    }

    /// Marks a plan's row cuts as varied already (the DP's plan, whose variants are first-round
    /// candidates).
    pub(super) fn mark_expanded(&mut self, blocks: &[LearnedBlock]) {
        self.expanded.push(cuts(blocks));
    }

    /// The blocks of the plan to vary next (taken: its variants will be tried): among the timed
    /// plans whose variants were not tried and that lie within [`SEARCH_BAND`] of the fastest
    /// plan, the fastest one whose row cuts differ from every plan varied so far, else the
    /// fastest. Cuts first, because plans of the same cuts are one block apart and a near-tie
    /// between two cut structures decided by noise otherwise spends every round on one of them:
    /// on the H200 (session 77, f64 rajat19 Kronecker stack) a 4-block plan timed 0.1 % faster
    /// than a 2-block one took both rounds, and the 2-block plan's runner-up variant — 1.21×
    /// faster than the best single configuration in session 76, where the 2-block plan had
    /// timed first — was never tried (the answer 1.06×).
    pub(super) fn next_to_expand(&mut self) -> Option<Vec<LearnedBlock>> {
        let best = self
            .timed
            .iter()
            .filter_map(|(_, t)| *t)
            .min_by(|x, y| x.total_cmp(y))?;
        let open: Vec<(usize, f64, bool)> = self
            .timed
            .iter()
            .enumerate()
            .filter_map(|(k, (_, t))| {
                let blocks = self.untried[k].as_ref()?;
                let t = t.filter(|&t| t <= best * (1.0 + SEARCH_BAND))?;
                Some((k, t, self.expanded.contains(&cuts(blocks))))
            })
            .collect();
        // The fastest open plan, of new cuts only or of any.
        let fastest = |new_cuts: bool| {
            open.iter()
                .filter(|x| !(new_cuts && x.2))
                .min_by(|x, y| x.1.total_cmp(&y.1))
                .map(|x| x.0)
        };
        let k = fastest(true).or_else(|| fastest(false))?;
        let blocks = self.untried[k].take()?;
        self.expanded.push(cuts(&blocks));
        Some(blocks)
    }
}

/// A plan's row cuts: each block's first row.
fn cuts(blocks: &[LearnedBlock]) -> Vec<usize> {
    blocks.iter().map(|b| b.rows.start).collect()
}

/// The [`REORDERED`] fastest concurrent plans timed (`timed`: label and time, per plan of
/// `plans`) within [`SEARCH_BAND`] of the fastest, each with its blocks launched
/// longest-predicted first ([`longest_first`]) where that is not their order already. In
/// session 49's probe (docs/OPTIMIZER.md) the order the device started two concurrent kernels
/// in moved the SpMV by up to 26 % (7.8 against 9.9 µs), the longer kernel first the faster;
/// measurement decides.
pub(super) fn reordered(plans: &[Plan], timed: &[(String, Option<f64>)]) -> Vec<Candidate> {
    let Some(best) = timed.iter().filter_map(|(_, t)| *t).min_by(f64::total_cmp) else {
        return Vec::new();
    };
    let mut close: Vec<(f64, &Plan)> = plans
        .iter()
        .zip(timed)
        .filter_map(|(p, (_, t))| t.map(|t| (t, p)))
        .filter(|&(t, p)| t <= best * (1.0 + SEARCH_BAND) && p.launch_order.is_none())
        .collect();
    close.sort_by(|a, b| a.0.total_cmp(&b.0));
    close
        .into_iter()
        .filter_map(|(_, p)| {
            let order = longest_first(p)?;
            let mut q = p.clone();
            q.launch_order = Some(order);
            Some((
                "a fast plan, its longest-predicted block launched first",
                q,
                None,
            ))
        })
        .take(REORDERED)
        .collect()
}

/// How many of the fastest plans [`reordered`] launches longest block first.
const REORDERED: usize = 3;

/// A concurrent plan's blocks, longest predicted first (ties in row order); `None` where that
/// is row order, or the plan is serial or of one block.
fn longest_first(p: &Plan) -> Option<Vec<usize>> {
    if p.overlap != Overlap::Concurrent || p.blocks.len() < 2 {
        return None;
    }
    let t = |k: usize| p.blocks[k].predicted_seconds.unwrap_or(0.0);
    let mut order: Vec<usize> = (0..p.blocks.len()).collect();
    order.sort_by(|&a, &b| t(b).total_cmp(&t(a)).then(a.cmp(&b)));
    order
        .iter()
        .enumerate()
        .any(|(i, &k)| i != k)
        .then_some(order)
}

/// How many times `--tune` tries the variants of a plan measured so far, after the first
/// candidates ([`candidate_plans`], which hold the DP's plan's variants): a local search by
/// measurement, best first (the fastest plan whose variants were not tried, within
/// [`SEARCH_BAND`] of the fastest), one block changed per step. Two: measured on both GPUs'
/// heterogeneous sets (docs/OPTIMIZER.md session 46), the fastest plans were up to two changes
/// from the first candidates (H100 f64 rajat19 Kronecker stack: a runner-up variant of an
/// alternate's plan, 1.12×, where the first round alone (run b) answered the best single). Four
/// rounds with three runners-up per block timed twice the plans and found nothing faster beyond
/// the noise (H100, session 47). Three since session 77, when [`Tried::next_to_expand`] began to
/// vary each cut structure within the band before varying one twice: the third round keeps the
/// two-change depth where a second structure takes a round.
pub const TUNE_ROUNDS: usize = 3;

/// How far above the fastest measured plan a plan may be for `--tune` to try its variants in a
/// further round ([`TUNE_ROUNDS`]): 10 %, the spread of the close plans of the heterogeneous
/// sets (one block's change moved a plan by 2–25 %, docs/OPTIMIZER.md session 46).
const SEARCH_BAND: f64 = 0.10;

/// The [`variants`] of `blocks` as plans, concurrent (every plan the tuned answer chose on the
/// heterogeneous sets of both GPUs in sessions 43–45 ran its blocks concurrently), predicted by
/// that mode's default rule; `names` says what each kind is (block size, runner-up).
pub(super) fn variant_plans<T: crate::Scalar>(
    m: &Csr<T>,
    source: &str,
    by: &Provenance,
    opt: &LearnedOptimum,
    blocks: &[LearnedBlock],
    names: [&'static str; 2],
) -> anyhow::Result<Vec<Candidate>> {
    let concurrent = PlanRule::for_overlap(Overlap::Concurrent, opt.rule.floor_s);
    let mut out = Vec::new();
    for (kind, v) in variants(blocks, &opt.singles) {
        let times: Vec<f64> = v.iter().map(|b| b.predicted).collect();
        let t = concurrent.plan_time(&times);
        let p = plan_of(m, source, by, &triples(&v), t, Overlap::Concurrent)?;
        out.push((names[kind], p, Some(v)));
    }
    Ok(out)
}

/// A plan of two blocks or more with one block changed, each change once: first to another CUDA
/// block size of the same kernel and format parameters among the model's configurations (kind
/// 0; predicted time kept), then to each of its runners-up ([`LearnedBlock::runners_up`]: the
/// next-fastest predicted on the same rows; kind 1; the runner-up's predicted time, and the
/// replaced configuration becomes a runner-up of the block). For `--tune`: a block's
/// configuration is chosen by its time alone, and beside the other blocks (sharing the L2 and the
/// SMs when concurrent) the order of close candidates can change — measured on the H100 (f32,
/// the stencil + 200 long rows stack, docs/OPTIMIZER.md session 45), `dia` + `segtile@512` ran
/// 40.2 µs where `dia` + `segtile` ran 54.1 µs, though alone the two `segtile` blocks differ by
/// 4.4 µs; the H100's plans ran up to 1.5× their blocks' times alone.
fn variants(
    plan: &[LearnedBlock],
    singles: &[SinglePrediction],
) -> Vec<(usize, Vec<LearnedBlock>)> {
    if plan.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::new();
    for (i, b) in plan.iter().enumerate() {
        let mut sizes: Vec<u32> = singles
            .iter()
            .map(|s| &s.config)
            .filter(|c| c.is_block_size_sibling(&b.config))
            .map(|c| c.block_size)
            .collect();
        sizes.sort_unstable();
        sizes.dedup();
        for bs in sizes {
            let mut v = plan.to_vec();
            v[i].config.block_size = bs;
            out.push((0, v));
        }
    }
    for (i, b) in plan.iter().enumerate() {
        for (c, t) in &b.runners_up {
            let mut v = plan.to_vec();
            let mut runners_up: Vec<(KernelConfig, f64)> = b
                .runners_up
                .iter()
                .filter(|(r, _)| r != c)
                .cloned()
                .chain(std::iter::once((b.config.clone(), b.predicted)))
                .collect();
            runners_up.sort_by(|x, y| x.1.total_cmp(&y.1));
            v[i].config = c.clone();
            v[i].predicted = *t;
            v[i].runners_up = runners_up;
            out.push((1, v));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::learned::same_plan;
    use super::*;
    use crate::optimize::MatrixIdentity;
    use std::ops::Range;

    fn block(rows: Range<usize>, label: &str) -> LearnedBlock {
        LearnedBlock {
            rows,
            nnz: 10,
            config: KernelConfig::parse_label(label).unwrap(),
            predicted: 1e-6,
            sigma: 0.0,
            bandwidth_s: None,
            runners_up: Vec::new(),
        }
    }

    fn single(label: &str) -> SinglePrediction {
        SinglePrediction {
            config: KernelConfig::parse_label(label).unwrap(),
            seconds: Some(1e-6),
            sigma: None,
            note: String::new(),
        }
    }

    fn labels(v: &[LearnedBlock]) -> Vec<String> {
        v.iter().map(|b| b.config.label()).collect()
    }

    /// `--tune` launches the fastest concurrent plans longest-predicted block first, where that
    /// is not row order, at most [`REORDERED`] of them, within [`SEARCH_BAND`] of the fastest.
    #[test]
    fn the_fastest_concurrent_plans_are_tried_longest_block_first() {
        let a = Csr::<f64>::from_triplets(4, 4, &[0, 1, 2, 3], &[0, 1, 2, 3], &[1.0; 4]).unwrap();
        let plan = |times: &[f64], overlap: Overlap| {
            let n = times.len();
            let spec: Vec<(Range<usize>, KernelConfig)> = (0..n)
                .map(|k| {
                    let r = k * 4 / n..(k + 1) * 4 / n;
                    (r, KernelConfig::parse_label("coo").unwrap())
                })
                .collect();
            let mut p =
                Plan::by_rows(MatrixIdentity::of("a", &a), crate::Precision::F64, &spec).unwrap();
            for (b, &t) in p.blocks.iter_mut().zip(times) {
                b.predicted_seconds = Some(t);
            }
            p.overlap = overlap;
            p
        };
        let c = Overlap::Concurrent;
        assert_eq!(
            longest_first(&plan(&[1.0, 3.0, 2.0], c)),
            Some(vec![1, 2, 0])
        );
        assert_eq!(longest_first(&plan(&[3.0, 3.0, 2.0], c)), None, "already");
        assert_eq!(longest_first(&plan(&[1.0, 3.0], Overlap::Serial)), None);
        assert_eq!(longest_first(&plan(&[1.0], c)), None);
        let plans = vec![
            plan(&[1.0, 3.0], c),               // 10 µs: reordered
            plan(&[1.0, 2.0, 3.0], c),          // 10.5 µs: reordered
            plan(&[5.0, 3.0], c),               // 10.2 µs: in order already
            plan(&[1.0, 4.0], Overlap::Serial), // 10.1 µs: serial
            plan(&[2.0, 1.0, 3.0], c),          // 10.9 µs: reordered
            plan(&[1.0, 9.0], c),               // 12 µs: beyond the band
            plan(&[1.0, 8.0, 9.0], c),          // 10.8 µs: the fourth
        ];
        let timed: Vec<(String, Option<f64>)> = [10.0, 10.5, 10.2, 10.1, 10.9, 12.0, 10.8]
            .iter()
            .map(|&t| (String::new(), Some(t * 1e-6)))
            .collect();
        let out = reordered(&plans, &timed);
        let orders: Vec<_> = out.iter().map(|(_, p, _)| p.launch_order.clone()).collect();
        assert_eq!(
            orders,
            vec![Some(vec![1, 0]), Some(vec![2, 1, 0]), Some(vec![2, 1, 0])],
            "the 10, 10.5 and 10.8 µs plans, fastest first"
        );
        assert!(out.iter().all(|(_, p, b)| p.overlap == c && b.is_none()));
        // Already reordered plans are not reordered again.
        let again: Vec<Plan> = out.iter().map(|(_, p, _)| p.clone()).collect();
        assert!(reordered(&again, &timed[..3]).is_empty());
        assert!(!same_plan(&plans[0], &out[0].1));
    }

    /// `--tune`'s further rounds vary each cut structure within the band once before any twice,
    /// the fastest first; plans beyond the band are never varied.
    #[test]
    fn further_rounds_vary_each_cut_structure_before_any_twice() {
        let a = Csr::<f64>::from_triplets(4, 4, &[0, 1, 2, 3], &[0, 1, 2, 3], &[1.0; 4]).unwrap();
        let plan = |blocks: &[LearnedBlock]| {
            let spec: Vec<(Range<usize>, KernelConfig)> = blocks
                .iter()
                .map(|b| (b.rows.clone(), b.config.clone()))
                .collect();
            Plan::by_rows(MatrixIdentity::of("a", &a), crate::Precision::F64, &spec).unwrap()
        };
        let two = |cut: usize, l: &str| vec![block(0..cut, l), block(cut..4, "coo")];
        let mut tried = Tried::default();
        let add = |tried: &mut Tried, b: Vec<LearnedBlock>, us: f64| {
            tried.push(String::new(), plan(&b), Some(us * 1e-6), Some(b));
        };
        add(&mut tried, two(2, "coo"), 10.0);
        add(&mut tried, two(1, "coo"), 10.01); // other cuts, 0.1 % slower
        add(&mut tried, two(3, "coo"), 12.0); // beyond the band
        let first = tried.next_to_expand().unwrap();
        assert_eq!(cuts(&first), vec![0, 2], "the fastest first");
        // A variant of the first (same cuts) timed faster than both.
        add(&mut tried, two(2, "csr-vector"), 9.9);
        let second = tried.next_to_expand().unwrap();
        assert_eq!(
            cuts(&second),
            vec![0, 1],
            "the other cuts before the faster variant"
        );
        let third = tried.next_to_expand().unwrap();
        assert_eq!(
            labels(&third),
            vec!["csr-vector", "coo"],
            "then the fastest"
        );
        assert!(tried.next_to_expand().is_none(), "12 µs is beyond the band");
        // The DP's cuts count as varied (its variants are first-round candidates).
        let mut tried = Tried::default();
        tried.mark_expanded(&two(2, "coo"));
        add(&mut tried, two(2, "csr-vector"), 10.0);
        add(&mut tried, two(1, "coo"), 10.5);
        assert_eq!(cuts(&tried.next_to_expand().unwrap()), vec![0, 1]);
        assert_eq!(cuts(&tried.next_to_expand().unwrap()), vec![0, 2]);
    }

    #[test]
    fn variants_change_one_block_to_each_other_block_size_then_to_each_runner_up() {
        let singles: Vec<_> = ["segtile", "segtile@512", "segtile@128", "dia", "sell@512"]
            .iter()
            .map(|l| single(l))
            .collect();
        let mut a = block(0..64, "dia");
        a.runners_up = vec![(KernelConfig::parse_label("ell").unwrap(), 2e-6)];
        let mut b = block(64..96, "segtile");
        b.runners_up = [("csr-vector", 3e-6), ("sell@512", 4e-6)]
            .iter()
            .map(|(l, t)| (KernelConfig::parse_label(l).unwrap(), *t))
            .collect();
        let plan = [a, b];
        let v = variants(&plan, &singles);
        let got: Vec<(usize, Vec<String>)> = v.iter().map(|(k, b)| (*k, labels(b))).collect();
        // `dia` has no other block size here; `segtile` has two: 128 and 512, in that order;
        // then each block at each of its runners-up.
        let want = [
            (0, ["dia", "segtile@128"]),
            (0, ["dia", "segtile@512"]),
            (1, ["ell", "segtile"]),
            (1, ["dia", "csr-vector"]),
            (1, ["dia", "sell@512"]),
        ];
        let want: Vec<(usize, Vec<String>)> = want
            .iter()
            .map(|(k, l)| (*k, l.iter().map(|s| s.to_string()).collect()))
            .collect();
        assert_eq!(got, want);
        // Rows stay the DP's; a block size keeps the prediction, a runner-up brings its own.
        assert_eq!(v[1].1[1].rows, 64..96);
        assert_eq!(v[1].1[1].predicted, 1e-6);
        assert_eq!((v[2].1[0].predicted, v[2].1[1].predicted), (2e-6, 1e-6));
        // The replaced configuration becomes a runner-up, in order of time: a next round can go
        // back or on to the other runner-up.
        let ru: Vec<(String, f64)> = v[3].1[1]
            .runners_up
            .iter()
            .map(|(c, t)| (c.label(), *t))
            .collect();
        assert_eq!(
            ru,
            [
                ("segtile".to_string(), 1e-6),
                ("sell@512".to_string(), 4e-6)
            ]
        );
        // A one-block plan has no variants.
        assert!(variants(&plan[..1], &singles).is_empty());
    }
}
