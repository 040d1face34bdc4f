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

mod fit;
mod neighbours;
mod score;
pub use fit::{cross_validate, cross_validated_picks, fit, fit_and_score};
use neighbours::*;
use score::*;
pub use score::{markdown, read_records, score_stored, Score};

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

#[cfg(test)]
mod tests;
