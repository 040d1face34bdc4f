//! The tables of one matrix's learned optimization, and of several side by side.

use super::*;

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
                     memory placements: {}",
                    t.raced.len(),
                    race::RACE_BAND * 100.0,
                    common::fmt_timed(&t.raced)
                );
                let pooled: Vec<(String, Option<f64>)> = t
                    .raced
                    .iter()
                    .zip(&t.raced_pooled)
                    .map(|((l, _), p)| (l.clone(), *p))
                    .collect();
                println!(
                    "    the same with the search's time pooled in, by placements (the answer is \
                     the fastest here): {}",
                    common::fmt_timed(&pooled)
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
