//! The L2 read bandwidth: `l2_read` (kernels/micro.cu) re-reads a buffer of a quarter of the L2
//! [`L2_PASSES`] times in one launch, through L2 only, with every SM's full complement of
//! threads; the bandwidth is the bytes read over the median launch time of [`L2_RUNS`] launches
//! after one warm-up launch (which brings the buffer into L2).
//!
//! Why not an SpMV: the instrument's SpMV micro-benchmark with an L2-sized working set reads x
//! through random (hashed) columns and lasts a few microseconds, so its effective bandwidth is
//! bounded by the gathers and the launch, not by the L2 — on the H200 it read 4.3 TB/s, the DRAM
//! figure. One long launch of coalesced 16-byte loads isolates what the L2 can deliver to the
//! SMs, which is the ceiling an SpMV whose working set fits in L2 cannot exceed.
//!
//! A quarter and not the whole: the L2 of an H100 / H200 is two partitions, and a buffer near the
//! capacity partly misses (replacement, the other partition's copy); a quarter stays resident.

use super::{cuda, zeros, CudaBackend};
use crate::{Error, Result};
use cudarc::driver::{LaunchConfig, PushKernelArg};

/// Passes over the buffer in one launch.
pub const L2_PASSES: u32 = 64;
/// Timed launches (median).
pub const L2_RUNS: usize = 10;
/// Threads per block of `l2_read`.
const BLOCK: u32 = 256;

/// The buffer's bytes for an L2 of `l2_bytes`: a quarter, in whole 4 KiB pages (0 when the L2
/// is under 64 KiB or unknown: no measurement).
pub fn buffer_bytes(l2_bytes: u64) -> u64 {
    if l2_bytes < 64 << 10 {
        return 0;
    }
    (l2_bytes / 4) & !0xfff
}

/// Measure the L2 read bandwidth of `be`'s device, GB/s (see the module documentation).
pub(super) fn measure_l2_bandwidth(be: &CudaBackend) -> Result<f64> {
    let bytes = buffer_bytes(be.info.l2_bytes);
    if bytes == 0 {
        return Err(Error::Unsupported("the L2 size is unknown".into()));
    }
    let words = bytes / 16;
    // Not zeros (a read of zeros can run differently from a read of data).
    let host: Vec<f32> = (0..bytes / 4).map(|i| 1.0 + (i % 7) as f32).collect();
    let buf = be
        .stream
        .clone_htod(&host)
        .map_err(cuda("L2 bandwidth: upload"))?;
    let mut sink = zeros::<f32>(&be.stream, 1, "L2 bandwidth sink")?;
    let f = be.function("l2_read")?;
    let per_sm = (be.info.max_threads_per_sm / BLOCK).max(1);
    let cfg = LaunchConfig {
        grid_dim: (be.info.sm_count.max(1) * per_sm, 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    };
    let passes = L2_PASSES;
    let launch = |sink: &mut cudarc::driver::CudaSlice<f32>| -> Result<()> {
        let mut b = be.stream.launch_builder(&f);
        b.arg(&buf).arg(&words).arg(&passes).arg(sink);
        // SAFETY: `buf` holds `words` 16-byte words (4 × words f32, 256-byte aligned by the
        // allocator) and `sink` one f32, the kernel's signature in kernels/micro.cu.
        unsafe { b.launch(cfg) }
            .map(|_| ())
            .map_err(cuda("L2 bandwidth: launch"))
    };
    launch(&mut sink)?;
    let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    let mut events = Vec::with_capacity(L2_RUNS + 1);
    for _ in 0..=L2_RUNS {
        events.push(
            be.ctx
                .new_event(flags)
                .map_err(cuda("L2 bandwidth: event"))?,
        );
    }
    events[0]
        .record(&be.stream)
        .map_err(cuda("L2 bandwidth: record"))?;
    for e in &events[1..] {
        launch(&mut sink)?;
        e.record(&be.stream).map_err(cuda("L2 bandwidth: record"))?;
    }
    be.stream
        .synchronize()
        .map_err(cuda("L2 bandwidth: synchronize"))?;
    let mut secs = Vec::with_capacity(L2_RUNS);
    for w in events.windows(2) {
        let ms = w[0]
            .elapsed_ms(&w[1])
            .map_err(cuda("L2 bandwidth: elapsed"))?;
        secs.push(ms as f64 * 1e-3);
    }
    let t = crate::backend::timing::median(&secs);
    Ok(words as f64 * 16.0 * passes as f64 / t / 1e9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_is_a_quarter_of_the_l2_in_pages() {
        assert_eq!(buffer_bytes(50 << 20), 13_107_200);
        assert_eq!(buffer_bytes(60 << 20), 15 << 20);
        assert_eq!(buffer_bytes(0), 0);
        assert_eq!(buffer_bytes(32 << 10), 0);
        assert_eq!(buffer_bytes(50 << 20) % 4096, 0);
    }
}
