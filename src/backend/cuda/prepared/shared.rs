//! Sharing one matrix's converted formats and device arrays between the kernels prepared from
//! it ([`crate::backend::Backend::share_arrays`]).
//!
//! `collect` measures some thirty configurations of every matrix; fifteen of them read the same
//! three CSR arrays (six thread mappings at three block sizes, merge-path, two cuSPARSE
//! algorithms), and COO, ELL and SELL are each timed at three block sizes. Preparing each
//! configuration from scratch spent 71 % of a large matrix's collect time converting and
//! uploading the same arrays again (docs/ACCURACY.md, session 12). While sharing is on, the
//! backend keeps the host conversion and the uploaded arrays of the latest **group** — one
//! format with one set of parameters, precision included — and hands them to every kernel of
//! the same group; preparing a kernel of another group first drops them (so at most one
//! format's arrays are held beyond the kernels' own, and a caller that orders its
//! configurations by group converts and uploads each format once).
//!
//! The matrix's CSR arrays (`row_ptr`, `col`, `val`) are kept across groups too: every CSR
//! kernel reads them, and the other formats are converted from them on the device
//! (`on_device`).
//!
//! The caller promises that every matrix prepared while sharing is on with the same shape,
//! entry count and value storage is the same matrix; a matrix of another shape, entry count or
//! value address drops the cache. Kernels only read the arrays, and every kernel still has its
//! own x and y, so sharing changes no result: each configuration is checked against the f64
//! reference as before.

use super::upload;
use crate::backend::cuda::CudaScalar;
use crate::formats::Summary;
use crate::{Csr, Result};
use cudarc::driver::{CudaSlice, CudaStream, DeviceRepr, ValidAsZeroBits};
use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

/// A device array that several prepared kernels may hold.
pub(crate) type Dev<U> = Arc<CudaSlice<U>>;

/// Which matrix the cache holds (shape, entries, where its values live on the host).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Identity {
    nrows: usize,
    ncols: usize,
    nnz: usize,
    values_at: usize,
    value_bytes: usize,
}

impl Identity {
    fn of<T: CudaScalar>(csr: &Csr<T>) -> Self {
        Identity {
            nrows: csr.nrows,
            ncols: csr.ncols,
            nnz: csr.nnz(),
            values_at: csr.values.as_ptr() as usize,
            value_bytes: T::BYTES,
        }
    }
}

/// The names of the CSR arrays, kept across groups.
const BASE: [&str; 3] = ["row_ptr", "col", "val"];

/// The converted format and device arrays of one group of one matrix, and its CSR arrays.
#[derive(Default)]
pub(crate) struct SharedArrays {
    matrix: Option<Identity>,
    group: String,
    format: Option<Arc<dyn Any + Send + Sync>>,
    arrays: HashMap<&'static str, Box<dyn Any + Send + Sync>>,
    bytes: u64,
    /// The CSR arrays (names in [`BASE`]) and their device bytes.
    base: HashMap<&'static str, Box<dyn Any + Send + Sync>>,
    base_bytes: u64,
    /// The matrix's summary at a HYB width (kept across groups: a pass over the rows that
    /// took 10 ms of every configuration's preparation at 10^6 rows).
    summary: Option<(Option<usize>, Summary)>,
}

impl SharedArrays {
    /// Make the cache hold `csr`'s group `group`: any other group, and anything of another
    /// matrix, is dropped. Returns the device bytes it already holds for that group and for the
    /// matrix's CSR arrays (memory a new kernel need not allocate, if it reads them).
    pub fn enter<T: CudaScalar>(&mut self, csr: &Csr<T>, group: &str) -> (u64, u64) {
        let id = Identity::of(csr);
        if self.matrix != Some(id) || self.group != group {
            let same = self.matrix == Some(id);
            let summary = self.summary.take().filter(|_| same);
            let (base, base_bytes) = if same {
                (std::mem::take(&mut self.base), self.base_bytes)
            } else {
                (HashMap::new(), 0)
            };
            *self = SharedArrays {
                matrix: Some(id),
                group: group.to_string(),
                summary,
                base,
                base_bytes,
                ..SharedArrays::default()
            };
        }
        (self.bytes, self.base_bytes)
    }

    /// [`Summary::of`] the matrix entered last, computed once per HYB width.
    pub fn summary<T: CudaScalar>(&mut self, csr: &Csr<T>, hyb_width: Option<usize>) -> Summary {
        match &self.summary {
            Some((w, s)) if *w == hyb_width => s.clone(),
            _ => {
                let s = Summary::of(csr, hyb_width);
                self.summary = Some((hyb_width, s.clone()));
                s
            }
        }
    }

    /// The group's converted format, if it was made (`None` for another type: another
    /// precision).
    pub fn format<F: Any + Send + Sync>(&self) -> Option<Arc<F>> {
        self.format.clone()?.downcast::<F>().ok()
    }

    /// Keep the group's converted format (`bytes` on the device).
    pub fn keep_format<F: Any + Send + Sync>(&mut self, f: Arc<F>, bytes: u64) {
        self.format = Some(f);
        self.bytes += bytes;
    }

    /// The array `name` (of the group, or one of the CSR arrays), if it was uploaded.
    pub fn array<U: 'static>(&self, name: &'static str) -> Option<Dev<U>> {
        let map = if BASE.contains(&name) {
            &self.base
        } else {
            &self.arrays
        };
        map.get(name)?.downcast_ref::<Dev<U>>().cloned()
    }

    /// Keep the array `name` (of the group, or one of the CSR arrays).
    pub fn keep_array<U: Send + Sync + 'static>(&mut self, name: &'static str, a: Dev<U>) {
        let bytes = (a.len() * std::mem::size_of::<U>()) as u64;
        if BASE.contains(&name) {
            self.base_bytes += bytes;
            self.base.insert(name, Box::new(a));
        } else {
            self.bytes += bytes;
            self.arrays.insert(name, Box::new(a));
        }
    }
}

/// Uploads the arrays of one kernel: through the shared cache while sharing is on (each name is
/// one array of the group: `row_ptr`, `coo.rows` …), else straight to the device.
pub(crate) struct Uploader<'a> {
    pub stream: &'a Arc<CudaStream>,
    pub shared: Option<&'a mut SharedArrays>,
}

impl Uploader<'_> {
    /// The group's array `name`, holding `data` (computed only when it must be uploaded).
    pub fn up<U, D>(&mut self, name: &'static str, data: impl FnOnce() -> D) -> Result<Dev<U>>
    where
        U: DeviceRepr + ValidAsZeroBits + Send + Sync + 'static,
        D: AsRef<[U]>,
    {
        if let Some(a) = self.shared.as_ref().and_then(|s| s.array::<U>(name)) {
            return Ok(a);
        }
        let a: Dev<U> = Arc::new(upload(self.stream, data().as_ref())?);
        if let Some(s) = self.shared.as_mut() {
            s.keep_array(name, a.clone());
        }
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::{AnyFormat, FormatKind, FormatParams};

    #[test]
    fn another_matrix_or_group_empties_the_cache() {
        let a = Csr::<f64>::from_triplets(2, 2, &[0, 1], &[0, 1], &[1.0, 2.0]).unwrap();
        let b = a.clone();
        let mut s = SharedArrays::default();
        type F64 = AnyFormat<f64>;
        let coo =
            || Arc::new(AnyFormat::convert(&a, FormatKind::Coo, &FormatParams::default()).unwrap());
        assert_eq!(s.enter(&a, "coo"), (0, 0));
        s.keep_format(coo(), 40);
        assert!(s.format::<F64>().is_some());
        // The same matrix and group keeps it; the wrong precision finds nothing.
        assert_eq!(s.enter(&a, "coo"), (40, 0));
        assert!(s.format::<F64>().is_some());
        assert!(s.format::<AnyFormat<f32>>().is_none());
        // Another group, or a copy of the matrix elsewhere in memory, drops it.
        let sum = s.summary(&a, None);
        s.enter(&a, "ell");
        assert!(s.format::<F64>().is_none());
        // The summary belongs to the matrix, not the group.
        assert_eq!(s.summary.as_ref().map(|x| &x.1), Some(&sum));
        s.enter(&a, "coo");
        s.keep_format(coo(), 40);
        s.enter(&b, "coo");
        assert!(s.format::<F64>().is_none());
        assert!(s.summary.is_none());
    }
}
