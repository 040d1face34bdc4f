//! How the picks fare: the scores per precision, their markdown, and the held-out records
//! read back.

use super::*;

/// How the picks of one precision fare, the first stage's argmin beside the second stage's.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Score {
    /// `f32` or `f64`.
    pub precision: String,
    /// Matrices scored.
    pub matrices: usize,
    /// Share of matrices whose argmin / stage pick is within 5 % of the best measured.
    pub argmin_within_5: f64,
    /// The same for the stage's pick.
    pub stage_within_5: f64,
    /// Mean of `t(best) / t(pick)`, argmin.
    pub argmin_fraction: f64,
    /// The same, stage.
    pub stage_fraction: f64,
    /// Matrices measured with a cuSPARSE algorithm.
    pub with_vendor: usize,
    /// Geometric mean of `t(best cuSPARSE) / t(pick)`, argmin.
    pub argmin_vs_cusparse: f64,
    /// The same, stage.
    pub stage_vs_cusparse: f64,
    /// The slowest pick against the best cuSPARSE algorithm (`t(cuSPARSE) / t(pick)`), argmin.
    pub argmin_worst: f64,
    /// The same, stage.
    pub stage_worst: f64,
    /// Matrices whose argmin runs below 0.95× the best cuSPARSE algorithm.
    pub argmin_below_095: usize,
    /// The same, stage.
    pub stage_below_095: usize,
    /// Matrices whose argmin runs beyond 1.2× the best measured (issue 14: never).
    pub argmin_beyond_12: usize,
    /// The same, stage.
    pub stage_beyond_12: usize,
    /// The slowest argmin against the best measured (`t(pick) / t(best)`).
    pub argmin_slowest: f64,
    /// The same, stage.
    pub stage_slowest: f64,
}

/// The index of `case`'s predicted-fastest candidate (the first stage's argmin).
pub(super) fn argmin(case: &Case) -> usize {
    (0..case.cands.len())
        .min_by(|&a, &b| case.cands[a].predicted.total_cmp(&case.cands[b].predicted))
        .unwrap_or(0)
}

/// Score a stored second stage as it is (`train --score`): each case's pick is `pick(case)`
/// (an index into its candidates; `None`: the argmin), beside the argmin. Scores per precision,
/// f32 first.
pub fn score_stored<'a>(cases: &'a [Case], pick: impl Fn(&'a Case) -> Option<usize>) -> Vec<Score> {
    score_picks(cases.iter().map(|c| {
        (
            c,
            pick(c)
                .filter(|&i| i < c.cands.len())
                .unwrap_or_else(|| argmin(c)),
        )
    }))
}

/// Scores per precision (f32 first) of `(case, index of its pick)`, beside each case's argmin.
pub(super) fn score_picks<'a>(picks: impl Iterator<Item = (&'a Case, usize)>) -> Vec<Score> {
    let mut by = [Vec::new(), Vec::new()];
    for (case, c) in picks {
        by[case.f64 as usize].push((case, argmin(case), c));
    }
    by.iter()
        .zip(["f32", "f64"])
        .filter(|(v, _)| !v.is_empty())
        .map(|(v, name)| {
            let n = v.len() as f64;
            let mut s = Score {
                precision: name.into(),
                matrices: v.len(),
                argmin_worst: f64::INFINITY,
                stage_worst: f64::INFINITY,
                ..Score::default()
            };
            let (mut la, mut ls) = (0.0, 0.0);
            for (case, a, c) in v {
                let best = case.best();
                let (ta, tc) = (case.cands[*a].measured, case.cands[*c].measured);
                s.argmin_within_5 += (ta <= 1.05 * best) as u8 as f64 / n;
                s.stage_within_5 += (tc <= 1.05 * best) as u8 as f64 / n;
                s.argmin_fraction += best / ta / n;
                s.stage_fraction += best / tc / n;
                s.argmin_beyond_12 += (ta > 1.2 * best) as usize;
                s.stage_beyond_12 += (tc > 1.2 * best) as usize;
                s.argmin_slowest = s.argmin_slowest.max(ta / best);
                s.stage_slowest = s.stage_slowest.max(tc / best);
                let vendor = case.best_vendor();
                if vendor.is_finite() {
                    s.with_vendor += 1;
                    la += (vendor / ta).ln();
                    ls += (vendor / tc).ln();
                    s.argmin_worst = s.argmin_worst.min(vendor / ta);
                    s.stage_worst = s.stage_worst.min(vendor / tc);
                    s.argmin_below_095 += (vendor / ta < 0.95) as usize;
                    s.stage_below_095 += (vendor / tc < 0.95) as usize;
                }
            }
            let m = s.with_vendor.max(1) as f64;
            s.argmin_vs_cusparse = (la / m).exp();
            s.stage_vs_cusparse = (ls / m).exp();
            s
        })
        .collect()
}

/// The scores as a Markdown section of the training report (`folds` 0: of a stored stage
/// scored as it is, [`score_stored`]).
pub fn markdown(scores: &[Score], folds: usize) -> String {
    let how = match folds {
        0 => "as stored".to_string(),
        k => format!("cross-validated again, {k} family folds"),
    };
    let mut out = format!(
        "## The second stage of the recommendation ({how})\n\n\
         The first stage's argmin beside the second stage's pick ([`learn::stage`]: boosted trees \
         over the {TOP} predicted-fastest, with the measured regret of the {NEIGHBOURS} nearest \
         training matrices), on the predictions above.\n\n\
         | precision | matrices | within 5 % of the best | fraction of the best | beyond 1.2× the best (slowest) | vs best cuSPARSE: geomean (worst) | below 0.95× cuSPARSE |\n\
         |---|---|---|---|---|---|---|\n"
    );
    for s in scores {
        out.push_str(&format!(
            "| {} | {} | {:.1} → **{:.1} %** | {:.2} → **{:.2} %** | {} → **{}** ({:.2} → {:.2}×) | {:.3} → **{:.3}×** ({:.3} → {:.3}×) | {} → **{}** of {} |\n",
            s.precision,
            s.matrices,
            100.0 * s.argmin_within_5,
            100.0 * s.stage_within_5,
            100.0 * s.argmin_fraction,
            100.0 * s.stage_fraction,
            s.argmin_beyond_12,
            s.stage_beyond_12,
            s.argmin_slowest,
            s.stage_slowest,
            s.argmin_vs_cusparse,
            s.stage_vs_cusparse,
            s.argmin_worst,
            s.stage_worst,
            s.argmin_below_095,
            s.stage_below_095,
            s.with_vendor
        ));
    }
    out
}

/// Read the held-out records of `train --records` (JSON Lines, plain or gzip-compressed) into
/// [`Case`]s of `model`'s predictions; a bad line is an error naming the file and line.
pub fn read_records(path: &std::path::Path, model: &str) -> Result<Vec<Case>> {
    let mut cases = Cases::default();
    crate::util::json_lines(
        crate::util::open_lines(path)?,
        path,
        "an evaluation record",
        |r: Record, _| {
            cases.add(&r, model);
            Ok(())
        },
    )?;
    Ok(cases.finish())
}
