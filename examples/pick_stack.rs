//! Experiment (docs/ACCURACY.md, session 24): would a second stage that reads every
//! configuration's held-out prediction of a matrix at once — and what the corpus measured on
//! the most similar matrices — pick better than the argmin of the predicted times? Its `regret`
//! mode with `KNN=5` is what the product now does (`src/learn/stage/`, session 26); the other
//! modes stay here as the alternatives measured.
//!
//! ```sh
//! sparsecast train … --models sparsecast --folds 5 --quick-cv --records cv.jsonl   # the input
//! cargo run --release --example pick_stack -- cv.jsonl [MODE] [TOP]
//! KNN=5 cargo run --release --example pick_stack -- cv.jsonl regret 6
//! ```
//!
//! The records' predictions are held out by matrix family already; the second stage is
//! cross-validated again by family (5 folds), so no pick is scored by a stage that saw its
//! matrix. Modes, each over the `TOP` (default 6) predicted-fastest configurations:
//! * `regret` — boosted trees learn `ln(T / T_best)` of a candidate from its predicted gap to
//!   the fastest prediction, its rank, its configuration, the matrix's shape and (with `KNN=k`)
//!   the measured regret of the same configuration on the k nearest matrices of the other
//!   folds; the pick is the smallest predicted regret;
//! * `class` — the same, learning whether the candidate is within 5 % of the best;
//! * `rule` — no trees: the pick minimises the predicted gap plus `ALPHA` × the KNN regret;
//! * `resid` — every prediction corrected by `BETA` × the KNN mean of the same configuration's
//!   held-out residual `ln(T / T̂)`; the argmin of the corrected times (and their accuracy).
//!
//! KNN distances are Euclidean on standardised shape features; a neighbour's weight is the
//! inverse of its distance. Caveat: a neighbour's held-out prediction came from a fold model
//! that may have trained on the matrix being scored (the records hold one prediction per
//! row), a small leak in `resid` only.
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;

const FOLDS: u64 = 5;

/// One measured configuration of a matrix: label, measured and predicted seconds.
struct Cand {
    config: String,
    t: f64,
    p: f64,
}

/// One matrix × precision of the records.
struct Mat {
    family: String,
    f64: bool,
    shape: Vec<f64>,
    cands: Vec<Cand>,
}

impl Mat {
    fn best(&self) -> f64 {
        self.cands.iter().map(|c| c.t).fold(f64::INFINITY, f64::min)
    }
    fn fold(&self) -> usize {
        (fnv(&self.family) % FOLDS) as usize
    }
    /// Candidate indices, fastest predicted first.
    fn by_prediction(&self) -> Vec<usize> {
        let mut idx: Vec<usize> = (0..self.cands.len()).collect();
        idx.sort_by(|&a, &b| self.cands[a].p.total_cmp(&self.cands[b].p));
        idx
    }
}

/// A matrix's family as `train` splits it: the file of a Kronecker expansion, the file, or the
/// generated matrix itself.
fn family(r: &Value) -> String {
    let m = r["matrix"].as_str().unwrap_or("");
    if let Some(g) = r["source"].get("generated") {
        return match g.get("matrix").and_then(|v| v.as_str()) {
            Some(f) => f.rsplit('/').next().unwrap_or(f).to_string(),
            None => m.to_string(),
        };
    }
    m.rsplit('/').next().unwrap_or(m).to_string()
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf29ce484222325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    })
}

/// The shape features of a record (size, row lengths, `x` locality, padding, warp steps).
fn shape(ft: &Value) -> Vec<f64> {
    let g = |k: &str| ft[k].as_f64().unwrap_or(0.0);
    let nnz = g("nnz").max(1.0);
    let mut v = vec![
        nnz.ln(),
        g("nrows").max(1.0).ln(),
        g("max_nnz").ln_1p(),
        g("mean_nnz").ln_1p(),
        (g("std_nnz") / g("mean_nnz").max(1e-9)).ln_1p(),
        (ft["access"]["x_sectors_f64"].as_f64().unwrap_or(1.0) / nnz).ln(),
        g("ell_padding_ratio").max(1e-9).ln(),
        g("hyb_coo_share"),
        g("empty_rows") / g("nrows").max(1.0),
    ];
    if let Some(ws) = ft["access"]["warp_steps"].as_array() {
        v.extend(
            ws.iter()
                .map(|w| (w.as_f64().unwrap_or(0.0) / nnz).max(1e-9).ln()),
        );
    }
    v
}

fn read(path: &str) -> Vec<Mat> {
    let f = std::fs::File::open(path).expect("records file");
    let mut mats: BTreeMap<(String, String), Mat> = BTreeMap::new();
    for line in std::io::BufReader::new(f).lines() {
        let r: Value = serde_json::from_str(&line.expect("a line")).expect("JSON");
        let (Some(p), Some(t)) = (
            r["predictions"]["sparsecast"]["seconds"].as_f64(),
            r["median_s"].as_f64(),
        ) else {
            continue;
        };
        if r["status"] != "ok" {
            continue;
        }
        let prec = r["precision"].as_str().unwrap_or("").to_string();
        let key = (r["matrix"].as_str().unwrap_or("").to_string(), prec.clone());
        let m = mats.entry(key).or_insert_with(|| Mat {
            family: family(&r),
            f64: prec == "f64",
            shape: Vec::new(),
            cands: Vec::new(),
        });
        if m.shape.is_empty() && r["features"].is_object() {
            m.shape = shape(&r["features"]);
        }
        m.cands.push(Cand {
            config: r["config"].as_str().unwrap_or("").to_string(),
            t,
            p,
        });
    }
    mats.into_values()
        .filter(|m| m.cands.len() >= 5 && !m.shape.is_empty())
        .collect()
}

/// Nearest matrices of the same precision outside the folds `skip`, by standardised shape.
struct Knn {
    z: Vec<Vec<f64>>,
    k: usize,
}

impl Knn {
    fn new(mats: &[Mat], k: usize) -> Knn {
        let d = mats[0].shape.len();
        let n = mats.len() as f64;
        let mean: Vec<f64> = (0..d)
            .map(|j| mats.iter().map(|m| m.shape[j]).sum::<f64>() / n)
            .collect();
        let sd: Vec<f64> = (0..d)
            .map(|j| {
                let v = mats
                    .iter()
                    .map(|m| (m.shape[j] - mean[j]).powi(2))
                    .sum::<f64>()
                    / n;
                v.sqrt().max(1e-9)
            })
            .collect();
        let z = mats
            .iter()
            .map(|m| (0..d).map(|j| (m.shape[j] - mean[j]) / sd[j]).collect())
            .collect();
        Knn { z, k }
    }

    /// (index, inverse-distance weight) of the k nearest.
    fn near(&self, mats: &[Mat], i: usize, skip: &[usize]) -> Vec<(usize, f64)> {
        let mut ds: Vec<(f64, usize)> = (0..mats.len())
            .filter(|&j| !skip.contains(&mats[j].fold()) && mats[j].f64 == mats[i].f64)
            .map(|j| {
                let d2: f64 = self.z[i]
                    .iter()
                    .zip(&self.z[j])
                    .map(|(a, b)| (a - b).powi(2))
                    .sum();
                (d2.sqrt(), j)
            })
            .collect();
        let k = self.k.min(ds.len()).max(1);
        ds.select_nth_unstable_by(k - 1, |a, b| a.0.total_cmp(&b.0));
        ds.truncate(k);
        ds.into_iter().map(|(d, j)| (j, 1.0 / (d + 1e-3))).collect()
    }

    /// Weighted mean of `value(j)` over the neighbours where it exists.
    fn mean(near: &[(usize, f64)], value: impl Fn(usize) -> Option<f64>) -> Option<f64> {
        let (s, w) = near
            .iter()
            .fold((0.0, 0.0), |(s, w), &(j, wt)| match value(j) {
                Some(v) => (s + wt * v, w + wt),
                None => (s, w),
            });
        (w > 0.0).then(|| s / w)
    }
}

fn regret_of(m: &Mat, config: &str) -> Option<f64> {
    let best = m.best();
    m.cands
        .iter()
        .find(|c| c.config == config)
        .map(|c| (c.t / best).ln())
}

fn env(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Within 5 % of the best, and the fraction of the best, of picking candidate `c` of `m`.
fn score(m: &Mat, c: usize) -> (bool, f64) {
    let best = m.best();
    (m.cands[c].t <= 1.05 * best, best / m.cands[c].t)
}

fn report(what: &str, base: &[(bool, f64)], new: &[(bool, f64)]) {
    let pct = |v: &[(bool, f64)]| 100.0 * v.iter().filter(|s| s.0).count() as f64 / v.len() as f64;
    let frac = |v: &[(bool, f64)]| 100.0 * v.iter().map(|s| s.1).sum::<f64>() / v.len() as f64;
    println!(
        "{what}: {} matrix × precision pairs; picks within 5 % {:.1} → {:.1} %, fraction of the best {:.2} → {:.2} %",
        base.len(),
        pct(base),
        pct(new),
        frac(base),
        frac(new)
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .expect("usage: pick_stack RECORDS.jsonl [MODE] [TOP]");
    let mode = args.get(2).map_or("regret", String::as_str);
    let top: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(6);
    let mats = read(path);
    let knn = Knn::new(&mats, env("KNN", 0.0) as usize);
    let mut ids: HashMap<&str, f64> = HashMap::new();
    for c in mats.iter().flat_map(|m| &m.cands) {
        let n = ids.len() as f64;
        ids.entry(c.config.as_str()).or_insert(n);
    }
    let argmin: Vec<(bool, f64)> = mats
        .iter()
        .map(|m| score(m, m.by_prediction()[0]))
        .collect();
    match mode {
        "resid" => {
            let beta = env("BETA", 0.5);
            let mut picks = Vec::new();
            let (mut e0, mut e1) = (Vec::new(), Vec::new());
            for (i, m) in mats.iter().enumerate() {
                let near = knn.near(&mats, i, &[m.fold()]);
                let adj: Vec<f64> = m
                    .cands
                    .iter()
                    .map(|c| {
                        let r = Knn::mean(&near, |j| {
                            let o = mats[j].cands.iter().find(|o| o.config == c.config)?;
                            Some((o.t / o.p).ln())
                        });
                        c.p.ln() + beta * r.unwrap_or(0.0)
                    })
                    .collect();
                for (c, a) in m.cands.iter().zip(&adj) {
                    e0.push((c.p / c.t).ln().abs());
                    e1.push((a - c.t.ln()).abs());
                }
                let pick = (0..adj.len())
                    .min_by(|&a, &b| adj[a].total_cmp(&adj[b]))
                    .unwrap();
                picks.push(score(m, pick));
            }
            report(&format!("resid KNN={} BETA={beta}", knn.k), &argmin, &picks);
            for (name, e) in [("before", &mut e0), ("after", &mut e1)] {
                e.sort_by(f64::total_cmp);
                let within = e.iter().filter(|x| x.exp_m1() <= 0.10).count() as f64;
                println!(
                    "  {name}: median error {:.2} %, within 10 % {:.1} %",
                    100.0 * e[e.len() / 2].exp_m1(),
                    100.0 * within / e.len() as f64
                );
            }
        }
        "rule" => {
            let alpha = env("ALPHA", 0.2);
            let picks: Vec<(bool, f64)> = mats
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    let order = m.by_prediction();
                    let pmin = m.cands[order[0]].p.ln();
                    let near = knn.near(&mats, i, &[m.fold()]);
                    let cost = |c: usize| {
                        let r = Knn::mean(&near, |j| regret_of(&mats[j], &m.cands[c].config));
                        m.cands[c].p.ln() - pmin + alpha * r.unwrap_or(1.0)
                    };
                    let pick = order
                        .iter()
                        .take(top)
                        .copied()
                        .min_by(|&a, &b| cost(a).total_cmp(&cost(b)))
                        .unwrap();
                    score(m, pick)
                })
                .collect();
            report(
                &format!("rule KNN={} ALPHA={alpha} TOP={top}", knn.k),
                &argmin,
                &picks,
            );
        }
        "regret" | "class" => {
            let picks = stacked(&mats, &knn, &ids, top, mode == "class");
            report(&format!("{mode} KNN={} TOP={top}", knn.k), &argmin, &picks);
        }
        _ => panic!("unknown mode {mode}: regret, class, rule or resid"),
    }
}

/// The candidates' inputs of matrix `i` (the KNN regrets from neighbours outside `skip`).
fn inputs(
    mats: &[Mat],
    i: usize,
    knn: &Knn,
    ids: &HashMap<&str, f64>,
    top: usize,
    skip: &[usize],
) -> Vec<(usize, Vec<f64>)> {
    let m = &mats[i];
    let order = m.by_prediction();
    let pmin = m.cands[order[0]].p.ln();
    let p2 = m.cands[order[1]].p.ln();
    let vendor = m
        .cands
        .iter()
        .filter(|c| c.config.starts_with("cusparse"))
        .map(|c| c.p.ln())
        .fold(f64::INFINITY, f64::min);
    let merge = m
        .cands
        .iter()
        .find(|c| c.config == "csr-merge")
        .map_or(pmin, |c| c.p.ln());
    let near = (knn.k > 0).then(|| knn.near(mats, i, skip));
    order
        .iter()
        .take(top)
        .enumerate()
        .map(|(rank, &c)| {
            let cand = &m.cands[c];
            let lp = cand.p.ln();
            let mut x = vec![
                lp - pmin,
                if rank == 0 { pmin - p2 } else { lp - pmin },
                rank as f64,
                ids[cand.config.as_str()],
                m.f64 as u8 as f64,
                pmin,
                lp - vendor,
                lp - merge,
            ];
            x.extend(&m.shape);
            if let Some(near) = &near {
                x.push(Knn::mean(near, |j| regret_of(&mats[j], &cand.config)).unwrap_or(1.0));
            }
            (c, x)
        })
        .collect()
}

/// Cross-validated picks of a boosted second stage (regret or within-5 % classifier).
fn stacked(
    mats: &[Mat],
    knn: &Knn,
    ids: &HashMap<&str, f64>,
    top: usize,
    class: bool,
) -> Vec<(bool, f64)> {
    use forust_ml::objective::ObjectiveType;
    let mut picks = vec![(false, 0.0); mats.len()];
    for fold in 0..FOLDS as usize {
        let (mut xs, mut ys) = (Vec::new(), Vec::new());
        for (i, m) in mats.iter().enumerate().filter(|(_, m)| m.fold() != fold) {
            for (c, x) in inputs(mats, i, knn, ids, top, &[fold, m.fold()]) {
                let (ok, _) = score(m, c);
                ys.push(if class {
                    ok as u8 as f64
                } else {
                    (m.cands[c].t / m.best()).ln()
                });
                xs.push(x);
            }
        }
        let d = xs[0].len();
        let data: Vec<f64> = (0..d).flat_map(|j| xs.iter().map(move |r| r[j])).collect();
        let mut b = forust_ml::GradientBooster::default()
            .set_objective_type(if class {
                ObjectiveType::LogLoss
            } else {
                ObjectiveType::SquaredLoss
            })
            .set_iterations(300)
            .set_learning_rate(0.05)
            .set_max_depth(5)
            .set_min_leaf_weight(5.0)
            .set_initialize_base_score(true);
        b.fit_unweighted(&forust_ml::Matrix::new(&data, ys.len(), d), &ys, None)
            .expect("boosting");
        for (i, m) in mats.iter().enumerate().filter(|(_, m)| m.fold() == fold) {
            let rows = inputs(mats, i, knn, ids, top, &[fold]);
            let tx: Vec<f64> = (0..d)
                .flat_map(|j| rows.iter().map(move |r| r.1[j]))
                .collect();
            let s = b.predict(&forust_ml::Matrix::new(&tx, rows.len(), d), true);
            let by = |a: &usize, b: &usize| s[*a].total_cmp(&s[*b]);
            let best = if class {
                (0..rows.len()).max_by(by)
            } else {
                (0..rows.len()).min_by(by)
            };
            picks[i] = score(m, rows[best.unwrap()].0);
        }
    }
    picks
}
