//! `predict`'s tables: one matrix's recommendation and ranking, and the summary over several.

use super::*;

pub(super) fn print_result(r: &MatrixResult) {
    println!(
        "{} — {} × {}, {} non-zeros — {}",
        r.input, r.nrows, r.ncols, r.nnz, r.precision
    );
    let measured = r
        .kernels
        .iter()
        .any(|k| k.measured_seconds.is_some() || k.measure_error.is_some());
    // The recommendation of each model (its second stage's pick, else rank 1), to flag the
    // configurations within its uncertainty.
    let first = |model: &str| {
        let of: Vec<&KernelResult> = r.kernels.iter().filter(|k| k.model == model).collect();
        crate::model::recommended(&of, |k| &k.ranked).copied()
    };
    let within = |k: &KernelResult| match first(&k.model) {
        Some(f) => match (
            f.ranked.seconds,
            f.ranked.uncertainty_seconds,
            k.ranked.seconds,
        ) {
            (Some(b), Some(u), Some(p)) => {
                !std::ptr::eq(f, k) && k.ranked.seconds.is_some() && (p - b).abs() <= u
            }
            _ => false,
        },
        None => false,
    };
    // The recommendation first, one line per model.
    let mut models: Vec<&str> = Vec::new();
    for k in &r.kernels {
        if !models.contains(&k.model.as_str()) {
            models.push(&k.model);
        }
    }
    // Whether a recommendation has others within its uncertainty (a note under the table).
    let mut close_call = false;
    for m in &models {
        let Some(f) = first(m) else {
            println!("{m}: no configuration predicted (every one refused)");
            continue;
        };
        let ties: Vec<String> = r
            .kernels
            .iter()
            .filter(|k| k.model == *m && within(k))
            .map(|k| {
                format!(
                    "{} ({})",
                    k.ranked.config.label(),
                    common::fmt_seconds(k.ranked.seconds.unwrap_or(f64::NAN))
                )
            })
            .collect();
        println!(
            "recommendation ({m}): {} — {}{}{}{}",
            f.ranked.config.label(),
            predicted_text(&f.ranked),
            match (f.ranked.picked, f.ranked.rank) {
                (true, Some(k)) => format!(
                    " (rank {k}: the second stage picks it over the predicted-fastest, from what \
                     was measured on the most similar training matrices)"
                ),
                _ => String::new(),
            },
            match (f.ranked.effective_gbs, f.bandwidth_share, &f.ceiling) {
                (Some(g), Some(s), Some(c)) => format!(
                    ", {g:.0} GB/s effective = {:.0} % of the {:.0} GB/s {} ceiling",
                    100.0 * s,
                    c.gbs,
                    c.level
                ),
                (Some(g), _, _) => format!(", {g:.0} GB/s effective"),
                _ => String::new(),
            },
            match ties.is_empty() {
                true => String::new(),
                false => format!("; within its uncertainty: {}", ties.join(", ")),
            }
        );
        close_call |= !ties.is_empty();
    }
    for t in &r.tuned {
        println!(
            "tuned recommendation ({}): {} — measured {}{}, the fastest of {} timed: {}",
            t.model,
            t.recommendation,
            common::fmt_seconds(t.measured_seconds),
            t.predicted_seconds
                .map(|p| format!(" (predicted {})", common::fmt_seconds(p)))
                .unwrap_or_default(),
            t.timed.len(),
            common::fmt_timed(&t.timed)
        );
    }
    if measured {
        for m in &models {
            if r.kernels.iter().any(|k| k.model == *m && k.in_sample) {
                println!(
                    "note: {m} was trained on this matrix's family: its differences here are \
                     in-sample, not a measure of its accuracy (left out of the summary)"
                );
            }
        }
    }
    let mut header = vec![
        "model",
        "rank",
        "kernel",
        "predicted",
        "pred. GB/s",
        "of BW",
    ];
    if measured {
        header.extend(["measured", "difference"]);
    }
    header.push("model input");
    let mut t = common::table(&header);
    let mut refused: Vec<String> = Vec::new();
    for k in &r.kernels {
        let x = &k.ranked;
        let tie = match (x.picked, within(k)) {
            (true, _) => "recommended (second stage)".to_string(),
            (false, true) => "within the uncertainty of the recommendation".to_string(),
            (false, false) => String::new(),
        };
        let mut row = vec![
            k.model.clone(),
            x.rank.map_or("—".into(), |r| r.to_string()),
            x.config.label(),
            predicted_text(x),
            x.effective_gbs.map_or("—".into(), |g| format!("{g:.1}")),
            k.bandwidth_share
                .map_or("—".into(), |s| format!("{:.0} %", 100.0 * s)),
        ];
        if measured {
            row.push(match (&k.measured_seconds, &k.measure_error) {
                (Some(m), _) => common::fmt_seconds(*m),
                (None, Some(_)) => "failed".into(),
                _ => "—".into(),
            });
            row.push(
                k.difference_rate
                    .map_or("—".into(), |d| format!("{:.1} %", 100.0 * d)),
            );
        }
        // A refusal's reason is a sentence: under the table, not in it.
        let input = match x.seconds {
            None => {
                refused.push(format!("{} ({}): {}", x.config.label(), k.model, x.note));
                "refused: see below".to_string()
            }
            Some(_) => x.note.clone(),
        };
        let note = match (tie.is_empty(), input.is_empty()) {
            (true, _) => input,
            (false, true) => tie,
            (false, false) => format!("{tie}; {input}"),
        };
        row.push(match &k.measure_error {
            Some(e) if x.seconds.is_some() => format!("{note} (measure: {e})"),
            _ => note,
        });
        t.add_row(row);
    }
    println!("{t}");
    println!(
        "rank = order of the predicted times; the recommendation is rank 1 unless marked \
         \"recommended (second stage)\"; kernel = format and thread mapping, @N its CUDA block \
         size where not 256; predicted = time of one SpMV (median of back-to-back runs) \
         ± the model's one-sigma for that configuration and size of matrix (68 % of its \
         held-out errors are smaller); pred. GB/s = bytes the kernel must move (its arrays less \
         the padding values it skips, the x entries it can touch, y; cuSPARSE's CSR and COO \
         algorithms: CSR's and COO's) / predicted time, \"—\" where the features do not tell \
         the bytes (cuSPARSE's sliced ELL lays out its slots as the library chooses; ELL-BRO's \
         packed column deltas are counted only by its conversion); of BW = that against the \
         device's measured ceiling (L2 when the bytes fit in it, else DRAM; above 100 % where a \
         working set a little larger than the L2 is partly served from it)"
    );
    for line in &refused {
        println!("refused — {line}");
    }
    // Nothing timed: say how to settle a close call by measurement.
    if close_call && r.kernels.iter().all(|k| k.measured_seconds.is_none()) {
        println!(
            "too close to call by prediction (\"within its uncertainty\" above): `--tune` on the \
             device times the {} predicted-fastest, the fastest cuSPARSE algorithm, the \
             fastest of each other format within {:.0} % and the other block sizes of the \
             fastest timed, and keeps the fastest",
            crate::model::SHORTLIST,
            100.0 * crate::model::SHORTLIST_BAND
        );
    }
    // The tool's own cost, not an SpMV time: say so.
    println!(
        "(time sparsecast took: {} to compute the features, {} to predict {})\n",
        common::fmt_seconds(r.features_seconds),
        common::fmt_seconds(r.predict_seconds),
        crate::util::count(r.kernels.len() as u64, "kernel", "kernels")
    );
}

/// `2.60 µs ± 5 %`, or `refused`.
pub(super) fn predicted_text(x: &Ranked) -> String {
    match (x.seconds, x.uncertainty_seconds) {
        (Some(p), Some(u)) => format!("{} ± {:.0} %", common::fmt_seconds(p), 100.0 * u / p),
        (Some(p), None) => common::fmt_seconds(p),
        (None, _) => "refused".into(),
    }
}

pub(super) fn print_summary(s: &[ModelSummary]) {
    let mut t = common::table(&[
        "model",
        "kernel",
        "precision",
        "matrices",
        "mean",
        "median",
        "max",
        "≤ 5 %",
        "≤ 10 %",
    ]);
    for ModelSummary { model, summary: x } in s {
        t.add_row(vec![
            model.clone(),
            x.label.clone(),
            x.precision.to_string(),
            x.count.to_string(),
            format!("{:.1} %", 100.0 * x.mean),
            format!("{:.1} %", 100.0 * x.median),
            format!("{:.1} %", 100.0 * x.max),
            x.within_5.to_string(),
            x.within_10.to_string(),
        ]);
    }
    println!("difference rate |predicted − measured| / measured:");
    println!("{t}");
}
