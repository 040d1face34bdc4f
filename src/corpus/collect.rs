//! `collect`: measure every configuration of every corpus matrix in f32 and f64 and append one
//! [`TableRow`] per matrix × precision to a JSON Lines table.
//!
//! Resumable: rows already in the table are not measured again (a run cut by a time limit
//! continues where it stopped; a last line cut mid-write is dropped). Every configuration goes
//! through the one measurement path of the tool ([`measure_kernel`]: conversion, upload,
//! correctness check against the f64 reference, then the timing protocol), so a kernel that
//! computes a wrong result is recorded as `mismatch`, never as a time.
//!
//! The default protocol is shorter than `evaluate`'s (2 ms warm-up, 10 batches of 0.2 ms): the
//! GPU runs back to back without pauses, so its clocks stay up between configurations, and the
//! corpus is thousands of matrices. Its agreement with `evaluate`'s protocol on the same matrices
//! is measured in docs/ACCURACY.md.

use super::draw::{Build, Item};
use super::table::{self, ConfigTime, TableRow, TABLE_SCHEMA};
use crate::backend::cuda::launch::HybLaunch;
use crate::backend::measure::{measure_kernel, KernelMeasurement, Reference, Status};
use crate::backend::{BackendKind, KernelConfig, TimingProtocol, Variant};
use crate::evaluate::record::SourceInfo;
use crate::evaluate::run::{random_vector, EvalScalar, Runner};
use crate::features::Features;
use crate::{Csr, Error, Precision, Result};
use rayon::prelude::*;
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What to measure and how.
#[derive(Clone, Debug)]
pub struct CollectOptions {
    /// Where to run.
    pub backend: BackendKind,
    /// The table (JSON Lines, appended).
    pub out: PathBuf,
    /// Precisions, in order.
    pub precisions: Vec<Precision>,
    /// Timing protocol of every configuration.
    pub protocol: TimingProtocol,
    /// The configurations ([`configurations`]).
    pub configs: Vec<KernelConfig>,
    /// Seed of x.
    pub seed: u64,
    /// Stop (cleanly, between matrices) after this many seconds.
    pub budget_s: Option<f64>,
    /// Measure on a green-context partition of this many SMs (CUDA).
    pub sms: Option<u32>,
    /// Record as skipped, without converting, a configuration of ours whose arrays would take
    /// more than this many times the CSR arrays' bytes ([`too_big`]); `None` measures all.
    pub max_blowup: Option<f64>,
    /// Convert and upload each format once per matrix and precision and let its kernels share
    /// the arrays ([`crate::backend::Backend::share_arrays`]; configurations are measured
    /// grouped by conversion, [`measuring_order`]). Only with one memory placement: further
    /// placements want arrays of their own.
    pub share_arrays: bool,
    /// HYB's launch sequence to time (CUDA, sm_90 and later; `SPARSECAST_PDL` overrides it);
    /// `None`: the one the embedded profile of the device models
    /// ([`crate::profile::Profile::embedded_hyb_launch`]), so that a new table trains the model
    /// that device ships. The rows say which ([`ConfigTime::kernel`]).
    pub hyb_launch: Option<HybLaunch>,
}

/// `collect`'s default timing protocol (its `--runs`, `--warmup-ms`, `--batch-ms`,
/// `--placements`, `--slow-ms` and `--far-factor` defaults): what the training tables and the
/// calibration matrices of `instrument --cross-from` are measured with.
pub fn corpus_protocol() -> TimingProtocol {
    TimingProtocol {
        mode: crate::backend::TimingMode::Batched,
        runs: 10,
        warmup: 0,
        warmup_ms: 2.0,
        batch_ms: 0.2,
        cold: false,
        placements: 1,
        slow_s: Some(1e-3),
        far_factor: Some(10.0),
        fastest_s: None,
    }
}

/// The order `configs` are measured in: grouped by conversion
/// ([`crate::backend::conversion_order`]); the table keeps the given order.
pub fn measuring_order(configs: &[KernelConfig]) -> Vec<usize> {
    let pairs: Vec<_> = configs.iter().map(|c| (c.variant, &c.params)).collect();
    crate::backend::conversion_order(&pairs)
}

/// Why `collect` does not measure `cfg` on `a`: one of our formats whose footprint would exceed
/// `max_blowup` × the CSR footprint (ELL padded to one long row: 10–20 GB to convert, upload and
/// time where the CSR holds 40 MB). On the committed tables every configuration over 16× ran
/// ≥ 3.8× slower than the matrix's best one, so no ranking loses a contender; cuSPARSE
/// algorithms (the baseline a pick is judged against) are always measured.
pub fn too_big<T: crate::Scalar>(
    a: &Csr<T>,
    cfg: &KernelConfig,
    max_blowup: f64,
) -> Option<String> {
    let s = crate::formats::Summary::for_format(a, cfg.variant.format(), &cfg.params);
    too_big_for(&s, cfg, T::BYTES as u64, max_blowup)
}

/// Whether `cfg` is one of ours whose footprint on the matrix summarized by `s` (with its count
/// for `cfg`'s format) would exceed `max_blowup` × the CSR footprint, values of `value_bytes`
/// bytes ([`too_big`]).
fn too_big_for(
    s: &crate::formats::Summary,
    cfg: &KernelConfig,
    value_bytes: u64,
    max_blowup: f64,
) -> Option<String> {
    use crate::formats::FormatKind;
    if !judged_by_footprint(cfg) {
        return None;
    }
    let kind = cfg.variant.format();
    let bytes = kind.footprint(s, &cfg.params, value_bytes).ok()?;
    let csr = FormatKind::Csr
        .footprint(s, &cfg.params, value_bytes)
        .ok()?
        .max(1);
    let ratio = bytes as f64 / csr as f64;
    (ratio > max_blowup).then(|| {
        format!(
            "not measured by collect: {} bytes, {ratio:.0}× the CSR arrays (over --max-blowup {max_blowup})",
            bytes
        )
    })
}

/// Whether `--max-blowup` applies to `cfg`: one of our formats other than CSR.
fn judged_by_footprint(cfg: &KernelConfig) -> bool {
    !cfg.variant.is_vendor() && cfg.variant.format() != crate::formats::FormatKind::Csr
}

/// The summary, with its count, of every format and parameter set among `configs` that
/// `--max-blowup` judges: a pass over the entries each (ELL-BRO's bit widths, BSR's blocks,
/// SELL-C-σ's slices), the same in both precisions, so made once per matrix with the matrix.
fn blowup_summaries<T: crate::Scalar>(a: &Csr<T>, configs: &[KernelConfig]) -> Vec<Judged> {
    let mut out: Vec<Judged> = Vec::new();
    for cfg in configs.iter().filter(|c| judged_by_footprint(c)) {
        let kind = cfg.variant.format();
        if !out.iter().any(|(k, p, _)| *k == kind && *p == cfg.params) {
            let s = crate::formats::Summary::for_format(a, kind, &cfg.params);
            out.push((kind, cfg.params.clone(), s));
        }
    }
    out
}

/// A format, its parameters and the matrix's summary with that format's count.
type Judged = (
    crate::formats::FormatKind,
    crate::formats::FormatParams,
    crate::formats::Summary,
);

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CollectOutcome {
    /// Rows found in the table at the start.
    pub resumed: usize,
    /// Rows written.
    pub written: usize,
    /// Matrices that could not be built, with the reason.
    pub failed: Vec<(String, String)>,
    /// Matrices left for a later run (time budget).
    pub left: usize,
}

/// The configurations of a corpus: every kernel the backend runs (cuSPARSE on CUDA) at the
/// default block size, SELL-C-σ with Lehnert et al.'s C = 512, σ = 2048, and the kernels of
/// `block_kernels` again at each of `block_sizes`.
pub fn configurations(
    variants: &[Variant],
    block_kernels: &[Variant],
    block_sizes: &[u32],
) -> Vec<KernelConfig> {
    let mut out: Vec<KernelConfig> = variants.iter().map(|&v| KernelConfig::new(v)).collect();
    if variants.contains(&Variant::Sell) {
        let mut k = KernelConfig::new(Variant::Sell);
        k.params.sell = crate::features::access::sell_params_counted()[1].clone();
        out.push(k);
    }
    for &b in block_sizes {
        for &v in block_kernels {
            if b != KernelConfig::DEFAULT_BLOCK_SIZE && variants.contains(&v) && !v.is_vendor() {
                let mut k = KernelConfig::new(v);
                k.block_size = b;
                out.push(k);
            }
        }
    }
    out
}

/// The rows of a table being resumed: what it holds, with a last line cut mid-write removed from
/// the file.
fn resume(path: &Path) -> Result<HashSet<(String, Precision)>> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Ok(HashSet::new());
    };
    let mut done = HashSet::new();
    let mut good_len = 0usize;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    for (i, l) in lines.iter().enumerate() {
        if l.trim().is_empty() {
            good_len += l.len();
            continue;
        }
        match serde_json::from_str::<TableRow>(l) {
            Ok(r) => {
                done.insert((r.matrix, r.precision));
                good_len += l.len();
            }
            Err(e) if i + 1 == lines.len() => {
                eprintln!(
                    "{}: dropping the last line, cut before it was complete ({e})",
                    path.display()
                );
            }
            Err(e) => {
                return Err(Error::Invalid(format!(
                    "{}:{}: not a training-table row: {e}",
                    path.display(),
                    i + 1
                )))
            }
        }
    }
    if good_len < text.len() {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| Error::io(path, e))?;
        f.set_len(good_len as u64).map_err(|e| Error::io(path, e))?;
    }
    Ok(done)
}

/// The first line of an error message, at most 160 characters.
fn short(reason: &str) -> String {
    reason
        .lines()
        .next()
        .unwrap_or("")
        .chars()
        .take(160)
        .collect()
}

/// One precision of a matrix made ready on the host: the matrix in that precision, its x, the
/// f64 reference of both, and the features.
struct Side<T: EvalScalar> {
    a: Csr<T>,
    x: Vec<T>,
    reference: Reference,
    features: Features,
}

impl<T: EvalScalar> Side<T> {
    fn new(a: Csr<T>, features: Features, seed: u64) -> Self {
        let started = std::time::Instant::now();
        let x: Vec<T> = random_vector(a.ncols, seed);
        let reference = Reference::new(&a, &x);
        crate::util::trace(|| "reference".into(), started);
        Side {
            a,
            x,
            reference,
            features,
        }
    }
}

/// A matrix made ready on the host for the precisions it still needs.
struct Ready {
    source: SourceInfo,
    /// Seconds to build it, its features, its `--max-blowup` summaries and its references.
    build_s: f64,
    /// The summaries `--max-blowup` judges the configurations by ([`blowup_summaries`]).
    judged: Vec<Judged>,
    f64: Option<Side<f64>>,
    f32: Option<Side<f32>>,
}

/// Build `item` and everything the host computes before its kernels are measured.
fn make_ready(item: &Item, todo: &[Precision], opts: &CollectOptions) -> Result<Ready> {
    let seed = opts.seed;
    let built = std::time::Instant::now();
    let (a, spec) = item.build.build(crate::formats::default_max_bytes())?;
    crate::util::trace(|| "build".into(), built);
    let source = match (&item.build, spec) {
        (_, Some(s)) => SourceInfo::Generated(s),
        (Build::File(p), None) => SourceInfo::File(p.clone()),
        (_, None) => SourceInfo::Recipe(item.id.clone()),
    };
    // The features are the same in both precisions but for the non-finite values (an f64
    // beyond f32's range is infinite in f32): one pass over the matrix, not two.
    let started = std::time::Instant::now();
    let features = Features::compute(&a);
    crate::util::trace(|| "features".into(), started);
    let started = std::time::Instant::now();
    let judged = match opts.max_blowup {
        Some(_) => blowup_summaries(&a, &opts.configs),
        None => Vec::new(),
    };
    crate::util::trace(|| "summaries".into(), started);
    let f32 = todo.contains(&Precision::F32).then(|| {
        let a32 = a.cast::<f32>();
        let mut f = features.clone();
        f.nonfinite = a32.values.par_iter().filter(|v| !v.is_finite()).count();
        Side::new(a32, f, seed)
    });
    let f64 = todo
        .contains(&Precision::F64)
        .then(|| Side::new(a, features, seed));
    Ok(Ready {
        source,
        build_s: built.elapsed().as_secs_f64(),
        judged,
        f64,
        f32,
    })
}

/// Measure `items` into the table; `on_item` is called after each matrix (progress).
///
/// The host makes the next matrix ready (builds it, computes its features, the summaries
/// `--max-blowup` judges by, and its references) on a second thread while the device measures
/// the current one: on matrices of 10⁷–10⁸ entries that host work is a fifth of the time
/// (docs/ACCURACY.md, session 22). At most one matrix waits ready.
pub fn collect(
    opts: &CollectOptions,
    items: &[Item],
    mut on_item: impl FnMut(&Item, &str),
) -> Result<CollectOutcome> {
    let done = resume(&opts.out)?;
    let runner = Runner::open(opts.backend, opts.sms)?;
    let device = <f64 as EvalScalar>::backend(&runner).device_name();
    if opts.backend == BackendKind::Cuda {
        let wanted = match opts.hyb_launch {
            Some(l) => l,
            None => crate::profile::Profile::embedded_hyb_launch(&device)?,
        };
        // One backend serves both precisions.
        <f64 as EvalScalar>::backend(&runner).follow_hyb_launch(wanted);
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&opts.out)
        .map_err(|e| Error::io(&opts.out, e))?;
    let mut out = CollectOutcome {
        resumed: done.len(),
        ..Default::default()
    };
    let todo_of = |item: &Item| -> Vec<Precision> {
        opts.precisions
            .iter()
            .copied()
            .filter(|p| !done.contains(&(item.id.clone(), *p)))
            .collect()
    };
    let start = std::time::Instant::now();
    std::thread::scope(|scope| -> Result<()> {
        // Rendezvous: the maker builds the next matrix, then waits until it is taken.
        let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Option<Result<Ready>>)>(0);
        scope.spawn(move || {
            for (n, item) in items.iter().enumerate() {
                let todo = todo_of(item);
                let ready = (!todo.is_empty()).then(|| make_ready(item, &todo, opts));
                if tx.send((n, ready)).is_err() {
                    return;
                }
            }
        });
        for (n, ready) in rx.iter() {
            let item = &items[n];
            let Some(ready) = ready else {
                on_item(item, "done before");
                continue;
            };
            if opts
                .budget_s
                .is_some_and(|b| start.elapsed().as_secs_f64() > b)
            {
                out.left = items.len() - n;
                break;
            }
            let ready = match ready {
                Ok(r) => r,
                Err(e) => {
                    out.failed.push((item.id.clone(), e.to_string()));
                    on_item(item, "cannot build");
                    continue;
                }
            };
            for p in todo_of(item) {
                let row = match p {
                    Precision::F64 => ready
                        .f64
                        .as_ref()
                        .map(|s| measure_row(opts, &runner, item, &ready, &device, s)),
                    Precision::F32 => ready
                        .f32
                        .as_ref()
                        .map(|s| measure_row(opts, &runner, item, &ready, &device, s)),
                };
                let Some(row) = row else { continue };
                file.write_all(table::line(&row)?.as_bytes())
                    .and_then(|()| file.flush())
                    .map_err(|e| Error::io(&opts.out, e))?;
                out.written += 1;
            }
            on_item(item, "measured");
        }
        Ok(())
    })?;
    Ok(out)
}

/// Every configuration of one matrix in precision `T`, with what building and measuring cost.
fn measure_row<T: EvalScalar>(
    opts: &CollectOptions,
    runner: &Runner,
    item: &Item,
    ready: &Ready,
    device: &str,
    side: &Side<T>,
) -> TableRow {
    let measured = std::time::Instant::now();
    let backend = T::backend(runner);
    let (a, x, reference) = (&side.a, &side.x, &side.reference);
    let share = opts.share_arrays && opts.protocol.placements == 1;
    backend.share_arrays(share);
    let order = if share {
        measuring_order(&opts.configs)
    } else {
        (0..opts.configs.len()).collect()
    };
    // The fastest configuration measured so far on this matrix (timing protocol step 8).
    let mut fastest: Option<f64> = None;
    let mut times: Vec<(usize, ConfigTime)> = order
        .into_iter()
        .map(|i| {
            let cfg = &opts.configs[i];
            let kind = cfg.variant.format();
            let skip = opts.max_blowup.and_then(|b| {
                let (.., s) = ready
                    .judged
                    .iter()
                    .find(|(k, p, _)| *k == kind && *p == cfg.params)?;
                too_big_for(s, cfg, T::BYTES as u64, b)
            });
            let m = match skip {
                Some(why) => KernelMeasurement::skipped(why),
                None => {
                    let protocol = opts.protocol.with_fastest(fastest);
                    let started = std::time::Instant::now();
                    let m = measure_kernel(backend, a, x, reference, cfg, &protocol);
                    crate::util::trace(|| "whole measurement".into(), started);
                    m
                }
            };
            let ok = m.status == Status::Ok;
            if let Some(t) = m.median_s.filter(|_| ok) {
                fastest = Some(fastest.map_or(t, |f: f64| f.min(t)));
            }
            let t = ConfigTime {
                config: cfg.label(),
                status: m.status,
                median_s: m.median_s.filter(|_| ok),
                warm_mean_s: m.warm_mean_s.filter(|_| ok),
                spread: m.spread.filter(|_| ok),
                footprint_bytes: m.footprint_bytes,
                reason: m.reason.as_deref().map(short),
                kernel: kernel_revision(opts.backend, cfg, backend.hyb_launch()),
            };
            (i, t)
        })
        .collect();
    backend.share_arrays(false);
    times.sort_by_key(|(i, _)| *i);
    let times = times.into_iter().map(|(_, t)| t).collect();
    TableRow {
        schema: TABLE_SCHEMA,
        matrix: item.id.clone(),
        family: item.family.clone(),
        source: ready.source.clone(),
        precision: T::PRECISION,
        backend: opts.backend.name().to_string(),
        device: device.to_string(),
        protocol: opts.protocol.clone(),
        features: side.features.clone(),
        times,
        cost: Some(table::RowCost {
            build_s: ready.build_s,
            measure_s: measured.elapsed().as_secs_f64(),
        }),
    }
}

/// What a table stores as the revision of `cfg`'s kernel ([`ConfigTime::kernel`]): the split
/// rule of our SELL-C-σ on CUDA (as the kernel reads it, `SPARSECAST_SELL_SPLIT` included),
/// [`HYB_PDL_REVISION`](crate::backend::cuda::launch::HYB_PDL_REVISION) for HYB run as `hyb`
/// says ([`Backend::hyb_launch`]), none for every other configuration.
fn kernel_revision(backend: BackendKind, cfg: &KernelConfig, hyb: HybLaunch) -> Option<String> {
    use crate::backend::cuda::sell_split::Rule;
    if backend != BackendKind::Cuda {
        return None;
    }
    match cfg.variant {
        Variant::Sell => Rule::from_env().ok().map(|r| r.label()),
        Variant::Hyb => hyb.revision().map(String::from),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::VendorAlg;

    #[test]
    fn configurations_are_measured_grouped_by_conversion() {
        let configs = configurations(
            &[
                Variant::Csr { threads_per_row: 1 },
                Variant::Coo,
                Variant::Vendor(VendorAlg::CsrAlg1),
                Variant::Sell,
                Variant::Vendor(VendorAlg::CooAlg1),
                Variant::Vendor(VendorAlg::SellAlg1),
            ],
            &[
                Variant::Csr { threads_per_row: 1 },
                Variant::Coo,
                Variant::Sell,
            ],
            &[64, 256],
        );
        let labels: Vec<String> = measuring_order(&configs)
            .into_iter()
            .map(|i| configs[i].label())
            .collect();
        let pos = |l: &str| labels.iter().position(|x| x == l).unwrap_or(usize::MAX);
        // Every configuration once.
        let mut sorted = labels.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), configs.len(), "{labels:?}");
        // CSR at both block sizes, then cuSPARSE's CSR; COO likewise; SELL with its own C, σ
        // apart from the default SELL.
        let csr: Vec<usize> = labels
            .iter()
            .enumerate()
            .filter(|(_, l)| l.starts_with("csr") || l.contains("cusparse-csr"))
            .map(|(i, _)| i)
            .collect();
        assert_eq!(csr, (0..csr.len()).collect::<Vec<_>>(), "{labels:?}");
        let coo = labels.iter().position(|l| l.starts_with("coo")).unwrap();
        assert_eq!(labels[coo..coo + 2], ["coo", "coo@64"], "{labels:?}");
        assert_eq!(pos("cusparse-coo-alg1"), coo + 2, "{labels:?}");
        assert_eq!(pos("sell@64"), pos("sell") + 1, "{labels:?}");
    }

    #[test]
    fn padded_formats_over_the_blowup_are_not_measured() {
        // 1,000 rows of 2 entries and one row of 1,000: ELL pads every row to 1,000.
        let mut rows = Vec::new();
        let mut cols = Vec::new();
        for i in 0..1000u32 {
            rows.extend([i, i]);
            cols.extend([i, (i + 1) % 1000]);
        }
        rows.extend(std::iter::repeat_n(1000u32, 1000));
        cols.extend(0..1000u32);
        let vals = vec![1.0f64; rows.len()];
        let a = Csr::from_triplets(1001, 1000, &rows, &cols, &vals).unwrap();
        let ell = KernelConfig::new(Variant::Ell);
        let why = too_big(&a, &ell, 16.0).expect("ELL is ~330× the CSR here");
        assert!(why.contains("--max-blowup 16"), "{why}");
        assert!(too_big(&a, &ell, 1000.0).is_none());
        // The summaries made once per matrix judge both precisions as the matrix itself does:
        // one per format and parameter set (ELL at two block sizes is one), none for CSR.
        let mut ell64 = ell.clone();
        ell64.block_size = 64;
        let configs = [
            ell.clone(),
            ell64,
            KernelConfig::new(Variant::Csr { threads_per_row: 1 }),
            KernelConfig::new(Variant::EllBro),
        ];
        let judged = blowup_summaries(&a, &configs);
        assert_eq!(judged.len(), 2);
        let a32 = a.cast::<f32>();
        for cfg in &configs {
            for max in [1.5, 16.0, 1000.0] {
                let s = judged
                    .iter()
                    .find(|(k, p, _)| *k == cfg.variant.format() && *p == cfg.params)
                    .map(|(.., s)| s);
                let by_summary = |vb| s.and_then(|s| too_big_for(s, cfg, vb, max));
                assert_eq!(by_summary(8), too_big(&a, cfg, max), "{cfg:?} {max}");
                assert_eq!(by_summary(4), too_big(&a32, cfg, max), "{cfg:?} {max}");
            }
        }
        // CSR and cuSPARSE are always measured; COO never pads (a row index more: 1.33×).
        for v in [
            Variant::Csr { threads_per_row: 1 },
            Variant::Vendor(VendorAlg::SellAlg1),
            Variant::Coo,
        ] {
            assert!(too_big(&a, &KernelConfig::new(v), 1.5).is_none(), "{v:?}");
        }
    }
}
