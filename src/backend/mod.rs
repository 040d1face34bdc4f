//! Backends run SpMV kernels: the [`Backend`] trait (Ginkgo's executors are the model) with a CPU
//! implementation ([`cpu`]) and a CUDA implementation ([`cuda`]) behind the same interface.
//!
//! A *kernel variant* ([`Variant`]) names a storage format plus, where the format has one, its
//! thread mapping (CSR: threads per row or merge-path); vendor (cuSPARSE) algorithms are variants
//! of their own so every table shows ours beside the vendor's. A [`KernelConfig`] adds the
//! format parameters and the CUDA block size.

pub mod cpu;
pub mod cuda;
pub mod measure;
pub mod selftest;
pub mod timing;

use crate::formats::{FormatKind, FormatParams};
use crate::{Csr, Error, Result, Scalar};
use serde::{Deserialize, Serialize};

pub use timing::{Timing, TimingMode, TimingProtocol};

/// How the independent parts of one SpMV run: the blocks of a plan, which write disjoint rows of
/// y ([`crate::optimize::PreparedPlan`]). [`Backend::time_parts`] and [`Backend::enqueue_parts`]
/// execute parts this way; the optimizer's plan-time rule ([`crate::optimize::PlanRule`]) costs
/// a plan the way it runs.
///
/// * `serial`: one part after another, each waiting for the previous (on CUDA: one graph whose
///   nodes form a chain; every part drains its kernel's tail before the next starts);
/// * `concurrent`: every part may run at the same time (on CUDA: a fork/join graph, each part a
///   parallel branch between one root and one join, so the device overlaps their launches and
///   tails). The CPU backend runs the parts in order either way: each part's kernel already
///   spreads its rows over every core (rayon), so running parts side by side would only split
///   the same cores.
///
/// Files written before the mode existed read `serial`, which is what they ran.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum, Default,
)]
#[serde(rename_all = "lowercase")]
pub enum Overlap {
    /// One part after another.
    #[default]
    Serial,
    /// Every part at once (fork/join).
    Concurrent,
}

/// The execution mode plans get when none is asked for (`optimize --overlap`; a plan file
/// without one is `serial`), and so the optimizer's default cost
/// ([`crate::optimize::PlanRule::for_overlap`]). **The measured choice: `concurrent`** (session
/// 48, docs/OPTIMIZER.md). `optimize --tune` times the DP's plan in both modes; over the 21
/// heterogeneous DP plans of two blocks or more it timed in session 47 (H100 and H200, f32 and
/// f64), the fork/join graph ran faster on 20 (0.88–1.005× the serial time, median 0.94×),
/// every adopted plan among them by 4–11 %, and the concurrent rule's DP adopts the plans the
/// serial one does plus one that pays (H100 f64 stencil + long rows, 1.13–1.16× its best
/// single configuration concurrently). Serial was the default until then (sessions 8–9: concurrent
/// branches slowed µs matrices and a csr-merge branch stalled; both are handled by the
/// concurrent rule — 4 launch floors per branch keep plans off µs matrices, and csr-merge is
/// no concurrent block).
pub const DEFAULT_OVERLAP: Overlap = Overlap::Concurrent;

impl Overlap {
    /// `"serial"` or `"concurrent"`.
    pub fn name(self) -> &'static str {
        match self {
            Overlap::Serial => "serial",
            Overlap::Concurrent => "concurrent",
        }
    }

    /// The other mode.
    pub fn other(self) -> Overlap {
        match self {
            Overlap::Serial => Overlap::Concurrent,
            Overlap::Concurrent => Overlap::Serial,
        }
    }
}

impl std::fmt::Display for Overlap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One independent part of an SpMV: queues its launches without waiting (a plan's block).
pub type Part<'a> = Box<dyn FnMut() -> Result<()> + 'a>;

/// Queue every part once, in order.
pub fn enqueue_in_order(parts: &mut [Part<'_>]) -> Result<()> {
    parts.iter_mut().try_for_each(|p| p())
}

/// A cuSPARSE generic-SpMV algorithm, listed as a format of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum VendorAlg {
    /// `CUSPARSE_SPMV_CSR_ALG1` on CSR.
    CsrAlg1,
    /// `CUSPARSE_SPMV_CSR_ALG2` on CSR.
    CsrAlg2,
    /// `CUSPARSE_SPMV_COO_ALG1` on COO.
    CooAlg1,
    /// `CUSPARSE_SPMV_COO_ALG2` on COO.
    CooAlg2,
    /// `CUSPARSE_SPMV_SELL_ALG1` on sliced ELL.
    SellAlg1,
}

/// A kernel: a storage format and its thread mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Variant {
    /// CSR with `threads_per_row` ∈ {1, 2, 4, 8, 16, 32} consecutive threads per row
    /// (1 = Bell & Garland's scalar kernel, 32 = their vector kernel, one warp per row).
    Csr { threads_per_row: u32 },
    /// Load-balanced CSR (merge-path over rows and non-zeros).
    CsrMerge,
    /// COO, one thread per non-zero with a segmented reduction.
    Coo,
    /// ELL, one thread per row.
    Ell,
    /// HYB = ELL part + COO part.
    Hyb,
    /// Jagged diagonals, one thread per (permuted) row.
    Jad,
    /// SELL-C-σ, one thread per row of a slice.
    Sell,
    /// DIA, one thread per row.
    Dia,
    /// BSR, one warp per block row.
    Bsr,
    /// ELL-BRO, one thread per row decoding its bit-packed column deltas.
    EllBro,
    /// SEG-TILE, a thread block per column tile and group of rows, a warp per row segment.
    SegTile,
    /// A cuSPARSE algorithm.
    Vendor(VendorAlg),
}

impl Variant {
    /// All of our own kernels, in display order.
    pub fn ours() -> Vec<Variant> {
        let mut v: Vec<Variant> = [1, 2, 4, 8, 16, 32]
            .into_iter()
            .map(|t| Variant::Csr { threads_per_row: t })
            .collect();
        v.extend([
            Variant::CsrMerge,
            Variant::Coo,
            Variant::Ell,
            Variant::Hyb,
            Variant::Jad,
            Variant::Sell,
            Variant::Dia,
            Variant::Bsr,
            Variant::EllBro,
            Variant::SegTile,
        ]);
        v
    }

    /// The cuSPARSE variants.
    pub fn vendor() -> Vec<Variant> {
        [
            VendorAlg::CsrAlg1,
            VendorAlg::CsrAlg2,
            VendorAlg::CooAlg1,
            VendorAlg::CooAlg2,
            VendorAlg::SellAlg1,
        ]
        .into_iter()
        .map(Variant::Vendor)
        .collect()
    }

    /// The storage format the variant runs on.
    pub fn format(self) -> FormatKind {
        match self {
            Variant::Csr { .. } | Variant::CsrMerge => FormatKind::Csr,
            Variant::Coo => FormatKind::Coo,
            Variant::Ell => FormatKind::Ell,
            Variant::Hyb => FormatKind::Hyb,
            Variant::Jad => FormatKind::Jad,
            Variant::Sell => FormatKind::Sell,
            Variant::Dia => FormatKind::Dia,
            Variant::Bsr => FormatKind::Bsr,
            Variant::EllBro => FormatKind::EllBro,
            Variant::SegTile => FormatKind::SegTile,
            Variant::Vendor(VendorAlg::CsrAlg1 | VendorAlg::CsrAlg2) => FormatKind::Csr,
            Variant::Vendor(VendorAlg::CooAlg1 | VendorAlg::CooAlg2) => FormatKind::Coo,
            Variant::Vendor(VendorAlg::SellAlg1) => FormatKind::Sell,
        }
    }

    /// The parameters of the format this configuration is stored in, from `params`: cuSPARSE's
    /// sliced ELL has no row permutation (σ = 1, the slice size C of `params`); every other
    /// configuration keeps `params`.
    pub fn stored_params(
        self,
        params: &crate::formats::FormatParams,
    ) -> crate::formats::FormatParams {
        let mut p = params.clone();
        if self == Variant::Vendor(VendorAlg::SellAlg1) {
            p.sell.sigma = 1;
        }
        p
    }

    /// Whether this is a cuSPARSE algorithm.
    pub fn is_vendor(self) -> bool {
        matches!(self, Variant::Vendor(_))
    }

    /// The name used on the command line and in every table, e.g. `csr-vector`, `cusparse-csr-alg2`.
    pub fn name(self) -> String {
        match self {
            Variant::Csr { threads_per_row: 1 } => "csr-scalar".into(),
            Variant::Csr {
                threads_per_row: 32,
            } => "csr-vector".into(),
            Variant::Csr { threads_per_row: t } => format!("csr-t{t}"),
            Variant::CsrMerge => "csr-merge".into(),
            Variant::Vendor(a) => match a {
                VendorAlg::CsrAlg1 => "cusparse-csr-alg1",
                VendorAlg::CsrAlg2 => "cusparse-csr-alg2",
                VendorAlg::CooAlg1 => "cusparse-coo-alg1",
                VendorAlg::CooAlg2 => "cusparse-coo-alg2",
                VendorAlg::SellAlg1 => "cusparse-sell",
            }
            .into(),
            other => other.format().name().into(),
        }
    }

    /// Parse a name produced by [`Variant::name`]; `csr` alone means `csr-vector`.
    pub fn parse(s: &str) -> Result<Variant> {
        if s == "csr" {
            return Ok(Variant::Csr {
                threads_per_row: 32,
            });
        }
        Variant::ours()
            .into_iter()
            .chain(Variant::vendor())
            .find(|v| v.name() == s)
            .ok_or_else(|| {
                let names: Vec<String> = Variant::ours()
                    .into_iter()
                    .chain(Variant::vendor())
                    .map(|v| v.name())
                    .collect();
                Error::Invalid(format!(
                    "unknown format '{s}'; expected one of: {}",
                    names.join(", ")
                ))
            })
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// Everything needed to prepare a kernel: variant, format parameters, CUDA block size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KernelConfig {
    pub variant: Variant,
    pub params: FormatParams,
    /// Threads per CUDA block (ignored by the CPU backend).
    pub block_size: u32,
}

impl KernelConfig {
    /// The default threads per CUDA block.
    pub const DEFAULT_BLOCK_SIZE: u32 = 256;

    /// A configuration with default parameters and a block size of
    /// [`KernelConfig::DEFAULT_BLOCK_SIZE`].
    pub fn new(variant: Variant) -> Self {
        KernelConfig {
            variant,
            params: FormatParams::default(),
            block_size: Self::DEFAULT_BLOCK_SIZE,
        }
    }

    /// The configuration's name in training tables and rankings: the variant's name, then the
    /// parameters that differ from their defaults and matter to it (SELL-C-σ's `-c512-s2048`),
    /// then `@` and the CUDA block size where it is not the default (our kernels only; cuSPARSE
    /// chooses its own), e.g. `csr-t8`, `sell-c512-s2048`, `ell@128`.
    pub fn label(&self) -> String {
        let mut s = self.variant.name();
        if self.variant == Variant::Sell
            && self.params.sell != crate::formats::SellParams::default()
        {
            s.push_str(&format!(
                "-c{}-s{}",
                self.params.sell.c, self.params.sell.sigma
            ));
        }
        if !self.variant.is_vendor() && self.block_size != Self::DEFAULT_BLOCK_SIZE {
            s.push_str(&format!("@{}", self.block_size));
        }
        s
    }

    /// The same configuration at [`KernelConfig::DEFAULT_BLOCK_SIZE`]: what its block-size
    /// variants share ([`crate::model::block_size_siblings`]).
    pub fn at_default_block_size(&self) -> KernelConfig {
        KernelConfig {
            block_size: Self::DEFAULT_BLOCK_SIZE,
            ..self.clone()
        }
    }

    /// Whether `other` is this configuration at another block size: the same variant and
    /// parameters (what [`KernelConfig::at_default_block_size`] keys), another size.
    pub fn is_block_size_sibling(&self, other: &KernelConfig) -> bool {
        self.variant == other.variant
            && self.params == other.params
            && self.block_size != other.block_size
    }

    /// Parse a [`KernelConfig::label`] (other parameters default).
    pub fn parse_label(label: &str) -> Result<KernelConfig> {
        let bad = || Error::Invalid(format!("bad configuration '{label}'"));
        let (rest, block) = match label.rsplit_once('@') {
            Some((r, b)) => (r, b.parse::<u32>().map_err(|_| bad())?),
            None => (label, Self::DEFAULT_BLOCK_SIZE),
        };
        let mut cfg = match rest.strip_prefix("sell-c") {
            Some(cs) => {
                let (c, sigma) = cs.split_once("-s").ok_or_else(bad)?;
                let mut k = KernelConfig::new(Variant::Sell);
                k.params.sell.c = c.parse().map_err(|_| bad())?;
                k.params.sell.sigma = sigma.parse().map_err(|_| bad())?;
                k
            }
            None => KernelConfig::new(Variant::parse(rest)?),
        };
        if block == 0 || (cfg.variant.is_vendor() && block != Self::DEFAULT_BLOCK_SIZE) {
            return Err(bad());
        }
        cfg.block_size = block;
        Ok(cfg)
    }
}

/// The order that measures `configs` (variant and format parameters) grouped by conversion
/// ([`crate::formats::FormatKind::conversion_key`]): groups in the order of their first
/// configuration, ours before cuSPARSE's within a group (cuSPARSE's sliced ELL converts
/// without a permutation), otherwise in the given order. Measured in this order, a backend that
/// [`Backend::share_arrays`] converts and uploads each format once.
pub fn conversion_order(configs: &[(Variant, &crate::formats::FormatParams)]) -> Vec<usize> {
    let mut first: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let group: Vec<usize> = configs
        .iter()
        .enumerate()
        .map(|(i, (v, p))| *first.entry(v.format().conversion_key(p)).or_insert(i))
        .collect();
    let mut order: Vec<usize> = (0..configs.len()).collect();
    order.sort_by_key(|&i| (group[i], configs[i].0.is_vendor()));
    order
}

/// A backend: turns a CSR matrix into a prepared kernel that can run and be timed.
pub trait Backend<T: Scalar> {
    /// Short name (`cpu`, `cuda`).
    fn name(&self) -> &str;
    /// A one-line description of the device (CPU model and threads, GPU name …).
    fn device_name(&self) -> String;
    /// Whether the backend can run `variant` at all.
    fn supports(&self, variant: Variant) -> bool;
    /// The measured bandwidth ceiling (device-to-device copy, GB/s), where the backend has one.
    fn copy_bandwidth_gbs(&self) -> Option<f64> {
        None
    }
    /// The measured read bandwidth of the device's last-level cache (GB/s; on CUDA the L2,
    /// [`cuda::l2`]), where the backend has one.
    fn l2_read_bandwidth_gbs(&self) -> Option<f64> {
        None
    }
    /// Device memory free for a new matrix right now (less what the backend keeps in reserve),
    /// bytes, where the backend has a separate device memory.
    fn free_device_bytes(&self) -> Option<u64> {
        None
    }
    /// Bytes of the device's last-level cache shared by all its cores (a GPU's L2), if known.
    fn l2_bytes(&self) -> Option<u64> {
        None
    }
    /// Convert `csr` to the variant's format, move it to the device, and return a kernel ready to
    /// run. Fails with a clear error if the format refuses the matrix or it does not fit.
    fn prepare<'a>(
        &'a self,
        csr: &Csr<T>,
        cfg: &KernelConfig,
    ) -> Result<Box<dyn PreparedSpmv<T> + 'a>>;
    /// Turn sharing on or off: while it is on, kernels prepared from the same matrix may share
    /// its converted formats and device arrays (`collect` measures thirty configurations of one
    /// matrix; see the CUDA backend's `prepared::shared`). The caller promises that every
    /// matrix prepared while it is on with the same shape, entries and value storage is the same
    /// matrix, and turns it off when done (dropping what is shared). Kernels only read these
    /// arrays, so results are unchanged; a measurement that wants its arrays elsewhere in memory
    /// (further placements) must not share. The default shares nothing.
    fn share_arrays(&self, on: bool) {
        let _ = on;
    }
    /// The launch sequence HYB runs with where it has a COO part (CUDA on sm_90 and later can
    /// make its second kernel a programmatic dependent; every other backend runs one after the
    /// other).
    fn hyb_launch(&self) -> cuda::launch::HybLaunch {
        cuda::launch::HybLaunch::Plain
    }
    /// Run HYB as `modelled` (the sequence the profile in use predicts) where the backend can
    /// and `SPARSECAST_PDL` does not fix it; call before preparing kernels. Returns
    /// [`Backend::hyb_launch`].
    fn follow_hyb_launch(&self, modelled: cuda::launch::HybLaunch) -> cuda::launch::HybLaunch {
        let _ = modelled;
        self.hyb_launch()
    }
    /// Time one SpMV, queued by `enqueue` without waiting, with `protocol` (see [`timing`]):
    /// how every prepared kernel and every plan is timed. The default times batches on the host
    /// clock ([`timing::time_on_host`]), right for a backend whose calls complete on return.
    fn time_spmv(
        &self,
        protocol: &TimingProtocol,
        enqueue: &mut dyn FnMut() -> Result<()>,
    ) -> Result<Timing> {
        timing::time_on_host(protocol, enqueue)
    }
    /// Queue one SpMV made of independent `parts` (they write disjoint outputs) without waiting
    /// for it, executed as `overlap` says ([`Overlap`]); wait with the parts' own `finish`. The
    /// default queues the parts in order whatever `overlap` says: right for a backend without
    /// concurrent queues (the CPU backend, see [`Overlap`]).
    fn enqueue_parts(&self, overlap: Overlap, parts: &mut [Part<'_>]) -> Result<()> {
        let _ = overlap;
        enqueue_in_order(parts)
    }
    /// Time one SpMV made of independent `parts`, executed as `overlap` says, with `protocol`:
    /// how a plan is timed, the way it runs. The default times the parts in order with
    /// [`Backend::time_spmv`] (see [`Backend::enqueue_parts`]); [`Timing::concurrent`] says
    /// whether the parts really overlapped.
    fn time_parts(
        &self,
        protocol: &TimingProtocol,
        overlap: Overlap,
        parts: &mut [Part<'_>],
    ) -> Result<Timing> {
        let _ = overlap;
        self.time_spmv(protocol, &mut || enqueue_in_order(parts))
    }
    /// Build the instrumenting phase's benchmark matrix (`rows × cols`, `pnz` entries in every
    /// row, laid out as [`crate::instrument::synthetic`] defines) directly on the device, without
    /// a host round trip, and return a kernel ready to run. Backends that cannot do so keep this
    /// default, and the instrument driver builds the matrix on the host and calls
    /// [`Backend::prepare`] instead.
    fn prepare_synthetic<'a>(
        &'a self,
        rows: usize,
        cols: usize,
        pnz: usize,
        cfg: &KernelConfig,
    ) -> Result<Box<dyn PreparedSpmv<T> + 'a>> {
        let _ = (rows, cols, pnz, cfg);
        Err(Error::Unsupported(format!(
            "backend {} cannot generate benchmark matrices on the device",
            self.name()
        )))
    }
    /// Build the statistical models' benchmark matrix (`rows × cols`, row lengths of mean
    /// `mean` drawn by `lengths`, laid out as [`crate::instrument::rowdist`] defines) directly
    /// on the device, and return a kernel ready to run, holding the same arrays as
    /// [`Backend::prepare`] of the host-built matrix. Backends that cannot do so keep this
    /// default, and [`crate::instrument::DistributedSource`] builds the matrix on the host.
    fn prepare_distributed<'a>(
        &'a self,
        rows: usize,
        cols: usize,
        mean: usize,
        lengths: &crate::instrument::RowLengths,
        cfg: &KernelConfig,
    ) -> Result<Box<dyn PreparedSpmv<T> + 'a>> {
        let _ = (rows, cols, mean, lengths, cfg);
        Err(Error::Unsupported(format!(
            "backend {} cannot generate row-length benchmark matrices on the device",
            self.name()
        )))
    }
}

/// A matrix in a kernel's format on a backend's device, with its x and y vectors.
pub trait PreparedSpmv<T: Scalar> {
    /// The configuration it was prepared with.
    fn config(&self) -> &KernelConfig;
    /// Bytes of the format's arrays on the device.
    fn footprint_bytes(&self) -> u64;
    /// The minimum bytes one SpMV must move: the format's arrays once, x once, y once.
    fn effective_bytes(&self) -> u64;
    /// Set the input vector (length = columns).
    fn set_x(&mut self, x: &[T]) -> Result<()>;
    /// Fill y with NaN, so that an element the kernel fails to write is caught.
    fn poison_y(&mut self) -> Result<()>;
    /// Compute `y = A·x` once and wait for it.
    fn run(&mut self) -> Result<()>;
    /// Queue one SpMV without waiting for it (the default, for a backend without queues, runs
    /// it). Several kernels of one backend queued in turn run in that order (a plan's blocks).
    fn enqueue(&mut self) -> Result<()> {
        self.run()
    }
    /// Wait for the queued SpMVs and report any error a kernel flagged.
    fn finish(&mut self) -> Result<()> {
        Ok(())
    }
    /// Read y back (length = rows).
    fn y(&mut self) -> Result<Vec<T>>;
    /// Set x, poison y, run once, and return the largest error of y against `reference` (the
    /// reference of this matrix and `x`): [`measure::Reference::max_relative_error`]. A backend
    /// may compare where y is (the CUDA backend does, on the device) instead of reading y back.
    fn check(&mut self, x: &[T], reference: &measure::Reference) -> Result<f64> {
        self.set_x(x)?;
        self.poison_y()?;
        self.run()?;
        Ok(reference.max_relative_error(&self.y()?))
    }
    /// Time the SpMV with `protocol` (the backend's [`Backend::time_spmv`] on
    /// [`PreparedSpmv::enqueue`]).
    fn time(&mut self, protocol: &TimingProtocol) -> Result<Timing>;
}

/// Which backend to run on, as chosen on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    /// Parallel CPU kernels (rayon); always available.
    Cpu,
    /// CUDA kernels and cuSPARSE on GPU 0 (needs an NVIDIA driver).
    Cuda,
}

impl BackendKind {
    /// `"cpu"` or `"cuda"`.
    pub fn name(self) -> &'static str {
        match self {
            BackendKind::Cpu => "cpu",
            BackendKind::Cuda => "cuda",
        }
    }
}

/// Check a request for a green-context partition of `sms` SMs (`--sms`) on backend `kind`
/// before anything is opened: the CPU backend has none, and a size the GPU cannot split exactly
/// is refused ([`cuda::partition::check_request`]).
pub fn check_partition(kind: BackendKind, sms: Option<u32>) -> Result<()> {
    match (kind, sms) {
        (_, None) => Ok(()),
        (BackendKind::Cpu, Some(n)) => Err(crate::Error::Invalid(format!(
            "--sms {n}: SM partitions are green contexts of a CUDA device; the CPU backend has \
             none (use --backend cuda, or leave out --sms)"
        ))),
        (BackendKind::Cuda, Some(n)) => {
            cuda::partition::check_request(n, None, cuda::partition::SM_GRANULARITY)
        }
    }
}

/// One backend opened for a whole command (every matrix, both precisions): `predict
/// --measure`, `optimize --measure` / `--tune`. Open it once, not per matrix: a CUDA backend
/// opened afresh for each matrix (what `optimize --measure` did until session 52) timed every
/// launch ≈ 0.15 µs slower from the second matrix on than one backend kept open, as `collect`
/// and `predict` keep it (the first matrix matched; measured on the H200, docs/ACCURACY.md).
pub enum Opened {
    /// The CPU backend.
    Cpu(cpu::CpuBackend),
    /// The CUDA backend.
    Cuda(Box<cuda::CudaBackend>),
}

impl Opened {
    /// Open `kind` (CUDA: device `ordinal`).
    pub fn open(kind: BackendKind, ordinal: usize) -> Result<Opened> {
        Ok(match kind {
            BackendKind::Cpu => Opened::Cpu(cpu::CpuBackend::new()),
            BackendKind::Cuda => Opened::Cuda(Box::new(cuda::CudaBackend::new(ordinal)?)),
        })
    }

    /// Which backend this is.
    pub fn kind(&self) -> BackendKind {
        match self {
            Opened::Cpu(_) => BackendKind::Cpu,
            Opened::Cuda(_) => BackendKind::Cuda,
        }
    }

    /// The backend for values of type `T`.
    pub fn get<T: BackendScalar>(&self) -> &dyn Backend<T> {
        T::backend_of(self)
    }

    /// Run HYB as the profile in use models it ([`Backend::follow_hyb_launch`]; one backend
    /// serves both precisions): call it right after opening.
    pub fn follow_hyb_launch(&self, modelled: cuda::launch::HybLaunch) -> cuda::launch::HybLaunch {
        self.get::<f64>().follow_hyb_launch(modelled)
    }
}

/// A value type every backend supports; lets generic code open a backend for `T`.
pub trait BackendScalar: Scalar {
    /// `o` as the backend for this value type.
    fn backend_of(o: &Opened) -> &dyn Backend<Self>;
    /// Open the backend `kind` for this value type.
    fn open_backend(kind: BackendKind) -> Result<Box<dyn Backend<Self>>> {
        Self::open_backend_on(kind, None)
    }
    /// Open the backend `kind`, on a green-context partition of `sms` SMs of GPU 0 where given
    /// ([`check_partition`]).
    fn open_backend_on(kind: BackendKind, sms: Option<u32>) -> Result<Box<dyn Backend<Self>>>;
}

macro_rules! impl_backend_scalar {
    ($t:ty) => {
        impl BackendScalar for $t {
            fn backend_of(o: &Opened) -> &dyn Backend<Self> {
                match o {
                    Opened::Cpu(b) => b,
                    Opened::Cuda(b) => b.as_ref(),
                }
            }
            fn open_backend_on(
                kind: BackendKind,
                sms: Option<u32>,
            ) -> Result<Box<dyn Backend<Self>>> {
                check_partition(kind, sms)?;
                match kind {
                    BackendKind::Cpu => Ok(Box::new(cpu::CpuBackend::new())),
                    BackendKind::Cuda => Ok(Box::new(cuda::CudaBackend::open_on(0, sms)?)),
                }
            }
        }
    };
}
impl_backend_scalar!(f32);
impl_backend_scalar!(f64);
