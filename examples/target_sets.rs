//! Issue 14's targets on the sets the issue names (session 53): the shared SuiteSparse files
//! (`files`) and the large generated matrices (generated or Kronecker-expanded, ≥ 10⁶ non-zeros:
//! `large`, as `sparsecast score` cuts them), each matrix predicted by a model of the family
//! folds that never saw its family, from the held-out records of `train --folds`:
//!
//! ```sh
//! sparsecast train --data <the profile's tables> --base profiles/h200.json.gz \
//!   --models sparsecast --folds 5 --quick-cv --records cv.jsonl.gz   # the input (11 min a GPU)
//! cargo run --release --example target_sets -- cv.jsonl.gz [more records …]
//! ```
//!
//! Per set and precision: the difference rate |predicted − measured| / measured of every
//! configuration (cuSPARSE's included): median, mean, share within 10 %; the recommendation —
//! the second stage's pick, the stage fitted on the other folds
//! ([`sparsecast::learn::stage::cross_validated_picks`]) — within 5 % of the best measured,
//! the mean fraction of the best, picks beyond 1.2×, and against the best cuSPARSE algorithm
//! (geomean, picks below 0.95×). With `MISSES=1`, each SuiteSparse file whose pick is more than
//! 5 % slower than the best: what was picked, what was best. With `PAIRS=1`, each large matrix
//! whose pick is beyond 1.2× the best (`beyond`) or else below 0.95× the best cuSPARSE algorithm
//! (`below`): the pick, the best, both ratios and the pick's time in µs.
use sparsecast::evaluate::record::Record;
use sparsecast::learn::dataset::matrix_set;
use sparsecast::learn::stage::{cross_validated_picks, Cases};
use sparsecast::util::{json_lines, open_lines};
use std::collections::BTreeMap;

const MIN_NNZ: usize = 1_000_000;

fn main() -> anyhow::Result<()> {
    for path in std::env::args().skip(1) {
        let file = std::path::Path::new(&path);
        let mut cases = Cases::default();
        let mut set: BTreeMap<String, &'static str> = BTreeMap::new();
        // (set, f64) -> difference rates.
        let mut diffs: BTreeMap<(&str, bool), Vec<f64>> = BTreeMap::new();
        let mut records = Vec::new();
        json_lines(open_lines(file)?, file, "a record", |r: Record, _| {
            let nnz = r.features.as_ref().map_or(0, |f| f.nnz);
            let s = match matrix_set(&r.matrix) {
                "files" => Some("files"),
                _ if nnz >= MIN_NNZ => Some("large"),
                _ => None,
            };
            if let Some(s) = s {
                set.insert(r.matrix.clone(), s);
            }
            cases.add(&r, "sparsecast");
            records.push(r);
            Ok(())
        })?;
        for r in &records {
            let (Some(&s), Some(t)) = (set.get(&r.matrix), r.median_s) else {
                continue;
            };
            let Some(p) = r.predictions.get("sparsecast").and_then(|p| p.seconds) else {
                continue;
            };
            if r.status == sparsecast::backend::measure::Status::Ok && t > 0.0 {
                let f64 = r.precision == sparsecast::Precision::F64;
                diffs.entry((s, f64)).or_default().push((p - t).abs() / t);
            }
        }
        // Every case scored by the stage of the folds that never saw it (all cases take part in
        // fitting the folds' stages, as in `train`), then kept where it is in a set.
        let cases = cases.finish();
        let picks = cross_validated_picks(&cases, 5)?;
        println!("{path}");
        println!(
            "set | precision | configurations | median | mean | within 10 % | matrices | \
             pick within 5 % | fraction of the best | beyond 1.2x | vs best cuSPARSE (geomean) | \
             below 0.95x cuSPARSE"
        );
        for s in ["files", "large"] {
            for f64 in [false, true] {
                let mut d = diffs.get(&(s, f64)).cloned().unwrap_or_default();
                d.sort_by(|a, b| a.total_cmp(b));
                let (mut n, mut w5, mut frac, mut beyond, mut below, mut logv, mut nv) =
                    (0usize, 0usize, 0.0, 0usize, 0usize, 0.0, 0usize);
                for (c, &k) in cases.iter().zip(&picks) {
                    if c.f64 != f64 || set.get(&c.matrix) != Some(&s) {
                        continue;
                    }
                    let best = c.best();
                    let t = c.cands[k].measured;
                    if s == "files" && t > 1.05 * best && std::env::var_os("MISSES").is_some() {
                        let b = c
                            .cands
                            .iter()
                            .find(|x| x.measured == best)
                            .expect("the best");
                        let pb = c.cands[k].predicted / b.predicted;
                        println!(
                            "  miss {} {}: picked {} {:.2} µs, best {} {:.2} µs ({:.3}x; predicted {:+.1} % apart)",
                            c.matrix,
                            if f64 { "f64" } else { "f32" },
                            c.cands[k].config,
                            1e6 * t,
                            b.config,
                            1e6 * best,
                            t / best,
                            100.0 * (pb - 1.0),
                        );
                    }
                    if s == "large" && std::env::var_os("PAIRS").is_some() {
                        let b = c
                            .cands
                            .iter()
                            .find(|x| x.measured == best)
                            .expect("the best");
                        let v = c.best_vendor();
                        let tag = if t > 1.2 * best {
                            Some("beyond")
                        } else if v.is_finite() && v / t < 0.95 {
                            Some("below")
                        } else {
                            None
                        };
                        if let Some(tag) = tag {
                            println!(
                                "  pair {tag} {} {} picked {} best {} ({:.3}x) vendor {:.3}x t {:.1}",
                                c.matrix,
                                if f64 { "f64" } else { "f32" },
                                c.cands[k].config,
                                b.config,
                                t / best,
                                t / v,
                                1e6 * t
                            );
                        }
                    }
                    n += 1;
                    w5 += (t <= 1.05 * best) as usize;
                    frac += best / t;
                    beyond += (t > 1.2 * best) as usize;
                    let v = c.best_vendor();
                    if v.is_finite() {
                        nv += 1;
                        logv += (v / t).ln();
                        below += (v / t < 0.95) as usize;
                    }
                }
                if d.is_empty() || n == 0 {
                    continue;
                }
                let pct = |x: f64| 100.0 * x;
                println!(
                    "{s} | {} | {} | {:.1} % | {:.1} % | {:.1} % | {n} | {:.1} % | {:.2} % | {beyond} | {:.3}x | {below} of {nv}",
                    if f64 { "f64" } else { "f32" },
                    d.len(),
                    pct(d[d.len() / 2]),
                    pct(d.iter().sum::<f64>() / d.len() as f64),
                    pct(d.iter().filter(|&&x| x <= 0.10).count() as f64 / d.len() as f64),
                    pct(w5 as f64 / n as f64),
                    pct(frac / n as f64),
                    (logv / nv.max(1) as f64).exp(),
                );
            }
        }
    }
    Ok(())
}
