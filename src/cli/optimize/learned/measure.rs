//! `optimize --measure` on a learned model: the plan, its alternatives, every single
//! configuration and cuSPARSE timed alike, and the plans' overlap with their blocks alone.

use super::*;

/// The blocks' work beyond the launch floor, `Σ max(T_b − floor, 0)`, from their times alone:
/// what a plan's per-block (serial) or per-branch (concurrent) cost is fitted against.
pub(super) fn work_beyond_floor(alone: &[f64], floor_s: f64) -> f64 {
    alone.iter().map(|&b| (b - floor_s).max(0.0)).sum()
}

/// Time a plan in its mode (checked against the reference first), its blocks alone, and with
/// `left_out` the plan with each block left out in turn (`PreparedPlan::time_left_out`; empty
/// otherwise): (warm mean, blocks alone, plan without each block, error).
pub(super) fn time_plan<T: crate::Scalar>(
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
pub(super) fn time_both<T: crate::Scalar>(
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
pub(super) fn equal_nnz_cuts(row_ptr: &[usize], k: usize) -> Vec<usize> {
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
pub(super) fn overlap_rows<T: crate::Scalar>(
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
pub(super) fn measure_all<T: BackendScalar>(
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
            tried.mark_expanded(&opt.plan);
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
        // Further rounds, best first: the variants of a plan not yet varied within SEARCH_BAND
        // of the fastest plan, each cut structure once before any twice (Tried::next_to_expand).
        for _ in 0..TUNE_ROUNDS {
            let Some(blocks) = tried.next_to_expand() else {
                break;
            };
            let names = [
                "a fast plan not yet varied, one block at another block size",
                "a fast plan not yet varied, one block at its runner-up",
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
        // The close candidates raced in placements (super::race); the answer is the fastest by
        // the race pooled with the search (race::with_search; the search's fastest where nothing
        // could be raced).
        let plan_at = |k: usize| -> anyhow::Result<Plan> {
            match plans.get(k) {
                Some(p) => Ok(p.clone()),
                None => single_plan(m, source, by, opt, &opt.singles[short[k - plans.len()]]),
            }
        };
        let times: Vec<Option<f64>> = timed.iter().map(|(_, t)| *t).collect();
        let close = race::entrants(&times);
        let (mut raced, mut raced_placements, mut raced_pooled) =
            (Vec::new(), Vec::new(), Vec::new());
        let mut answer = close.first().copied();
        if close.len() >= 2 {
            let entrants = close
                .iter()
                .map(|&k| plan_at(k))
                .collect::<anyhow::Result<Vec<_>>>()?;
            let r = race::race(be, m, &entrants, &x, &reference, protocol);
            out.max_relative_error = out.max_relative_error.max(r.max_relative_error);
            // The search timed a plan in one placement, a single configuration in as many as
            // the protocol gives it (at most as many as the race could).
            let search_n = |k: usize, raced_n: usize| {
                if k < plans.len() {
                    1
                } else {
                    raced_n.min(protocol.placements).max(1)
                }
            };
            raced_pooled = close
                .iter()
                .zip(&r.seconds)
                .zip(&r.placements)
                .map(|((&k, t), &n)| {
                    let search = timed[k].1.map(|s| (s, search_n(k, n)));
                    t.as_ref().ok().map(|&t| race::with_search(t, n, search))
                })
                .collect::<Vec<_>>();
            answer = close
                .iter()
                .zip(&raced_pooled)
                .filter_map(|(&k, t)| t.map(|t| (k, t)))
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
                raced_pooled,
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
