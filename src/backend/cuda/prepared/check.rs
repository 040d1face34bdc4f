//! The check of a prepared kernel on the device ([`PreparedSpmv::check`]): x copied from a
//! device copy of the reference's x, y poisoned, one SpMV, and the largest relative error
//! computed where y is (`kernels/check.cu`, whose contract is
//! [`Reference::max_relative_error`]) — one number read back instead of y, and x uploaded once
//! per reference instead of once per kernel. On a 10⁷-row matrix that is 2 × 40–80 MB of
//! copies and a host pass saved per configuration: `collect` checked its thirty configurations
//! of the largest matrices in 30 % of its time (docs/ACCURACY.md, session 22).
//!
//! The backend keeps the latest reference on the device ([`DeviceReference`], by
//! [`Reference::id`]): `collect` and `evaluate` check every configuration of a matrix and
//! precision against one reference.

use super::{cuda, upload, zeros, CudaPrepared};
use crate::backend::cuda::synthetic::fill_config;
use crate::backend::cuda::timing::memset_u32;
use crate::backend::cuda::{CudaBackend, CudaScalar};
use crate::backend::measure::Reference;
use crate::backend::PreparedSpmv;
use crate::{Error, Result};
use cudarc::driver::{CudaSlice, DevicePtrMut, PushKernelArg};
use std::any::Any;

/// A reference and its x on the device.
pub(crate) struct DeviceReference {
    id: u64,
    /// x as a `CudaSlice<T>` of the reference's precision.
    x: Box<dyn Any + Send + Sync>,
    y: CudaSlice<f64>,
    scale: CudaSlice<f64>,
    worst: CudaSlice<u64>,
}

impl DeviceReference {
    fn new<T: CudaScalar>(be: &CudaBackend, x: &[T], r: &Reference) -> Result<Self> {
        let s = &be.stream;
        Ok(DeviceReference {
            id: r.id(),
            x: Box::new(upload(s, x)?),
            y: upload(s, r.y())?,
            scale: upload(s, r.scale())?,
            worst: zeros(s, 1, "allocating the check's result")?,
        })
    }
}

impl<T: CudaScalar> CudaPrepared<'_, T> {
    /// [`PreparedSpmv::check`] on the device (see the module documentation).
    pub(super) fn check_on_device(&mut self, x: &[T], reference: &Reference) -> Result<f64> {
        if x.len() != self.ncols {
            return Err(Error::Invalid(format!(
                "x has {} entries, the matrix {} columns",
                x.len(),
                self.ncols
            )));
        }
        if reference.y().len() != self.nrows {
            return Ok(f64::INFINITY);
        }
        let be = self.be;
        let s = be.stream.clone();
        let mut held = be.reference.lock().unwrap_or_else(|e| e.into_inner());
        let fresh = held.as_ref().map_or(true, |d| {
            d.id != reference.id() || !d.x.is::<CudaSlice<T>>()
        });
        if fresh {
            // The old copy first: its memory is free for the new one.
            *held = None;
            *held = Some(DeviceReference::new(be, x, reference)?);
        }
        let d = held.as_mut().expect("set above");
        let dx = d.x.downcast_ref::<CudaSlice<T>>().expect("checked above");
        if !x.is_empty() {
            s.memcpy_dtod(&dx.slice(0..x.len()), &mut self.x.slice_mut(0..x.len()))
                .map_err(cuda("copying x on the device"))?;
        }
        self.poison_y()?;
        self.run()?;
        if self.nrows == 0 {
            return Ok(0.0);
        }
        {
            let (ptr, g) = d.worst.device_ptr_mut(&s);
            // SAFETY: one 64-bit word, two 32-bit words.
            unsafe { memset_u32(ptr, 0, 2, &s)? };
            drop(g);
        }
        let f = be.function(&format!("ck_max_error_{}", T::PRECISION.name()))?;
        let n = self.nrows as u32;
        let cfg = fill_config(be, self.nrows as u64)?;
        let mut b = s.launch_builder(&f);
        b.arg(&n)
            .arg(&self.y)
            .arg(&d.y)
            .arg(&d.scale)
            .arg(&mut d.worst);
        // SAFETY: ck_max_error(n, y, yref, scale, out): y, yref and scale hold n elements (the
        // reference's length is checked above), out one word.
        unsafe { b.launch(cfg) }.map_err(cuda("launching the check"))?;
        let worst = s
            .clone_dtoh(&d.worst)
            .map_err(cuda("reading the check's result"))?;
        Ok(f64::from_bits(worst[0]))
    }
}
