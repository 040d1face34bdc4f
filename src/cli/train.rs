//! `sparsecast train`: fit the learned models (002: LR, GB, KNN) on training tables into a
//! profile, and cross-validate them beside the profile's other models.

use crate::corpus::table::{self, TableRow};
use crate::learn::{self, cv, report, Learner};
use crate::model::NamedModel;
use crate::profile::Profile;
use crate::Precision;
use anyhow::{bail, Context};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Train the learned models on measured training tables and write them into a device profile.
///
/// Reads one or more tables (`sparsecast collect`, .jsonl or .jsonl.gz) of one device, fits every
/// model of --models on all rows of each precision (one model per configuration of the table:
/// every format, thread mapping, block size and SELL-C-σ parameter set) and writes them into a
/// copy of --base (default: the embedded profile of the table's GPU), replacing models of the
/// same name. Then it cross-validates: --folds folds grouped by matrix family (a real matrix and
/// its Kronecker expansions are never on both sides), each model trained on the other folds and
/// scored on the held-out one, beside the base profile's other models (the analytical model, …)
/// on the same rows: accuracy (002 Fig. 1), ranking (002 Fig. 2), the pick against cuSPARSE and
/// the overhead (002 Table 4), overall and by matrix set (files, kron/, gen/).
///
/// Examples:
///   sparsecast train --data data/corpus/h200.jsonl.gz --out h200-trained.json --report cv.md
///   sparsecast train --data cpu.jsonl --base cpu-profile.json --out cpu.json --models lr,knn
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// Training tables (JSON Lines, plain or gzip-compressed) of one device.
    #[arg(long, num_args = 1.., required = true)]
    data: Vec<PathBuf>,
    /// The profile to add the models to (default: the embedded profile of the table's GPU).
    #[arg(long)]
    base: Option<PathBuf>,
    /// Where to write the profile with the trained models.
    #[arg(long, required_unless_present = "score")]
    out: Option<PathBuf>,
    /// Learned models to fit (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "lr,gb,knn")]
    models: Vec<String>,
    /// Cross-validation folds (0: no cross-validation).
    #[arg(long, default_value_t = 5)]
    folds: usize,
    /// Also write the cross-validation report (Markdown) here.
    #[arg(long)]
    report: Option<PathBuf>,
    /// Cross-validate without what only a stored model needs (the `sparsecast` model's
    /// uncertainty, sized by inner folds): the same accuracy and ranking, ≈ 5× faster per fold;
    /// the records then carry no uncertainty and the report's training times are the quick
    /// fits'. For comparing model variants.
    #[arg(long)]
    quick_cv: bool,
    /// Also write every held-out prediction of the cross-validation here (JSON Lines, one
    /// `evaluate` record per row × configuration with each model's prediction), for analysis;
    /// with --score, every prediction scored. Gzip-compressed if the name ends in `.gz`.
    #[arg(long)]
    records: Option<PathBuf>,
    /// Fit nothing: store in --base's `sparsecast` models the calibration matrices of the
    /// tables (what `instrument --cross-from` measures on a target) and write --out. For a
    /// profile trained before models carried them, on the same tables.
    #[arg(long, conflicts_with_all = ["report", "records"])]
    calibration_only: bool,
    /// Fit no first stage: read the held-out records of an earlier `train --folds …
    /// --records RECORDS` on the same tables, fit the second stage of the recommendation on
    /// them into --base's `sparsecast` models (cross-validated by the same --folds family
    /// folds: --report) and write --out. `train --folds` with `sparsecast` among --models
    /// fits it anyway; this refits it alone.
    #[arg(long, value_name = "RECORDS", conflicts_with_all = ["records", "calibration_only"])]
    stage_from: Option<PathBuf>,
    /// Fit nothing: score --base's models as they are stored on the tables' rows of matrices
    /// none of its learned models trained on (no family of their training tables; the rest are
    /// left out and counted), with the cross-validation report's figures — every configuration
    /// pooled, the argmin and the stored second stage's pick, against cuSPARSE — so that they
    /// compare with a `train --folds` report of the same profile. For new matrices measured
    /// after a profile was fitted (`sparsecast collect` with a new seed, or resumed).
    #[arg(long, conflicts_with_all = ["out", "calibration_only", "stage_from"])]
    score: bool,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
}

/// The device of the rows; mixing devices or backends is an error.
fn device_of(rows: &[TableRow]) -> anyhow::Result<(String, String)> {
    let Some(first) = rows.first() else {
        bail!("the training tables hold no rows");
    };
    if let Some(r) = rows
        .iter()
        .find(|r| r.device != first.device || r.backend != first.backend)
    {
        bail!(
            "the tables mix devices ({} on {} and {} on {}): train one device at a time",
            first.backend,
            first.device,
            r.backend,
            r.device
        );
    }
    Ok((first.backend.clone(), first.device.clone()))
}

/// --base, or the embedded profile of `device`.
fn base_profile(base: Option<&PathBuf>, backend: &str, device: &str) -> anyhow::Result<Profile> {
    let p = match base {
        Some(path) => Profile::load(path)?,
        None => match Profile::load_embedded_for_device(device)? {
            Some((_, p)) => p,
            None => bail!(
                "no embedded profile of {device} (the table's device): pass --base PROFILE (e.g. \
                 from `sparsecast instrument --backend {backend}`)"
            ),
        },
    };
    p.check_backend(backend)
        .context("the base profile and the table come from different backends")?;
    if !p.matches_device(device) {
        bail!(
            "the base profile was measured on {}, the table on {device}: the trained models \
             would describe another device",
            p.device_name
        );
    }
    Ok(p)
}

/// A progress bar that appears only once the work has taken 2 s.
struct LateBar {
    bar: indicatif::ProgressBar,
    start: Instant,
}

impl LateBar {
    fn new(len: u64, what: &str) -> LateBar {
        let bar = super::common::progress(len, what);
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
        LateBar {
            bar,
            start: Instant::now(),
        }
    }
    fn tick(&self, msg: &str) {
        if self.bar.is_hidden() && self.start.elapsed() > Duration::from_secs(2) {
            self.bar
                .set_draw_target(indicatif::ProgressDrawTarget::stderr());
        }
        self.bar.set_message(msg.to_string());
        self.bar.inc(1);
    }
}

/// One fitted model's line of the training summary.
#[derive(serde::Serialize)]
struct Fitted {
    model: String,
    precision: Precision,
    configs: usize,
    train_s: f64,
    json_bytes: usize,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let learners: Vec<&dyn Learner> = learn::select_learners(&a.models)?;
    for r in a.out.iter().chain(&a.report).chain(&a.records) {
        crate::util::check_writable(r)?;
    }
    let mut rows = table::read_all(&a.data)?;
    // One order whatever the order of `--data`: by matrix id, then precision. The fits sum over
    // rows (the trees' base scores, the uncertainties, the folds' statistics) and floating-point
    // sums depend on their order; session 61 found the same 32 tables in two orders moved a few
    // trees and the second stage by a refit's own noise (≤ 3 matrices per set). Which table a
    // configuration's time comes from, where two measured it, is still the first given.
    rows.sort_by(|x, y| (&x.matrix, x.precision).cmp(&(&y.matrix, y.precision)));
    let (backend, device) = device_of(&rows)?;
    let mut profile = base_profile(a.base.as_ref(), &backend, &device)?;
    if a.score {
        return score(
            &profile,
            rows,
            (a.report.as_deref(), a.records.as_deref()),
            a.json,
        );
    }
    let out = a.out.clone().context("--out is required")?;
    let refs: Vec<&TableRow> = rows.iter().collect();
    if a.calibration_only {
        return calibration_only(profile, &refs, &out);
    }
    if let Some(records) = &a.stage_from {
        let cases = crate::learn::stage::read_records(records, "sparsecast")
            .with_context(|| format!("reading {}", records.display()))?;
        let md = stage(&mut profile, &cases, a.folds.max(2))?;
        profile
            .save(&out)
            .with_context(|| format!("writing {}", out.display()))?;
        if let Some(path) = &a.report {
            crate::util::write_atomic(path, |w| w.write_all(md.as_bytes()))?;
        }
        println!(
            "wrote {} with the second stage fitted on {}",
            out.display(),
            records.display()
        );
        print!("{md}");
        return Ok(());
    }
    let learned: Vec<&str> = learn::learners().iter().map(|l| l.name()).collect();

    // The base profile's other models, as they were (before the new ones replace any).
    let sections = sections_of(&profile, |m| !learned.contains(&m.model.family()));

    let precisions: Vec<Precision> = [Precision::F32, Precision::F64]
        .into_iter()
        .filter(|p| rows.iter().any(|r| r.precision == *p))
        .collect();
    let cv_steps = if a.folds > 0 {
        cv::steps(&rows, a.folds, learners.len())
    } else {
        0
    };
    let bar = LateBar::new(
        (precisions.len() * learners.len()) as u64 + cv_steps,
        "train",
    );
    let mut fitted = Vec::new();
    let mut notes = Vec::new();
    for &p in &precisions {
        let Some(section) = profile.precisions.iter_mut().find(|s| s.precision == p) else {
            notes.push(format!(
                "the base profile has no {p} section: the {p} models are not stored"
            ));
            continue;
        };
        for l in &learners {
            bar.tick(&format!("{p} {}", l.name()));
            let start = Instant::now();
            let model = l
                .fit(&refs, p)
                .with_context(|| format!("training {} ({p})", l.name()))?;
            let train_s = start.elapsed().as_secs_f64();
            fitted.push(Fitted {
                model: l.name().to_string(),
                precision: p,
                configs: crate::model::Model::configs(&model).len(),
                train_s,
                json_bytes: serde_json::to_string(&model)?.len(),
            });
            let mut named = NamedModel::new(l.name(), model);
            named.trained_families = refs
                .iter()
                .filter(|r| r.precision == p)
                .map(|r| r.family.clone())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            match section.models.iter_mut().find(|m| m.name == named.name) {
                Some(m) => *m = named,
                None => section.models.push(named),
            }
        }
    }
    profile
        .save(&out)
        .with_context(|| format!("writing {}", out.display()))?;

    let rep = if a.folds > 0 {
        let outcome = cv::run(&rows, &learners, &sections, a.folds, a.quick_cv, &|m| {
            bar.tick(m)
        })?;
        if let Some(path) = &a.records {
            write_records(path, &outcome.records)?;
        }
        // The second stage of the recommendation, on the held-out predictions of `sparsecast`.
        let stage_md = match learners.iter().any(|l| l.name() == "sparsecast") {
            true => {
                bar.tick("the second stage of the recommendation");
                let mut cases = crate::learn::stage::Cases::default();
                for r in &outcome.records {
                    cases.add(r, "sparsecast");
                }
                let md = stage(&mut profile, &cases.finish(), a.folds.max(2))?;
                profile
                    .save(&out)
                    .with_context(|| format!("writing {}", out.display()))?;
                Some(md)
            }
            false => None,
        };
        Some((report::summarize(&outcome, a.folds.max(2)), stage_md))
    } else {
        None
    };
    bar.bar.finish_and_clear();
    let profile_bytes = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    let (rep, stage_md) = match rep {
        Some((r, s)) => (Some(r), s),
        None => (None, None),
    };
    let md = rep.as_ref().map(|r| {
        let mut md = report::markdown(r);
        if let Some(s) = &stage_md {
            md.push('\n');
            md.push_str(s);
        }
        md
    });
    if let (Some(path), Some(md)) = (&a.report, &md) {
        crate::util::write_atomic(path, |w| w.write_all(md.as_bytes()))?;
    }
    if a.json {
        let v = serde_json::json!({
            "device": device,
            "rows": rows.len(),
            "families": rows.iter().map(|r| &r.family).collect::<std::collections::BTreeSet<_>>().len(),
            "out": out,
            "profile_bytes": profile_bytes,
            "fitted": fitted,
            "notes": notes,
            "cross_validation": rep,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    let mut t =
        super::common::table(&["model", "precision", "configurations", "training", "stored"]);
    for f in &fitted {
        t.add_row(vec![
            f.model.clone(),
            f.precision.to_string(),
            f.configs.to_string(),
            super::common::fmt_seconds(f.train_s),
            format!("{:.0} kB", f.json_bytes as f64 / 1e3),
        ]);
    }
    println!(
        "Trained on {} rows of {} ({}); wrote {} ({:.0} kB).",
        rows.len(),
        device,
        a.data
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        out.display(),
        profile_bytes as f64 / 1e3
    );
    println!("{t}");
    for n in &notes {
        println!("note: {n}");
    }
    if let Some(md) = md {
        println!();
        print!("{md}");
    }
    Ok(())
}

/// Fit the second stage of the recommendation ([`learn::stage`]) on `cases` into every
/// `sparsecast` model of `profile` (each precision its library), cross-validate it by `folds`
/// family folds, and return the report's section.
fn stage(
    profile: &mut Profile,
    cases: &[learn::stage::Case],
    folds: usize,
) -> anyhow::Result<String> {
    let (stages, scores) = learn::stage::fit_and_score(cases, folds)
        .context("fitting and cross-validating the second stage")?;
    let mut stored = 0;
    for s in &mut profile.precisions {
        for m in &mut s.models {
            if let crate::model::StoredModel::Sparsecast(o) = &mut m.model {
                if o.cross.is_none() {
                    o.pick = stages[(o.precision == Precision::F64) as usize].clone();
                    stored += o.pick.is_some() as usize;
                }
            }
        }
    }
    if stored == 0 {
        bail!("the profile has no sparsecast model to store the second stage in");
    }
    Ok(learn::stage::markdown(&scores, folds))
}

/// `--calibration-only` (see [`Args`]).
fn calibration_only(
    mut profile: Profile,
    rows: &[&TableRow],
    out: &std::path::Path,
) -> anyhow::Result<()> {
    let mut stored = Vec::new();
    for s in &mut profile.precisions {
        for m in &mut s.models {
            if let crate::model::StoredModel::Sparsecast(o) = &mut m.model {
                let cal = learn::cross_own::calibration_rows(rows, o.precision);
                stored.push(format!("{}: {} matrices", o.precision, cal.len()));
                o.calibration = (!cal.is_empty()).then_some(cal);
            }
        }
    }
    if stored.is_empty() {
        anyhow::bail!("the base profile has no sparsecast model to store calibration matrices in");
    }
    profile
        .save(out)
        .with_context(|| format!("writing {}", out.display()))?;
    println!(
        "wrote {} with the calibration matrices of its sparsecast models ({})",
        out.display(),
        stored.join(", ")
    );
    Ok(())
}

/// Per precision of `profile`, its models that `keep` keeps, as the cross-validation scores
/// models it does not train.
fn sections_of(profile: &Profile, keep: impl Fn(&NamedModel) -> bool) -> Vec<cv::Section> {
    profile
        .precisions
        .iter()
        .map(|s| cv::Section {
            precision: s.precision,
            bounds: s.bounds.clone(),
            others: s
                .models
                .iter()
                .filter(|m| keep(m))
                .map(|m| (m.name.clone(), m.model.clone()))
                .collect(),
        })
        .collect()
}

/// Write `records` to `path` as JSON Lines, atomically (gzip-compressed where it ends in `.gz`).
fn write_records(
    path: &std::path::Path,
    records: &[crate::evaluate::record::Record],
) -> anyhow::Result<()> {
    crate::util::write_data(path, |w| {
        for r in records {
            serde_json::to_writer(&mut *w, r).map_err(std::io::Error::other)?;
            w.write_all(b"\n")?;
        }
        Ok(())
    })?;
    Ok(())
}

/// `--score` (see [`Args`]): the profile's models as stored, on the rows none of its learned
/// models trained on.
fn score(
    profile: &Profile,
    rows: Vec<TableRow>,
    (report_path, records): (Option<&std::path::Path>, Option<&std::path::Path>),
    json: bool,
) -> anyhow::Result<()> {
    let trained = |r: &TableRow| profile.trained_on(r.precision, &r.family, |_| true);
    let total = rows.len();
    let rows: Vec<TableRow> = rows.into_iter().filter(|r| !trained(r)).collect();
    let left_out = total - rows.len();
    if rows.is_empty() {
        bail!(
            "the profile's learned models trained on every one of the {total} rows: there is \
             nothing they have not seen to score them on"
        );
    }
    let sections = sections_of(profile, |_| true);
    let bar = LateBar::new(cv::steps(&rows, 0, 0), "score");
    let mut outcome = cv::run(&rows, &[], &sections, 2, false, &|m| bar.tick(m))?;
    bar.bar.finish_and_clear();
    let rep = report::summarize(&outcome, 0);
    let mut md = format!(
        "Scored {} rows (matrix × precision) of {} ({} left out: their families trained the \
         profile's learned models).\n\n",
        rows.len(),
        profile.device_name,
        left_out
    );
    md.push_str(&report::markdown(&rep));
    // The stored second stage's pick, from the stored first stage's predictions.
    let mut cases = learn::stage::Cases::default();
    for r in &outcome.records {
        cases.add(r, "sparsecast");
    }
    let cases = cases.finish();
    let stage_of = |f64: bool| {
        profile
            .precisions
            .iter()
            .filter(|s| (s.precision == Precision::F64) == f64)
            .flat_map(|s| &s.models)
            .find_map(|m| match &m.model {
                crate::model::StoredModel::Sparsecast(o) => o.pick.as_ref(),
                _ => None,
            })
    };
    // The stage's pick of a case (an index into its candidates) and whether it overrides the
    // predicted-fastest (its position in the predicted order > 0, as `predict` marks it).
    let pick_of = |c: &learn::stage::Case| -> Option<(usize, bool)> {
        let stage = stage_of(c.f64)?;
        let mut order: Vec<usize> = (0..c.cands.len()).collect();
        order.sort_by(|&a, &b| c.cands[a].predicted.total_cmp(&c.cands[b].predicted));
        let predicted: Vec<(String, f64)> = order
            .iter()
            .map(|&i| (c.cands[i].config.clone(), c.cands[i].predicted))
            .collect();
        let k = stage.pick_shape(&c.shape, &predicted, Some(&c.family))?;
        order.get(k).map(|&i| (i, k > 0))
    };
    // Each case's pick, once: scored here, marked in the records below — its index into the
    // case's candidates, and its configuration where it overrides the predicted-fastest.
    let picks: std::collections::HashMap<(&str, bool), (usize, Option<&str>)> = cases
        .iter()
        .filter_map(|c| {
            let (i, overrides) = pick_of(c)?;
            let config = overrides.then(|| c.cands[i].config.as_str());
            Some(((c.matrix.as_str(), c.f64), (i, config)))
        })
        .collect();
    let scores = learn::stage::score_stored(&cases, |c| {
        picks.get(&(c.matrix.as_str(), c.f64)).map(|&(i, _)| i)
    });
    // The records say what the stage recommends, as `evaluate`'s do (`picked`): the tuned
    // replays (`scripts/shortlist_replay.py`) time it beside the shortlist.
    for r in &mut outcome.records {
        let key = (r.matrix.as_str(), r.precision == Precision::F64);
        if picks.get(&key).and_then(|&(_, o)| o) == Some(r.config.as_str()) {
            if let Some(p) = r.predictions.get_mut("sparsecast") {
                p.picked = true;
            }
        }
    }
    if let Some(path) = records {
        write_records(path, &outcome.records)?;
    }
    if !scores.is_empty() {
        md.push('\n');
        md.push_str(&learn::stage::markdown(&scores, 0));
    }
    if let Some(path) = report_path {
        crate::util::write_atomic(path, |w| w.write_all(md.as_bytes()))?;
    }
    if json {
        let v = serde_json::json!({
            "device": profile.device_name,
            "rows": rows.len(),
            "left_out": left_out,
            "scores": rep,
            "stage": scores,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        print!("{md}");
    }
    Ok(())
}
