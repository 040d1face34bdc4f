//! Fitting the `sparsecast` model on training tables: the device parameters, each
//! configuration's step and trees, the reference of the relative corrections and the
//! uncertainty (steps 2–5 of the module doc of [`super`]).

use super::*;

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
pub(super) fn fit_step(set: &ConfigSet<'_>, d: &Device) -> f64 {
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

/// One training example of a configuration.
struct Example<'a> {
    /// The trees' features.
    x: &'a Vec<f64>,
    /// `ln(T/T₀)`.
    y: f64,
    /// The training row (its family, non-zeros and [`row_key`]).
    row: &'a TableRow,
    /// [`near_best_weight`].
    weight: f64,
}

/// The weight of a training example whose configuration ran in `e^ln_t` seconds on `row`:
/// `1 + extra` within `ratio`× of the row's fastest configuration, else 1 (the module doc,
/// [`NEAR_BEST_WEIGHT`]).
pub(super) fn near_best_weight(row: &TableRow, ln_t: f64, extra: f64, ratio: f64) -> f64 {
    match row.best() {
        Some((_, best)) if ln_t - best.ln() <= ratio.ln() => 1.0 + extra,
        _ => 1.0,
    }
}

/// Whether the trees weigh their examples ([`NEAR_BEST_WEIGHT`] is not 0).
const WEIGHTED: bool = NEAR_BEST_WEIGHT != 0.0;

/// The trees' inputs of `examples`: features (borrowed), targets and weights — `None` while
/// unweighted (forust-ml's unweighted fit, the same trees as before the weighting existed).
fn columns<'a>(
    examples: impl Iterator<Item = (&'a Example<'a>, f64)> + Clone,
) -> (Vec<&'a [f64]>, Vec<f64>, Option<Vec<f64>>) {
    let xs = examples.clone().map(|(e, _)| e.x.as_slice()).collect();
    let ys = examples.clone().map(|(_, y)| y).collect();
    let ws = WEIGHTED.then(|| examples.map(|(e, _)| e.weight).collect());
    (xs, ys, ws)
}

/// [`near_best_weight`] with [`NEAR_BEST_WEIGHT`] and [`NEAR_BEST_RATIO`]; 1 without looking
/// at the row while unweighted.
fn weight_of(row: &TableRow, ln_t: f64) -> f64 {
    match WEIGHTED {
        true => near_best_weight(row, ln_t, NEAR_BEST_WEIGHT, NEAR_BEST_RATIO),
        false => 1.0,
    }
}

/// The examples of one configuration as (features, ln(T/T₀)), aligned with `set.examples`
/// (`None` where the features fail).
pub(super) fn ex_rows(
    set: &ConfigSet<'_>,
    vb: u64,
    d: &Device,
    step_s: f64,
) -> Vec<Option<(Vec<f64>, f64)>> {
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
pub(super) fn fit_config(
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
        .filter_map(|((row, t), e)| {
            e.as_ref().map(|(x, y)| Example {
                x,
                y: *y,
                row,
                weight: weight_of(row, *t),
            })
        })
        .collect();
    if ex.len() < 2 {
        return Ok(None);
    }
    let what = format!("sparsecast of {}", set.label);
    let (xs, ys, ws) = columns(ex.iter().map(|e| (e, e.y)));
    let (base, trees) = gb::boost_weighted(&xs, &ys, ws.as_deref(), TREES, &what)?;
    let (mut rel_base, mut rel_trees) = (0.0, Vec::new());
    if let Some(refs) = reference {
        // The examples whose row has a reference, and their residual against it.
        let rel: Vec<(&Example, f64)> = ex
            .iter()
            .filter_map(|e| refs.get(&row_key(e.row)).map(|r| (e, e.y - r)))
            .collect();
        let (rx, ry, rw) = columns(rel.iter().copied());
        if rx.len() >= 2 {
            (rel_base, rel_trees) = gb::boost_weighted(&rx, &ry, rw.as_deref(), TREES, &what)?;
        }
    }
    // (|ln error|, non-zeros) of every held-out example of the inner folds.
    let mut errs: Vec<(f64, f64)> = Vec::new();
    for k in 0..inner {
        let (test, train): (Vec<&Example>, Vec<_>) = ex
            .iter()
            .partition(|e| dataset::fold_of(&e.row.family, inner) == k);
        if test.is_empty() || train.len() < 2 {
            continue;
        }
        let (txs, tys, tws) = columns(train.iter().map(|&e| (e, e.y)));
        let (b0, tr) = gb::boost_weighted(&txs, &tys, tws.as_deref(), TREES, &what)?;
        errs.extend(test.iter().map(|e| {
            let err = (b0 + gb::sum(&tr, e.x) - e.y).abs();
            (err, e.row.features.nnz as f64)
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
pub(super) fn sigmas(errs: &[(f64, f64)]) -> (f64, Vec<f64>) {
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
pub(super) fn row_key(row: &TableRow) -> usize {
    row as *const TableRow as usize
}

/// The reference of the relative corrections (see [`RELATIVE_SHARE`]): the mean residual
/// `ln(T / T₀)` of each training row over the configurations measured on at least 99 % of the
/// rows as many as the most measured one, and trees that predict it from the features of
/// [`REFERENCE_FEATURES`] (the most measured configuration where the table lacks it). `None`
/// without such rows.
#[allow(clippy::type_complexity)]
pub(super) fn fit_reference(
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
/// calibration matrices a target measures to transfer it ([`crate::learn::cross_own`]).
pub fn fit(rows: &[&TableRow], precision: Precision) -> Result<OwnModel> {
    let mut m = fit_with(rows, precision, INNER_FOLDS)?;
    let cal = crate::learn::cross_own::calibration_rows(rows, precision);
    m.calibration = (!cal.is_empty()).then_some(cal);
    Ok(m)
}

/// Rows of matrices with an entry whose features lack a count the version's inputs read
/// ([`crate::features::Access::row_len_sectors`], version 10): they would train with zeros there.
pub(super) fn rows_without_counts(rows: &[&TableRow]) -> usize {
    rows.iter()
        .filter(|r| !r.features.has_row_len_sectors())
        .count()
}

/// Say once per process (a cross-validation fits many times) that some training rows lack a
/// count ([`rows_without_counts`]), and how to add it.
fn warn_without_counts(rows: &[&TableRow]) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    let n = rows_without_counts(rows);
    if n > 0 {
        ONCE.call_once(|| {
            eprintln!(
                "warning: {n} of {} training rows have features from before version {VERSION} \
                 (no rows' x sectors by length): they train with zeros for those inputs; run \
                 `sparsecast refeature` on their tables first",
                rows.len()
            )
        });
    }
}

/// Leave out of our SELL-C-σ's examples the times a table stores under a split rule that splits
/// the matrix otherwise than the one the model's chain reads ([`sell_timed_as_modelled`]): an
/// experiment's table (`SPARSECAST_SELL_SPLIT`) trains no model of the shipped kernel.
pub(super) fn keep_sell_times_as_modelled(sets: &mut [ConfigSet<'_>]) {
    use crate::backend::cuda::sell_split::Rule;
    for set in sets
        .iter_mut()
        .filter(|s| s.config.variant == Variant::Sell)
    {
        let (label, p) = (&set.label, &set.config.params.sell);
        set.examples.retain(|(row, _)| {
            let stored = row.times.iter().find(|t| &t.config == label);
            let rule = Rule::of_label(stored.and_then(|t| t.kernel.as_deref()));
            sell_timed_as_modelled(&row.features, p, rule)
        });
    }
}

/// HYB's plain and programmatic times stand for each other from this time on (session 83): on
/// the H200's seeds 11–14 timed both ways, new / old was 0.995–1.007 (geomean by seed and
/// precision) for the matrices whose plain time is ≥ 20 µs, within the noise of two timings,
/// against 0.84–0.86 between 3 and 5 µs (docs/PERFORMANCE.md, session 82). So the tables were
/// re-timed under the programmatic sequence only below it (`scripts/pdl_retime_list.py`).
pub const HYB_SEQUENCES_AGREE_FROM_S: f64 = 20e-6;

/// Which launch sequence of HYB a fit models, and the examples of the other one it leaves out.
///
/// Where HYB has a COO part ([`crate::formats::hyb::has_coo_part`]) its two kernels run either
/// plainly one after the other or the second as the first's programmatic dependent
/// ([`HybLaunch`]), 0.4–0.8 µs apart below 10 µs. A model predicts one of them: the one most of
/// the training times below [`HYB_SEQUENCES_AGREE_FROM_S`] measured (ties: the plain one, which
/// every table before session 83 holds alone), the programmatic and merged ones counted as one
/// (the merged one's times at every length), and the merged one where any time measured it (its
/// tables re-timed where it merges). Its examples keep every time of that sequence,
/// the other's from [`HYB_SEQUENCES_AGREE_FROM_S`] on, and every time where HYB has no COO part
/// (one kernel either way); the rest are left out, so a table of the other sequence trains no
/// model of this one. Returns the sequence and how many examples were left out.
pub(super) fn keep_hyb_times_as_modelled(sets: &mut [ConfigSet<'_>]) -> (HybLaunch, usize) {
    let agree = HYB_SEQUENCES_AGREE_FROM_S.ln();
    // The sequence a HYB example was measured with, where it has a COO part (else `None`).
    fn sequence(label: &str, params: &FormatParams, row: &TableRow) -> Option<HybLaunch> {
        let stored = row.times.iter().find(|t| t.config == label);
        crate::formats::hyb::has_coo_part(&Summary::from_features(&row.features), params)
            .then(|| HybLaunch::of_revision(stored.and_then(|t| t.kernel.as_deref())))
    }
    let is_hyb = |s: &&mut ConfigSet<'_>| s.config.variant == Variant::Hyb;
    let (mut plain, mut programmatic, mut merged) = (0usize, 0usize, 0usize);
    for set in sets.iter_mut().filter(is_hyb) {
        for (row, t) in set.examples.iter() {
            match sequence(&set.label, &set.config.params, row) {
                Some(HybLaunch::Plain) if *t < agree => plain += 1,
                Some(HybLaunch::Programmatic) if *t < agree => programmatic += 1,
                // The merged walk differs at every length: any time of it counts.
                Some(HybLaunch::ProgrammaticMerged) => merged += 1,
                _ => {}
            }
        }
    }
    let modelled = if programmatic + merged <= plain {
        HybLaunch::Plain
    } else if merged > 0 {
        HybLaunch::ProgrammaticMerged
    } else {
        HybLaunch::Programmatic
    };
    // Under the merged sequence a programmatic time is the same kernel's wherever the launcher
    // does not merge: kept where the features show the COO part cannot reach the cut
    // (`hyb_may_reach`; the tables not yet re-timed merged keep their programmatic times there
    // and lose them where it may).
    let fits = |s: HybLaunch, row: &TableRow| {
        s == modelled
            || (modelled == HybLaunch::ProgrammaticMerged
                && s == HybLaunch::Programmatic
                && !crate::features::access::hyb_may_reach(
                    &row.features,
                    value_bytes(row.precision),
                    crate::backend::cuda::launch::MERGE_FROM,
                ))
    };
    let mut left_out = 0;
    for set in sets.iter_mut().filter(is_hyb) {
        let (label, params, before) = (&set.label, &set.config.params, set.examples.len());
        // The merged walk differs at every size (0.4–0.8× where it merges), so only the plain
        // and programmatic sequences agree from 20 µs on.
        set.examples
            .retain(|(row, ln_t)| match sequence(label, params, row) {
                None => true,
                Some(s) if fits(s, row) => true,
                Some(s) => *ln_t >= agree && !s.merges() && !modelled.merges(),
            });
        left_out += before - set.examples.len();
    }
    (modelled, left_out)
}

/// [`fit`] with `inner` folds for the uncertainty (0: no uncertainty, 5× faster; for
/// evaluations that only score the prediction).
pub fn fit_with(rows: &[&TableRow], precision: Precision, inner: usize) -> Result<OwnModel> {
    warn_without_counts(rows);
    let mut sets = dataset::per_config(rows, precision)?;
    keep_sell_times_as_modelled(&mut sets);
    let (hyb_launch, _) = keep_hyb_times_as_modelled(&mut sets);
    crate::learn::check_any("sparsecast", &sets, precision)?;
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
        hyb_launch,
    })
}
