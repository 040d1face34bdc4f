//! The physical base `T₀` of the `sparsecast` model and the features its trees read (steps 1–3
//! of the module doc of [`super`]): the bytes a configuration moves, the gathers of `x`, the
//! longest row's chain, the warp steps and their tail, the mixture of row lengths and the
//! lane alignment.

use super::*;
use crate::backend::cuda::sell_split::{same_split, threshold, total_lane_groups, Rule};

/// Bytes of one value in `p`.
pub(super) fn value_bytes(p: Precision) -> u64 {
    match p {
        Precision::F32 => 4,
        Precision::F64 => 8,
    }
}

/// The access features, which this model cannot predict without (features saved before they
/// existed have none).
pub(super) fn access(f: &Features) -> Result<&crate::features::Access> {
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
pub(super) fn bytes(
    f: &Features,
    cfg: &KernelConfig,
    vb: u64,
    l2: f64,
    version: u32,
) -> Result<f64> {
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
pub(super) fn x_traffic(f: &Features, vb: u64, l2: f64) -> (f64, f64) {
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
pub(super) fn bsr_counts(
    f: &Features,
    v: Variant,
    version: u32,
) -> Option<crate::formats::bsr::BsrCount> {
    let b = f.access.as_ref()?.bsr?;
    (version >= 4 && matches!(v, Variant::Bsr) && b.warp_trips > 0).then_some(b)
}

/// The warp steps of `cfg`'s thread mapping (row-per-thread for the non-CSR kernels; BSR's
/// warp trips from version 4).
pub(super) fn steps(f: &Features, v: Variant, version: u32) -> f64 {
    if let Some(b) = bsr_counts(f, v, version) {
        return b.warp_trips as f64;
    }
    let a = f.access.as_ref().map_or([0; 6], |a| a.warp_steps);
    a[mapping(v)] as f64
}

/// The index in [`crate::features::access::THREADS_PER_ROW`] of `v`'s thread mapping (row per
/// thread for the non-CSR kernels, row per warp for the balanced ones).
pub(super) fn mapping(v: Variant) -> usize {
    match v {
        Variant::Csr { threads_per_row } => threads_per_row.max(1).trailing_zeros().min(5) as usize,
        Variant::Vendor(_) | Variant::CsrMerge | Variant::Coo => 5,
        _ => 0,
    }
}

/// The tail of `v`'s warp steps (version 6, [`crate::features::access::WarpHist::tail`]); zeros
/// where the features lack the histogram.
pub(super) fn warp_tail(f: &Features, v: Variant) -> [f64; 5] {
    f.access
        .as_ref()
        .and_then(|a| a.warp_hist.get(mapping(v)))
        .map_or([0.0; 5], |h| h.tail())
}

/// Dependent steps of the longest row under `v`'s thread mapping (0 for the balanced kernels;
/// BSR from version 4: the trips of its longest block row).
pub(super) fn chain(f: &Features, v: Variant, version: u32) -> f64 {
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
pub(super) const RESIDENT_WARPS: u32 = 132 * 64;

/// The longest chain of `cfg` (version 8: our SELL-C-σ's per [`sell_chain`], else [`chain`]).
pub(super) fn chain_of(f: &Features, cfg: &KernelConfig, version: u32) -> f64 {
    match (version >= 8 && cfg.variant == Variant::Sell)
        .then(|| sell_chain(f, &cfg.params.sell))
        .flatten()
    {
        Some(c) => c,
        None => chain(f, cfg.variant, version),
    }
}

/// The split rule our SELL-C-σ's chain is modelled under: the one versions 8–11 were fitted
/// under ([`Rule::SESSION_41`]), named here rather than the kernel's default so that a new
/// default moves no shipped profile's predictions.
const MODEL_SELL_RULE: Rule = Rule::SESSION_41;

/// The warp steps (the stored slots over 32: exact for C a multiple of 32 but for the last
/// slice's padding lanes) and lane groups of SELL-C-σ with these parameters; `None` where the
/// features lack the slot count of these parameters.
fn sell_work(f: &Features, p: &crate::formats::SellParams) -> Option<(u64, u64)> {
    let count = f
        .access
        .as_ref()?
        .sell
        .iter()
        .find(|s| s.c == p.c && s.sigma == p.sigma)?;
    Some((count.slots / 32, total_lane_groups(f.nrows, p.c)))
}

/// Our SELL-C-σ kernel's longest chain (version 8): it splits every slice wider than
/// [`crate::backend::cuda::sell_split::threshold`] over warps, so no warp walks more steps than
/// that; the longest row where it is shorter. `None` where the features lack the slot count of
/// these parameters ([`sell_work`]). The rule is [`MODEL_SELL_RULE`].
pub(super) fn sell_chain(f: &Features, p: &crate::formats::SellParams) -> Option<f64> {
    let (work, groups) = sell_work(f, p)?;
    let (_, split_above) = threshold(work, groups, RESIDENT_WARPS, MODEL_SELL_RULE);
    Some((f.max_nnz as f64).min(split_above as f64))
}

/// Whether a SELL time a table stores under the split rule `stored` (from its
/// [`crate::corpus::table::ConfigTime::kernel`]; `None`: a rule this build cannot read) was
/// timed with the split [`sell_chain`] reads ([`MODEL_SELL_RULE`]) for these features and
/// parameters: a time under another rule that splits the matrix otherwise (an experiment's
/// `SPARSECAST_SELL_SPLIT`) is another kernel's. Without the slot count the rules can only be
/// told alike where they are equal.
pub(super) fn sell_timed_as_modelled(
    f: &Features,
    p: &crate::formats::SellParams,
    stored: Option<Rule>,
) -> bool {
    match stored {
        None => false,
        Some(r) if r == MODEL_SELL_RULE => true,
        Some(r) => sell_work(f, p).is_some_and(|(work, groups)| {
            let widest = f.max_nnz.min(u32::MAX as usize) as u32;
            same_split(work, groups, widest, RESIDENT_WARPS, r, MODEL_SELL_RULE)
        }),
    }
}

/// The mixture of row lengths, from the log2 histogram of the features (version 5): the share
/// of the entries in rows of at least 4, 32, 256 and 4,096 entries (a row of bucket `k ≥ 1`,
/// lengths `[2^(k−1), 2^k)`, counted as `0.75 · 2^k` entries), the occupied buckets, and the share
/// of the rows in the longest bucket. A stack of parts of different row lengths (where every
/// configuration's held-out error is widest, docs/ACCURACY.md session 30) has entries in several
/// far-apart buckets, which the mean, deviation and longest row alone do not tell apart.
pub(super) fn row_mix(f: &Features) -> [f64; 6] {
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
pub(super) fn features(
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
    if version >= 10 {
        x.extend(long_row_locality(a, vb));
    }
    if version >= 11 {
        x.extend(vendor_sell_width(f));
    }
    if version >= 12 {
        x.extend(hyb_parts(f, cfg));
    }
    if version >= 13 {
        x.extend(hyb_merged(f, cfg, vb));
    }
    Ok((x, base, b))
}

/// HYB's two parts as its trees see them (version 12; zeros for every other configuration):
/// `[ln(1 + COO entries), their share of the entries, ln(1 + rows with a COO part),
/// ln(1 + COO entries per such row), ln(1 + ELL width)]`. HYB runs its ELL part and then, where
/// some row is longer than the width, a second kernel over the rest ([`crate::formats::hyb`];
/// under the programmatic launch the two overlap): a fixed cost the single-kernel base lacks,
/// and a COO kernel whose atomics are one per row segment of a warp's interval. On seed 40's
/// shipped predictions (session 89) HYB with a COO part of ≥ 10 % of the entries was within
/// 10 % on 76 % at 5–20 µs, against 84–97 % without one or with every entry in it; the H200's
/// version-12 refit lifted HYB within 10 % by 1.8–3.2 points on the unseen seeds 14, 40 and 41
/// (docs/ACCURACY.md, session 89). At the features' own width ([`Features::hyb_width`]) the
/// COO entries are the exact [`Features::hyb_coo_nnz`]; at another fixed width they, and at
/// every width the rows with a COO part, are estimated from the log2 row-length histogram
/// ([`rows_beyond`]).
pub(super) fn hyb_parts(f: &Features, cfg: &KernelConfig) -> [f64; 5] {
    if cfg.variant != Variant::Hyb {
        return [0.0; 5];
    }
    let width = cfg.params.hyb.width.unwrap_or(f.hyb_width) as f64;
    let (rows, entries) = rows_beyond(&f.row_len_log2_hist, width);
    let entries = match cfg.params.hyb.width {
        Some(w) if w != f.hyb_width => entries,
        _ => f.hyb_coo_nnz as f64,
    };
    let l = |x: f64| x.max(0.0).ln_1p();
    [
        l(entries),
        entries / f.nnz.max(1) as f64,
        l(rows),
        l(entries / rows.max(1.0)),
        l(width),
    ]
}

/// Whether HYB's COO part runs the block-merged walk under the merged sequence, as HYB's trees
/// see it (version 13; zeros for every other configuration and at another fixed width):
/// `[1 where the features' carries onto one line of y reach the launcher's cut, ln(1 + those
/// carries) there]` ([`crate::features::Access::hyb_line_carries`],
/// [`crate::backend::cuda::launch::MERGE_FROM`]). Features without the count are taken as below
/// it (a fit keeps no programmatic HYB time where the count may reach it,
/// `keep_hyb_times_as_modelled`). Measured on the H200 (session 92, seed 41's 313 candidates):
/// merged HYB 0.38–1.17× the programmatic one's time, geomean 0.84 / 0.88 (f32 / f64).
pub(super) fn hyb_merged(f: &Features, cfg: &KernelConfig, vb: u64) -> [f64; 2] {
    let at_own_width = cfg.params.hyb.width.map_or(true, |w| w == f.hyb_width);
    let carries = f
        .access
        .as_ref()
        .and_then(|a| a.hyb_line_carries)
        .map_or(0, |c| c[usize::from(vb == 8)]);
    if cfg.variant != Variant::Hyb
        || !at_own_width
        || carries < crate::backend::cuda::launch::MERGE_FROM
    {
        return [0.0; 2];
    }
    [1.0, (carries as f64).ln_1p()]
}

/// The rows longer than `width` and their entries beyond it, from the log2 histogram of row
/// lengths (bucket `k ≥ 1` holds the lengths `[2^(k−1), 2^k)`): a bucket above the width counts
/// whole, the one it falls in by the share of its lengths above it, each row at its bucket's
/// middle length (the choice: the features keep no finer count of the rows).
pub(super) fn rows_beyond(hist: &[usize], width: f64) -> (f64, f64) {
    let (mut rows, mut entries) = (0.0, 0.0);
    for (k, &n) in hist.iter().enumerate().skip(1) {
        let lo = (1u64 << (k - 1).min(62)) as f64;
        let hi = 2.0 * lo;
        if n == 0 || hi - 1.0 <= width {
            continue;
        }
        let from = width.max(lo - 1.0);
        let share = (hi - 1.0 - from) / (hi - lo);
        let mid = (from + 1.0 + hi - 1.0) / 2.0;
        rows += n as f64 * share.min(1.0);
        entries += n as f64 * share.min(1.0) * (mid - width);
    }
    (rows, entries)
}

/// How cuSPARSE's sliced ELL walks its slices (version 11), measured on the H200 (session 74,
/// `docs/PERFORMANCE.md`): random matrices of constant row length `k`, 400,000 rows or 400,003,
/// ran as if every slice were `k` rounded up to a multiple of `g` entries wherever `k > g` — with
/// `g = 8` when the row count is a multiple of 8 and `g = 16` otherwise (`k = 9`: 44 µs with
/// 400,000 rows, the time of `k = 16`, and 28 µs with 400,003; `k = 17`: 68 and 85 µs, the times
/// of 24 and 32). Our kernels show no such step (`sell` 27 / 27 µs). On the family-CV records of
/// session 73's refit, `cusparse-sell` alone was off on the matrices whose row count is a
/// multiple of 8 (median −12 % against +3.9 %, within 10 % 40 % against 71 %; stacks of ≥ 50 µs
/// −35 %); every other configuration within ±0.5 %. The trees get `[1 if rows % 8 == 0 else 0,
/// ln(walked / stored steps)]` of the row-per-thread warps ([`crate::features::access::WarpHist`]
/// of mapping 0, a warp being a 32-row slice of cuSPARSE's unsorted SELL): exact for rows of one
/// length; otherwise each bucket's warps are taken at their mean width, a bucket `[g, 2g)` as
/// widths of `g` (kept) and above (rounded to `2g`) in the share the mean implies, and a wider
/// bucket at its mean plus the rounding's mean `(g − 1) / 2`. Choice: the rule is read from
/// one sweep and the table, not from cuSPARSE's source (closed); the flag lets the trees learn
/// what the width ratio misses.
pub(super) fn vendor_sell_width(f: &Features) -> [f64; 2] {
    let aligned = f.nrows % 8 == 0;
    let flag = if aligned { 1.0 } else { 0.0 };
    let granule: u64 = if aligned { 8 } else { 16 };
    let g = granule as f64;
    let Some(h) = f.access.as_ref().and_then(|a| a.warp_hist.first()) else {
        return [flag, 0.0];
    };
    let constant = f.min_nnz == f.max_nnz;
    let round = |w: f64| if w <= g { w } else { (w / g).ceil() * g };
    // The bucket of widths [g, 2g): g is a power of two, so no bucket straddles it.
    let from_g = crate::features::access::warp_bucket(granule);
    let (mut stored, mut walked) = (0.0, 0.0);
    for (k, (&w, &s)) in h.warps.iter().zip(&h.steps).enumerate() {
        if w == 0 {
            continue;
        }
        let (w, s) = (w as f64, s as f64);
        let mean = s / w;
        let per_warp = if constant || mean <= g {
            round(mean)
        } else if k == from_g {
            (g + g * (mean - g)).min(2.0 * g)
        } else {
            mean + (g - 1.0) / 2.0
        };
        stored += s;
        walked += per_warp * w;
    }
    let ratio = if stored > 0.0 { walked / stored } else { 1.0 };
    [flag, ratio.max(1.0).ln()]
}

/// The locality of the longest rows' gathers for values of `vb` bytes (version 10), from
/// [`crate::features::access::RowLenSectors`]: `ln` of the sectors per entry of the rows of the
/// top length bucket (within 2× of the longest), and `ln` of it and of the top four buckets'
/// (within 16×) over the whole matrix's. On seed 14's stacks (session 71) the second correlated
/// −0.24 with the shipped model's `csr-scalar` error and −0.43 with `jad`'s: a scattered long
/// row under banded short ones makes every step of the chain a fresh gather. Zeros without the
/// count.
pub(super) fn long_row_locality(a: &crate::features::Access, vb: u64) -> [f64; 3] {
    let h = &a.row_len_sectors;
    match (h.per_entry(vb, 1), h.per_entry(vb, 4)) {
        (Some((top, all)), Some((top4, _))) => {
            let (top, all, top4) = (top.ln(), all.ln(), top4.ln());
            [top, top - all, top4 - all]
        }
        _ => [0.0; 3],
    }
}

/// `ln` of the mean lane-alignment degree of the row-per-thread warps' steps for elements of
/// `bytes` (4 or 8) bytes: [`crate::features::Access::align_steps`] over
/// [`crate::features::Access::warp_steps`]`[0]`, 0 (degree 1) for features without the count.
pub(super) fn align_degree(a: &crate::features::Access, bytes: u64) -> f64 {
    let steps = a.warp_steps[0].max(1);
    let align = a.align_steps[usize::from(bytes == 8)].max(steps);
    (align as f64 / steps as f64).ln()
}
