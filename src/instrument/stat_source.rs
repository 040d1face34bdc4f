//! Where the statistical models' benchmark matrices ([`super::rowdist`]) come from.
//!
//! * **The device where it can.** [`Backend::prepare_distributed`] draws the row lengths, scans
//!   them into row pointers and fills CSR, ELL or JAD in place (the CUDA backend, for CSR with
//!   any threads per row, ELL and JAD: every statistical kernel); constant rows go first to
//!   [`Backend::prepare_synthetic`], the analytical suite's generator (CSR and ELL). The matrix
//!   is the host's, array for array (`sparsecast selftest --backend cuda` checks it: its
//!   `gen …` rows).
//! * **The host otherwise**: a backend without a device generator (the CPU backend), a kernel
//!   it does not generate, a source made with [`DistributedSource::on_host`] (`instrument
//!   --source host`), or any refusal of the device path ([`Error::Unsupported`]: e.g. the
//!   device memory, where the host path then refuses the same way). The CSR is built in
//!   parallel ([`RowLengths::build_csr`]) and the backend's own conversion and upload
//!   ([`Backend::prepare`]) make the layout.
//! * **One host build for three kernels.** CSR-S, ELL and JAD share their strip size and grid,
//!   so their plans hold the same matrices; the plan puts the kernels of one matrix next to
//!   each other ([`super::StatSuite::plan`]) and the source keeps the last host-built CSR, so
//!   each matrix is built once and converted per kernel. (Building was a quarter of the host's
//!   work per benchmark, converting to ELL or JAD most of the rest; measured on the build
//!   machine.)

use super::rowdist::{RowDist, RowLengths, Spread};
use super::source::BenchmarkSource;
use super::BenchmarkPoint;
use crate::backend::{Backend, KernelConfig, PreparedSpmv};
use crate::formats::Summary;
use crate::{Csr, Error, Result, Scalar};
use std::any::Any;
use std::cell::{Cell, RefCell};

/// The last host-built matrix: its `(rows, cols, mean)` and the `Csr<T>`.
type Cached = ((u64, u64, u64), Box<dyn Any>);

/// Builds the benchmark matrices of one row-length distribution and prepares them on the
/// backend; the point's `pnz` is the distribution's mean.
pub struct DistributedSource {
    /// The row lengths.
    pub lengths: RowLengths,
    /// Largest host allocation allowed for one matrix, in bytes.
    pub max_bytes: u64,
    /// Whether to try the device first (see the module documentation).
    device: bool,
    /// Whether the last matrix was generated on the device.
    last_on_device: Cell<bool>,
    /// The last matrix built on the host (see the module documentation).
    cache: RefCell<Option<Cached>>,
}

impl DistributedSource {
    /// A source of `dist` with `spread` that generates on the device where the backend can,
    /// its host builds limited to the formats' default host memory.
    pub fn new(dist: RowDist, spread: Spread) -> DistributedSource {
        DistributedSource {
            lengths: RowLengths { dist, spread },
            max_bytes: crate::formats::default_max_bytes(),
            device: true,
            last_on_device: Cell::new(false),
            cache: RefCell::new(None),
        }
    }

    /// The same source building every matrix on the host (`instrument --source host`).
    pub fn on_host(self) -> DistributedSource {
        DistributedSource {
            device: false,
            ..self
        }
    }

    /// Whether the last matrix prepared was generated on the device.
    pub fn last_on_device(&self) -> bool {
        self.last_on_device.get()
    }

    /// Generate on the device: `None` where the backend cannot (the host takes over).
    fn prepare_device<'a, T: Scalar>(
        &self,
        backend: &'a dyn Backend<T>,
        point: &BenchmarkPoint,
        cfg: &KernelConfig,
    ) -> Option<Result<Box<dyn PreparedSpmv<T> + 'a>>> {
        let (rows, cols, pnz) = match super::source::dims(point) {
            Ok(d) => d,
            Err(e) => return Some(Err(e)),
        };
        if self.lengths.dist == RowDist::Constant {
            if let Err(e) = super::synthetic::check_shape(rows, cols, pnz) {
                return Some(Err(e));
            }
            match backend.prepare_synthetic(rows, cols, pnz, cfg) {
                Err(Error::Unsupported(_)) => {}
                other => return Some(other),
            }
        }
        match backend.prepare_distributed(rows, cols, pnz, &self.lengths, cfg) {
            Err(Error::Unsupported(_)) => None,
            other => Some(other),
        }
    }

    /// Prepare from the host-built CSR of `point`, building it unless it is the cached one.
    fn prepare_host<'a, T: Scalar>(
        &self,
        backend: &'a dyn Backend<T>,
        point: &BenchmarkPoint,
        cfg: &KernelConfig,
    ) -> Result<Box<dyn PreparedSpmv<T> + 'a>> {
        let key = (point.rows, point.cols, point.pnz);
        let mut cache = self.cache.borrow_mut();
        let hit = matches!(&*cache, Some((k, m)) if *k == key && m.is::<Csr<T>>());
        if !hit {
            // Release the previous matrix before building the next one.
            *cache = None;
            let (rows, cols, pnz) = super::source::dims(point)?;
            let csr = self
                .lengths
                .build_csr::<T>(rows, cols, pnz, self.max_bytes)?;
            *cache = Some((key, Box::new(csr)));
        }
        let csr = cache
            .as_ref()
            .and_then(|(_, m)| m.downcast_ref::<Csr<T>>())
            .ok_or_else(|| Error::Invalid("benchmark matrix cache lost its matrix".into()))?;
        backend.prepare(csr, cfg)
    }
}

impl<T: Scalar> BenchmarkSource<T> for DistributedSource {
    fn name(&self) -> &'static str {
        match (self.last_on_device.get(), self.lengths.dist) {
            (true, RowDist::Normal) => "device, normal rows",
            (true, RowDist::Uniform) => "device, uniform rows",
            (true, RowDist::Constant) => "device, constant rows",
            (false, RowDist::Normal) => "host, normal rows",
            (false, RowDist::Uniform) => "host, uniform rows",
            (false, RowDist::Constant) => "host, constant rows",
        }
    }
    fn prepare<'a>(
        &self,
        backend: &'a dyn Backend<T>,
        point: &BenchmarkPoint,
        cfg: &KernelConfig,
    ) -> Result<Box<dyn PreparedSpmv<T> + 'a>> {
        if self.device {
            if let Some(r) = self.prepare_device(backend, point, cfg) {
                self.last_on_device.set(r.is_ok());
                return r;
            }
        }
        self.last_on_device.set(false);
        self.prepare_host(backend, point, cfg)
    }
    fn summary(&self, p: &BenchmarkPoint) -> Summary {
        if self.lengths.dist == RowDist::Constant {
            return Summary::constant(p.rows, p.cols, p.pnz);
        }
        let lens = self.lengths.lengths(p.rows, p.pnz, p.cols);
        Summary::from_row_lengths(p.cols, &lens, None)
    }
    fn reference(&self, p: &BenchmarkPoint) -> Result<Csr<f64>> {
        let (rows, cols, pnz) = super::source::dims(p)?;
        self.lengths.build_csr::<f64>(rows, cols, pnz, u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::CpuBackend;
    use crate::backend::Variant;

    fn point(variant: Variant, rows: u64, pnz: u64) -> BenchmarkPoint {
        BenchmarkPoint {
            variant,
            rows,
            cols: rows.max(2 * pnz),
            pnz,
            strips: 1,
        }
    }

    #[test]
    fn one_build_serves_the_kernels_of_a_matrix() {
        let be = CpuBackend::new();
        let src = DistributedSource::new(RowDist::Normal, Spread::Sqrt);
        let x = crate::instrument::synthetic::x_vector::<f64>(400);
        let mut ys = Vec::new();
        for v in [
            Variant::Csr { threads_per_row: 1 },
            Variant::Ell,
            Variant::Jad,
        ] {
            let p = point(v, 400, 9);
            let mut k =
                BenchmarkSource::<f64>::prepare(&src, &be, &p, &KernelConfig::new(v)).unwrap();
            k.set_x(&x).unwrap();
            k.run().unwrap();
            ys.push(k.y().unwrap());
            let cached = src.cache.borrow();
            assert_eq!(cached.as_ref().map(|c| c.0), Some((400, 400, 9)));
            // The CPU backend has no device generator: built on the host.
            assert!(!src.last_on_device());
            assert_eq!(BenchmarkSource::<f64>::name(&src), "host, normal rows");
        }
        // The same matrix in three formats gives the same product.
        for y in &ys[1..] {
            assert!(y.iter().zip(&ys[0]).all(|(a, b)| (a - b).abs() < 1e-9));
        }
        // Another shape, or another precision, replaces the cached matrix.
        let p = point(Variant::Ell, 200, 9);
        BenchmarkSource::<f32>::prepare(&src, &be, &p, &KernelConfig::new(Variant::Ell)).unwrap();
        let cached = src.cache.borrow();
        assert!(cached.as_ref().unwrap().1.is::<Csr<f32>>());
    }

    #[test]
    fn constant_rows_are_the_constant_contract() {
        let src = DistributedSource::new(RowDist::Constant, Spread::Sqrt);
        let p = point(Variant::Jad, 300, 5);
        let s = BenchmarkSource::<f64>::summary(&src, &p);
        assert_eq!(s, Summary::constant(300, 300, 5));
        let a = BenchmarkSource::<f64>::reference(&src, &p).unwrap();
        let b = crate::instrument::synthetic::build_csr::<f64>(300, 300, 5, u64::MAX).unwrap();
        assert_eq!(a, b);
    }
}
