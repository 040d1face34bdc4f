//! Where benchmark matrices come from: built on the host and uploaded ([`HostSource`]), or
//! generated on the device in place ([`DeviceSource`], fast enough that the whole GPU suite runs in
//! minutes), or the device with a fallback to the host ([`AutoSource`]). All three produce the
//! same matrix, the one [`super::synthetic`] defines.

use super::synthetic;
use super::BenchmarkPoint;
use crate::backend::{Backend, KernelConfig, PreparedSpmv};
use crate::formats::Summary;
use crate::{Csr, Error, Result, Scalar};
use std::cell::Cell;

/// A way to put a benchmark matrix on a backend's device, ready to run.
pub trait BenchmarkSource<T: Scalar> {
    /// Short name for reports (`host`, `device`, `auto`).
    fn name(&self) -> &'static str;
    /// Prepare `point`'s matrix for the kernel `cfg` on `backend`.
    fn prepare<'a>(
        &self,
        backend: &'a dyn Backend<T>,
        point: &BenchmarkPoint,
        cfg: &KernelConfig,
    ) -> Result<Box<dyn PreparedSpmv<T> + 'a>>;
    /// The summary of `point`'s matrix (its working set is checked against the free device
    /// memory): by default the constant-row matrix of [`super::synthetic`].
    fn summary(&self, point: &BenchmarkPoint) -> Summary {
        Summary::constant(point.rows, point.cols, point.pnz)
    }
    /// `point`'s matrix in `f64` on the host, the reference a kernel's result is checked
    /// against: by default the constant-row matrix of [`super::synthetic`].
    fn reference(&self, point: &BenchmarkPoint) -> Result<Csr<f64>> {
        let (rows, cols, pnz) = dims(point)?;
        synthetic::build_csr::<f64>(rows, cols, pnz, u64::MAX)
    }
    /// Whether every matrix is to be built on the host (`--source host`): the statistical
    /// suites then build theirs on the host too ([`super::DistributedSource::on_host`]).
    fn host_only(&self) -> bool {
        false
    }
}

/// Build on the host with [`synthetic::build_csr`] and [`Backend::prepare`] it.
#[derive(Clone, Copy, Debug)]
pub struct HostSource {
    /// Largest host allocation allowed for one matrix, in bytes.
    pub max_bytes: u64,
}

impl Default for HostSource {
    fn default() -> Self {
        HostSource {
            max_bytes: crate::formats::default_max_bytes(),
        }
    }
}

impl<T: Scalar> BenchmarkSource<T> for HostSource {
    fn name(&self) -> &'static str {
        "host"
    }
    fn host_only(&self) -> bool {
        true
    }
    fn prepare<'a>(
        &self,
        backend: &'a dyn Backend<T>,
        point: &BenchmarkPoint,
        cfg: &KernelConfig,
    ) -> Result<Box<dyn PreparedSpmv<T> + 'a>> {
        let (rows, cols, pnz) = dims(point)?;
        let csr = synthetic::build_csr::<T>(rows, cols, pnz, self.max_bytes)?;
        backend.prepare(&csr, cfg)
    }
}

/// Generate on the device with [`Backend::prepare_synthetic`].
#[derive(Clone, Copy, Debug, Default)]
pub struct DeviceSource;

impl<T: Scalar> BenchmarkSource<T> for DeviceSource {
    fn name(&self) -> &'static str {
        "device"
    }
    fn prepare<'a>(
        &self,
        backend: &'a dyn Backend<T>,
        point: &BenchmarkPoint,
        cfg: &KernelConfig,
    ) -> Result<Box<dyn PreparedSpmv<T> + 'a>> {
        let (rows, cols, pnz) = dims(point)?;
        synthetic::check_shape(rows, cols, pnz)?;
        backend.prepare_synthetic(rows, cols, pnz, cfg)
    }
}

/// The device where the backend can generate there; otherwise, from the first
/// [`Error::Unsupported`] on, the host.
#[derive(Debug, Default)]
pub struct AutoSource {
    host: HostSource,
    fell_back: Cell<bool>,
}

impl AutoSource {
    /// Whether the device refused and the host took over.
    pub fn fell_back(&self) -> bool {
        self.fell_back.get()
    }
}

impl<T: Scalar> BenchmarkSource<T> for AutoSource {
    fn name(&self) -> &'static str {
        if self.fell_back.get() {
            "host"
        } else {
            "device"
        }
    }
    fn prepare<'a>(
        &self,
        backend: &'a dyn Backend<T>,
        point: &BenchmarkPoint,
        cfg: &KernelConfig,
    ) -> Result<Box<dyn PreparedSpmv<T> + 'a>> {
        if !self.fell_back.get() {
            match DeviceSource.prepare(backend, point, cfg) {
                Err(Error::Unsupported(_)) => self.fell_back.set(true),
                other => return other,
            }
        }
        self.host.prepare(backend, point, cfg)
    }
}

/// The point's dimensions as host sizes.
pub(super) fn dims(p: &BenchmarkPoint) -> Result<(usize, usize, usize)> {
    let c = |v: u64| {
        usize::try_from(v)
            .map_err(|_| Error::Invalid(format!("benchmark dimension {v} exceeds this host")))
    };
    Ok((c(p.rows)?, c(p.cols)?, c(p.pnz)?))
}
