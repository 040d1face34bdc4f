//! Experiment (docs/ACCURACY.md, session 53; not shipped): a vendor tie-break *after* the
//! second stage of the recommendation — where the predicted-fastest cuSPARSE algorithm is
//! predicted within `d` of the stage's pick of ours, recommend the cuSPARSE algorithm — scored by
//! family folds on the held-out first-stage predictions of `train --folds`: the stage fitted on
//! the other folds as `train` does ([`sparsecast::learn::stage::cross_validated_picks`]), then
//! each width applied to its picks. `scripts/vendor_tiebreak_replay.py` replays the same rule
//! after the first stage's argmin only.
//!
//! ```sh
//! sparsecast train --data <the profile's tables> --base profiles/h200.json.gz \
//!   --models sparsecast --folds 5 --quick-cv --records cv.jsonl.gz   # the input (11 min a GPU)
//! cargo run --release --example stage_tie -- cv.jsonl.gz [more records …]
//! ```
use sparsecast::evaluate::record::Record;
use sparsecast::learn::stage::{cross_validated_picks, score_stored, Case, Cases};
use sparsecast::util::{json_lines, open_lines};
use std::collections::HashMap;

const WIDTHS: [f64; 6] = [0.0, 0.005, 0.01, 0.015, 0.02, 0.03];

/// `pick`, or the predicted-fastest cuSPARSE candidate where `pick` is ours and it is predicted
/// within `d` of it.
fn tie(case: &Case, pick: usize, d: f64) -> usize {
    let vendor = |i: &usize| case.cands[*i].config.starts_with("cusparse");
    if vendor(&pick) {
        return pick;
    }
    (0..case.cands.len())
        .filter(vendor)
        .min_by(|&a, &b| case.cands[a].predicted.total_cmp(&case.cands[b].predicted))
        .filter(|&j| case.cands[j].predicted <= case.cands[pick].predicted * (1.0 + d))
        .unwrap_or(pick)
}

fn main() -> anyhow::Result<()> {
    for path in std::env::args().skip(1) {
        let file = std::path::Path::new(&path);
        let mut cases = Cases::default();
        json_lines(open_lines(file)?, file, "a record", |r: Record, _| {
            cases.add(&r, "sparsecast");
            Ok(())
        })?;
        let cases = cases.finish();
        let picks = cross_validated_picks(&cases, 5)?;
        // score_stored hands each case by reference: find its pick by address.
        let pick_of: HashMap<usize, usize> = cases
            .iter()
            .zip(&picks)
            .map(|(c, &p)| (c as *const Case as usize, p))
            .collect();
        println!("{path}: {} matrix-precisions", cases.len());
        println!("width | precision | within 5 % | fraction of the best | beyond 1.2x | geomean vs cuSPARSE | below 0.95x cuSPARSE");
        for d in WIDTHS {
            let scores = score_stored(&cases, |c| {
                Some(tie(c, pick_of[&(c as *const Case as usize)], d))
            });
            for s in scores {
                println!(
                    "{d:.3} | {} | {:.2} % | {:.3} % | {} | {:.4} | {} of {}",
                    s.precision,
                    100.0 * s.stage_within_5,
                    100.0 * s.stage_fraction,
                    s.stage_beyond_12,
                    s.stage_vs_cusparse,
                    s.stage_below_095,
                    s.with_vendor
                );
            }
        }
    }
    Ok(())
}
