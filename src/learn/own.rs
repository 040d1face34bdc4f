//! `sparsecast`: our own model — a physical estimate from the bytes a configuration must move,
//! corrected by gradient-boosted trees trained on the corpus.
//!
//! For configuration `c` of a matrix with features `f`, in precision with `v`-byte values:
//!
//! 1. **Bytes.** The format's arrays exactly as stored ([`crate::formats::FormatKind::footprint`],
//!    padding included, the padded formats' counts from [`crate::features::Access`]; a cuSPARSE
//!    algorithm is sized by the format it runs on; from version 7 less the padding values ELL's
//!    and HYB's kernel skips, `ell_values`), plus `y`, plus the gathers of `x`: read once
//!    (the columns used × `v`) when `x` fits in half the L2 cache, and beyond that each re-request
//!    of a sector by another warp of 32 rows ([`crate::features::Access::x_sectors_f64`]) misses
//!    the L2 with probability `1 − (L2 / 2) / x` (`x_traffic`; version 0 switched from one to
//!    the other at `x = L2 / 2`) — the traffic of a matrix without column locality is up to 8×
//!    its `x`.
//! 2. **Base.** `T₀ = floor + max(bytes / bandwidth, step · chain)`. The second term is the longest
//!    row in flight: a kernel that gives a row to `t` threads (row-per-thread ELL, SELL, JAD,
//!    ELL-BRO and cuSPARSE's SELL: `t = 1`; CSR with `t` threads per row) cannot finish before
//!    the thread with the longest row has taken `chain = ⌈max row / t⌉` dependent steps (BSR,
//!    one warp per block row taking 8 blocks a trip: the trips of the block row with the most
//!    blocks, version 4), whatever the bandwidth — measured on the H200, a
//!    circuit matrix's row of 20,188 entries holds `csr-scalar` at 3.2 ms (0.16 µs per step)
//!    where its bytes need 25 µs. `step` is fitted per configuration: the 10th percentile of
//!    `(T − floor) / chain` over the training matrices whose chain is ≥ 256 steps (the chain
//!    dominates there; a byte-bound one only lies above). Balanced kernels (merge, COO, HYB, DIA,
//!    cuSPARSE CSR/COO) have no chain. The device parameters are fitted on the table:
//!    the floor is the median, over the matrices of ≤ 20 000 non-zeros, of their fastest
//!    configuration (the launch floor of a replayed SpMV), the bandwidth the 90th percentile of
//!    `bytes / time` over the measurements of ≥ 256 MB (what the device sustains streaming).
//! 3. **Correction.** Per configuration, boosted regression trees (150 of depth 6, rate 0.1,
//!    `forust-ml` as [`super::gb`]; depth 4 until session 11: with the 1,500-matrix corpora depth
//!    6 is better held out on every pooled figure — median 2.8 → 2.5 % / 2.6 → 2.3 % on the
//!    H100, f32 / f64 — and predicts every configuration in 0.3–0.4 ms, `docs/ACCURACY.md`) learn `ln(T / T₀)` from ln-scaled features that carry what
//!    the papers leave out: size, row-length statistics, the per-warp imbalance of every CSR
//!    thread mapping ([`crate::features::Access::warp_steps`]) and of this configuration, `x`
//!    locality per warp and per row, padding, empty rows, diagonals, bandwidth, `ln T₀`,
//!    (version 1) `x` and the matrix bytes against the L2 and the gathers' hit rate, (version 5)
//!    the mixture of row lengths and (version 6) the tail of this configuration's warp steps.
//!    Trees bound the correction to what the corpus saw; outside it the physical base carries
//!    the prediction (a matrix 10× larger than any trained one is still `bytes / bandwidth`).
//! 4. **Relative correction** (version 2). About half of the held-out error is common to every
//!    configuration of a matrix (version 1, H200 table, Kronecker expansions: 48 % of the
//!    `|ln error|`): it does not change the ranking, but the trees of each configuration spend
//!    their depth on it. So each configuration also has trees on its residual **relative to the
//!    matrix's reference** — `ln(T / T₀)` minus the mean `ln(T / T₀)` of the training row over
//!    the configurations measured on (nearly) every row — and one more set of trees predicts that
//!    reference from the features of [`REFERENCE_FEATURES`] (`csr-merge`: balanced, measured on
//!    every matrix). The correction is the even blend ([`RELATIVE_SHARE`])
//!    `½ · own + ½ · (reference + relative)`. Measured (5 folds by family, H200 table): within
//!    10 % 77.7 → 78.6 % (f32) / 79.4 → 79.6 % (f64), picks within 5 % of the best 77.4 → 81.6 % /
//!    84.3 → 86.0 %; the relative part alone is worse (75.9 / 76.5 % within 10 %), `csr-merge`'s
//!    own residual or the mean over the balanced kernels only as the reference picked worse
//!    (80.5 / 83.7 %, 81.5 / 84.3 %), and shares of ¼ or ⅓ gave up 0.5–3.4 points of picks for
//!    at most 0.4 points within 10 % (`docs/ACCURACY.md`, session 9).
//! 5. **Uncertainty.** Per configuration, the [`SIGMA_QUANTILE`] quantile of the held-out
//!    `|ln(T̂ / T)|` of the own trees (without the relative blend) in a 4-fold cross-validation
//!    inside the training rows (grouped by family), as a relative one-sigma: the interval
//!    `± σ` holds the share of held-out errors a normal one-sigma holds. Until session 32 it was
//!    the median (a 50 % interval printed as `±` one sigma): on 688 unseen matrices only 43 % of
//!    the H200's measurements fell within it (docs/ACCURACY.md, session 32).
//!
//! The two device parameters are what cross-architecture transfer refits on a target
//! ([`OwnModel::with_device`]); the trees are what it keeps.

use super::dataset::{self, ConfigSet};
use super::gb::{self, boost, Boost, Tree};
use super::Learner;
use crate::backend::{KernelConfig, Variant};
use crate::corpus::table::TableRow;
use crate::features::Features;
use crate::formats::{FormatKind, FormatParams, Summary};
use crate::model::StoredModel;
use crate::{Error, Precision, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Settings of the correction's trees.
pub const TREES: Boost = Boost {
    trees: 150,
    depth: 6,
    rate: 0.1,
    min_leaf: 3.0,
};

/// The version of the physical base and the features that [`fit`] trains: 0 (models stored
/// before it existed) reads `x` once below half the L2 and per warp above it; 1 blends the two
/// by the L2 hit rate of the gathers (`x_traffic`) and gives the trees the `x` footprint and
/// the working set against the L2; 2 adds the relative corrections (same base and features; a
/// model stored without [`OwnModel::reference`] predicts with its own trees alone, as before);
/// 3 sizes cuSPARSE's sliced ELL unsorted, as it is stored (σ = 1; before, sorted over 256 rows,
/// which on irregular rows is far less padding than cuSPARSE moves); 4 gives BSR its own warp
/// loop: the chain is the longest block row's trips, `⌈most blocks of a block row / ⌊32 / b⌋⌉`,
/// and its steps the trips of all block rows ([`crate::formats::bsr::BsrCount`]; before, the
/// longest row in steps of 4 entries and the row-per-thread steps, which on stacks of long and
/// short rows missed by −68 … +445 %; features stored without the counts keep that rule); 5
/// gives the trees the mixture of row lengths ([`row_mix`]); 6 the tail of the configuration's
/// warp steps ([`crate::features::access::WarpHist::tail`]: the share of the steps, and the warps,
/// in the heaviest warps), which a stack of long rows on short ones makes a few warps hold; 7
/// counts for ELL and HYB only the values their kernel loads ([`ell_values`]: it skips a padding
/// slot's value, which on a stack of short rows under a few long ones is most of the stored
/// values) and gives the trees that share and the ELL part's capped warp steps (on the unseen
/// draw of session 33, HYB's error on stacks correlated −0.39 with the share it skips); 8 gives
/// our SELL-C-σ the chain of its session-41 kernel, which splits slices wider than a threshold
/// over warps ([`sell_chain`]: the longest row up to that threshold; before, the longest row,
/// which for a row of 10⁵ entries put the base 100–400× above the new kernel's time); 9 gives
/// the trees the mean lane-alignment degree of the row-per-thread warps' steps for the
/// configuration's value size and for the 4-byte column indices ([`align_degree`]: each lane
/// reads its own 128-byte line and lines that start at the same offset share the L1's banks; on
/// the CV records of session 43, thread-per-row CSR was within 10 % on 91 % of matrices whose
/// constant row length is not a multiple of 8 and on 33–69 % of those whose is).
pub const VERSION: u32 = 9;

/// The share of the relative correction in the prediction (version 2; see the module doc).
pub const RELATIVE_SHARE: f64 = 0.5;

/// The configuration whose features the reference of the relative corrections reads.
pub const REFERENCE_FEATURES: &str = "csr-merge";

/// Upper non-zero bounds of the uncertainty's size classes (the last class is unbounded). The
/// error grows with size: held out (session 11, H200, every configuration pooled) the median
/// `|error|` is ≈ 2 % below 10⁵ non-zeros, 3–4 % to 10⁶ and 5–8 % above, up to 14 % on
/// stacked matrices; one sigma for all sizes let the optimizer adopt plans on 10⁷-entry
/// matrices with a 3 % sigma that ran 0.82× (docs/OPTIMIZER.md, session 12).
pub const SIGMA_NNZ_EDGES: [f64; 4] = [1e4, 1e5, 1e6, 1e7];

/// The quantile of the held-out `|ln error|` that is a configuration's one-sigma: the share of a
/// normal distribution within one standard deviation. The errors are heavier-tailed than
/// normal (their 68th percentile is 1.6–1.9× their median, session 32), so this is wider than
/// `1.48 ×` the median a normal fit would give.
pub const SIGMA_QUANTILE: f64 = 0.6827;

/// The [`SIGMA_QUANTILE`] quantile of `v` (sorted in place), `None` when empty.
pub fn one_sigma(v: &mut [f64]) -> Option<f64> {
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 * SIGMA_QUANTILE) as usize).min(v.len().checked_sub(1)?);
    v.get(i).copied()
}

/// Fewest inner-fold errors a size class needs for its own sigma.
pub const SIGMA_MIN_PER_CLASS: usize = 30;

/// The size class of a matrix of `nnz` non-zeros (index into [`OwnConfig::sigma_by_nnz`]).
pub fn sigma_class(nnz: f64) -> usize {
    SIGMA_NNZ_EDGES.iter().take_while(|&&e| nnz >= e).count()
}

/// Folds of the inner cross-validation that measures each configuration's uncertainty.
const INNER_FOLDS: usize = 4;

/// The device parameters of the physical base.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Device {
    /// Seconds of the fastest SpMV of a tiny matrix (the floor of a replayed launch).
    pub floor_s: f64,
    /// Bytes per second the device sustains streaming a large matrix.
    pub bandwidth: f64,
    /// Bytes of the last-level cache below which `x` is assumed to be read once.
    pub l2_bytes: f64,
}

impl Device {
    /// Every parameter finite and positive.
    pub fn is_valid(&self) -> bool {
        [self.floor_s, self.bandwidth, self.l2_bytes]
            .iter()
            .all(|v| v.is_finite() && *v > 0.0)
    }
}

/// One configuration's correction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OwnConfig {
    /// The configuration's label.
    pub config: String,
    /// `ln(T / T₀) = base + Σ trees`.
    pub base: f64,
    /// The trees.
    pub trees: Vec<Tree>,
    /// Relative one-sigma uncertainty: the [`SIGMA_QUANTILE`] quantile of the held-out
    /// `|ln error|` of the inner folds (the median in profiles trained before session 32).
    pub sigma: f64,
    /// The same per size class ([`SIGMA_NNZ_EDGES`]: one more class than edges), where the
    /// inner folds held ≥ [`SIGMA_MIN_PER_CLASS`] examples of the class, else [`OwnConfig::sigma`]
    /// (empty in models stored before it: `sigma` for every size).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sigma_by_nnz: Vec<f64>,
    /// Seconds per dependent step of the longest row (0: no chain term; see the module doc).
    #[serde(default)]
    pub step_s: f64,
    /// Training examples.
    pub n: usize,
    /// Constant of the relative correction (see [`OwnModel::reference`]).
    #[serde(default)]
    pub rel_base: f64,
    /// Trees of the relative correction: `ln(T / T₀)` minus the matrix's reference residual
    /// (version 2; none before, or where the table had no reference).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rel_trees: Vec<Tree>,
    /// Seconds per warp step of this configuration's thread mapping on the whole device, the
    /// issue term of the base (0 except where a cross-architecture transfer refitted it on the
    /// target, [`super::transfer`]: on a GPU of few SMs a kernel that issues many warp steps
    /// per byte — a warp per short row — is held by the SMs' issue rate, not the bandwidth).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub issue_s: f64,
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

impl OwnConfig {
    /// Relative one-sigma uncertainty for a matrix of `nnz` non-zeros.
    pub fn sigma_for(&self, nnz: f64) -> f64 {
        self.sigma_by_nnz
            .get(sigma_class(nnz))
            .copied()
            .unwrap_or(self.sigma)
    }
}

/// The `sparsecast` family.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OwnModel {
    /// The value precision it predicts.
    pub precision: Precision,
    /// The device parameters.
    pub device: Device,
    /// One correction per configuration.
    pub configs: Vec<OwnConfig>,
    /// The device the trees were trained on, once moved to another ([`OwnModel::with_device`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trained_on: Option<Device>,
    /// The version of the base and features the trees read ([`VERSION`]; 0 when stored before
    /// versions existed).
    #[serde(default)]
    pub version: u32,
    /// The reference of the relative corrections (`None`: none): trees predicting the
    /// reference residual from the features of the configuration its label names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<OwnConfig>,
    /// The calibration matrices measured on this model's device, which `instrument
    /// --cross-from` rebuilds and measures on a target ([`super::cross_own`]); `None` in models
    /// stored before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration: Option<Vec<super::cross_own::CalibrationRow>>,
    /// On a model transferred to a target by `instrument --cross-from`: what it keeps of the
    /// reference, for times measured there (`predict --measured-on`, [`super::cross_own`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cross: Option<super::cross_own::ReferenceSide>,
    /// The second stage of the recommendation ([`super::stage`]): which of the predicted-fastest
    /// configurations to recommend, from the held-out predictions of the cross-validation and
    /// what the corpus measured on similar matrices. `None`: the fastest predicted (models
    /// trained without `--folds`, or stored before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pick: Option<super::stage::PickStage>,
}

impl super::ConfigEntry for OwnConfig {
    fn label(&self) -> &str {
        &self.config
    }
}

/// Bytes of one value in `p`.
fn value_bytes(p: Precision) -> u64 {
    match p {
        Precision::F32 => 4,
        Precision::F64 => 8,
    }
}

/// The access features, which this model cannot predict without (features saved before they
/// existed have none).
fn access(f: &Features) -> Result<&crate::features::Access> {
    f.access.as_ref().ok_or_else(|| {
        Error::Unsupported(
            "the sparsecast model needs the access features (computed with the matrix)".into(),
        )
    })
}

/// Bytes of the arrays `cfg` stores the matrix of `f` in, `vb` bytes per value (a cuSPARSE
/// algorithm: the format it is stored in, from version 3 of the model); `Err` where the format
/// refuses the matrix.
pub(crate) fn format_bytes<'f>(
    f: &'f Features,
    cfg: &KernelConfig,
    vb: u64,
    version: u32,
) -> Result<(u64, &'f crate::features::Access)> {
    let a = access(f)?;
    let params = if cfg.variant.is_vendor() {
        // Version 3: a cuSPARSE algorithm is sized by the format it is stored in (its sliced
        // ELL unsorted, σ = 1); before, by our default parameters (SELL sorted over 256 rows).
        match version >= 3 {
            true => cfg.variant.stored_params(&FormatParams::default()),
            false => FormatParams::default(),
        }
    } else {
        cfg.params.clone()
    };
    let kind = cfg.variant.format();
    let s = a.add_counts(Summary::from_features(f), &params);
    if !cfg.variant.is_vendor() {
        // A format that refuses the matrix (DIA's fill limit, ELL's width …) has no time.
        match kind.admit(&s, &params, vb) {
            Err(r) if !matches!(r.reason, crate::formats::Reason::Unknown(_)) => {
                return Err(r.into())
            }
            _ => {}
        }
    }
    let fp = kind
        .footprint(&s, &params, vb)
        .or_else(|_| FormatKind::Csr.footprint(&s, &params, vb))
        .map_err(|e| Error::Unsupported(e.to_string()))?;
    Ok((fp, a))
}

/// Bytes one SpMV of `cfg` moves on a device with `l2` bytes of cache (see the module doc).
fn bytes(f: &Features, cfg: &KernelConfig, vb: u64, l2: f64, version: u32) -> Result<f64> {
    let (fp, a) = format_bytes(f, cfg, vb, version)?;
    let x = if version == 0 {
        let x_once = (f.ncols as f64) * vb as f64;
        let sectors = if vb == 4 {
            a.x_sectors_f32
        } else {
            a.x_sectors_f64
        };
        if x_once <= l2 / 2.0 {
            x_once
        } else {
            (sectors as f64 * 32.0).max(x_once.min(a.cols_used as f64 * vb as f64))
        }
    } else {
        x_traffic(f, vb, l2).0
    };
    let skipped = match ell_values(f, cfg) {
        Some((stored, loaded)) if version >= 7 => (stored - loaded) * vb as f64,
        _ => 0.0,
    };
    Ok((fp as f64 - skipped).max(0.0) + x + (f.nrows as f64) * vb as f64)
}

/// ELL's and HYB's ELL part (version 7): the value slots stored (width × rows) and those the
/// kernel loads ([`crate::formats::ell::loaded_value_slots`] of the row-per-thread warp
/// histogram); `None` for the other configurations, for features without the histogram, and
/// for an ELL width the format refuses (below the longest row; [`crate::formats::ell::width`]).
/// HYB's part is the given width, or the features' (Bell & Garland's rule).
pub(crate) fn ell_values(f: &Features, cfg: &KernelConfig) -> Option<(f64, f64)> {
    let width = match cfg.variant {
        Variant::Ell => crate::formats::ell::width(&Summary::from_features(f), &cfg.params).ok()?,
        Variant::Hyb => cfg
            .params
            .hyb
            .width
            .map_or(f.hyb_width as u64, |w| w as u64),
        _ => return None,
    };
    let h = f.access.as_ref()?.warp_hist.first()?;
    let stored = width as f64 * f.nrows as f64;
    Some((
        stored,
        crate::formats::ell::loaded_value_slots(h, width).min(stored),
    ))
}

/// Bytes of `x` one SpMV reads from DRAM, and the L2 hit rate of its gathers. `x` is read at
/// least once (`x_once`: the columns used); each warp of 32 rows requests its distinct 32-byte
/// sectors (`requested`); a request beyond the first read of a sector hits the L2 with the
/// probability that the sector is still there — about `C / x_once` for a cache share `C`
/// of half the L2 (the other half holds the streamed matrix), 1 when `x` fits in it. So
/// `x_traffic = x_once + (requested − x_once) · (1 − hit)`: `x_once` for a small `x`, the
/// per-warp sectors for an `x` far larger than the L2, and continuous in between (version 0 of
/// the model switched at `x_once = C`, where its held-out errors were largest).
fn x_traffic(f: &Features, vb: u64, l2: f64) -> (f64, f64) {
    let Some(a) = f.access.as_ref() else {
        return ((f.ncols as f64) * vb as f64, 1.0);
    };
    let sectors = if vb == 4 {
        a.x_sectors_f32
    } else {
        a.x_sectors_f64
    };
    let once = ((f.ncols as f64) * vb as f64)
        .min((a.cols_used as f64) * vb as f64)
        .max(vb as f64);
    let requested = (sectors as f64 * 32.0).max(once);
    let hit = (l2 / 2.0 / once).min(1.0);
    (once + (requested - once) * (1.0 - hit), hit)
}

/// BSR's counts of version 4 (the default block size's, where the features hold them).
fn bsr_counts(f: &Features, v: Variant, version: u32) -> Option<crate::formats::bsr::BsrCount> {
    let b = f.access.as_ref()?.bsr?;
    (version >= 4 && matches!(v, Variant::Bsr) && b.warp_trips > 0).then_some(b)
}

/// The warp steps of `cfg`'s thread mapping (row-per-thread for the non-CSR kernels; BSR's
/// warp trips from version 4).
fn steps(f: &Features, v: Variant, version: u32) -> f64 {
    if let Some(b) = bsr_counts(f, v, version) {
        return b.warp_trips as f64;
    }
    let a = f.access.as_ref().map_or([0; 6], |a| a.warp_steps);
    a[mapping(v)] as f64
}

/// The index in [`crate::features::access::THREADS_PER_ROW`] of `v`'s thread mapping (row per
/// thread for the non-CSR kernels, row per warp for the balanced ones).
fn mapping(v: Variant) -> usize {
    match v {
        Variant::Csr { threads_per_row } => threads_per_row.max(1).trailing_zeros().min(5) as usize,
        Variant::Vendor(_) | Variant::CsrMerge | Variant::Coo => 5,
        _ => 0,
    }
}

/// The tail of `v`'s warp steps (version 6, [`crate::features::access::WarpHist::tail`]); zeros
/// where the features lack the histogram.
fn warp_tail(f: &Features, v: Variant) -> [f64; 5] {
    f.access
        .as_ref()
        .and_then(|a| a.warp_hist.get(mapping(v)))
        .map_or([0.0; 5], |h| h.tail())
}

/// Dependent steps of the longest row under `v`'s thread mapping (0 for the balanced kernels;
/// BSR from version 4: the trips of its longest block row).
fn chain(f: &Features, v: Variant, version: u32) -> f64 {
    if let Some(b) = bsr_counts(f, v, version) {
        let groups = (32 / b.block.max(1)).max(1) as u64;
        return b.max_row_blocks.div_ceil(groups) as f64;
    }
    let per_step = match v {
        Variant::Csr { threads_per_row } => threads_per_row.max(1),
        Variant::Ell | Variant::Sell | Variant::Jad | Variant::EllBro => 1,
        Variant::Vendor(crate::backend::VendorAlg::SellAlg1) => 1,
        Variant::Bsr => 4,
        _ => return 0.0,
    };
    (f.max_nnz as f64 / per_step as f64).ceil()
}

/// Warps in flight on the GPUs the profiles are for (132 SMs × 64 warps, H100 and H200): the
/// split rule's device parameter as the model reads it (a profile moved to another device keeps
/// it; the trees correct what differs).
const RESIDENT_WARPS: u32 = 132 * 64;

/// The longest chain of `cfg` (version 8: our SELL-C-σ's per [`sell_chain`], else [`chain`]).
fn chain_of(f: &Features, cfg: &KernelConfig, version: u32) -> f64 {
    match (version >= 8 && cfg.variant == Variant::Sell)
        .then(|| sell_chain(f, &cfg.params.sell))
        .flatten()
    {
        Some(c) => c,
        None => chain(f, cfg.variant, version),
    }
}

/// Our SELL-C-σ kernel's longest chain (version 8): it splits every slice wider than
/// [`crate::backend::cuda::sell_split::threshold`] over warps, so no warp walks more steps than
/// that; the longest row where it is shorter. `None` where the features lack the slot count of
/// these parameters. The work is the stored slots over 32 (exact for C a multiple of 32 but for
/// the last slice's padding lanes).
fn sell_chain(f: &Features, p: &crate::formats::SellParams) -> Option<f64> {
    let count = f
        .access
        .as_ref()?
        .sell
        .iter()
        .find(|s| s.c == p.c && s.sigma == p.sigma)?;
    use crate::backend::cuda::sell_split::{threshold, total_lane_groups, Rule};
    let groups = total_lane_groups(f.nrows, p.c);
    let (_, split_above) = threshold(count.slots / 32, groups, RESIDENT_WARPS, Rule::default());
    Some((f.max_nnz as f64).min(split_above as f64))
}

/// The mixture of row lengths, from the log2 histogram of the features (version 5): the share
/// of the entries in rows of at least 4, 32, 256 and 4,096 entries (a row of bucket `k ≥ 1`,
/// lengths `[2^(k−1), 2^k)`, counted as `0.75 · 2^k` entries), the occupied buckets, and the share
/// of the rows in the longest bucket. A stack of parts of different row lengths (where every
/// configuration's held-out error is widest, docs/ACCURACY.md session 30) has entries in several
/// far-apart buckets, which the mean, deviation and longest row alone do not tell apart.
fn row_mix(f: &Features) -> [f64; 6] {
    let h = &f.row_len_log2_hist;
    let est = |k: usize| match k {
        0 => 0.0,
        1 => 1.0,
        _ => 0.75 * (1u64 << k.min(62)) as f64,
    };
    let entries: Vec<f64> = h
        .iter()
        .enumerate()
        .map(|(k, &n)| n as f64 * est(k))
        .collect();
    let total = entries.iter().sum::<f64>().max(1.0);
    // Rows of at least 2^(b−1) entries are the buckets from b on.
    let share = |b: usize| entries.iter().skip(b).sum::<f64>() / total;
    let rows = h.iter().sum::<usize>().max(1) as f64;
    [
        share(3),
        share(6),
        share(9),
        share(13),
        h.iter().skip(1).filter(|&&n| n > 0).count() as f64,
        h.last().map_or(0.0, |&n| n as f64 / rows),
    ]
}

/// The correction's features, `ln T₀` and the bytes (`step_s`: the configuration's seconds per step of the
/// longest row).
fn features(
    f: &Features,
    cfg: &KernelConfig,
    vb: u64,
    d: &Device,
    step_s: f64,
    version: u32,
) -> Result<(Vec<f64>, f64, f64)> {
    let a = access(f)?;
    let b = bytes(f, cfg, vb, d.l2_bytes, version)?;
    let steps_chain = chain_of(f, cfg, version);
    let stream = b / d.bandwidth;
    let base = (d.floor_s + stream.max(step_s * steps_chain)).ln();
    let nnz = f.nnz.max(1) as f64;
    let n = f.nrows.max(1) as f64;
    let l = |x: f64| x.max(0.0).ln_1p();
    let sectors = if vb == 4 {
        a.x_sectors_f32
    } else {
        a.x_sectors_f64
    };
    let mut x = vec![
        nnz.ln(),
        n.ln(),
        (f.ncols.max(1) as f64).ln(),
        l(f.max_nnz as f64),
        l(f.mean_nnz),
        l(f.std_nnz),
        l(f.mode_nnz as f64),
        b.ln(),
        (sectors.max(1) as f64 / nnz).ln(),
        (a.row_sectors_f64.max(1) as f64 / nnz).ln(),
        f.ell_padding_ratio.max(1e-9).ln(),
        f.empty_rows as f64 / n,
        l(f.diagonals as f64),
        l(f.bandwidth as f64 / n),
        l(a.cols_used as f64),
        l(steps(f, cfg.variant, version)),
        b / d.l2_bytes,
        base,
        l(steps_chain),
        (step_s * steps_chain / stream.max(1e-12)).max(1e-6).ln(),
    ];
    x.extend(a.warp_steps.iter().map(|&s| l(s as f64)));
    if version >= 1 {
        let (xt, hit) = x_traffic(f, vb, d.l2_bytes);
        let x_once = (a.cols_used.max(1) as f64) * vb as f64;
        x.extend([
            (x_once / d.l2_bytes).ln(),
            hit,
            (xt / b.max(1.0)).max(1e-9).ln(),
            ((b - xt).max(1.0) / d.l2_bytes).ln(),
        ]);
    }
    if version >= 5 {
        x.extend(row_mix(f));
    }
    if version >= 6 {
        x.extend(warp_tail(f, cfg.variant));
    }
    if version >= 7 {
        // The ELL part's warp steps up to its width, and the share of its stored values it
        // loads; the configuration's own steps and 1 where nothing is skipped.
        x.extend(match ell_values(f, cfg) {
            Some((stored, loaded)) => [l(loaded / 32.0), loaded / stored.max(1.0)],
            None => [l(steps(f, cfg.variant, version)), 1.0],
        });
    }
    if version >= 9 {
        x.extend([align_degree(a, vb), align_degree(a, 4)]);
    }
    Ok((x, base, b))
}

/// `ln` of the mean lane-alignment degree of the row-per-thread warps' steps for elements of
/// `bytes` (4 or 8) bytes: [`crate::features::Access::align_steps`] over
/// [`crate::features::Access::warp_steps`]`[0]`, 0 (degree 1) for features without the count.
fn align_degree(a: &crate::features::Access, bytes: u64) -> f64 {
    let steps = a.warp_steps[0].max(1);
    let align = a.align_steps[usize::from(bytes == 8)].max(steps);
    (align as f64 / steps as f64).ln()
}

/// One configuration's prediction before the device: what [`super::transfer`] refits a device on.
#[derive(Clone, Copy, Debug)]
pub(super) struct Parts {
    /// Bytes moved on the model's device (its L2 size).
    pub bytes: f64,
    /// Seconds of the longest row's chain (`step · chain`; 0 for the balanced kernels).
    pub chain_s: f64,
    /// The trees' correction `ln(T / T₀)`.
    pub correction: f64,
    /// Relative one-sigma uncertainty.
    pub sigma: f64,
    /// Warp steps of the configuration's thread mapping (`steps`).
    pub steps: f64,
    /// Seconds per warp step ([`OwnConfig::issue_s`]; 0: no issue term).
    pub issue_s: f64,
}

impl Parts {
    /// `ln T₀` on `d`: `floor + max(bytes / bandwidth, chain)`.
    pub fn ln_base(&self, d: &Device) -> f64 {
        (d.floor_s + (self.bytes / d.bandwidth).max(self.chain_s)).ln()
    }

    /// `ln T` on `d`: the base with the correction, or the issue time `floor + steps · issue`
    /// where that is longer (a transferred model's issue term, [`OwnConfig::issue_s`]).
    pub fn ln_time(&self, d: &Device) -> f64 {
        let t = self.ln_base(d) + self.correction;
        if self.issue_s > 0.0 {
            t.max((d.floor_s + self.steps * self.issue_s).ln())
        } else {
            t
        }
    }
}

/// What the configurations of one matrix share: the reference of the relative corrections,
/// computed for the first configuration that needs it and read by the others (one evaluation
/// of the reference's trees per matrix instead of one per configuration).
#[derive(Default)]
struct Shared {
    /// The reference's `ln(T / T₀)`, `None` where the model has none or its features fail.
    reference: std::sync::OnceLock<Option<f64>>,
}

impl OwnModel {
    /// The bytes of configuration `label` on this model's device and the trees' correction
    /// `ln(T / T₀)` (constant + trees, the trees reading features computed on the device they
    /// were trained on).
    pub(super) fn parts(&self, f: &Features, label: &str) -> Result<Parts> {
        self.parts_shared(f, label, &Shared::default())
    }

    /// [`OwnModel::parts`] with what the configurations of the matrix `f` share in `shared`
    /// (the same [`Shared`] for one matrix only).
    fn parts_shared(&self, f: &Features, label: &str, shared: &Shared) -> Result<Parts> {
        let c = super::entry("sparsecast", &self.configs, label)?;
        let cfg = KernelConfig::parse_label(label)?;
        let vb = value_bytes(self.precision);
        let trained = self.trained_on.as_ref().unwrap_or(&self.device);
        let (x, _, b_trained) = features(f, &cfg, vb, trained, c.step_s, self.version)?;
        // The bytes on this model's device: those of the features unless moved to another.
        let b = match self.trained_on {
            None => b_trained,
            Some(_) => bytes(f, &cfg, vb, self.device.l2_bytes, self.version)?,
        };
        let own = c.base + gb::sum(&c.trees, &x);
        // The relative blend (version 2), where the model has a reference and its features
        // exist for this matrix.
        let blended = match c.rel_trees.is_empty() {
            true => None,
            false => shared
                .reference
                .get_or_init(|| self.reference_correction(f))
                .map(|reference| {
                    let rel = c.rel_base + gb::sum(&c.rel_trees, &x);
                    (1.0 - RELATIVE_SHARE) * own + RELATIVE_SHARE * (reference + rel)
                }),
        };
        Ok(Parts {
            bytes: b,
            chain_s: c.step_s * chain_of(f, &cfg, self.version),
            correction: blended.unwrap_or(own),
            sigma: c.sigma_for(f.nnz as f64),
            steps: steps(f, cfg.variant, self.version),
            issue_s: c.issue_s,
        })
    }

    /// The reference of the relative corrections for the matrix `f` (its `ln(T / T₀)` as the
    /// reference's trees predict it), `None` without a reference or where its features fail.
    fn reference_correction(&self, f: &Features) -> Option<f64> {
        let rc = self.reference.as_ref()?;
        let rcfg = KernelConfig::parse_label(&rc.config).ok()?;
        let trained = self.trained_on.as_ref().unwrap_or(&self.device);
        let vb = value_bytes(self.precision);
        let (rx, _, _) = features(f, &rcfg, vb, trained, rc.step_s, self.version).ok()?;
        Some(rc.base + gb::sum(&rc.trees, &rx))
    }

    /// [`OwnModel::parts`] with the bytes counted for a device of `l2_bytes` of L2 (the
    /// reference of a transferred model, [`super::cross_own`]).
    pub(super) fn parts_with_l2(&self, f: &Features, label: &str, l2_bytes: f64) -> Result<Parts> {
        let cfg = KernelConfig::parse_label(label)?;
        let p = self.parts(f, label)?;
        Ok(Parts {
            bytes: bytes(f, &cfg, value_bytes(self.precision), l2_bytes, self.version)?,
            ..p
        })
    }

    /// Predicted seconds and relative uncertainty of configuration `label`.
    pub(super) fn detail(&self, f: &Features, label: &str) -> Result<(f64, f64)> {
        self.detail_shared(f, label, &Shared::default())
    }

    /// [`OwnModel::detail`] with what the configurations of the matrix share in `shared`.
    fn detail_shared(&self, f: &Features, label: &str, shared: &Shared) -> Result<(f64, f64)> {
        let p = self.parts_shared(f, label, shared)?;
        let ln = p.ln_time(&self.device);
        Ok((super::seconds("sparsecast", label, ln)?, p.sigma))
    }

    /// [`OwnModel::detail`] of every configuration of `labels` for one matrix, with what they
    /// share computed once ([`Shared`]): the same numbers, to the bit, as one call per
    /// configuration.
    ///
    /// The configurations in parallel (rayon, in order): their trees are most of a ranking's
    /// time, and a ranking right after the matrix was read walks them from beyond the caches —
    /// `sparsecast predict data/cage11.mtx.gz` on 2 cores took 0.9–1.05 ms a precision, at
    /// issue 14's 1 ms limit, one configuration after the other (session 53).
    pub(super) fn details(&self, f: &Features, labels: &[&str]) -> Vec<Result<(f64, f64)>> {
        let shared = Shared::default();
        labels
            .par_iter()
            .with_min_len(4)
            .map(|l| self.detail_shared(f, l, &shared))
            .collect()
    }

    /// Bytes one SpMV of configuration `label` moves on this model's device (the physical
    /// base's count: the format's arrays, `y` and the gathers of `x`).
    pub fn bytes_label(&self, f: &Features, label: &str) -> Result<f64> {
        Ok(self.parts(f, label)?.bytes)
    }

    /// Predicted seconds of configuration `label`.
    pub fn predict_label(&self, f: &Features, label: &str) -> Result<f64> {
        self.detail(f, label).map(|d| d.0)
    }

    /// One-sigma uncertainty, seconds, of configuration `label`.
    pub fn uncertainty_label(&self, f: &Features, label: &str) -> Option<f64> {
        self.detail(f, label).ok().map(|(t, s)| t * s)
    }

    /// The same corrections on another device (cross-architecture transfer): the physical
    /// base `floor + bytes / bandwidth` (bytes with the new L2 size) uses `device`, the trees
    /// keep reading features computed on the device they were trained on (their inputs include
    /// `ln T₀` and the bytes per L2 size, which on a new device would move them off what they
    /// learned). See [`super::transfer`] for refitting `device` on a target.
    pub fn with_device(&self, device: Device) -> OwnModel {
        OwnModel {
            device,
            trained_on: Some(self.trained_on.unwrap_or(self.device)),
            // The second stage learned how this device's predictions miss, and its library
            // holds what this device measured: not carried to another.
            pick: None,
            ..self.clone()
        }
    }

    /// Every number finite, every tree well formed.
    pub fn validate(&self) -> Result<()> {
        // A newer version's trees read features this binary does not compute.
        if self.version > VERSION {
            return Err(Error::Invalid(format!(
                "sparsecast model of version {}: this sparsecast reads versions up to {VERSION} \
                 (update sparsecast, or use a profile trained by this version)",
                self.version
            )));
        }
        if !self.device.is_valid()
            || !self.configs.iter().all(|c| {
                c.base.is_finite()
                    && c.rel_base.is_finite()
                    && c.sigma.is_finite()
                    && c.sigma_by_nnz.iter().all(|s| s.is_finite() && *s >= 0.0)
                    && c.step_s.is_finite()
                    && c.step_s >= 0.0
                    && c.trees.iter().chain(&c.rel_trees).all(|t| t.is_valid())
            })
            || !self.reference.iter().all(|r| {
                r.base.is_finite() && r.step_s >= 0.0 && r.trees.iter().all(|t| t.is_valid())
            })
            || !self.cross.as_ref().map_or(true, |c| {
                c.device.is_valid()
                    && c.ratio.is_valid()
                    && c.shift
                        .values()
                        .chain(c.sigma.values())
                        .all(|v| v.is_finite())
                    && c.memory.map_or(true, |m| m.is_valid())
            })
        {
            return Err(Error::Invalid(
                "sparsecast model: a malformed tree or a non-finite value".into(),
            ));
        }
        match &self.pick {
            Some(p) => p.validate(),
            None => Ok(()),
        }
    }
}

crate::learned_model!(OwnModel, "sparsecast");

/// The device parameters measured on `rows` of `precision` (see the module doc); `l2_bytes` is
/// the device's cache (50 MB when the table's device is unknown).
pub fn fit_device(rows: &[&TableRow], precision: Precision) -> Device {
    let l2 = l2_of(rows.first().map_or("", |r| r.device.as_str()));
    let vb = value_bytes(precision);
    let mut floors: Vec<f64> = rows
        .iter()
        .filter(|r| r.precision == precision && r.features.nnz <= 20_000)
        .filter_map(|r| r.best().map(|b| b.1))
        .collect();
    floors.sort_by(f64::total_cmp);
    let floor_s = floors.get(floors.len() / 2).copied().unwrap_or(2e-6);
    let mut bw: Vec<f64> = Vec::new();
    let mut all: Vec<f64> = Vec::new();
    for r in rows.iter().filter(|r| r.precision == precision) {
        for t in &r.times {
            let (Some(s), Ok(cfg)) = (t.time(), KernelConfig::parse_label(&t.config)) else {
                continue;
            };
            if let Ok(b) = bytes(&r.features, &cfg, vb, l2, VERSION) {
                all.push(b / s);
                if b >= 256e6 {
                    bw.push(b / s);
                }
            }
        }
    }
    let pick = if bw.len() >= 10 { &mut bw } else { &mut all };
    pick.sort_by(f64::total_cmp);
    let bandwidth = pick
        .get(pick.len() * 9 / 10)
        .copied()
        .filter(|b| b.is_finite() && *b > 0.0)
        .unwrap_or(1e11);
    Device {
        floor_s,
        bandwidth,
        l2_bytes: l2,
    }
}

/// The L2 bytes of a device named in a table (H200 60 MB, H100 50 MB; otherwise 50 MB).
pub fn l2_of(device: &str) -> f64 {
    if device.contains("H200") {
        60e6
    } else {
        50e6
    }
}

/// Seconds per step of the longest row of one configuration (see the module doc): the 10th
/// percentile of `(T − floor) / chain` over its examples with a chain of ≥ 256 steps; 0 when
/// fewer than 5 have one.
fn fit_step(set: &ConfigSet<'_>, d: &Device) -> f64 {
    let mut r: Vec<f64> = set
        .examples
        .iter()
        .filter_map(|(row, y)| {
            let c = chain_of(&row.features, &set.config, VERSION);
            (c >= 256.0).then(|| (y.exp() - d.floor_s).max(0.0) / c)
        })
        .collect();
    if r.len() < 5 {
        return 0.0;
    }
    r.sort_by(f64::total_cmp);
    r[r.len() / 10]
}

/// One training example of a configuration: its features, `ln(T/T₀)` and its family.
/// Features, target, family and non-zeros of one training example.
type Example<'a> = (&'a Vec<f64>, f64, &'a str, f64);

/// The examples of one configuration as (features, ln(T/T₀)), aligned with `set.examples`
/// (`None` where the features fail).
fn ex_rows(set: &ConfigSet<'_>, vb: u64, d: &Device, step_s: f64) -> Vec<Option<(Vec<f64>, f64)>> {
    set.examples
        .iter()
        .map(|(r, y)| {
            let (x, base, _) = features(&r.features, &set.config, vb, d, step_s, VERSION).ok()?;
            Some((x, y - base))
        })
        .collect()
}

/// Fit one configuration: trees on all its examples, sigma from `inner` inner folds (none: 0),
/// and with `reference` (each training row's reference residual, by [`row_key`]) the relative
/// trees on the residual minus it.
fn fit_config(
    set: &ConfigSet<'_>,
    vb: u64,
    d: &Device,
    inner: usize,
    reference: Option<&HashMap<usize, f64>>,
) -> Result<Option<OwnConfig>> {
    let step_s = fit_step(set, d);
    // Every example's features once: the own trees, the relative ones and the inner folds.
    let rows = ex_rows(set, vb, d, step_s);
    let ex: Vec<Example> = set
        .examples
        .iter()
        .zip(&rows)
        .filter_map(|((r, _), e)| {
            e.as_ref()
                .map(|(x, y)| (x, *y, r.family.as_str(), r.features.nnz as f64))
        })
        .collect();
    if ex.len() < 2 {
        return Ok(None);
    }
    let what = format!("sparsecast of {}", set.label);
    let xs: Vec<Vec<f64>> = ex.iter().map(|e| e.0.clone()).collect();
    let ys: Vec<f64> = ex.iter().map(|e| e.1).collect();
    let (base, trees) = boost(&xs, &ys, TREES, &what)?;
    let (mut rel_base, mut rel_trees) = (0.0, Vec::new());
    if let Some(refs) = reference {
        let (rx, ry): (Vec<Vec<f64>>, Vec<f64>) = set
            .examples
            .iter()
            .zip(&rows)
            .filter_map(|((row, _), e)| {
                let (x, y) = e.as_ref()?;
                let r = refs.get(&row_key(row))?;
                Some((x.clone(), y - r))
            })
            .unzip();
        if rx.len() >= 2 {
            (rel_base, rel_trees) = boost(&rx, &ry, TREES, &what)?;
        }
    }
    // (|ln error|, non-zeros) of every held-out example of the inner folds.
    let mut errs: Vec<(f64, f64)> = Vec::new();
    for k in 0..inner {
        let (test, train): (Vec<&Example>, Vec<_>) =
            ex.iter().partition(|e| dataset::fold_of(e.2, inner) == k);
        if test.is_empty() || train.len() < 2 {
            continue;
        }
        let txs: Vec<Vec<f64>> = train.iter().map(|e| e.0.clone()).collect();
        let tys: Vec<f64> = train.iter().map(|e| e.1).collect();
        let (b0, tr) = boost(&txs, &tys, TREES, &what)?;
        errs.extend(test.iter().map(|e| {
            let err = (b0 + gb::sum(&tr, e.0) - e.1).abs();
            (err, e.3)
        }));
    }
    let (sigma, sigma_by_nnz) = sigmas(&errs);
    Ok(Some(OwnConfig {
        config: set.label.clone(),
        base,
        trees,
        sigma,
        sigma_by_nnz,
        step_s,
        n: ys.len(),
        rel_base,
        rel_trees,
        issue_s: 0.0,
    }))
}

/// The one-sigma ([`one_sigma`]) of `errs`' errors (0.1 without any), and the same per size
/// class ([`sigma_class`] of the non-zeros) where a class has ≥ [`SIGMA_MIN_PER_CLASS`] errors,
/// else the overall one; no classes without errors.
fn sigmas(errs: &[(f64, f64)]) -> (f64, Vec<f64>) {
    let sigma = |mut v: Vec<f64>| one_sigma(&mut v);
    let Some(all) = sigma(errs.iter().map(|e| e.0).collect()) else {
        return (0.1, Vec::new());
    };
    let by_class = (0..=SIGMA_NNZ_EDGES.len())
        .map(|c| {
            let v: Vec<f64> = errs
                .iter()
                .filter(|e| sigma_class(e.1) == c)
                .map(|e| e.0)
                .collect();
            match v.len() >= SIGMA_MIN_PER_CLASS {
                true => sigma(v).unwrap_or(all),
                false => all,
            }
        })
        .collect();
    (all, by_class)
}

/// A training row's key in the reference residuals (its address: rows are borrowed for the
/// whole fit).
fn row_key(row: &TableRow) -> usize {
    row as *const TableRow as usize
}

/// The reference of the relative corrections (see [`RELATIVE_SHARE`]): the mean residual
/// `ln(T / T₀)` of each training row over the configurations measured on at least 99 % of the
/// rows as many as the most measured one, and trees that predict it from the features of
/// [`REFERENCE_FEATURES`] (the most measured configuration where the table lacks it). `None`
/// without such rows.
#[allow(clippy::type_complexity)]
fn fit_reference(
    sets: &[ConfigSet<'_>],
    vb: u64,
    d: &Device,
) -> Result<Option<(OwnConfig, HashMap<usize, f64>)>> {
    let most = sets.iter().map(|s| s.examples.len()).max().unwrap_or(0);
    fn residuals<'a>(
        set: &ConfigSet<'a>,
        vb: u64,
        d: &Device,
        step_s: f64,
    ) -> Vec<(&'a TableRow, Option<(Vec<f64>, f64)>)> {
        let rows = set.examples.iter().map(|(row, _)| *row);
        rows.zip(ex_rows(set, vb, d, step_s)).collect()
    }
    let mut acc: HashMap<usize, (f64, f64)> = HashMap::new();
    for set in sets.iter().filter(|s| s.examples.len() * 100 >= most * 99) {
        for (row, e) in residuals(set, vb, d, fit_step(set, d)) {
            if let Some((_, r)) = e {
                let a = acc.entry(row_key(row)).or_default();
                a.0 += r;
                a.1 += 1.0;
            }
        }
    }
    let means: HashMap<usize, f64> = acc.into_iter().map(|(k, (s, n))| (k, s / n)).collect();
    let Some(set) = sets
        .iter()
        .find(|s| s.label == REFERENCE_FEATURES)
        .or_else(|| sets.iter().max_by_key(|s| s.examples.len()))
    else {
        return Ok(None);
    };
    let step_s = fit_step(set, d);
    let (xs, ys): (Vec<Vec<f64>>, Vec<f64>) = residuals(set, vb, d, step_s)
        .into_iter()
        .filter_map(|(row, e)| Some((e?.0, *means.get(&row_key(row))?)))
        .unzip();
    if ys.len() < 2 {
        return Ok(None);
    }
    let (base, trees) = boost(&xs, &ys, TREES, "sparsecast reference")?;
    let reference = OwnConfig {
        config: set.label.clone(),
        base,
        trees,
        sigma: 0.0,
        sigma_by_nnz: Vec::new(),
        step_s,
        n: ys.len(),
        rel_base: 0.0,
        rel_trees: Vec::new(),
        issue_s: 0.0,
    };
    Ok(Some((reference, means)))
}

/// Train every configuration of `precision` (in parallel), with the uncertainty and the
/// calibration matrices a target measures to transfer it ([`super::cross_own`]).
pub fn fit(rows: &[&TableRow], precision: Precision) -> Result<OwnModel> {
    let mut m = fit_with(rows, precision, INNER_FOLDS)?;
    let cal = super::cross_own::calibration_rows(rows, precision);
    m.calibration = (!cal.is_empty()).then_some(cal);
    Ok(m)
}

/// [`fit`] with `inner` folds for the uncertainty (0: no uncertainty, 5× faster; for
/// evaluations that only score the prediction).
pub fn fit_with(rows: &[&TableRow], precision: Precision, inner: usize) -> Result<OwnModel> {
    let sets = dataset::per_config(rows, precision)?;
    super::check_any("sparsecast", &sets, precision)?;
    let device = fit_device(rows, precision);
    let vb = value_bytes(precision);
    let (reference, means) = match fit_reference(&sets, vb, &device)? {
        Some((r, m)) => (Some(r), Some(m)),
        None => (None, None),
    };
    let configs: Vec<OwnConfig> = sets
        .par_iter()
        .map(|s| fit_config(s, vb, &device, inner, means.as_ref()))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    Ok(OwnModel {
        precision,
        device,
        configs,
        trained_on: None,
        version: VERSION,
        reference,
        calibration: None,
        cross: None,
        pick: None,
    })
}

/// The `sparsecast` learner.
pub struct Own;

impl Learner for Own {
    fn name(&self) -> &'static str {
        "sparsecast"
    }
    fn fit(&self, rows: &[&TableRow], precision: Precision) -> Result<StoredModel> {
        fit(rows, precision).map(StoredModel::Sparsecast)
    }
    fn fit_prediction_only(&self, rows: &[&TableRow], precision: Precision) -> Result<StoredModel> {
        fit_with(rows, precision, 0).map(StoredModel::Sparsecast)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::VendorAlg;

    /// A 64 × 64 matrix whose row 5 holds 40 entries and every other row 2.
    fn one_long_row() -> Features {
        let (mut rows, mut cols) = (Vec::new(), Vec::new());
        for r in 0..64u32 {
            let len = if r == 5 { 40 } else { 2 };
            rows.extend((0..len).map(|_| r));
            cols.extend((0..len).map(|k| (r + k) % 64));
        }
        let vals = vec![1.0f64; rows.len()];
        Features::compute(&crate::Csr::from_triplets(64, 64, &rows, &cols, &vals).unwrap())
    }

    /// 100 rows of 2 entries, then one of 5,000.
    fn short_rows_and_one_long() -> Features {
        let (mut rows, mut cols) = (Vec::new(), Vec::new());
        for r in 0..101u32 {
            let len = if r == 100 { 5000 } else { 2 };
            rows.extend((0..len).map(|_| r));
            cols.extend(0..len);
        }
        let vals = vec![1.0f64; rows.len()];
        Features::compute(&crate::Csr::from_triplets(101, 5000, &rows, &cols, &vals).unwrap())
    }

    #[test]
    fn version_9_gives_the_lane_alignment_degree_of_the_value_and_index_loads() {
        // Rows of 8 entries: 4-byte starts fall on 4 offsets of 128 bytes (8 lanes meet), 8-byte
        // ones on 2 (16 lanes); the trees get ln 16 (f64 values) and ln 8 (indices) last.
        let n = 64u32;
        let rows: Vec<u32> = (0..n).flat_map(|r| [r; 8]).collect();
        let cols: Vec<u32> = (0..n)
            .flat_map(|r| (0..8).map(move |k| (r + 3 * k) % n))
            .collect();
        let vals = vec![1.0f64; rows.len()];
        let m = crate::Csr::from_triplets(n as usize, n as usize, &rows, &cols, &vals).unwrap();
        let f = Features::compute(&m);
        let a = f.access.as_ref().unwrap();
        assert!((align_degree(a, 8) - 16f64.ln()).abs() < 1e-12);
        assert!((align_degree(a, 4) - 8f64.ln()).abs() < 1e-12);
        let cfg = KernelConfig::parse_label("csr-scalar").unwrap();
        let d = Device {
            floor_s: 2e-6,
            bandwidth: 1e12,
            l2_bytes: 50e6,
        };
        let (x9, ..) = features(&f, &cfg, 8, &d, 1e-9, 9).unwrap();
        let (x8, ..) = features(&f, &cfg, 8, &d, 1e-9, 8).unwrap();
        assert_eq!(x9.len(), x8.len() + 2);
        assert_eq!(x9[x8.len()..], [align_degree(a, 8), align_degree(a, 4)]);
        // Features without the count (stored before version 9) read as degree 1.
        let mut old = a.clone();
        old.align_steps = [0, 0];
        assert_eq!(align_degree(&old, 8), 0.0);
    }

    #[test]
    fn sells_chain_stops_at_the_split_threshold_from_version_8() {
        // 100 rows of 2 entries and one of 5,000, sorted in one window of 256: slices of width
        // 5,000, 2, 2 and 2 (the last of 5 rows): 5,006 warp steps over 4 lane groups, chunks of
        // the minimum 16, so the kernel splits what is wider than 32.
        let f = short_rows_and_one_long();
        let sell = KernelConfig::new(Variant::Sell);
        assert_eq!(chain_of(&f, &sell, 8), 32.0);
        assert_eq!(chain_of(&f, &sell, 7), 5000.0);
        // cuSPARSE's SELL walks the whole width.
        let vendor = KernelConfig::new(Variant::Vendor(VendorAlg::SellAlg1));
        assert_eq!(chain_of(&f, &vendor, 8), 5000.0);
        // Parameters whose slots the features lack: the longest row.
        let mut odd = sell.clone();
        odd.params.sell.c = 64;
        assert_eq!(chain_of(&f, &odd, 8), 5000.0);
        // 64 rows, one of 40: its slice is split too (wider than 32).
        assert_eq!(chain_of(&one_long_row(), &sell, 8), 32.0);
        assert_eq!(chain_of(&one_long_row(), &sell, 7), 40.0);
    }

    #[test]
    fn the_row_mix_tells_a_stack_of_long_rows_from_uniform_rows() {
        // 100 rows of 2 entries and one of 5,000: almost every entry in a row of ≥ 4,096.
        let f = short_rows_and_one_long();
        let m = row_mix(&f);
        // Bucket 2 (lengths 2–3) counts 3 entries a row, bucket 13 (4,096–8,191) 6,144.
        let long = 6144.0 / (6144.0 + 300.0);
        assert!(
            (m[0] - long).abs() < 1e-12 && (m[3] - long).abs() < 1e-12,
            "{m:?}"
        );
        assert_eq!((m[4], m[5]), (2.0, 1.0 / 101.0));
        // Rows of 2 and one of 40: nothing in rows of ≥ 256.
        let m = row_mix(&one_long_row());
        assert_eq!((m[2], m[3]), (0.0, 0.0));
    }

    #[test]
    fn version_7_charges_ell_only_the_values_its_kernel_loads() {
        let f = one_long_row();
        let ell = KernelConfig::parse_label("ell").unwrap();
        // Width 40: the warp of the long row loads 40 values a row, the other warp 2.
        let skipped = (64.0 * 40.0 - (40.0 + 2.0) * 32.0) * 8.0;
        let v6 = bytes(&f, &ell, 8, 1e9, 6).unwrap();
        let v7 = bytes(&f, &ell, 8, 1e9, 7).unwrap();
        assert!((v6 - v7 - skipped).abs() < 1e-9, "{v6} {v7}");
        // The trees see the ELL part's steps and the share of its values loaded.
        let d = Device {
            floor_s: 2e-6,
            bandwidth: 1e12,
            l2_bytes: 1e9,
        };
        let (x7, _, _) = features(&f, &ell, 8, &d, 0.0, 7).unwrap();
        let (x6, _, _) = features(&f, &ell, 8, &d, 0.0, 6).unwrap();
        assert_eq!(x7.len(), x6.len() + 2);
        assert!((x7[x7.len() - 1] - 42.0 / 80.0).abs() < 1e-12, "{x7:?}");
        // Other kernels keep their bytes.
        let csr = KernelConfig::parse_label("csr-scalar").unwrap();
        assert_eq!(
            bytes(&f, &csr, 8, 1e9, 6).unwrap(),
            bytes(&f, &csr, 8, 1e9, 7).unwrap()
        );
        // HYB of width 2 loads every value it stores.
        let mut hyb = KernelConfig::parse_label("hyb").unwrap();
        hyb.params.hyb.width = Some(2);
        assert_eq!(ell_values(&f, &hyb), Some((128.0, 128.0)));
    }

    #[test]
    fn the_chain_is_the_longest_row_in_steps_of_the_thread_mapping() {
        let f = one_long_row();
        let csr = |t| Variant::Csr { threads_per_row: t };
        assert_eq!(chain(&f, csr(1), VERSION), 40.0);
        assert_eq!(chain(&f, csr(8), VERSION), 5.0);
        assert_eq!(chain(&f, csr(32), VERSION), 2.0);
        assert_eq!(chain(&f, Variant::Jad, VERSION), 40.0);
        assert_eq!(
            chain(&f, Variant::Vendor(VendorAlg::SellAlg1), VERSION),
            40.0
        );
        // BSR (version 4): one warp per block row of 4 rows, 8 blocks per trip. Row 5's 40
        // columns 5..=44 and its block row's short rows span block columns 1..=11: 2 trips;
        // every other block row 1 trip. Version 3 counted the longest row in steps of 4.
        assert_eq!(chain(&f, Variant::Bsr, VERSION), 2.0);
        assert_eq!(steps(&f, Variant::Bsr, VERSION), 17.0);
        assert_eq!(chain(&f, Variant::Bsr, 3), 10.0);
        assert_eq!(
            steps(&f, Variant::Bsr, 3),
            f.access.as_ref().unwrap().warp_steps[0] as f64
        );
        for balanced in [
            Variant::CsrMerge,
            Variant::Coo,
            Variant::Hyb,
            Variant::Vendor(VendorAlg::CsrAlg1),
        ] {
            assert_eq!(chain(&f, balanced, VERSION), 0.0, "{balanced:?}");
        }
    }

    #[test]
    fn x_is_read_once_when_it_fits_and_per_warp_when_far_larger_than_the_l2() {
        let f = one_long_row();
        let a = f.access.as_ref().unwrap();
        let once = a.cols_used as f64 * 8.0;
        let requested = a.x_sectors_f64 as f64 * 32.0;
        assert!(requested > once, "the test matrix must re-request sectors");
        // Fits: read once, every re-request hits.
        assert_eq!(x_traffic(&f, 8, 1e9), (once, 1.0));
        // A cache share of a tenth of x: 90 % of the re-requests go to DRAM.
        let (t, hit) = x_traffic(&f, 8, once / 5.0);
        assert!((hit - 0.1).abs() < 1e-12);
        assert!((t - (once + 0.9 * (requested - once))).abs() < 1e-9);
        // Continuous where version 0 switched (x = half the L2).
        let (below, _) = x_traffic(&f, 8, 2.0 * once * (1.0 + 1e-9));
        let (above, _) = x_traffic(&f, 8, 2.0 * once * (1.0 - 1e-9));
        assert!((above - below).abs() < 1e-6 * once);
    }

    #[test]
    fn a_model_stored_without_a_version_keeps_the_version_0_base() {
        let json = r#"{"precision":"f64","device":{"floor_s":2e-6,"bandwidth":1e12,"l2_bytes":50e6},
            "configs":[{"config":"ell","base":0.0,"trees":[],"sigma":0.1,"n":1}]}"#;
        let m: OwnModel = serde_json::from_str(json).unwrap();
        assert_eq!(m.version, 0);
        // With an L2 small next to x, version 0 reads the per-warp sectors, version 1 blends.
        let f = one_long_row();
        let cfg = KernelConfig::parse_label("ell").unwrap();
        let a = f.access.as_ref().unwrap();
        let l2 = a.cols_used as f64 * 8.0; // x = the L2: half of it is x's share
        let v0 = bytes(&f, &cfg, 8, l2, 0).unwrap();
        let v1 = bytes(&f, &cfg, 8, l2, 1).unwrap();
        let (xt, hit) = x_traffic(&f, 8, l2);
        assert!((hit - 0.5).abs() < 1e-12);
        assert!((v0 - v1 - (a.x_sectors_f64 as f64 * 32.0 - xt)).abs() < 1e-6);
        assert!(v1 < v0);
        let p0 = m.parts(&f, "ell").unwrap();
        assert!((p0.bytes - bytes(&f, &cfg, 8, 50e6, 0).unwrap()).abs() < 1e-9);
        assert!(m.validate().is_ok());
        // A model of a version newer than this binary is refused, not read with missing inputs.
        let newer = OwnModel {
            version: VERSION + 1,
            ..m
        };
        let e = newer.validate().unwrap_err().to_string();
        assert!(e.contains(&format!("version {}", VERSION + 1)), "{e}");
    }

    #[test]
    fn the_relative_correction_is_blended_evenly_with_the_own_one() {
        let json = r#"{"precision":"f64","device":{"floor_s":2e-6,"bandwidth":1e12,"l2_bytes":50e6},
            "version":2,
            "configs":[{"config":"ell","base":0.2,"trees":[],"sigma":0.1,"n":1,"rel_base":-0.1,
                "rel_trees":[{"f":[],"t":[],"l":[],"r":[],"v":[0.05]}]}],
            "reference":{"config":"csr-merge","base":0.4,"trees":[],"sigma":0.0,"n":1}}"#;
        let m: OwnModel = serde_json::from_str(json).unwrap();
        m.validate().unwrap();
        let f = one_long_row();
        let p = m.parts(&f, "ell").unwrap();
        // ½ · 0.2 + ½ · (0.4 + (−0.1 + 0.05))
        assert!(
            (p.correction - (0.1 + 0.5 * 0.35)).abs() < 1e-6,
            "{}",
            p.correction
        );
        // Without a reference (a version-1 model), the own trees alone.
        let v1 = OwnModel {
            reference: None,
            ..m.clone()
        };
        assert!((v1.parts(&f, "ell").unwrap().correction - 0.2).abs() < 1e-12);
    }

    #[test]
    fn the_configurations_of_one_matrix_share_the_reference_and_predict_the_same() {
        use crate::matrix::generate::{stencil, Stencil};
        use crate::model::{Bounded, Model, Prediction, StoredModel};
        let exact = |r: &Result<Prediction>| match r {
            Ok(p) => format!(
                "{:x} {:?} {:?}",
                p.seconds.to_bits(),
                p.uncertainty.map(f64::to_bits),
                p.clamped
            ),
            Err(e) => format!("error: {e}"),
        };
        let matrices = [
            one_long_row(),
            Features::compute(&stencil(Stencil::D2P5, 100, u64::MAX).unwrap()),
        ];
        let mut checked = 0;
        for (_, profile) in crate::profile::Profile::load_embedded_all().unwrap() {
            for section in &profile.precisions {
                for m in section.bounded_models(None).unwrap() {
                    let StoredModel::Sparsecast(own) = &m.model else {
                        continue;
                    };
                    // The relative corrections are there to share a reference.
                    assert!(own.reference.is_some());
                    assert!(own.configs.iter().any(|c| !c.rel_trees.is_empty()));
                    let cfgs = Model::configs(&m);
                    let unbounded = Bounded {
                        model: &m.model,
                        bounds: None,
                    };
                    for f in &matrices {
                        for model in [&m as &dyn Model, &m.model, &unbounded] {
                            let all = model.predict_detail_configs(f, &cfgs);
                            assert_eq!(all.len(), cfgs.len());
                            for (c, got) in cfgs.iter().zip(&all) {
                                let one = model.predict_detail_config(f, c);
                                assert_eq!(exact(got), exact(&one), "{}", c.label());
                            }
                            checked += all.iter().filter(|p| p.is_ok()).count();
                        }
                    }
                }
            }
        }
        // Without embedded profiles (`SPARSECAST_NO_EMBED`) there is nothing to compare.
        if !crate::profile::embedded().is_empty() {
            assert!(checked > 100, "{checked}");
        }
    }

    #[test]
    fn the_base_is_the_larger_of_streaming_and_the_chain() {
        let d = Device {
            floor_s: 2e-6,
            bandwidth: 1e12,
            l2_bytes: 50e6,
        };
        let p = |bytes: f64, chain_s: f64| Parts {
            bytes,
            chain_s,
            correction: 0.0,
            sigma: 0.1,
            steps: 0.0,
            issue_s: 0.0,
        };
        assert!((p(1e6, 0.0).ln_base(&d).exp() - 3e-6).abs() < 1e-12);
        assert!((p(1e6, 5e-6).ln_base(&d).exp() - 7e-6).abs() < 1e-12);
        assert!((p(1e7, 5e-6).ln_base(&d).exp() - 12e-6).abs() < 1e-12);
    }

    #[test]
    fn the_uncertainty_follows_the_size_class_that_has_enough_errors() {
        assert_eq!(sigma_class(999.0), 0);
        assert_eq!(sigma_class(1e4), 1);
        assert_eq!(sigma_class(5e6), 3);
        assert_eq!(sigma_class(3e8), 4);
        // 40 small matrices erring 1 %, 40 of 10⁶–10⁷ erring 8 %, 5 above 10⁷ erring 50 %.
        let mut errs: Vec<(f64, f64)> = (0..40).map(|_| (0.01, 2e3)).collect();
        errs.extend((0..40).map(|_| (0.08, 2e6)));
        errs.extend((0..5).map(|_| (0.5, 2e7)));
        let (all, by) = sigmas(&errs);
        assert_eq!(all, 0.08);
        // Classes without 30 errors fall back on the overall median.
        assert_eq!(by, vec![0.01, 0.08, 0.08, 0.08, 0.08]);
        let c = OwnConfig {
            config: "ell".into(),
            base: 0.0,
            trees: Vec::new(),
            sigma: all,
            sigma_by_nnz: vec![0.01, 0.02, 0.03, 0.08, 0.2],
            step_s: 0.0,
            n: 85,
            rel_base: 0.0,
            rel_trees: Vec::new(),
            issue_s: 0.0,
        };
        assert_eq!(c.sigma_for(500.0), 0.01);
        assert_eq!(c.sigma_for(2e6), 0.08);
        // A model stored before the classes: one sigma for every size.
        let old = OwnConfig {
            sigma_by_nnz: Vec::new(),
            ..c
        };
        assert_eq!(old.sigma_for(2e8), 0.08);
        assert_eq!(sigmas(&[]), (0.1, Vec::new()));
    }

    #[test]
    fn the_one_sigma_holds_the_share_of_errors_a_normal_one_sigma_holds() {
        // Errors 0.001 … 0.100: the one-sigma is the 69th smallest (68.27 % of 100 below it),
        // not the median (0.051).
        let mut v: Vec<f64> = (1..=100).rev().map(|i| i as f64 / 1000.0).collect();
        assert_eq!(one_sigma(&mut v), Some(0.069));
        let within = v.iter().filter(|&&e| e <= 0.069).count();
        assert_eq!(within, 69);
        assert_eq!(one_sigma(&mut [0.3]), Some(0.3));
        assert_eq!(one_sigma(&mut []), None);
        let errs: Vec<(f64, f64)> = (1..=100).map(|i| (i as f64 / 1000.0, 2e3)).collect();
        assert_eq!(sigmas(&errs).0, 0.069);
    }
}
