//! CPU backend: the rayon-parallel kernel of every format ([`crate::formats::SparseFormat::spmv`]) behind the
//! [`Backend`] interface, so that every tool runs without a GPU and every CUDA kernel has a CPU
//! twin to compare against.
//!
//! Choices (the GPU notions that have no CPU meaning):
//! - Thread mapping is a GPU notion: every CSR variant (`csr-scalar`, `csr-t2` … `csr-vector`,
//!   `csr-merge`) runs the same parallel CSR kernel ([`crate::formats::csr_spmv`]), which splits
//!   rows into chunks of about equal rows + non-zeros.
//! - `KernelConfig::block_size` is ignored.
//! - Timing follows the shared protocol on the host clock ([`super::timing::time_on_host`]):
//!   batches of SpMVs after a warm-up in time. `TimingProtocol::cold` is ignored (there is no
//!   portable way to flush the CPU caches, so every run is warm) and latency mode times batches
//!   too (a CPU call has no launch latency to isolate).
//! - cuSPARSE variants are not supported.

use super::{Backend, KernelConfig, PreparedSpmv, Timing, TimingProtocol, Variant};
use crate::formats::{vector_bytes, AnyFormat};
use crate::{Csr, Error, Result, Scalar};

/// The CPU backend (rayon's global thread pool).
#[derive(Clone, Debug, Default)]
pub struct CpuBackend;

impl CpuBackend {
    /// A CPU backend on rayon's global thread pool.
    pub fn new() -> Self {
        CpuBackend
    }
}

/// The CPU model from `/proc/cpuinfo` (`model name`, or `Model`/`Hardware` on some ARM kernels),
/// `"unknown CPU"` where it cannot be read.
fn cpu_model() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    ["model name", "Model", "Hardware"]
        .iter()
        .find_map(|key| {
            info.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim().to_string())
            })
        })
        .unwrap_or_else(|| "unknown CPU".to_string())
}

impl<T: Scalar> Backend<T> for CpuBackend {
    fn name(&self) -> &str {
        "cpu"
    }

    /// `"<CPU model> (<n> rayon threads)"`.
    fn device_name(&self) -> String {
        format!(
            "{} ({} rayon threads)",
            cpu_model(),
            rayon::current_num_threads()
        )
    }

    /// Every variant but the cuSPARSE ones.
    fn supports(&self, variant: Variant) -> bool {
        !variant.is_vendor()
    }

    /// Validate `csr`, convert it with [`AnyFormat::convert`] (refusals pass through as
    /// [`Error::FormatRefused`]) and hold it with x (all ones until [`PreparedSpmv::set_x`]) and y
    /// (zeros).
    fn prepare<'a>(
        &'a self,
        csr: &Csr<T>,
        cfg: &KernelConfig,
    ) -> Result<Box<dyn PreparedSpmv<T> + 'a>> {
        if cfg.variant.is_vendor() {
            return Err(Error::Unsupported(
                "cuSPARSE variants need --backend cuda".into(),
            ));
        }
        csr.validate()?;
        let format = AnyFormat::convert(csr, cfg.variant.format(), &cfg.params)?;
        Ok(Box::new(CpuPrepared {
            cfg: cfg.clone(),
            format,
            x: vec![T::one(); csr.ncols],
            y: vec![T::zero(); csr.nrows],
        }))
    }
}

/// A matrix converted for the CPU, with its x and y.
struct CpuPrepared<T> {
    cfg: KernelConfig,
    format: AnyFormat<T>,
    x: Vec<T>,
    y: Vec<T>,
}

impl<T: Scalar> PreparedSpmv<T> for CpuPrepared<T> {
    fn config(&self) -> &KernelConfig {
        &self.cfg
    }

    fn footprint_bytes(&self) -> u64 {
        self.format.as_dyn().footprint_bytes()
    }

    /// Footprint + `(ncols + nrows) × sizeof T` (x read once, y written once).
    fn effective_bytes(&self) -> u64 {
        let f = self.format.as_dyn();
        f.footprint_bytes() + vector_bytes(f.nrows() as u64, f.ncols() as u64, T::BYTES as u64)
    }

    fn set_x(&mut self, x: &[T]) -> Result<()> {
        if x.len() != self.x.len() {
            return Err(Error::Invalid(format!(
                "x has {} entries, the matrix has {} columns",
                x.len(),
                self.x.len()
            )));
        }
        self.x.copy_from_slice(x);
        Ok(())
    }

    fn poison_y(&mut self) -> Result<()> {
        self.y.fill(T::nan());
        Ok(())
    }

    fn run(&mut self) -> Result<()> {
        self.format.as_dyn().spmv(&self.x, &mut self.y);
        Ok(())
    }

    fn y(&mut self) -> Result<Vec<T>> {
        Ok(self.y.clone())
    }

    fn enqueue(&mut self) -> Result<()> {
        self.run()?;
        std::hint::black_box(&mut self.y);
        Ok(())
    }

    /// The shared protocol on the host clock ([`super::timing::time_on_host`]).
    fn time(&mut self, protocol: &TimingProtocol) -> Result<Timing> {
        super::timing::time_on_host(protocol, &mut || self.enqueue())
    }
}
