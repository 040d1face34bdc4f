//! `sparsecast accuracy`: a model's accuracy recomputed offline from saved measurements.

use super::common;
use crate::model::replay::{read_report, replay};
use crate::model::Model;
use crate::Precision;
use std::path::PathBuf;

/// Recompute a profile's models' accuracy from times measured earlier, without a GPU.
///
/// Reads the JSON of `sparsecast predict --measure --json` (measured times and the predictions
/// recorded then), predicts the same matrices again with the models of a profile, and prints
/// per precision and kernel the mean / median difference rate before (recorded) and after (the
/// profile's models now), and the ranking quality: the share of matrices whose recommended
/// kernel is within 5 % of the fastest measured one, among the kernels both cover.
///
/// Examples:
///   sparsecast accuracy docs/h200/acc_real.json.gz
///   sparsecast accuracy --profile profiles/h200.json.gz --models analytical docs/h200/acc_gen.json.gz
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// `predict --measure --json` outputs.
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    #[command(flatten)]
    profile: common::ProfileArgs,
    /// The profile's models to score (default: every model).
    #[arg(long, value_delimiter = ',')]
    models: Option<Vec<String>>,
}

pub fn run(a: Args) -> anyhow::Result<()> {
    let (pname, profile) = a.profile.load(false, 0)?;
    let mut recorded = Vec::new();
    for p in &a.inputs {
        // Plain or gzip-compressed (`predict --json … | gzip`), as profiles and tables are.
        let text = crate::util::read_json_text(p, "predict --measure --json report")?;
        recorded.extend(read_report(&p.display().to_string(), &text)?);
    }
    let names: Vec<String> = match &a.models {
        Some(n) => n.clone(),
        None => profile
            .precisions
            .first()
            .map(|s| s.models.iter().map(|m| m.name.clone()).collect())
            .unwrap_or_default(),
    };
    println!("profile: {pname} ({})", profile.device_name);
    for name in &names {
        let mut models = Vec::new();
        for p in [Precision::F32, Precision::F64] {
            if let Ok(s) = profile.precision(p) {
                models.extend(s.bounded_models(Some(std::slice::from_ref(name)))?);
            }
        }
        let dyns: Vec<&dyn Model> = models.iter().map(|m| m as &dyn Model).collect();
        let clamped = |m: &dyn Model, s: &crate::model::Shape, v| {
            let raw = models
                .iter()
                .find(|b| b.precision() == m.precision())
                .and_then(|b| b.model.predict_shape(s, v, &Default::default()).ok());
            let got = m.predict_shape(s, v, &Default::default()).ok();
            raw.zip(got).is_some_and(|(r, g)| r != g)
        };
        let r = replay(&recorded, &dyns, &clamped);
        let mut t = common::table(&[
            "precision",
            "kernel",
            "matrices",
            "before mean",
            "before median",
            "after mean",
            "after median",
            "clamped",
        ]);
        for c in &r.accuracy {
            t.add_row(vec![
                c.precision.to_string(),
                c.variant.name(),
                c.count.to_string(),
                format!("{:.1} %", 100.0 * c.before.0),
                format!("{:.1} %", 100.0 * c.before.1),
                format!("{:.1} %", 100.0 * c.after.0),
                format!("{:.1} %", 100.0 * c.after.1),
                c.clamped.to_string(),
            ]);
        }
        println!("model {name}: difference rate |predicted − measured| / measured");
        println!("{t}");
        for q in &r.ranking {
            println!(
                "ranking {}: pick within 5 % of the best measured on {}/{} matrices before, {}/{} after",
                q.precision, q.before_within_5, q.count, q.after_within_5, q.count
            );
        }
        if !r.unreadable.is_empty() {
            eprintln!(
                "note: {} results without every note needed to rebuild the matrix summary were \
                 left out: {}",
                r.unreadable.len(),
                r.unreadable.join(", ")
            );
        }
    }
    Ok(())
}
