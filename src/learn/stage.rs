//! The second stage of the `sparsecast` recommendation: which of the predicted-fastest
//! configurations of a matrix to recommend.
//!
//! The first stage predicts every configuration apart, and its argmin is within 5 % of the best
//! measured configuration on ≈ 91 % of held-out matrices (docs/ACCURACY.md); where it misses,
//! the fastest predictions are usually within each other's errors. This stage looks at the
//! [`TOP`] predicted-fastest candidates of one matrix together and learns, from the held-out
//! predictions of the cross-validation (`train --folds`), each candidate's regret
//! `ln(T / T_best)`, capped at [`REGRET_CAP`]. Its inputs, per candidate (as the offline experiment
//! `examples/pick_stack.rs` measured them, sessions 24–25):
//! * the predicted gap to the fastest prediction, the gap of the fastest to the second, the rank,
//!   the configuration, the precision, the fastest predicted `ln(seconds)`, the gap to the
//!   fastest predicted cuSPARSE algorithm and to merge-path CSR;
//! * the matrix's shape ([`shape`]: size, row lengths, `x` sectors, padding, warp steps);
//! * what the corpus **measured**: the mean regret of the same configuration on the
//!   [`NEIGHBOURS`] training matrices of the same precision nearest in standardised shape
//!   (inverse-distance weights; never of the matrix's own family), stored in the profile
//!   ([`PickStage::library`]).
//!
//! The recommendation is the candidate of the smallest predicted regret. The times shown stay the
//! first stage's: where the stage picks another than rank 1, `predict` says so.
//!
//! **Choices** (where the experiment left them open): boosted trees ([`BOOST`]: 300 of depth 5,
//! rate 0.05, ≥ 5 examples a leaf; those of the experiment) pooled over both precisions with the
//! precision an input; the final stage's neighbours exclude the matrix's own family — as at
//! prediction time, where a matrix of a family the library holds is compared with the others
//! only; the stage is scored ([`cross_validate`]) by family folds again: stage fitted on the
//! other folds' held-out predictions with neighbours from those folds only, so no pick is scored
//! by a stage or a library that saw its matrix. (The other folds' first-stage predictions came
//! from fold models that did train on the scored fold: a small leak the experiment shared.)
//!
//! Stored compactly: shapes (standardised) and regrets in fixed point ([`SCALE`]), families as
//! 32-bit hashes.

use super::gb::{self, Boost, Tree};
use crate::evaluate::record::{self, Record};
use crate::features::Features;
use crate::{Error, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Candidates per matrix: the predicted-fastest this many.
pub const TOP: usize = 6;
/// Library matrices whose measured regret a candidate reads.
pub const NEIGHBOURS: usize = 5;
/// The stage's trees.
pub const BOOST: Boost = Boost {
    trees: 300,
    depth: 5,
    rate: 0.05,
    min_leaf: 5.0,
};
/// Fixed point of the stored shapes and regrets (3 decimals).
pub const SCALE: f64 = 1000.0;
/// The regret the trees learn is capped here (`ln 1.10`: a candidate 10 % or more slower than
/// the best is a bad pick, however bad). Uncapped, the few candidates 2–10× slower dominate the
/// squared loss that the trees fit, and the stage spends its depth telling bad from very bad
/// instead of the best from the nearly best. Measured (session 28, the stage's cross-validation
/// on the same records and folds, picks within 5 % of the best, f32 / f64; H100 5,409 matrices):
/// uncapped 92.8 / 94.2 %, capped at 5 / 7 / 10 / 15 / 30 %: 93.2 / 94.2, 93.1 / 94.3,
/// 93.4 / 94.3, 93.3 / 94.3, 93.0 / 94.2 %; a 0/1 target (regret > 5 %) 93.2 / 94.0 %,
/// `√regret` 93.0 / 94.3 %; H200 (6,060 matrices) uncapped 92.5 / 93.9 %, capped at 5 / 10 /
/// 15 %: 92.7 / 93.9, 92.7 / 94.1, 92.8 / 94.0 %. The neighbours' regrets (an input) stay
/// uncapped.
pub const REGRET_CAP: f64 = 0.09531017980432493; // ln 1.10

/// The KNN regret input of a configuration no neighbour measured (a large regret: `e` × slower).
const UNKNOWN_REGRET: f64 = 1.0;

/// A matrix's shape as the stage compares matrices: `ln nnz`, `ln rows`, `ln(1 + max row)`,
/// `ln(1 + mean row)`, `ln(1 + cv of rows)`, `ln(x sectors / nnz)`, `ln` ELL padding, HYB's COO
/// share, the share of empty rows, and `ln(warp steps / nnz)` of the six thread mappings.
/// `None` without the access features.
pub fn shape(f: &Features) -> Option<Vec<f64>> {
    let a = f.access.as_ref()?;
    let nnz = (f.nnz as f64).max(1.0);
    let mut v = vec![
        nnz.ln(),
        (f.nrows as f64).max(1.0).ln(),
        (f.max_nnz as f64).ln_1p(),
        f.mean_nnz.ln_1p(),
        (f.std_nnz / f.mean_nnz.max(1e-9)).ln_1p(),
        (a.x_sectors_f64 as f64 / nnz).max(1e-9).ln(),
        f.ell_padding_ratio.max(1e-9).ln(),
        f.hyb_coo_share,
        f.empty_rows as f64 / (f.nrows as f64).max(1.0),
    ];
    v.extend(
        a.warp_steps
            .iter()
            .map(|&w| (w as f64 / nnz).max(1e-9).ln()),
    );
    Some(v)
}

/// 32-bit FNV-1a of a family name (what the library stores).
fn family_hash(s: &str) -> u32 {
    let h = s.bytes().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100000001b3)
    });
    (h ^ (h >> 32)) as u32
}

/// One measured configuration of a training matrix with its held-out prediction.
#[derive(Clone, Debug)]
pub struct Cand {
    /// Configuration label.
    pub config: String,
    /// Measured seconds.
    pub measured: f64,
    /// Held-out predicted seconds.
    pub predicted: f64,
}

/// One training matrix × precision.
#[derive(Clone, Debug)]
pub struct Case {
    /// The matrix (as the training tables name it).
    pub matrix: String,
    /// Its family (as the training tables name it).
    pub family: String,
    /// f64 (else f32).
    pub f64: bool,
    /// [`shape`].
    pub shape: Vec<f64>,
    /// Its configurations.
    pub cands: Vec<Cand>,
}

impl Case {
    /// The fastest measured seconds of its configurations.
    pub fn best(&self) -> f64 {
        self.cands
            .iter()
            .map(|c| c.measured)
            .fold(f64::INFINITY, f64::min)
    }

    /// The fastest measured seconds of its cuSPARSE algorithms (labels `cusparse…`); infinite
    /// where none was measured.
    pub fn best_vendor(&self) -> f64 {
        self.cands
            .iter()
            .filter(|x| x.config.starts_with("cusparse"))
            .map(|x| x.measured)
            .fold(f64::INFINITY, f64::min)
    }
}

/// Groups evaluation records (the held-out records of `train --folds`) into [`Case`]s.
#[derive(Default)]
pub struct Cases {
    by: BTreeMap<(String, bool), Case>,
}

impl Cases {
    /// Add one record: measured (`ok`, a median) with a prediction by `model`.
    pub fn add(&mut self, r: &Record, model: &str) {
        let (Some(t), Some(p)) = (r.median_s, r.predictions.get(model).and_then(|p| p.seconds))
        else {
            return;
        };
        if r.status != crate::backend::measure::Status::Ok || !(t > 0.0 && p > 0.0) {
            return;
        }
        let f64 = r.precision == crate::Precision::F64;
        let case = self
            .by
            .entry((r.matrix.clone(), f64))
            .or_insert_with(|| Case {
                matrix: r.matrix.clone(),
                family: record::family_of(&r.matrix, &r.source),
                f64,
                shape: Vec::new(),
                cands: Vec::new(),
            });
        if case.shape.is_empty() {
            if let Some(s) = r.features.as_ref().and_then(shape) {
                case.shape = s;
            }
        }
        case.cands.push(Cand {
            config: r.config.clone(),
            measured: t,
            predicted: p,
        });
    }

    /// The cases with a shape and at least two candidates.
    pub fn finish(self) -> Vec<Case> {
        self.by
            .into_values()
            .filter(|c| c.cands.len() >= 2 && !c.shape.is_empty())
            .collect()
    }
}

/// The matrices the stage compares with: their standardised shapes and measured regrets.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Library {
    /// Family hashes ([`family_hash`]), one per matrix.
    pub families: Vec<u32>,
    /// Standardised shapes × [`SCALE`], row-major (matrices × shape features).
    pub shapes: Vec<i32>,
    /// `ln(T / T_best)` × [`SCALE`] of every configuration of [`PickStage::configs`], row-major
    /// (matrices × configurations); −1 where the matrix has no measurement of it.
    pub regrets: Vec<i32>,
}

/// The second stage of one precision's `sparsecast` model (see the module doc).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PickStage {
    /// The precision of its library (f64, else f32): an input of the trees.
    pub f64: bool,
    /// Candidates per matrix.
    pub top: usize,
    /// Neighbours per candidate.
    pub neighbours: usize,
    /// Configuration labels: a candidate's configuration input is its index here.
    pub configs: Vec<String>,
    /// Mean of each shape feature over the training matrices (standardisation).
    pub mean: Vec<f64>,
    /// Standard deviation of each (at least 1e-9).
    pub sd: Vec<f64>,
    /// `regret = base + Σ trees`.
    pub base: f64,
    /// The trees.
    pub trees: Vec<Tree>,
    /// This precision's library.
    pub library: Library,
}

/// Standardisation of shapes.
struct Scaler<'a> {
    mean: &'a [f64],
    sd: &'a [f64],
}

impl Scaler<'_> {
    fn z(&self, s: &[f64]) -> Vec<f64> {
        s.iter()
            .zip(self.mean.iter().zip(self.sd))
            .map(|(x, (m, d))| (x - m) / d)
            .collect()
    }
}

/// The `k` nearest of `pool` (index, squared distance), nearest first, with their weights
/// `1 / (distance + 10⁻³)`.
fn nearest(pool: impl Iterator<Item = (usize, f64)>, k: usize) -> Vec<(usize, f64)> {
    let mut ds: Vec<(f64, usize)> = pool.map(|(j, d2)| (d2, j)).collect();
    if ds.is_empty() || k == 0 {
        return Vec::new();
    }
    let k = k.min(ds.len());
    ds.select_nth_unstable_by(k - 1, |a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    ds.truncate(k);
    ds.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    ds.into_iter()
        .map(|(d2, j)| (j, 1.0 / (d2.sqrt() + 1e-3)))
        .collect()
}

/// [`nearest`] over a stored library: the `k` rows of `shapes` (row-major, `zs.len()` fixed-point
/// coordinates a row, [`SCALE`]) nearest to `zs`, the rows of family `skip` left out — the same
/// rows, order and weights as `nearest` over every row's `Σ (s − z)² / SCALE²`, to the bit.
///
/// Why hand-written: the scan over the ≈ 10,000 library matrices was a quarter of a ranking
/// (0.10 ms a precision of ≈ 0.45, `perf` of `examples/predict_cost.rs`, session 58). It keeps
/// the `k` best so far instead of collecting and selecting all, and stops a row's sum once it
/// reaches the `k`-th best: its terms are ≥ 0 and a rounded sum never decreases, so the row
/// could only tie or lose — and a tie goes to the lower index, which the earlier row has.
fn nearest_rows(
    shapes: &[i32],
    families: &[u32],
    zs: &[f64],
    skip: Option<u32>,
    k: usize,
) -> Vec<(usize, f64)> {
    let d = zs.len();
    // Coordinates summed between two looks at the bound.
    const STRIDE: usize = 4;
    let unit = 1.0 / (SCALE * SCALE);
    if k == 0 || d == 0 {
        // No coordinates (a stage never has none): every row at distance zero.
        let pool = families.iter().enumerate();
        return nearest(
            pool.filter(|(_, &h)| Some(h) != skip)
                .map(|(j, _)| (j, 0.0)),
            k,
        );
    }
    // (distance, row), ascending by `nearest`'s order; the bound is the k-th distance.
    let mut best: Vec<(f64, usize)> = Vec::with_capacity(k + 1);
    for (j, (&h, row)) in families.iter().zip(shapes.chunks_exact(d)).enumerate() {
        if Some(h) == skip {
            continue;
        }
        let bound = match best.len() == k {
            true => best[k - 1].0,
            false => f64::INFINITY,
        };
        // The same additions, in the same order, as `Iterator::sum` over the row.
        let mut d2 = -0.0f64;
        let mut out = false;
        for (r, z) in row.chunks(STRIDE).zip(zs.chunks(STRIDE)) {
            for (&s, x) in r.iter().zip(z) {
                d2 += (s as f64 - x).powi(2);
            }
            if d2 * unit >= bound {
                out = true;
                break;
            }
        }
        if out {
            continue;
        }
        let d2 = d2 * unit;
        let at = best.partition_point(|e| e.0.total_cmp(&d2).is_le());
        best.insert(at, (d2, j));
        best.truncate(k);
    }
    best.into_iter()
        .map(|(d2, j)| (j, 1.0 / (d2.sqrt() + 1e-3)))
        .collect()
}

fn dist2(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum()
}

/// Weighted mean of the neighbours' regrets where measured.
fn knn_regret(near: &[(usize, f64)], regret: impl Fn(usize) -> Option<f64>) -> f64 {
    let (s, w) = near
        .iter()
        .fold((0.0, 0.0), |(s, w), &(j, wt)| match regret(j) {
            Some(v) => (s + wt * v, w + wt),
            None => (s, w),
        });
    if w > 0.0 {
        s / w
    } else {
        UNKNOWN_REGRET
    }
}

/// The stage's inputs of each of the `top` predicted-fastest candidates of one matrix:
/// `(index into preds, inputs)`. `preds` = `(configuration id, label, predicted seconds)`;
/// `knn(id)` = the neighbours' regret of that configuration.
fn inputs(
    preds: &[(usize, &str, f64)],
    f64: bool,
    shape: &[f64],
    top: usize,
    knn: impl Fn(usize) -> f64,
) -> Vec<(usize, Vec<f64>)> {
    let mut order: Vec<usize> = (0..preds.len()).collect();
    order.sort_by(|&a, &b| preds[a].2.total_cmp(&preds[b].2));
    let lp = |i: usize| preds[i].2.ln();
    let pmin = lp(order[0]);
    let p2 = order.get(1).map_or(pmin, |&i| lp(i));
    let vendor = preds
        .iter()
        .filter(|p| p.1.starts_with("cusparse"))
        .map(|p| p.2.ln())
        .fold(f64::INFINITY, f64::min);
    let vendor = if vendor.is_finite() { vendor } else { pmin };
    let merge = preds
        .iter()
        .find(|p| p.1 == "csr-merge")
        .map_or(pmin, |p| p.2.ln());
    order
        .iter()
        .take(top)
        .enumerate()
        .map(|(rank, &i)| {
            let l = lp(i);
            let mut x = vec![
                l - pmin,
                if rank == 0 { pmin - p2 } else { l - pmin },
                rank as f64,
                preds[i].0 as f64,
                f64 as u8 as f64,
                pmin,
                l - vendor,
                l - merge,
            ];
            x.extend_from_slice(shape);
            x.push(knn(preds[i].0));
            (i, x)
        })
        .collect()
}

fn eval(base: f64, trees: &[Tree], x: &[f64]) -> f64 {
    base + gb::sum(trees, x)
}

impl PickStage {
    /// Every array of the consistent length, every number finite, every tree well formed over
    /// the stage's inputs (a profile is input: a malformed one is refused, never a panic).
    pub fn validate(&self) -> Result<()> {
        let (d, n, nc) = (
            self.mean.len(),
            self.library.families.len(),
            self.configs.len(),
        );
        let inputs = 8 + d + 1;
        let ok = d > 0
            && self.sd.len() == d
            && self.sd.iter().all(|s| s.is_finite() && *s > 0.0)
            && self.mean.iter().all(|m| m.is_finite())
            && self.base.is_finite()
            && self.library.shapes.len() == n * d
            && self.library.regrets.len() == n * nc
            && self.trees.iter().all(|t| t.validate(inputs));
        match ok {
            true => Ok(()),
            false => Err(Error::Invalid(
                "sparsecast model: a malformed second stage (pick)".into(),
            )),
        }
    }

    /// The index into `predicted` (`(label, seconds)`) of the configuration to recommend, for
    /// the matrix of `f` (`None`: fewer than two predictions, or no access features). A
    /// library matrix of `family` is never a neighbour.
    pub fn pick(
        &self,
        f: &Features,
        predicted: &[(String, f64)],
        family: Option<&str>,
    ) -> Option<usize> {
        if predicted.len() < 2 || self.trees.is_empty() {
            return None;
        }
        self.pick_shape(&shape(f)?, predicted, family)
    }

    /// [`PickStage::pick`] for a matrix of [`shape`] `shape`.
    pub fn pick_shape(
        &self,
        shape: &[f64],
        predicted: &[(String, f64)],
        family: Option<&str>,
    ) -> Option<usize> {
        if predicted.len() < 2 || self.trees.is_empty() {
            return None;
        }
        let d = self.mean.len();
        if shape.len() != d {
            return None;
        }
        let f64 = self.f64;
        let z = Scaler {
            mean: &self.mean,
            sd: &self.sd,
        }
        .z(shape);
        let skip = family.map(family_hash);
        let lib = &self.library;
        let nc = self.configs.len();
        // The distances in the library's fixed point (the shape scaled once, not each of the
        // library's ≈ 10,000 × d entries divided): what made the stage 40 % of a ranking
        // (`examples/predict_cost.rs`, session 53). Equal to the distance in standardised units
        // up to rounding; the nearest are the same.
        let zs: Vec<f64> = z.iter().map(|x| x * SCALE).collect();
        let near = nearest_rows(&lib.shapes, &lib.families, &zs, skip, self.neighbours);
        let preds: Vec<(usize, &str, f64)> = predicted
            .iter()
            .map(|(l, s)| {
                let id = self.configs.iter().position(|c| c == l).unwrap_or(nc);
                (id, l.as_str(), *s)
            })
            .collect();
        let rows = inputs(&preds, f64, shape, self.top, |id| {
            knn_regret(&near, |j| {
                let r = *lib.regrets.get(j * nc + id).filter(|_| id < nc)?;
                (r >= 0).then(|| r as f64 / SCALE)
            })
        });
        rows.iter()
            .map(|(i, x)| (*i, eval(self.base, &self.trees, x)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(i, _)| i)
    }
}

/// What the fit works on: the cases with their standardised shapes, regrets and ids.
struct Prepared<'a> {
    cases: &'a [Case],
    configs: Vec<String>,
    mean: Vec<f64>,
    sd: Vec<f64>,
    z: Vec<Vec<f64>>,
    hash: Vec<u32>,
    /// Per case, per configuration id: `ln(T / T_best)`.
    regret: Vec<Vec<Option<f64>>>,
    /// Per case: `(id, predicted seconds)` of each candidate, in the case's order.
    ids: Vec<Vec<usize>>,
}

impl<'a> Prepared<'a> {
    fn new(cases: &'a [Case]) -> Result<Prepared<'a>> {
        let d = cases.first().map_or(0, |c| c.shape.len());
        if d == 0 || cases.iter().any(|c| c.shape.len() != d) {
            return Err(Error::Invalid(
                "the pick stage needs the shapes of every training matrix".into(),
            ));
        }
        let mut configs: Vec<String> = cases
            .iter()
            .flat_map(|c| c.cands.iter().map(|x| x.config.clone()))
            .collect();
        configs.sort();
        configs.dedup();
        let n = cases.len() as f64;
        let mean: Vec<f64> = (0..d)
            .map(|j| cases.iter().map(|c| c.shape[j]).sum::<f64>() / n)
            .collect();
        let sd: Vec<f64> = (0..d)
            .map(|j| {
                let v = cases
                    .iter()
                    .map(|c| (c.shape[j] - mean[j]).powi(2))
                    .sum::<f64>()
                    / n;
                v.sqrt().max(1e-9)
            })
            .collect();
        let scaler = Scaler {
            mean: &mean,
            sd: &sd,
        };
        let z = cases.iter().map(|c| scaler.z(&c.shape)).collect();
        let id = |l: &str| configs.binary_search_by(|c| c.as_str().cmp(l)).unwrap();
        let ids: Vec<Vec<usize>> = cases
            .iter()
            .map(|c| c.cands.iter().map(|x| id(&x.config)).collect())
            .collect();
        let regret = cases
            .iter()
            .zip(&ids)
            .map(|(c, ids)| {
                let best = c.best();
                let mut r = vec![None; configs.len()];
                for (x, &i) in c.cands.iter().zip(ids) {
                    r[i] = Some((x.measured / best).ln());
                }
                r
            })
            .collect();
        Ok(Prepared {
            cases,
            hash: cases.iter().map(|c| family_hash(&c.family)).collect(),
            configs,
            mean,
            sd,
            z,
            regret,
            ids,
        })
    }

    /// Case `i`'s candidate inputs, its neighbours from the library cases `lib` allows (same
    /// precision, never `i`'s family).
    fn rows(&self, i: usize, lib: &(dyn Fn(usize) -> bool + Sync)) -> Vec<(usize, Vec<f64>)> {
        let c = &self.cases[i];
        let near = nearest(
            (0..self.cases.len())
                .filter(|&j| self.cases[j].f64 == c.f64 && self.hash[j] != self.hash[i] && lib(j))
                .map(|j| (j, dist2(&self.z[i], &self.z[j]))),
            NEIGHBOURS,
        );
        let preds: Vec<(usize, &str, f64)> = c
            .cands
            .iter()
            .zip(&self.ids[i])
            .map(|(x, &id)| (id, x.config.as_str(), x.predicted))
            .collect();
        inputs(&preds, c.f64, &c.shape, TOP, |id| {
            knn_regret(&near, |j| self.regret[j][id])
        })
    }

    /// Trees fitted on the cases `train` allows, each with neighbours from those cases.
    fn fit(&self, train: &(dyn Fn(usize) -> bool + Sync)) -> Result<(f64, Vec<Tree>)> {
        let rows: Vec<(Vec<f64>, f64)> = (0..self.cases.len())
            .into_par_iter()
            .filter(|&i| train(i))
            .flat_map_iter(|i| {
                self.rows(i, train).into_iter().map(move |(c, x)| {
                    let r = self.regret[i][self.ids[i][c]].unwrap_or(0.0);
                    (x, r.min(REGRET_CAP))
                })
            })
            .collect();
        if rows.len() < 2 * TOP {
            return Err(Error::Invalid(format!(
                "the pick stage needs more training matrices ({} candidate rows)",
                rows.len()
            )));
        }
        let (xs, ys): (Vec<Vec<f64>>, Vec<f64>) = rows.into_iter().unzip();
        gb::boost(&xs, &ys, BOOST, "the pick stage")
    }

    /// The candidate (index into the case's candidates) the stage `(base, trees)` picks for
    /// case `i`, neighbours from the cases `lib` allows.
    fn pick(
        &self,
        i: usize,
        (base, trees): &(f64, Vec<Tree>),
        lib: &(dyn Fn(usize) -> bool + Sync),
    ) -> usize {
        self.rows(i, lib)
            .iter()
            .map(|(c, x)| (*c, eval(*base, trees, x)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map_or(0, |(c, _)| c)
    }

    /// The stage of one precision: the pooled trees, the library of that precision's cases.
    fn stage(&self, (base, trees): &(f64, Vec<Tree>), f64: bool) -> PickStage {
        let nc = self.configs.len();
        let mut library = Library::default();
        for i in (0..self.cases.len()).filter(|&i| self.cases[i].f64 == f64) {
            library.families.push(self.hash[i]);
            library
                .shapes
                .extend(self.z[i].iter().map(|v| (v * SCALE).round() as i32));
            library.regrets.extend((0..nc).map(|id| {
                self.regret[i][id].map_or(-1, |r| (r * SCALE).round().min(i32::MAX as f64) as i32)
            }));
        }
        PickStage {
            f64,
            top: TOP,
            neighbours: NEIGHBOURS,
            configs: self.configs.clone(),
            mean: self.mean.clone(),
            sd: self.sd.clone(),
            base: *base,
            trees: trees.clone(),
            library,
        }
    }
}

/// Fit the stage on every case (neighbours never of a case's own family) and return the stages
/// of f32 and f64 (`None` for a precision without cases).
pub fn fit(cases: &[Case]) -> Result<[Option<PickStage>; 2]> {
    fit_prepared(&Prepared::new(cases)?)
}

/// [`cross_validate`] then [`fit`] on one preparation of `cases` (what `train` does).
pub fn fit_and_score(cases: &[Case], folds: usize) -> Result<([Option<PickStage>; 2], Vec<Score>)> {
    let p = Prepared::new(cases)?;
    let scores = scores(&p, folds)?;
    Ok((fit_prepared(&p)?, scores))
}

fn fit_prepared(p: &Prepared<'_>) -> Result<[Option<PickStage>; 2]> {
    let cases = p.cases;
    let model = p.fit(&|_| true)?;
    Ok([false, true].map(|f64| {
        cases
            .iter()
            .any(|c| c.f64 == f64)
            .then(|| p.stage(&model, f64))
    }))
}

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

/// Cross-validate the stage by family folds ([`super::dataset::fold_of`], the first stage's
/// folds): for each fold, trees fitted on the other folds' cases (neighbours from those folds),
/// then each held-out case picked with neighbours from the other folds only. Folds run in
/// parallel. Scores per precision, f32 first.
pub fn cross_validate(cases: &[Case], folds: usize) -> Result<Vec<Score>> {
    scores(&Prepared::new(cases)?, folds)
}

/// The picks of [`cross_validate`]: each case's candidate (an index into its `cands`) as the
/// stage fitted on the other folds picks it — for experiments on what follows the stage
/// (`examples/stage_tie.rs`).
pub fn cross_validated_picks(cases: &[Case], folds: usize) -> Result<Vec<usize>> {
    let mut picks = vec![0; cases.len()];
    for (i, c) in fold_picks(&Prepared::new(cases)?, folds)? {
        picks[i] = c;
    }
    Ok(picks)
}

fn scores(p: &Prepared<'_>, folds: usize) -> Result<Vec<Score>> {
    let picks = fold_picks(p, folds)?;
    Ok(score_picks(
        picks.into_iter().map(|(i, c)| (&p.cases[i], c)),
    ))
}

/// `(case, its pick)` of every case, each picked by the stage fitted on the other folds.
fn fold_picks(p: &Prepared<'_>, folds: usize) -> Result<Vec<(usize, usize)>> {
    let cases = p.cases;
    let fold: Vec<usize> = cases
        .iter()
        .map(|c| super::dataset::fold_of(&c.family, folds))
        .collect();
    let picks: Vec<(usize, usize)> = (0..folds)
        .into_par_iter()
        .map(|k| -> Result<Vec<(usize, usize)>> {
            let other = |j: usize| fold[j] != k;
            let model = p.fit(&other)?;
            Ok((0..cases.len())
                .filter(|&i| fold[i] == k)
                .map(|i| (i, p.pick(i, &model, &other)))
                .collect())
        })
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    Ok(picks)
}

/// The index of `case`'s predicted-fastest candidate (the first stage's argmin).
fn argmin(case: &Case) -> usize {
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
fn score_picks<'a>(picks: impl Iterator<Item = (&'a Case, usize)>) -> Vec<Score> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A training matrix of `n` rows of `len` non-zeros (its shape: only size and row length
    /// vary) whose configurations `a`, `b`, `c` measured `t` and were predicted `p`.
    fn case(family: &str, n: usize, len: usize, t: [f64; 3], p: [f64; 3]) -> Case {
        let rows: Vec<u32> = (0..(n * len) as u32).map(|k| k / len as u32).collect();
        let cols: Vec<u32> = (0..(n * len) as u32).map(|k| k % n as u32).collect();
        let m =
            crate::Csr::<f64>::from_triplets(n, n, &rows, &cols, &vec![1.0; rows.len()]).unwrap();
        let f = Features::compute(&m);
        Case {
            matrix: format!("{family}-{n}x{len}"),
            family: family.into(),
            f64: true,
            shape: shape(&f).unwrap(),
            cands: ["a", "b", "c"]
                .iter()
                .zip(t.iter().zip(p))
                .map(|(c, (&t, p))| Cand {
                    config: c.to_string(),
                    measured: t,
                    predicted: p,
                })
                .collect(),
        }
    }

    /// Matrices of short rows where the model predicts `a` fastest but `b` runs fastest, and
    /// matrices of long rows where it predicts right (`a`). (The slow times vary a little
    /// from matrix to matrix: the trees' `f32` thresholds would round a split between regrets
    /// that are all exactly equal.)
    fn corpus() -> Vec<Case> {
        (0..60)
            .map(|k| {
                let n = 200 + 7 * k;
                let slow = 2.0 + 0.01 * k as f64;
                if k % 2 == 0 {
                    case(
                        &format!("short{k}"),
                        n,
                        2,
                        [slow, 1.0, 3.0],
                        [1.0, 1.1, 3.0],
                    )
                } else {
                    case(
                        &format!("long{k}"),
                        n,
                        40,
                        [1.0, slow, 3.0],
                        [1.0, 1.1, 3.0],
                    )
                }
            })
            .collect()
    }

    #[test]
    fn the_stage_learns_where_the_argmin_misses_and_says_so_in_its_cross_validation() {
        let cases = corpus();
        let scores = cross_validate(&cases, 5).unwrap();
        assert_eq!(scores.len(), 1);
        let s = &scores[0];
        assert_eq!((s.precision.as_str(), s.matrices), ("f64", 60));
        // The argmin (`a`) is right on the long-row half only; the stage learns the short rows.
        assert!((s.argmin_within_5 - 0.5).abs() < 1e-9, "{s:?}");
        assert!(s.stage_within_5 > 0.9, "{s:?}");
        assert!(s.stage_fraction > s.argmin_fraction);
        // The argmin runs the short rows 2.0–2.58× slower than the best: 30 beyond 1.2×.
        assert_eq!(s.argmin_beyond_12, 30, "{s:?}");
        assert!((s.argmin_slowest - 2.58).abs() < 1e-9, "{s:?}");
        assert!(s.stage_beyond_12 < 6 && s.stage_slowest >= 1.0, "{s:?}");
        assert!(markdown(&scores, 5).contains("| f64 | 60 |"));
        assert!(markdown(&scores, 5).contains("| 30 → **"));
        // The same picks, one a case, for experiments on what follows the stage.
        let picks = cross_validated_picks(&cases, 5).unwrap();
        assert_eq!(picks.len(), cases.len());
        let again = score_stored(&cases, |c| {
            let i = cases.iter().position(|x| std::ptr::eq(x, c))?;
            Some(picks[i])
        });
        let (a, b) = (&again[0], &scores[0]);
        assert_eq!(
            (a.matrices, a.stage_beyond_12, a.stage_slowest),
            (b.matrices, b.stage_beyond_12, b.stage_slowest)
        );
        assert!(
            (a.stage_within_5 - b.stage_within_5).abs() < 1e-12,
            "{a:?} {b:?}"
        );
        assert!(
            (a.stage_fraction - b.stage_fraction).abs() < 1e-12,
            "{a:?} {b:?}"
        );
    }

    #[test]
    fn a_stored_stage_picks_from_predictions_and_features_alone() {
        let cases = corpus();
        let [f32s, f64s] = fit(&cases).unwrap();
        assert!(f32s.is_none());
        let stage = f64s.unwrap();
        assert_eq!(stage.library.families.len(), 60);
        assert_eq!(stage.library.regrets.len(), 60 * 3);
        stage.validate().unwrap();
        let mut bad = stage.clone();
        bad.library.shapes.pop();
        assert!(bad.validate().is_err());
        // It survives the profile's JSON.
        let stage: PickStage =
            serde_json::from_str(&serde_json::to_string(&stage).unwrap()).unwrap();
        let pick = |len: usize| {
            let n = 333;
            let rows: Vec<u32> = (0..(n * len) as u32).map(|k| k / len as u32).collect();
            let cols: Vec<u32> = (0..(n * len) as u32).map(|k| k % n as u32).collect();
            let m = crate::Csr::<f64>::from_triplets(n, n, &rows, &cols, &vec![1.0; rows.len()])
                .unwrap();
            let predicted = [("a", 1.0), ("b", 1.1), ("c", 3.0)].map(|(l, s)| (l.to_string(), s));
            stage.pick(&Features::compute(&m), &predicted, None)
        };
        assert_eq!(pick(2), Some(1), "short rows: b");
        assert_eq!(pick(40), Some(0), "long rows: the argmin");
        // One prediction: nothing to pick from.
        let m = crate::Csr::<f64>::from_triplets(2, 2, &[0, 1], &[0, 1], &[1.0, 1.0]).unwrap();
        assert_eq!(
            stage.pick(&Features::compute(&m), &[("a".into(), 1.0)], None),
            None
        );
    }

    #[test]
    fn a_matrix_of_a_library_family_is_never_its_own_neighbour() {
        // Two families only: a query of family `short0` reads `long1`'s regrets alone.
        let cases = vec![
            case("short0", 300, 2, [2.0, 1.0, 3.0], [1.0, 1.1, 3.0]),
            case("long1", 300, 40, [1.0, 2.0, 3.0], [1.0, 1.1, 3.0]),
        ];
        let p = Prepared::new(&cases).unwrap();
        let rows = p.rows(0, &|_| true);
        // The KNN regret input (last) of candidate `b` is long1's ln 2, not short0's 0.
        let b = rows.iter().find(|(c, _)| *c == 1).unwrap();
        assert!((b.1.last().unwrap() - 2f64.ln()).abs() < 1e-9, "{:?}", b.1);
    }

    /// The library scan of a stored stage finds the same neighbours, in the same order and
    /// with the same weights to the bit, as [`nearest`] over every row: rows at equal
    /// distances (duplicates), a skipped family, fewer rows than neighbours, no neighbour.
    #[test]
    fn the_library_scan_finds_what_the_plain_selection_finds() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(58);
        for trial in 0..300 {
            let d = 1 + trial % 17;
            let n = rng.random_range(0..200usize);
            // Coarse coordinates, so that many rows tie; some rows repeated exactly.
            let mut shapes: Vec<i32> = (0..n * d).map(|_| rng.random_range(-3..=3) * 500).collect();
            for j in 1..n {
                if rng.random_bool(0.2) {
                    let (a, b) = shapes.split_at_mut(j * d);
                    b[..d].copy_from_slice(&a[(j - 1) * d..j * d]);
                }
            }
            let families: Vec<u32> = (0..n).map(|_| rng.random_range(0..8u32)).collect();
            let zs: Vec<f64> = (0..d).map(|_| rng.random_range(-2000.0..2000.0)).collect();
            let skip = rng.random_bool(0.5).then(|| rng.random_range(0..8u32));
            let k = trial % 8;
            let unit = 1.0 / (SCALE * SCALE);
            let plain = nearest(
                families.iter().enumerate().filter_map(|(j, &h)| {
                    if Some(h) == skip {
                        return None;
                    }
                    let row = &shapes[j * d..(j + 1) * d];
                    let d2: f64 = row
                        .iter()
                        .zip(&zs)
                        .map(|(&s, x)| (s as f64 - x).powi(2))
                        .sum();
                    Some((j, d2 * unit))
                }),
                k,
            );
            let scan = nearest_rows(&shapes, &families, &zs, skip, k);
            let bits = |v: &[(usize, f64)]| -> Vec<(usize, u64)> {
                v.iter().map(|&(j, w)| (j, w.to_bits())).collect()
            };
            assert_eq!(
                bits(&scan),
                bits(&plain),
                "trial {trial}: d {d}, n {n}, k {k}"
            );
        }
    }
}
