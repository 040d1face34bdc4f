//! Timing with CUDA events.
//!
//! Each of the `β` runs is bracketed by its own pair of events recorded in the stream, and the runs
//! are queued back to back with no host synchronization in between (as an iterative solver would
//! issue them); the host waits once at the end and reads every pair's elapsed time. The warm-up
//! runs (`α`) are timed too and kept in [`Timing::samples`]; the statistics skip them.
//!
//! Cache regime: by default the runs repeat on the same matrix and x, so whatever of them fits in
//! the L2 cache stays there. With [`TimingProtocol::cold`] the L2 is flushed before each run by
//! writing a buffer of twice its size (a `cuMemsetD32Async`), between the previous run's end event
//! and the next run's start event — outside the timed region.
//!
//! Clocks: before a timing that follows an idle period (the first of a process, or one after
//! more than [`CLOCK_IDLE_MS`] of host work such as a format conversion) the backend keeps the GPU
//! busy for [`CLOCK_WARMUP_MS`] so that the SM clock has left its idle state; the warm-up runs
//! (`α`) then absorb whatever ramp remains.

use crate::backend::{Timing, TimingProtocol};
use crate::{Error, Result};
use cudarc::driver::sys::{self, CUevent_flags};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtrMut};
use std::sync::Arc;

/// Median of a non-empty slice (NaN for an empty one).
pub fn median(v: &[f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        0.5 * (s[n / 2 - 1] + s[n / 2])
    }
}

/// Fill `count` 32-bit words at `ptr` with `value`, asynchronously in `stream`.
///
/// # Safety
/// `ptr` must point to at least `count` writable 32-bit words of device memory.
pub unsafe fn memset_u32(
    ptr: sys::CUdeviceptr,
    value: u32,
    count: usize,
    stream: &CudaStream,
) -> Result<()> {
    if count == 0 {
        return Ok(());
    }
    sys::cuMemsetD32Async(ptr, value, count, stream.cu_stream())
        .result()
        .map_err(|e| Error::Cuda(format!("cuMemsetD32Async: {e:?}")))
}

/// A buffer whose overwrite evicts the L2 cache.
pub struct L2Flush {
    buf: CudaSlice<u32>,
    round: u32,
}

impl L2Flush {
    /// A flush buffer of twice `l2_bytes` (at least 1 MiB).
    pub fn new(stream: &Arc<CudaStream>, l2_bytes: u64) -> Result<Self> {
        let words = ((2 * l2_bytes).max(1 << 20) / 4) as usize;
        let buf = stream
            .alloc_zeros::<u32>(words)
            .map_err(|e| Error::Cuda(format!("allocating the L2 flush buffer: {e:?}")))?;
        Ok(L2Flush { buf, round: 0 })
    }

    /// Queue one flush in `stream`.
    pub fn flush(&mut self, stream: &Arc<CudaStream>) -> Result<()> {
        self.round = self.round.wrapping_add(1);
        let n = self.buf.len();
        let (ptr, _sync) = self.buf.device_ptr_mut(stream);
        // SAFETY: the buffer holds n words.
        unsafe { memset_u32(ptr, self.round, n, stream) }
    }
}

/// Milliseconds of GPU work before a timing that follows an idle period (see
/// `CudaBackend::warm_up_clocks`).
pub const CLOCK_WARMUP_MS: u64 = 50;
/// Host time after a timing beyond which the GPU counts as idle again.
pub const CLOCK_IDLE_MS: u64 = 100;

/// Keep the GPU busy with flush-buffer writes for at least `ms` milliseconds of wall time.
pub fn keep_busy(flush: &mut L2Flush, stream: &Arc<CudaStream>, ms: u64) -> Result<()> {
    let t0 = std::time::Instant::now();
    while t0.elapsed().as_millis() < ms as u128 {
        for _ in 0..8 {
            flush.flush(stream)?;
        }
        stream
            .synchronize()
            .map_err(|e| Error::Cuda(format!("clock warm-up: {e:?}")))?;
    }
    Ok(())
}

/// Time `protocol.runs` calls of `launch` (each queues one whole SpMV without synchronizing),
/// flushing the L2 before each with `flush` when given.
pub fn time_runs(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    protocol: &TimingProtocol,
    mut flush: Option<&mut L2Flush>,
    launch: &mut dyn FnMut() -> Result<()>,
) -> Result<Timing> {
    if protocol.runs == 0 {
        return Err(Error::Invalid(
            "the timing protocol needs at least one run".into(),
        ));
    }
    let err = |e: cudarc::driver::DriverError| Error::Cuda(format!("timing events: {e:?}"));
    let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
    let mut pairs = Vec::with_capacity(protocol.runs);
    for _ in 0..protocol.runs {
        pairs.push((
            ctx.new_event(flags).map_err(err)?,
            ctx.new_event(flags).map_err(err)?,
        ));
    }
    for (start, end) in &pairs {
        if let Some(f) = flush.as_deref_mut() {
            f.flush(stream)?;
        }
        start.record(stream).map_err(err)?;
        launch()?;
        end.record(stream).map_err(err)?;
    }
    stream
        .synchronize()
        .map_err(|e| Error::Cuda(format!("kernel failed while timing: {e:?}")))?;
    let mut samples = Vec::with_capacity(protocol.runs);
    for (start, end) in &pairs {
        samples.push(start.elapsed_ms(end).map_err(err)? as f64 * 1e-3);
    }
    Ok(Timing {
        samples,
        warmup: protocol.warmup,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }
}
