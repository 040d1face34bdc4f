//! Helpers shared by the subcommands: loading matrices, random vectors, shared option groups,
//! tables and progress bars.

use crate::backend::{KernelConfig, TimingProtocol, Variant};
use crate::formats::FormatParams;
use crate::{Csr, Scalar};
use rand::{Rng, SeedableRng};
use std::path::Path;

/// Read a Matrix Market file (plain or gzip) into an f64 CSR matrix.
pub fn load_matrix(path: &Path) -> anyhow::Result<Csr<f64>> {
    let pb = spinner(&format!("reading {}", path.display()));
    let m = crate::matrix::mm::read::<f64>(path);
    pb.finish_and_clear();
    Ok(m?)
}

/// A vector of `n` values drawn uniformly from [-1, 1) with a seeded generator.
pub fn random_vector<T: Scalar>(n: usize, seed: u64) -> Vec<T> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| T::cast_f64(rng.random_range(-1.0..1.0)))
        .collect()
}

/// Read x from a file (Matrix Market array n×1) or draw it from a seed, checking its length.
pub fn input_vector<T: Scalar>(
    x_file: Option<&Path>,
    seed: u64,
    ncols: usize,
) -> anyhow::Result<Vec<T>> {
    match x_file {
        Some(p) => {
            let v = crate::matrix::mm::read_vector(p)?;
            anyhow::ensure!(
                v.len() == ncols,
                "{}: x has {} entries but the matrix has {} columns",
                p.display(),
                v.len(),
                ncols
            );
            Ok(v.into_iter().map(T::cast_f64).collect())
        }
        None => Ok(random_vector(ncols, seed)),
    }
}

/// Format parameters and the CUDA block size, shared by every subcommand that runs kernels.
#[derive(clap::Args, Debug, Clone)]
pub struct KernelArgs {
    /// Threads per CUDA block.
    #[arg(long, default_value_t = KernelConfig::DEFAULT_BLOCK_SIZE)]
    pub block_size: u32,
    // Every format's parameters, as the formats declare them.
    #[command(flatten)]
    pub params: FormatParams,
}

impl KernelArgs {
    /// The kernel configuration for `variant`.
    pub fn config(&self, variant: Variant) -> KernelConfig {
        KernelConfig {
            variant,
            params: self.params.clone(),
            block_size: self.block_size,
        }
    }
}

/// The timing protocol options (see `sparsecast bench --help` and docs/PERFORMANCE.md,
/// "Measurement").
#[derive(clap::Args, Debug, Clone)]
pub struct TimingArgs {
    /// β: timed batches per kernel (each a graph of back-to-back SpMVs); the reported time is
    /// their median, the spread their interquartile range.
    #[arg(long, default_value_t = crate::backend::timing::DEFAULT_RUNS)]
    pub runs: usize,
    /// α: leading timed batches excluded from the statistics (the papers' formula); the
    /// time-based warm-up (--warmup-ms) comes first either way.
    #[arg(long, default_value_t = 0)]
    pub warmup: usize,
    /// Milliseconds of warm-up (SpMV batches replayed until the clocks and caches settle).
    #[arg(long, default_value_t = crate::backend::timing::DEFAULT_WARMUP_MS)]
    pub warmup_ms: f64,
    /// Target duration of one timed batch, milliseconds.
    #[arg(long, default_value_t = crate::backend::timing::DEFAULT_BATCH_MS)]
    pub batch_ms: f64,
    /// Single-launch latency mode: time each SpMV alone on an idle GPU (one per sample).
    #[arg(long)]
    pub latency: bool,
    /// Clear the L2 cache before every SpMV (CUDA; one SpMV per sample). Default: warm cache,
    /// as inside a solver.
    #[arg(long)]
    pub cold: bool,
    /// Memory placements: a configuration faster than 2 ms is prepared this many times (each
    /// copy's arrays elsewhere in device memory, each checked and timed) and the samples of all
    /// are pooled — the time of a kernel held up by one long row moves with where its arrays
    /// land (docs/PERFORMANCE.md, "Measurement"). 1 times one placement.
    #[arg(long, default_value_t = crate::backend::timing::DEFAULT_PLACEMENTS)]
    pub placements: usize,
}

impl TimingArgs {
    /// The protocol, validated.
    pub fn protocol(&self) -> anyhow::Result<TimingProtocol> {
        let p = TimingProtocol {
            mode: if self.latency {
                crate::backend::TimingMode::Latency
            } else {
                crate::backend::TimingMode::Batched
            },
            runs: self.runs,
            warmup: self.warmup,
            warmup_ms: self.warmup_ms,
            batch_ms: self.batch_ms,
            cold: self.cold,
            placements: self.placements,
            slow_s: None,
            far_factor: None,
            fastest_s: None,
        };
        p.validate()?;
        Ok(p)
    }
}

/// `--sms N`: a green-context partition of the GPU as the device (shared by every command that
/// measures on a backend).
#[derive(clap::Args, Debug, Clone, Default)]
pub struct PartitionArgs {
    /// Run on a green-context partition of N SMs of GPU 0 (CUDA only): a smaller GPU with the
    /// same memory and L2. On Hopper N is a multiple of 8 (8, 16, 32, 72 …); any other size is
    /// refused. Tables and profiles record the partition as the device ("NVIDIA H200 [32-SM
    /// partition]", 32 SMs), so strip sizes scale with it.
    #[arg(long, value_name = "N")]
    pub sms: Option<u32>,
}

impl PartitionArgs {
    /// Refuse `--sms` on the CPU backend and a size the GPU cannot split, before any work.
    pub fn check(&self, backend: crate::backend::BackendKind) -> anyhow::Result<()> {
        Ok(crate::backend::check_partition(backend, self.sms)?)
    }
}

/// Largest error of `y` against the f64 reference, relative to Σ|a_ij·x_j| of each row (so rows
/// that cancel do not inflate it). NaN (an unwritten or poisoned element) gives +∞.
pub fn max_relative_error<T: Scalar>(a: &Csr<T>, x: &[T], y: &[T]) -> f64 {
    crate::backend::measure::Reference::new(a, x).max_relative_error(y)
}

/// Tolerance for [`max_relative_error`] by precision.
pub fn tolerance<T: Scalar>() -> f64 {
    crate::backend::measure::tolerance(T::PRECISION)
}

/// A table with the crate's style.
pub fn table(header: &[&str]) -> comfy_table::Table {
    let mut t = comfy_table::Table::new();
    t.load_preset(comfy_table::presets::UTF8_BORDERS_ONLY)
        .set_header(header.iter().map(comfy_table::Cell::new));
    t
}

/// A progress bar on stderr (hidden when stderr is not a terminal).
pub fn progress(len: u64, what: &str) -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::new(len);
    pb.set_style(
        indicatif::ProgressStyle::with_template(
            "{prefix} [{bar:30}] {pos}/{len} {msg} (eta {eta})",
        )
        .expect("static template")
        .progress_chars("=> "),
    );
    pb.set_prefix(what.to_string());
    // Redrawn while one long step runs, so that elapsed time and ETA keep moving.
    pb.enable_steady_tick(std::time::Duration::from_millis(500));
    pb
}

/// A spinner with the elapsed time on stderr for work of unknown length (hidden when stderr is
/// not a terminal); `finish_and_clear` it when done.
pub fn spinner(what: &str) -> indicatif::ProgressBar {
    let pb = indicatif::ProgressBar::new_spinner();
    pb.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
            .expect("static template"),
    );
    pb.set_message(what.to_string());
    pb.enable_steady_tick(std::time::Duration::from_millis(200));
    pb
}

/// What a tuned run timed, `label seconds, …` (`failed` where it could not be run).
pub fn fmt_timed(timed: &[(String, Option<f64>)]) -> String {
    timed
        .iter()
        .map(|(label, s)| format!("{label} {}", s.map_or("failed".into(), fmt_seconds)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Seconds as a human unit (µs below a millisecond), `-` when not finite.
pub fn fmt_seconds(s: f64) -> String {
    crate::util::fmt_seconds(s, "-")
}

/// Which device profile to use: `--profile FILE`, or `--gpu NAME` for an embedded one (shared by
/// every command that predicts).
#[derive(clap::Args, Debug, Clone)]
pub struct ProfileArgs {
    /// Device profile (JSON from `sparsecast instrument`); default: the embedded one of the GPU
    /// found (or of --gpu; `sparsecast profiles` lists them).
    #[arg(long)]
    pub profile: Option<std::path::PathBuf>,
    /// Without --profile: the embedded profile of this GPU (h200, h100), with or without a GPU.
    #[arg(long, conflicts_with = "profile")]
    pub gpu: Option<String>,
}

impl ProfileArgs {
    /// [`load_profile_for`] with these options.
    pub fn load(
        &self,
        probe_gpu: bool,
        device: usize,
    ) -> anyhow::Result<(String, crate::profile::Profile)> {
        load_profile_for(
            self.profile.as_deref(),
            self.gpu.as_deref(),
            probe_gpu,
            device,
        )
    }
}

/// The profile of `--profile`; else the embedded one of `--gpu`; else, when `probe_gpu` and a CUDA
/// device answers, the embedded one whose device matches it; else the first embedded one (the
/// H200). Announced once on stderr (which, its backend and device); warns when the profile's
/// device differs from the GPU found.
pub fn load_profile_for(
    path: Option<&std::path::Path>,
    gpu: Option<&str>,
    probe_gpu: bool,
    device: usize,
) -> anyhow::Result<(String, crate::profile::Profile)> {
    use crate::profile::Profile;
    let announce = |what: &str, p: &Profile| {
        eprintln!("profile: {what} ({} backend, {})", p.backend, p.device_name);
    };
    let found = if probe_gpu {
        crate::backend::cuda::CudaBackend::new(device)
            .ok()
            .map(|b| crate::backend::Backend::<f64>::device_name(&b))
    } else {
        None
    };
    let warn = |p: &Profile| {
        if let Some(d) = &found {
            if !p.matches_device(d) {
                eprintln!(
                    "warning: the profile was measured on {}, but this machine's GPU is {d}: its \
                     predictions are for the other device (instrument this one with `sparsecast \
                     instrument --backend cuda --out FILE`, or pass --gpu)",
                    p.device_name
                );
            }
        }
    };
    if let Some(p) = path {
        let prof = Profile::load(p)?;
        announce(&p.display().to_string(), &prof);
        warn(&prof);
        return Ok((p.display().to_string(), prof));
    }
    let chosen = match (gpu, &found) {
        (Some(g), _) => Profile::load_embedded_for(Some(g))?,
        (None, Some(d)) => match Profile::load_embedded_for_device(d)? {
            Some(hit) => Some(hit),
            None => Profile::load_embedded()?,
        },
        (None, None) => Profile::load_embedded()?,
    };
    match chosen {
        Some((name, p)) => {
            announce(
                &format!("{name}, built into this binary (no --profile given)"),
                &p,
            );
            warn(&p);
            Ok((format!("embedded {name}"), p))
        }
        None => anyhow::bail!(
            "no --profile given, and this build embeds no device profile yet. Pass --profile FILE \
             (create one with `sparsecast instrument`)."
        ),
    }
}
