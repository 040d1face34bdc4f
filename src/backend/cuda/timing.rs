//! The timing protocol of [`crate::backend::timing`] on a CUDA device.
//!
//! Batched mode: one SpMV (all its launches and memsets) is captured into a CUDA graph by stream
//! capture; a batch is one graph of `n` copies (so the device runs them back to back without
//! waiting for the host), replayed and bracketed by a pair of events. Warm-up batches are
//! replayed until the protocol's warm-up time has passed; then one more, unmeasured batch is
//! queued and the `β` timed batches right behind it, without host synchronization, so the device
//! never idles between them. If a sequence cannot be captured (a library call that refuses stream
//! capture), the launches are queued directly in the same batches and [`Timing::graph`] says so.
//!
//! Every batch holds at least two SpMVs: the merge-path kernel passes an *epoch* to its
//! look-back, which a graph freezes, and two consecutive SpMVs of one graph must not share one.
//!
//! Latency mode and cold mode time one SpMV per sample. Latency: the host waits for each sample
//! before queueing the next, so the device is idle when the SpMV is queued. Cold: the L2 is
//! flushed before each SpMV by writing a buffer of twice its size (a `cuMemsetD32Async`),
//! between the previous sample's end event and the next one's start event — outside the timed
//! region; samples are queued back to back.

use crate::backend::{Timing, TimingMode, TimingProtocol};
use crate::{Error, Result};
use cudarc::driver::sys::{self, CUevent_flags};
use cudarc::driver::{CudaContext, CudaEvent, CudaGraph, CudaSlice, CudaStream, DevicePtrMut};
use std::sync::Arc;
use std::time::Instant;

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

/// Queues one whole SpMV without waiting.
pub type Enqueue<'e> = dyn FnMut() -> Result<()> + 'e;

fn event_err(e: cudarc::driver::DriverError) -> Error {
    Error::Cuda(format!("timing events: {e:?}"))
}

fn new_event(ctx: &Arc<CudaContext>) -> Result<CudaEvent> {
    ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
        .map_err(event_err)
}

fn sync(stream: &CudaStream) -> Result<()> {
    stream
        .synchronize()
        .map_err(|e| Error::Cuda(format!("kernel failed while timing: {e:?}")))
}

/// Capture `n` consecutive SpMVs into one graph. `None` when the sequence cannot be captured
/// (the stream is left out of capture mode either way).
fn capture(stream: &Arc<CudaStream>, n: usize, enqueue: &mut Enqueue) -> Option<CudaGraph> {
    use sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL as MODE;
    stream.begin_capture(MODE).ok()?;
    let queued = (0..n).try_for_each(|_| enqueue());
    // End the capture whatever happened, so the stream is usable again.
    let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0));
    match (queued, graph) {
        (Ok(()), Ok(Some(g))) => g.upload().ok().map(|_| g),
        _ => None,
    }
}

/// `n` SpMVs as one unit: a graph of `n` copies, or `n` direct calls of the enqueue function.
enum Batch {
    Graph(CudaGraph, usize),
    Direct(usize),
}

impl Batch {
    fn new(stream: &Arc<CudaStream>, n: usize, graphs: bool, enqueue: &mut Enqueue) -> Batch {
        match graphs.then(|| capture(stream, n, enqueue)).flatten() {
            Some(g) => Batch::Graph(g, n),
            None => Batch::Direct(n),
        }
    }

    fn len(&self) -> usize {
        match self {
            Batch::Graph(_, n) | Batch::Direct(n) => *n,
        }
    }

    fn queue(&self, enqueue: &mut Enqueue) -> Result<()> {
        match self {
            Batch::Graph(g, _) => g
                .launch()
                .map_err(|e| Error::Cuda(format!("cuGraphLaunch: {e:?}"))),
            Batch::Direct(n) => (0..*n).try_for_each(|_| enqueue()),
        }
    }

    /// Queue the batch between the events `(a, b)`, wait, and return seconds per SpMV.
    fn time_one(
        &self,
        (a, b): &(CudaEvent, CudaEvent),
        stream: &Arc<CudaStream>,
        enqueue: &mut Enqueue,
    ) -> Result<f64> {
        a.record(stream).map_err(event_err)?;
        self.queue(enqueue)?;
        b.record(stream).map_err(event_err)?;
        sync(stream)?;
        Ok(a.elapsed_ms(b).map_err(event_err)? as f64 * 1e-3 / self.len() as f64)
    }
}

/// Time one SpMV (queued by `enqueue`) with `protocol` (see the module documentation), flushing
/// the L2 before each SpMV with `flush` in cold mode.
pub fn time_spmv(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    protocol: &TimingProtocol,
    flush: Option<&mut L2Flush>,
    enqueue: &mut Enqueue,
) -> Result<Timing> {
    protocol.validate()?;
    if !protocol.batched() {
        return time_single(ctx, stream, protocol, flush, enqueue);
    }
    // One pair of events for the pilot and the warm-up batches, which are waited for one by one.
    let pair = (new_event(ctx)?, new_event(ctx)?);
    // Pilot: one SpMV on its own, to size the batches.
    let one = Batch::new(stream, 1, true, enqueue);
    let graphs = matches!(one, Batch::Graph(..));
    let pilot = one.time_one(&pair, stream, enqueue)?;
    drop(one);
    let mut batch = Batch::new(stream, protocol.per_batch(pilot), graphs, enqueue);
    let start = Instant::now();
    let mut warmup_samples = Vec::new();
    loop {
        let s = batch.time_one(&pair, stream, enqueue)?;
        warmup_samples.push(s);
        if warmup_samples.len() == 1 {
            // The pilot included the launch latency of an idle device: size again from a batch.
            let n = protocol.per_batch(s);
            if n > 2 * batch.len() {
                batch = Batch::new(stream, n, graphs, enqueue);
            }
        }
        let done = start.elapsed().as_secs_f64() * 1e3 >= protocol.warmup_ms;
        if (warmup_samples.len() >= 2 && done) || warmup_samples.len() >= 1_000_000 {
            break;
        }
    }
    // One more batch keeps the device busy while the host queues the timed ones behind it.
    batch.queue(enqueue)?;
    let mut pairs = Vec::with_capacity(protocol.runs);
    for _ in 0..protocol.runs {
        pairs.push((new_event(ctx)?, new_event(ctx)?));
    }
    for (a, b) in &pairs {
        a.record(stream).map_err(event_err)?;
        batch.queue(enqueue)?;
        b.record(stream).map_err(event_err)?;
    }
    sync(stream)?;
    let n = batch.len() as f64;
    let samples = pairs
        .iter()
        .map(|(a, b)| Ok(a.elapsed_ms(b).map_err(event_err)? as f64 * 1e-3 / n))
        .collect::<Result<Vec<f64>>>()?;
    Ok(Timing {
        samples,
        warmup: protocol.warmup,
        per_batch: batch.len(),
        graph: matches!(batch, Batch::Graph(..)),
        warmup_samples,
    })
}

/// One SpMV per sample: latency mode (the host waits for each) or cold mode (L2 flushed before
/// each, queued back to back). The warm-up runs single SpMVs until its time has passed.
fn time_single(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    protocol: &TimingProtocol,
    mut flush: Option<&mut L2Flush>,
    enqueue: &mut Enqueue,
) -> Result<Timing> {
    let latency = protocol.mode == TimingMode::Latency;
    let single = Batch::Direct(1);
    let pair = (new_event(ctx)?, new_event(ctx)?);
    let start = Instant::now();
    let mut warmup_samples = Vec::new();
    while warmup_samples.len() < 2 || start.elapsed().as_secs_f64() * 1e3 < protocol.warmup_ms {
        if let Some(f) = flush.as_deref_mut() {
            f.flush(stream)?;
        }
        warmup_samples.push(single.time_one(&pair, stream, enqueue)?);
        if warmup_samples.len() >= 1_000_000 {
            break;
        }
    }
    let mut pairs = Vec::with_capacity(protocol.runs);
    for _ in 0..protocol.runs {
        pairs.push((new_event(ctx)?, new_event(ctx)?));
    }
    for (a, b) in &pairs {
        if let Some(f) = flush.as_deref_mut() {
            f.flush(stream)?;
        }
        a.record(stream).map_err(event_err)?;
        enqueue()?;
        b.record(stream).map_err(event_err)?;
        if latency {
            sync(stream)?;
        }
    }
    sync(stream)?;
    let samples = pairs
        .iter()
        .map(|(a, b)| Ok(a.elapsed_ms(b).map_err(event_err)? as f64 * 1e-3))
        .collect::<Result<Vec<f64>>>()?;
    Ok(Timing {
        samples,
        warmup: protocol.warmup,
        per_batch: 1,
        graph: false,
        warmup_samples,
    })
}
