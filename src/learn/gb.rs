//! `gb`: gradient-boosted regression trees (002 §3.2, Friedman) — per configuration, an
//! ensemble of regression trees fitted to `ln(time)` on the same features as [`super::lr`]
//! ([`super::select::regression`]).
//!
//! **Training** uses the `forust-ml` crate (see [`TREES`] for the choice and its measured
//! comparison with `perpetual`); the
//! trained trees are then copied into our own compact form ([`Tree`]: parallel arrays of split
//! features, `f32` thresholds, children and leaf values), which is what the profile stores and
//! what predicts. So the profile does not depend on the crate's serialization (which changes
//! between its versions and stores per-node statistics we do not need), and a prediction is a
//! few hundred comparisons.

use super::dataset::{self, ConfigSet};
use super::select::{self, Feature};
use super::Learner;
use crate::corpus::table::TableRow;
use crate::features::Features;
use crate::model::StoredModel;
use crate::{Error, Precision, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// One regression tree. Internal node `i` sends a row left when
/// `x[feature[i]] < threshold[i]`, else right; a child `c ≥ 0` is internal node `c`, a child
/// `c < 0` is leaf `−1 − c`. A tree without internal nodes is the single leaf `leaf[0]`.
///
/// Stored in pre-order ([`TreeRepr::PreOrder`]): the children arrays are implied, which with the
/// depth-6 trees of [`super::own`] made the profile 30 % smaller; profiles written before
/// (parallel arrays with children) still load.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "TreeRepr", into = "TreeRepr")]
pub struct Tree {
    /// Split feature of each internal node (index into the configuration's features, below
    /// [`LEAF`]).
    pub feature: Vec<u8>,
    /// Split threshold of each internal node.
    pub threshold: Vec<f32>,
    /// Left child of each internal node.
    pub left: Vec<i32>,
    /// Right child of each internal node.
    pub right: Vec<i32>,
    /// Leaf values.
    pub leaf: Vec<f32>,
}

/// The mark of a leaf in a pre-order tree (no feature has this index).
pub const LEAF: u8 = u8::MAX;

/// How a [`Tree`] is stored.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
pub enum TreeRepr {
    /// Pre-order: node `k` is a leaf when `p[k]` is [`LEAF`] (value `x[k]`), else a split on
    /// feature `p[k]` at threshold `x[k]`, followed by its left subtree, then its right one.
    PreOrder {
        /// Split feature or [`LEAF`].
        p: Vec<u8>,
        /// Threshold or leaf value.
        x: Vec<f32>,
    },
    /// Parallel arrays as [`Tree`] holds them (profiles written before the pre-order form).
    Arrays {
        /// Features.
        f: Vec<u8>,
        /// Thresholds.
        t: Vec<f32>,
        /// Left children.
        l: Vec<i32>,
        /// Right children.
        r: Vec<i32>,
        /// Leaf values.
        v: Vec<f32>,
    },
}

impl From<Tree> for TreeRepr {
    fn from(t: Tree) -> TreeRepr {
        let (mut p, mut x) = (Vec::new(), Vec::new());
        fn emit(t: &Tree, c: i32, p: &mut Vec<u8>, x: &mut Vec<f32>) {
            if c < 0 {
                p.push(LEAF);
                x.push(t.leaf[(-1 - c) as usize]);
            } else {
                let n = c as usize;
                p.push(t.feature[n]);
                x.push(t.threshold[n]);
                emit(t, t.left[n], p, x);
                emit(t, t.right[n], p, x);
            }
        }
        if t.feature.is_empty() {
            p.push(LEAF);
            x.push(t.leaf.first().copied().unwrap_or(0.0));
        } else {
            emit(&t, 0, &mut p, &mut x);
        }
        TreeRepr::PreOrder { p, x }
    }
}

/// Read the subtree at `p[*at]` into `t` (internal nodes in depth-first order, as [`convert`]
/// writes them) and return its child reference (node index, or `−1 − leaf`).
fn parse(
    p: &[u8],
    x: &[f32],
    at: &mut usize,
    t: &mut Tree,
    depth: usize,
) -> std::result::Result<i32, String> {
    let k = *at;
    let (&f, &v) = p.get(k).zip(x.get(k)).ok_or("a truncated pre-order tree")?;
    *at += 1;
    if f == LEAF {
        return Ok(t.push_leaf(v));
    }
    if depth >= 64 {
        return Err("a pre-order tree deeper than 64".into());
    }
    let i = t.push_split(f, v);
    t.left[i] = parse(p, x, at, t, depth + 1)?;
    t.right[i] = parse(p, x, at, t, depth + 1)?;
    Ok(i as i32)
}

impl TryFrom<TreeRepr> for Tree {
    type Error = String;
    fn try_from(r: TreeRepr) -> std::result::Result<Tree, String> {
        let t = match r {
            TreeRepr::Arrays { f, t, l, r, v } => Tree {
                feature: f,
                threshold: t,
                left: l,
                right: r,
                leaf: v,
            },
            TreeRepr::PreOrder { p, x } => {
                if p.len() != x.len() {
                    return Err("a pre-order tree with arrays of different lengths".into());
                }
                let mut t = Tree::default();
                let mut at = 0usize;
                parse(&p, &x, &mut at, &mut t, 0)?;
                if at != p.len() {
                    return Err("trailing nodes after a pre-order tree".into());
                }
                t
            }
        };
        if t.is_valid() {
            Ok(t)
        } else {
            Err("a malformed tree".into())
        }
    }
}

impl Tree {
    /// Append a leaf of value `v`; its child reference (`−1 − leaf`).
    fn push_leaf(&mut self, v: f32) -> i32 {
        self.leaf.push(v);
        -(self.leaf.len() as i32)
    }

    /// Append an internal node splitting on `feature` at `threshold`, children to be set; its
    /// index.
    fn push_split(&mut self, feature: u8, threshold: f32) -> usize {
        self.feature.push(feature);
        self.threshold.push(threshold);
        self.left.push(0);
        self.right.push(0);
        self.feature.len() - 1
    }

    /// The tree's value at `x`.
    pub fn eval(&self, x: &[f64]) -> f64 {
        if self.feature.is_empty() {
            return self.leaf.first().copied().unwrap_or(0.0) as f64;
        }
        let mut i = 0i32;
        loop {
            let n = i as usize;
            i = if x[self.feature[n] as usize] < self.threshold[n] as f64 {
                self.left[n]
            } else {
                self.right[n]
            };
            if i < 0 {
                return self.leaf[(-1 - i) as usize] as f64;
            }
        }
    }

    /// Well formed (as [`Tree::validate`] checks) whatever the feature count.
    pub fn is_valid(&self) -> bool {
        self.validate(u8::MAX as usize + 1)
    }

    /// Arrays of equal length, children in range, no cycles (children point forward), finite.
    pub fn validate(&self, features: usize) -> bool {
        let m = self.feature.len();
        let child_ok = |c: i32, from: usize| {
            if c < 0 {
                ((-1 - c) as usize) < self.leaf.len()
            } else {
                (c as usize) > from && (c as usize) < m
            }
        };
        self.threshold.len() == m
            && self.left.len() == m
            && self.right.len() == m
            && !self.leaf.is_empty()
            && self.leaf.iter().all(|v| v.is_finite())
            && self.threshold.iter().all(|v| !v.is_nan())
            && (0..m).all(|i| {
                (self.feature[i] as usize) < features
                    && child_ok(self.left[i], i)
                    && child_ok(self.right[i], i)
            })
    }
}

/// A node of a crate's tree, as the conversion reads it.
struct NodeView {
    leaf: bool,
    value: f32,
    feature: usize,
    threshold: f64,
    left: usize,
    right: usize,
}

/// Copy a crate's tree (nodes reached through `get` from `root`) into a [`Tree`], internal nodes
/// in depth-first order.
fn convert(root: usize, get: &dyn Fn(usize) -> Option<NodeView>) -> Result<Tree> {
    let mut t = Tree::default();
    fn walk(
        t: &mut Tree,
        n: usize,
        get: &dyn Fn(usize) -> Option<NodeView>,
        depth: usize,
    ) -> Result<i32> {
        let v = get(n)
            .filter(|_| depth < 64)
            .ok_or_else(|| Error::Invalid(format!("gb: malformed tree (node {n})")))?;
        if v.leaf {
            return Ok(t.push_leaf(v.value));
        }
        let f = u8::try_from(v.feature)
            .ok()
            .filter(|&f| f != LEAF)
            .ok_or_else(|| Error::Invalid("gb: feature index".into()))?;
        let i = t.push_split(f, v.threshold as f32);
        t.left[i] = walk(t, v.left, get, depth + 1)?;
        t.right[i] = walk(t, v.right, get, depth + 1)?;
        Ok(i as i32)
    }
    walk(&mut t, root, get, 0)?;
    Ok(t)
}

/// One configuration's ensemble.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GbConfig {
    /// The configuration's label.
    pub config: String,
    /// The features, in the order the trees index them.
    pub features: Vec<Feature>,
    /// `ln(seconds) = base + Σ trees`.
    pub base: f64,
    /// The trees.
    pub trees: Vec<Tree>,
    /// Training examples.
    pub n: usize,
}

impl GbConfig {
    fn eval(&self, x: &[f64]) -> f64 {
        self.base + self.trees.iter().map(|t| t.eval(x)).sum::<f64>()
    }
}

/// The `gb` family: one [`GbConfig`] per configuration of the training table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GbModel {
    /// The value precision it predicts.
    pub precision: Precision,
    /// One ensemble per configuration, in display order.
    pub configs: Vec<GbConfig>,
}

impl GbModel {
    /// Predicted seconds of configuration `label`.
    pub fn predict_label(&self, f: &Features, label: &str) -> Result<f64> {
        let c = super::entry("gb", &self.configs, label)?;
        super::seconds("gb", label, c.eval(&select::vector(f, &c.features)))
    }

    /// Every tree well formed and finite.
    pub fn validate(&self) -> Result<()> {
        for c in &self.configs {
            if !c.base.is_finite() || !c.trees.iter().all(|t| t.validate(c.features.len())) {
                return Err(Error::Invalid(format!(
                    "gb model of {}: a malformed tree or a non-finite value",
                    c.config
                )));
            }
        }
        Ok(())
    }
}

impl super::ConfigEntry for GbConfig {
    fn label(&self) -> &str {
        &self.config
    }
}

crate::learned_model!(GbModel, "gb");

/// Trees per configuration, their depth and the learning rate of the `forust-ml` booster.
///
/// **Why `forust-ml`** (XGBoost's algorithm) and these settings, measured by `train` on a CPU
/// table of 158 matrices × 2 precisions × 25 configurations (5 folds, held-out median / mean
/// difference rate, f32; training per precision on all rows; compact JSON per precision):
///
/// | engine | median | mean | picks < 5 % slower | training | stored |
/// |---|---|---|---|---|---|
/// | `perpetual` 3.0.0-rc.2, budget 0.5 | 34.3 % | 60.6 % | 48.1 % | 428 ms | 126 kB |
/// | `forust-ml` 0.8, 100 trees, depth 4, rate 0.1 | 28.3 % | 48.7 % | – | 559 ms | 926 kB |
/// | `forust-ml` 0.8, 50 trees, depth 3, rate 0.2 | 28.0 % | 46.3 % | 61.4 % | 120 ms | 278 kB |
///
/// `perpetual` was the less accurate, and every stable release (≤ 2.3) needs a nightly compiler
/// (`#![feature(array_ptr_get)]`); only the 3.0 release candidate builds on stable Rust.
/// `forust-ml` builds on stable, trains fast, and with 50 trees of depth 3 is as accurate as with
/// 100 of depth 4 at a third of the size.
pub const TREES: usize = 50;
/// Depth of each tree.
pub const DEPTH: usize = 3;
/// Learning rate.
pub const RATE: f32 = 0.2;

/// Column-major copy of `xs` (both crates take column-major matrices).
fn column_major(xs: &[Vec<f64>], d: usize) -> Vec<f64> {
    (0..d).flat_map(|j| xs.iter().map(move |r| r[j])).collect()
}

/// Boosting settings: trees, depth, learning rate.
#[derive(Clone, Copy, Debug)]
pub struct Boost {
    /// Trees.
    pub trees: usize,
    /// Depth of each tree.
    pub depth: usize,
    /// Learning rate.
    pub rate: f32,
    /// Smallest hessian weight of a leaf (squared loss: examples per leaf).
    pub min_leaf: f32,
}

/// 002's `gb` settings ([`TREES`], [`DEPTH`], [`RATE`]).
pub const PAPER: Boost = Boost {
    trees: TREES,
    depth: DEPTH,
    rate: RATE,
    min_leaf: 1.0,
};

/// Fit `ys ≈ base + Σ trees(xs)` (rows of `xs` are examples) with `forust-ml`, and copy the
/// trees into our compact form. `what` names the model in errors.
pub fn boost(xs: &[Vec<f64>], ys: &[f64], p: Boost, what: &str) -> Result<(f64, Vec<Tree>)> {
    use forust_ml::objective::ObjectiveType;
    let d = xs.first().map_or(0, |r| r.len());
    let data = column_major(xs, d);
    let err = |e: String| Error::Invalid(format!("{what}: {e}"));
    let m = forust_ml::Matrix::new(&data, ys.len(), d);
    let mut b = forust_ml::GradientBooster::default()
        .set_objective_type(ObjectiveType::SquaredLoss)
        .set_iterations(p.trees)
        .set_learning_rate(p.rate)
        .set_max_depth(p.depth)
        .set_min_leaf_weight(p.min_leaf)
        .set_parallel(false)
        .set_initialize_base_score(true);
    b.fit_unweighted(&m, ys, None)
        .map_err(|e| err(e.to_string()))?;
    let trees = b
        .trees
        .iter()
        .map(|t| {
            convert(0, &|n| {
                t.nodes.get(n).map(|v| NodeView {
                    leaf: v.is_leaf,
                    value: v.weight_value,
                    feature: v.split_feature,
                    threshold: v.split_value,
                    left: v.left_child,
                    right: v.right_child,
                })
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((b.base_score, trees))
}

/// Train one configuration's trees.
pub fn fit_config(set: &ConfigSet<'_>) -> Result<GbConfig> {
    let features = select::regression(set.config.variant).to_vec();
    let (xs, ys) = super::xy(set, &features);
    let (base, trees) = boost(&xs, &ys, PAPER, &format!("gb of {}", set.label))?;
    Ok(GbConfig {
        config: set.label.clone(),
        features,
        base,
        trees,
        n: ys.len(),
    })
}

/// Train every configuration of `precision` (configurations in parallel).
pub fn fit(rows: &[&TableRow], precision: Precision) -> Result<GbModel> {
    let sets = dataset::per_config(rows, precision)?;
    super::check_any("gb", &sets, precision)?;
    let configs = sets
        .par_iter()
        .filter(|s| !s.examples.is_empty())
        .map(fit_config)
        .collect::<Result<Vec<_>>>()?;
    Ok(GbModel { precision, configs })
}

/// The `gb` learner.
pub struct Gb;

impl Learner for Gb {
    fn name(&self) -> &'static str {
        "gb"
    }
    fn fit(&self, rows: &[&TableRow], precision: Precision) -> Result<StoredModel> {
        fit(rows, precision).map(StoredModel::Gb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `x0 < 1 ? (x1 < 2 ? 10 : 20) : 30`, internal nodes depth-first as `convert` writes them.
    fn small() -> Tree {
        Tree {
            feature: vec![0, 1],
            threshold: vec![1.0, 2.0],
            left: vec![1, -1],
            right: vec![-3, -2],
            leaf: vec![10.0, 20.0, 30.0],
        }
    }

    #[test]
    fn a_tree_is_stored_in_pre_order_and_reads_back_equal() {
        let t = small();
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(
            json,
            r#"{"p":[0,1,255,255,255],"x":[1.0,2.0,10.0,20.0,30.0]}"#
        );
        let back: Tree = serde_json::from_str(&json).unwrap();
        assert_eq!(back, t);
        for (x, want) in [([0.0, 0.0], 10.0), ([0.0, 5.0], 20.0), ([3.0, 0.0], 30.0)] {
            assert_eq!(back.eval(&x), want);
        }
        let leaf = Tree {
            feature: vec![],
            threshold: vec![],
            left: vec![],
            right: vec![],
            leaf: vec![0.5],
        };
        let json = serde_json::to_string(&leaf).unwrap();
        assert_eq!(json, r#"{"p":[255],"x":[0.5]}"#);
        assert_eq!(serde_json::from_str::<Tree>(&json).unwrap(), leaf);
    }

    #[test]
    fn a_tree_stored_as_parallel_arrays_still_loads() {
        let old = r#"{"f":[0,1],"t":[1.0,2.0],"l":[1,-1],"r":[-3,-2],"v":[10.0,20.0,30.0]}"#;
        assert_eq!(serde_json::from_str::<Tree>(old).unwrap(), small());
        // A child pointing backwards (a cycle) is refused.
        let bad = r#"{"f":[0,1],"t":[1.0,2.0],"l":[1,0],"r":[-3,-2],"v":[10.0,20.0,30.0]}"#;
        assert!(serde_json::from_str::<Tree>(bad).is_err());
    }

    #[test]
    fn a_malformed_pre_order_tree_is_refused() {
        for bad in [
            r#"{"p":[0,255],"x":[1.0,2.0]}"#,     // truncated: no right subtree
            r#"{"p":[255,255],"x":[1.0,2.0]}"#,   // trailing node
            r#"{"p":[0,255,255],"x":[1.0,2.0]}"#, // lengths differ
            r#"{"p":[],"x":[]}"#,                 // empty
            r#"{"p":[0,255,255],"x":[1.0,"a",3.0]}"#, // not a number
        ] {
            assert!(serde_json::from_str::<Tree>(bad).is_err(), "{bad}");
        }
        let deep = format!(
            r#"{{"p":[{}255],"x":[{}0.0]}}"#,
            "0,".repeat(70),
            "1.0,".repeat(70)
        );
        assert!(serde_json::from_str::<Tree>(&deep).is_err());
    }
}
