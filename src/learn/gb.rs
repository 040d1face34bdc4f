//! `gb`: gradient-boosted regression trees (002 §3.2, Friedman) — per configuration, an
//! ensemble of regression trees fitted to `ln(time)` on the same features as [`super::lr`]
//! ([`super::select::regression`]).
//!
//! **Training** uses the `forust-ml` crate (see [`TREES`] for the choice and its measured
//! comparison with `perpetual`); the trained trees are then copied into our own compact form
//! ([`Tree`]: packed pre-order nodes of split features, `f32` thresholds and leaf values),
//! which is what the profile stores and what predicts ([`sum`]: eight trees at a time). So the
//! profile does not depend on the crate's serialization (which changes between its versions and
//! stores per-node statistics we do not need), and a prediction is a few hundred comparisons.

use super::dataset::{self, ConfigSet};
use super::select::{self, Feature};
use super::Learner;
use crate::corpus::table::TableRow;
use crate::features::Features;
use crate::model::StoredModel;
use crate::{Error, Precision, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// One regression tree: a split sends a row left when `x[feature] < threshold` (so a `NaN`
/// feature goes right), else right; a leaf is the tree's value.
///
/// Held as packed pre-order nodes ([`Node`], 8 bytes: a split's left child is the next node,
/// its right child `offset` nodes further), so that a descent reads one small contiguous
/// array, and [`sum`] can walk eight trees in lockstep without a branch per node. Stored in a
/// profile in pre-order too ([`TreeRepr::PreOrder`]: with the depth-6 trees of [`super::own`]
/// 30 % smaller than the parallel arrays with children that profiles held before, which still
/// load). Every `Tree` is well formed by construction ([`Tree::from_pre_order`],
/// [`Tree::from_arrays`], [`Tree::leaf`]); [`Tree::validate`] checks its numbers and features.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "TreeRepr", into = "TreeRepr")]
pub struct Tree {
    /// The nodes in pre-order; the root first.
    nodes: Vec<Node>,
    /// Splits on the longest path from the root to a leaf (the descents [`sum`] takes).
    depth: u32,
}

/// One node of a [`Tree`]: 8 bytes, so that a tree of depth 6 (127 nodes) is 1 kB and a
/// descent touches one cache line per level at most.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Node {
    /// A split's threshold, or a leaf's value. `f32` as the trees were always stored (the
    /// crate's `f64` thresholds are rounded once, when a tree is converted), so a comparison
    /// `x < threshold as f64` is the one the trees were always evaluated with.
    value: f32,
    /// A split's feature (low 8 bits) and the offset of its right child (high 24 bits); 0 for
    /// a leaf (offset 0: a leaf's "children" are itself, which keeps a lane of [`sum`] that
    /// reached its leaf where it is).
    meta: u32,
}

impl Node {
    fn leaf(value: f32) -> Node {
        Node { value, meta: 0 }
    }

    /// The offset of the right child (0 for a leaf).
    fn offset(self) -> usize {
        (self.meta >> 8) as usize
    }

    fn feature(self) -> usize {
        (self.meta & 0xff) as usize
    }

    /// The next node of a descent from this one at `x`: a leaf stays where it is.
    #[inline(always)]
    fn step(self, x: &[f64]) -> usize {
        let off = self.offset();
        // Written so that it compiles to a conditional move: the comparison of a tree is as
        // likely as not, a branch on it mispredicts every other node.
        if x[self.feature()] < self.value as f64 {
            off.min(1)
        } else {
            off
        }
    }
}

/// The mark of a leaf in a pre-order tree (no feature has this index).
pub const LEAF: u8 = u8::MAX;

/// Deepest a tree may be (splits on a path), as profiles have always been read: every tree
/// that loads saves to one that loads again.
pub const MAX_DEPTH: usize = 64;

/// Most nodes in a tree (the right-child offset has 24 bits).
const MAX_NODES: usize = 1 << 24;

/// How a [`Tree`] is stored. Read by the fields present (`p`, `x`: pre-order; else `f`, `t`,
/// `l`, `r`, `v`: parallel arrays), as an untagged enum would, but without its copy of every
/// tree's JSON before parsing it (a profile holds ≈ 18,000 trees; [`RawTree`]).
#[derive(Serialize)]
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
    /// Parallel arrays (profiles written before the pre-order form): internal node `i` splits
    /// on `f[i]` at `t[i]`; a child `c ≥ 0` is internal node `c`, a child `c < 0` is leaf
    /// `v[−1 − c]`; a tree without internal nodes is the single leaf `v[0]`.
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

/// Every field either form of [`TreeRepr`] may have: what a stored tree is read into.
#[derive(Deserialize)]
struct RawTree {
    p: Option<Vec<u8>>,
    x: Option<Vec<f32>>,
    f: Option<Vec<u8>>,
    t: Option<Vec<f32>>,
    l: Option<Vec<i32>>,
    r: Option<Vec<i32>>,
    v: Option<Vec<f32>>,
}

impl<'de> Deserialize<'de> for TreeRepr {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let raw = RawTree::deserialize(d)?;
        match raw {
            RawTree {
                p: Some(p),
                x: Some(x),
                ..
            } => Ok(TreeRepr::PreOrder { p, x }),
            RawTree {
                f: Some(f),
                t: Some(t),
                l: Some(l),
                r: Some(r),
                v: Some(v),
                ..
            } => Ok(TreeRepr::Arrays { f, t, l, r, v }),
            _ => Err(serde::de::Error::custom(
                "a tree: either `p` and `x` (pre-order) or `f`, `t`, `l`, `r` and `v`",
            )),
        }
    }
}

impl From<Tree> for TreeRepr {
    fn from(t: Tree) -> TreeRepr {
        let (p, x) = t.pre_order();
        TreeRepr::PreOrder { p, x }
    }
}

impl TryFrom<TreeRepr> for Tree {
    type Error = String;
    fn try_from(r: TreeRepr) -> std::result::Result<Tree, String> {
        let t = match r {
            TreeRepr::Arrays { f, t, l, r, v } => Tree::from_arrays(&f, &t, &l, &r, &v)?,
            TreeRepr::PreOrder { p, x } => Tree::from_pre_order(&p, &x)?,
        };
        if t.is_valid() {
            Ok(t)
        } else {
            Err("a malformed tree".into())
        }
    }
}

impl Tree {
    /// The tree of one leaf of value `v`.
    pub fn leaf(v: f32) -> Tree {
        Tree {
            nodes: vec![Node::leaf(v)],
            depth: 0,
        }
    }

    /// The tree stored in pre-order (see [`TreeRepr::PreOrder`]): node `k` a leaf of value
    /// `x[k]` where `p[k]` is [`LEAF`], else a split on feature `p[k]` at `x[k]` followed by
    /// its left and right subtrees. An error for arrays of different lengths, a truncated tree,
    /// nodes after it, or one deeper than [`MAX_DEPTH`].
    pub fn from_pre_order(p: &[u8], x: &[f32]) -> std::result::Result<Tree, String> {
        if p.len() != x.len() {
            return Err("a pre-order tree with arrays of different lengths".into());
        }
        if p.is_empty() {
            return Err("a truncated pre-order tree".into());
        }
        if p.len() > MAX_NODES {
            return Err(format!("a tree of more than {MAX_NODES} nodes"));
        }
        let mut nodes: Vec<Node> = Vec::with_capacity(p.len());
        // Splits whose right child is still to come (node, depth), innermost last.
        let mut open: Vec<(usize, usize)> = Vec::new();
        let (mut depth, mut max_depth) = (0usize, 0usize);
        for (k, (&f, &v)) in p.iter().zip(x).enumerate() {
            if k > 0 {
                if p[k - 1] != LEAF {
                    // After a split: its left child, one level down.
                    depth += 1;
                } else {
                    // After a leaf: the right child of the innermost open split.
                    let (s, d) = open.pop().ok_or("trailing nodes after a pre-order tree")?;
                    nodes[s].meta |= ((k - s) as u32) << 8;
                    depth = d + 1;
                }
            }
            if f == LEAF {
                nodes.push(Node::leaf(v));
            } else {
                if depth >= MAX_DEPTH {
                    return Err(format!("a pre-order tree deeper than {MAX_DEPTH}"));
                }
                open.push((k, depth));
                // The offset is set when the right child comes; the feature alone until then.
                nodes.push(Node {
                    value: v,
                    meta: f as u32,
                });
                max_depth = max_depth.max(depth + 1);
            }
        }
        if !open.is_empty() || p[p.len() - 1] != LEAF {
            return Err("a truncated pre-order tree".into());
        }
        Ok(Tree {
            nodes,
            depth: max_depth as u32,
        })
    }

    /// The tree of parallel arrays (see [`TreeRepr::Arrays`]), read iteratively. An error for
    /// arrays of different lengths, no leaf, a child out of range or not after its parent (a
    /// cycle), a node reached twice (not a tree), a split on feature [`LEAF`] or a tree deeper
    /// than [`MAX_DEPTH`]. Nodes the root does not reach are left out.
    pub fn from_arrays(
        feature: &[u8],
        threshold: &[f32],
        left: &[i32],
        right: &[i32],
        leaf: &[f32],
    ) -> std::result::Result<Tree, String> {
        let m = feature.len();
        if threshold.len() != m || left.len() != m || right.len() != m {
            return Err("a tree with arrays of different lengths".into());
        }
        let Some(&first) = leaf.first() else {
            return Err("a tree without leaves".into());
        };
        if m == 0 {
            return Ok(Tree::leaf(first));
        }
        let (mut p, mut x) = (Vec::new(), Vec::new());
        let (mut seen, mut seen_leaf) = (vec![false; m], vec![false; leaf.len()]);
        // (child reference, the node that refers to it) in the order of a pre-order walk.
        let mut stack: Vec<(i32, Option<usize>)> = vec![(0, None)];
        while let Some((c, from)) = stack.pop() {
            if c < 0 {
                let l = (-1 - c as i64) as usize;
                match seen_leaf.get_mut(l) {
                    Some(s) if !*s => *s = true,
                    Some(_) => return Err("a leaf reached twice (not a tree)".into()),
                    None => return Err("a child out of range".into()),
                }
                p.push(LEAF);
                x.push(leaf[l]);
                continue;
            }
            let n = c as usize;
            if n >= m || from.is_some_and(|f| n <= f) {
                return Err("a child out of range or not after its parent (a cycle)".into());
            }
            if std::mem::replace(&mut seen[n], true) {
                return Err("a node reached twice (not a tree)".into());
            }
            if feature[n] == LEAF {
                return Err(format!("a split on feature {LEAF}"));
            }
            p.push(feature[n]);
            x.push(threshold[n]);
            stack.push((right[n], Some(n)));
            stack.push((left[n], Some(n)));
        }
        Tree::from_pre_order(&p, &x)
    }

    /// The pre-order arrays ([`TreeRepr::PreOrder`]) of the tree.
    pub fn pre_order(&self) -> (Vec<u8>, Vec<f32>) {
        self.nodes
            .iter()
            .map(|n| match n.offset() {
                0 => (LEAF, n.value),
                _ => (n.feature() as u8, n.value),
            })
            .unzip()
    }

    /// The tree's value at `x`.
    pub fn eval(&self, x: &[f64]) -> f64 {
        let mut i = 0;
        loop {
            let n = self.nodes[i];
            let off = n.offset();
            if off == 0 {
                return n.value as f64;
            }
            i += if x[n.feature()] < n.value as f64 {
                1
            } else {
                off
            };
        }
    }

    /// Well formed (as [`Tree::validate`] checks) whatever the feature count.
    pub fn is_valid(&self) -> bool {
        self.validate(u8::MAX as usize + 1)
    }

    /// Every split on a feature below `features` at a threshold that is not `NaN`, every leaf
    /// finite (the structure is checked when a tree is built).
    pub fn validate(&self, features: usize) -> bool {
        self.nodes.iter().all(|n| match n.offset() {
            0 => n.value.is_finite(),
            _ => n.feature() < features && !n.value.is_nan(),
        })
    }
}

/// Trees [`sum`] walks in lockstep.
const LANES: usize = 8;

/// How many chunks of [`LANES`] trees ahead [`sum`] asks the memory for the roots.
const AHEAD: usize = 4;

/// `Σ trees(x)`, in the order of `trees` — to the bit the sum of [`Tree::eval`] one tree after
/// the other (`trees.iter().map(|t| t.eval(x)).sum::<f64>()`), faster.
///
/// Why hand-written: a tree's descent is a chain of dependent loads whose branches mispredict
/// half the time; walking [`LANES`] trees at once with branch-free steps ([`Node::step`])
/// overlaps eight chains, and asking for the roots [`AHEAD`] chunks early hides the cache
/// misses of an ensemble not in the caches (a `sparsecast` ranking walks ≈ 9,000 trees of
/// 1 kB). Measured with `examples/predict_cost.rs` (`cage11`, the 31 configurations of
/// `sparsecast`, both profiles and precisions, median of 300 warm rankings on a 2-core x86-64,
/// the reference shared by the configurations): the packed trees walked one after the other
/// 0.45–0.54 ms per ranking, in lockstep 0.38–0.46 ms, with the prefetch 0.34–0.41 ms (before,
/// parallel arrays walked one by one and the reference once per configuration: 0.74–0.83 ms).
pub fn sum(trees: &[Tree], x: &[f64]) -> f64 {
    // -0.0 is the identity of `+` (and where `Iterator::sum` starts): the same bits as the
    // sequential sum for every input, an empty one included.
    let mut s = -0.0f64;
    if x.is_empty() {
        // A leaf's step reads x[0]; without features every tree is a leaf anyway.
        return trees.iter().fold(s, |s, t| s + t.eval(x));
    }
    // The roots of the first chunks, which the loop's look-ahead never asks for: a ranking
    // walks ≈ 70 ensembles of 150 trees, the first 32 of each were walked cold (session 58,
    // `sparsecast predict data/cage11.mtx.gz --gpu h200`, 80 one-shot runs interleaved twice:
    // 0.756 → 0.726 and 0.755 → 0.730 ms a precision; a second line of each tree and 8 chunks
    // ahead gained nothing more).
    for k in 0..AHEAD {
        prefetch_roots(trees.get(k * LANES..).unwrap_or(&[]));
    }
    let chunks = trees.chunks_exact(LANES);
    let rest = chunks.remainder();
    for (k, chunk) in chunks.enumerate() {
        prefetch_roots(trees.get((k + AHEAD) * LANES..).unwrap_or(&[]));
        let depth = chunk.iter().map(|t| t.depth).max().unwrap_or(0);
        let mut at = [0usize; LANES];
        for _ in 0..depth {
            for (i, t) in at.iter_mut().zip(chunk) {
                *i += t.nodes[*i].step(x);
            }
        }
        // The lanes' leaves in tree order: the same additions as the sequential sum.
        for (&i, t) in at.iter().zip(chunk) {
            s += t.nodes[i].value as f64;
        }
    }
    rest.iter().fold(s, |s, t| s + t.eval(x))
}

/// Ask the memory for the roots of the first [`LANES`] of `trees` (a hint: no effect on the
/// result, none on targets without one).
#[inline(always)]
fn prefetch_roots(trees: &[Tree]) {
    #[cfg(target_arch = "x86_64")]
    for t in trees.iter().take(LANES) {
        // SAFETY: a prefetch does not access memory in the language's sense (it cannot fault,
        // and the pointer is that of a live allocation); SSE is in the x86-64 baseline.
        unsafe {
            core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                t.nodes.as_ptr() as *const i8,
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = trees;
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

/// Copy a crate's tree (nodes reached through `get` from `root`) into a [`Tree`] (pre-order,
/// as a profile stores it).
fn convert(root: usize, get: &dyn Fn(usize) -> Option<NodeView>) -> Result<Tree> {
    let (mut p, mut x) = (Vec::new(), Vec::new());
    // (node, depth), the next to visit last: a walk in pre-order without recursion.
    let mut stack = vec![(root, 0usize)];
    while let Some((n, depth)) = stack.pop() {
        let v = get(n)
            .filter(|_| depth < MAX_DEPTH)
            .ok_or_else(|| Error::Invalid(format!("gb: malformed tree (node {n})")))?;
        if v.leaf {
            p.push(LEAF);
            x.push(v.value);
            continue;
        }
        let f = u8::try_from(v.feature)
            .ok()
            .filter(|&f| f != LEAF)
            .ok_or_else(|| Error::Invalid("gb: feature index".into()))?;
        p.push(f);
        x.push(v.threshold as f32);
        stack.push((v.right, depth + 1));
        stack.push((v.left, depth + 1));
    }
    Tree::from_pre_order(&p, &x).map_err(|e| Error::Invalid(format!("gb: {e}")))
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
        self.base + sum(&self.trees, x)
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
fn column_major<R: AsRef<[f64]>>(xs: &[R], d: usize) -> Vec<f64> {
    (0..d)
        .flat_map(|j| xs.iter().map(move |r| r.as_ref()[j]))
        .collect()
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
    boost_weighted(xs, ys, None, p, what)
}

/// [`boost`] with a weight per example (`None`: every example 1), the rows of `xs` owned or
/// borrowed (a caller that selects examples need not copy their features).
pub fn boost_weighted<R: AsRef<[f64]>>(
    xs: &[R],
    ys: &[f64],
    weights: Option<&[f64]>,
    p: Boost,
    what: &str,
) -> Result<(f64, Vec<Tree>)> {
    use forust_ml::objective::ObjectiveType;
    let d = xs.first().map_or(0, |r| r.as_ref().len());
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
    match weights {
        Some(w) => b.fit(&m, ys, w, None),
        None => b.fit_unweighted(&m, ys, None),
    }
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
        Tree::from_arrays(
            &[0, 1],
            &[1.0, 2.0],
            &[1, -1],
            &[-3, -2],
            &[10.0, 20.0, 30.0],
        )
        .unwrap()
    }

    #[test]
    fn weighted_boosting_fits_the_weighted_mean() {
        // One feature, constant: no split can tell the examples apart, so the trees converge
        // to the mean of the targets, weighted as asked.
        let xs = vec![vec![1.0]; 3];
        let ys = [0.0, 3.0, 3.0];
        let p = Boost {
            trees: 200,
            depth: 1,
            rate: 0.3,
            min_leaf: 1.0,
        };
        let fit = |w: Option<&[f64]>| {
            let (base, trees) = boost_weighted(&xs, &ys, w, p, "test").unwrap();
            base + sum(&trees, &[1.0])
        };
        assert!((fit(None) - 2.0).abs() < 1e-3, "{}", fit(None));
        let w = fit(Some(&[4.0, 1.0, 1.0]));
        assert!((w - 1.0).abs() < 1e-3, "{w}");
    }

    /// A stored tree reads in either form, by the fields present; one with neither is an error.
    #[test]
    fn a_tree_reads_in_pre_order_or_as_parallel_arrays() {
        let eval = |t: &Tree| [[0.0, 0.0], [0.0, 5.0], [2.0, 0.0]].map(|x| t.eval(&x));
        let arrays = r#"{"f":[0,1],"t":[1.0,2.0],"l":[1,-1],"r":[-3,-2],"v":[10.0,20.0,30.0]}"#;
        let a: Tree = serde_json::from_str(arrays).unwrap();
        assert_eq!(eval(&a), [10.0, 20.0, 30.0]);
        let pre = serde_json::to_string(&small()).unwrap();
        assert!(pre.contains("\"p\""), "{pre}");
        let b: Tree = serde_json::from_str(&pre).unwrap();
        assert_eq!(eval(&b), eval(&small()));
        let e = serde_json::from_str::<Tree>(r#"{"p":[255]}"#).unwrap_err();
        assert!(e.to_string().contains("either `p` and `x`"), "{e}");
    }

    #[test]
    fn a_tree_is_stored_in_pre_order_and_reads_back_equal() {
        let t = small();
        assert_eq!((t.nodes.len(), t.depth), (5, 2));
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
        // A value equal to the threshold goes right, so does NaN.
        assert_eq!(back.eval(&[1.0, 0.0]), 30.0);
        assert_eq!(back.eval(&[f64::NAN, 0.0]), 30.0);
        assert_eq!(back.eval(&[0.0, f64::NAN]), 20.0);
        let leaf = Tree::leaf(0.5);
        let json = serde_json::to_string(&leaf).unwrap();
        assert_eq!(json, r#"{"p":[255],"x":[0.5]}"#);
        assert_eq!(serde_json::from_str::<Tree>(&json).unwrap(), leaf);
        assert_eq!(leaf.eval(&[]), 0.5);
        // A tree of parallel arrays without splits is its first leaf.
        assert_eq!(Tree::from_arrays(&[], &[], &[], &[], &[0.5, 7.0]), Ok(leaf));
    }

    #[test]
    fn a_tree_stored_as_parallel_arrays_still_loads() {
        let old = r#"{"f":[0,1],"t":[1.0,2.0],"l":[1,-1],"r":[-3,-2],"v":[10.0,20.0,30.0]}"#;
        assert_eq!(serde_json::from_str::<Tree>(old).unwrap(), small());
        for bad in [
            // A child pointing backwards (a cycle).
            r#"{"f":[0,1],"t":[1.0,2.0],"l":[1,0],"r":[-3,-2],"v":[10.0,20.0,30.0]}"#,
            // A node pointing at itself.
            r#"{"f":[0,1],"t":[1.0,2.0],"l":[1,1],"r":[-3,-2],"v":[10.0,20.0,30.0]}"#,
            // Children out of range.
            r#"{"f":[0,1],"t":[1.0,2.0],"l":[1,-1],"r":[2,-2],"v":[10.0,20.0,30.0]}"#,
            r#"{"f":[0,1],"t":[1.0,2.0],"l":[1,-1],"r":[-4,-2],"v":[10.0,20.0,30.0]}"#,
            // A node reached twice (a shared subtree: not a tree).
            r#"{"f":[0,1],"t":[1.0,2.0],"l":[1,-1],"r":[1,-2],"v":[10.0,20.0,30.0]}"#,
            r#"{"f":[0,1],"t":[1.0,2.0],"l":[1,-1],"r":[-1,-2],"v":[10.0,20.0,30.0]}"#,
            // Lengths differ, no leaf, a NaN threshold.
            r#"{"f":[0,1],"t":[1.0],"l":[1,-1],"r":[-3,-2],"v":[10.0,20.0,30.0]}"#,
            r#"{"f":[],"t":[],"l":[],"r":[],"v":[]}"#,
        ] {
            assert!(serde_json::from_str::<Tree>(bad).is_err(), "{bad}");
        }
        // No panic on any child: every one is in range or refused.
        for c in [i32::MIN, -5, -1, 0, 1, 2, i32::MAX] {
            let _ = Tree::from_arrays(&[0], &[1.0], &[c], &[-2], &[1.0, 2.0]);
        }
    }

    #[test]
    fn a_malformed_pre_order_tree_is_refused() {
        for bad in [
            r#"{"p":[0,255],"x":[1.0,2.0]}"#,     // truncated: no right subtree
            r#"{"p":[255,255],"x":[1.0,2.0]}"#,   // trailing node
            r#"{"p":[0,255,255],"x":[1.0,2.0]}"#, // lengths differ
            r#"{"p":[],"x":[]}"#,                 // empty
            r#"{"p":[0,255,255],"x":[1.0,"a",3.0]}"#, // not a number
            r#"{"p":[0,255,255],"x":[1.0,1e39,3.0]}"#, // an infinite leaf
        ] {
            assert!(serde_json::from_str::<Tree>(bad).is_err(), "{bad}");
        }
        let deep = |n: usize| {
            format!(
                r#"{{"p":[{}{}],"x":[{}{}]}}"#,
                "0,".repeat(n),
                "255,".repeat(n) + "255",
                "1.0,".repeat(n),
                "0.0,".repeat(n) + "0.0"
            )
        };
        assert!(serde_json::from_str::<Tree>(&deep(70)).is_err());
        assert!(serde_json::from_str::<Tree>(&deep(MAX_DEPTH + 1)).is_err());
        let t: Tree = serde_json::from_str(&deep(MAX_DEPTH)).unwrap();
        assert_eq!(t.depth as usize, MAX_DEPTH);
    }

    /// A deterministic generator (xorshift).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        fn f32(&mut self) -> f32 {
            (self.below(2001) as f32 - 1000.0) / 37.0
        }
    }

    /// A random tree of depth at most `depth` (possibly a single leaf) over `d` features, its
    /// thresholds drawn from `thresholds`.
    fn random_tree(r: &mut Rng, depth: usize, d: u8, thresholds: &[f32]) -> Tree {
        fn grow(r: &mut Rng, depth: usize, d: u8, th: &[f32], p: &mut Vec<u8>, x: &mut Vec<f32>) {
            if depth == 0 || r.below(4) == 0 {
                p.push(LEAF);
                x.push(r.f32());
            } else {
                p.push(r.below(d as u64) as u8);
                x.push(th[r.below(th.len() as u64) as usize]);
                grow(r, depth - 1, d, th, p, x);
                grow(r, depth - 1, d, th, p, x);
            }
        }
        let (mut p, mut x) = (Vec::new(), Vec::new());
        grow(r, depth, d, thresholds, &mut p, &mut x);
        Tree::from_pre_order(&p, &x).unwrap()
    }

    #[test]
    fn the_lockstep_sum_is_the_sum_of_the_walks_to_the_bit() {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        let d = 12u8;
        let thresholds: Vec<f32> = (0..40).map(|_| r.f32()).collect();
        for case in 0..300 {
            let n = r.below(60) as usize;
            let depth = r.below(9) as usize;
            let trees: Vec<Tree> = (0..n)
                .map(|_| random_tree(&mut r, depth, d, &thresholds))
                .collect();
            // Features: random, equal to a threshold (the comparison's edge), NaN, ±∞.
            let x: Vec<f64> = (0..d)
                .map(|_| match r.below(6) {
                    0 | 1 => thresholds[r.below(40) as usize] as f64,
                    2 => f64::NAN,
                    3 => [f64::INFINITY, f64::NEG_INFINITY][r.below(2) as usize],
                    _ => r.f32() as f64 + 0.01,
                })
                .collect();
            let want = trees.iter().map(|t| t.eval(&x)).sum::<f64>();
            assert_eq!(sum(&trees, &x).to_bits(), want.to_bits(), "case {case}");
        }
        // Empty, and all leaves of −0.0: the sign of zero is kept.
        assert_eq!(sum(&[], &[1.0]).to_bits(), (-0.0f64).to_bits());
        let zeros = vec![Tree::leaf(-0.0); 9];
        assert_eq!(sum(&zeros, &[1.0]).to_bits(), (-0.0f64).to_bits());
        assert_eq!(sum(&zeros, &[]).to_bits(), (-0.0f64).to_bits());
    }
}
