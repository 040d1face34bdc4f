//! The summary over every matrix of one `optimize` run on a learned model.

use super::*;

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
pub(super) fn tuned_summary(rs: &[LearnedReport]) -> Option<TunedSummary> {
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
