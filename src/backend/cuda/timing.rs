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
//! **Parts** ([`time_parts`]): a plan's blocks are independent parts of one SpMV. Serial
//! ([`Overlap::Serial`]): the parts are queued in order inside one capture, so the graph is a
//! chain. Concurrent ([`Overlap::Concurrent`]): the parts are captured in the same one stream,
//! but before each part the capture's dependency set is set to the previous SpMV's last nodes
//! (`cuStreamUpdateCaptureDependencies`), so each part is a branch of its own and the next SpMV's
//! parts depend on every branch — a fork/join graph of the parts' own kernel nodes, with no join
//! node, whose branches the device runs at the same time. Every part still launches on the
//! backend's one stream, so nothing in the kernels or in cuSPARSE's handle changes; the graph
//! alone carries the concurrency. Consecutive SpMVs stay ordered, as in an iterative solver.
//! (Until session 48 each part was a child graph node and an empty node joined each SpMV: that
//! graph barely overlapped its branches — see [`fork_join`].) Where a part cannot be captured
//! the batch falls back to serial launches and [`Timing::concurrent`] says so.
//!
//! Latency mode and cold mode time one SpMV per sample. Latency: the host waits for each sample
//! before queueing the next, so the device is idle when the SpMV is queued. Cold: the L2 is
//! flushed before each SpMV by writing a buffer of twice its size (a `cuMemsetD32Async`),
//! between the previous sample's end event and the next one's start event — outside the timed
//! region; samples are queued back to back. A concurrent SpMV there is a fork/join graph of one
//! SpMV, built afresh for each sample before its events are queued (a graph freezes the
//! merge-path epoch, so one graph is never replayed twice in a row).

use crate::backend::{enqueue_in_order, Overlap, Part, Timing, TimingMode, TimingProtocol};
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

/// Capture what `queue` queues in `stream` (`false`: it could not) into one graph, instantiated
/// and uploaded. `None` when it cannot be captured (the stream is left out of capture mode
/// either way).
fn capture_with(stream: &Arc<CudaStream>, queue: impl FnOnce() -> bool) -> Option<CudaGraph> {
    use sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL as MODE;
    stream.begin_capture(MODE).ok()?;
    let queued = queue();
    // End the capture whatever happened, so the stream is usable again.
    let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0));
    match (queued, graph) {
        (true, Ok(Some(g))) => g.upload().ok().map(|_| g),
        _ => None,
    }
}

/// Capture `n` consecutive SpMVs, each the parts in order, into one graph (a chain).
fn capture(stream: &Arc<CudaStream>, n: usize, parts: &mut [Part]) -> Option<CudaGraph> {
    capture_with(stream, || {
        (0..n).try_for_each(|_| enqueue_in_order(parts)).is_ok()
    })
}

/// Queue one replay of `g`.
fn launch(g: &CudaGraph) -> Result<()> {
    g.launch()
        .map_err(|e| Error::Cuda(format!("cuGraphLaunch: {e:?}")))
}

/// The nodes the capture in `stream` would make the next launch depend on (copied: the driver's
/// array lives only until the next call on the stream). `None` when the query fails.
fn capture_frontier(stream: &CudaStream) -> Option<Vec<sys::CUgraphNode>> {
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    let mut deps: *const sys::CUgraphNode = std::ptr::null();
    let mut count = 0usize;
    // SAFETY: a stream in capture mode; the out-pointers are valid; edge data and the graph
    // are not asked for (null).
    unsafe {
        sys::cuStreamGetCaptureInfo_v3(
            stream.cu_stream(),
            &mut status,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut deps,
            std::ptr::null_mut(),
            &mut count,
        )
    }
    .result()
    .ok()?;
    if status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE {
        return None;
    }
    if count == 0 || deps.is_null() {
        return Some(Vec::new());
    }
    // SAFETY: the driver returned `count` valid nodes at `deps`.
    Some(unsafe { std::slice::from_raw_parts(deps, count) }.to_vec())
}

/// Make the next launch captured in `stream` depend on exactly `frontier` (none: a root node).
fn set_capture_frontier(stream: &CudaStream, frontier: &[sys::CUgraphNode]) -> Option<()> {
    let mut nodes = frontier.to_vec();
    let set = sys::CUstreamUpdateCaptureDependencies_flags_enum::CU_STREAM_SET_CAPTURE_DEPENDENCIES;
    // SAFETY: a stream in capture mode; `nodes` are nodes of its capture graph (or empty).
    unsafe {
        sys::cuStreamUpdateCaptureDependencies_v2(
            stream.cu_stream(),
            nodes.as_mut_ptr(),
            std::ptr::null(),
            nodes.len(),
            set as u32,
        )
    }
    .result()
    .ok()
}

/// Queue `n` SpMVs of `parts` into the capture in `stream`, each part a branch of its own: every
/// part of an SpMV depends on all the previous SpMV's last nodes, and nothing else.
fn queue_branches(stream: &CudaStream, n: usize, parts: &mut [Part]) -> Option<()> {
    let mut frontier: Vec<sys::CUgraphNode> = Vec::new();
    for _ in 0..n {
        let mut leaves: Vec<sys::CUgraphNode> = Vec::new();
        for part in parts.iter_mut() {
            set_capture_frontier(stream, &frontier)?;
            part().ok()?;
            let after = capture_frontier(stream)?;
            if after != frontier {
                for l in after {
                    if !leaves.contains(&l) {
                        leaves.push(l);
                    }
                }
            }
        }
        if !leaves.is_empty() {
            frontier = leaves;
        }
    }
    set_capture_frontier(stream, &frontier)
}

/// `n` consecutive SpMVs whose parts run as concurrent branches (see the module documentation),
/// captured in one stream capture whose dependency set is steered before each part: the graph's
/// nodes are the parts' own kernel and memset nodes, each SpMV's parts depend on every last node
/// of the previous SpMV, with no join node between them ([`capture_with`]). `None` when a part
/// cannot be captured or the driver refuses the graph.
///
/// Measured (session 49, H100, `scripts/device_fork_join.cu`; docs/OPTIMIZER.md): built this
/// way two kernels of 5.3 and 4.4 µs ran 7.8 µs per SpMV against 11.3 µs in a chain, while the
/// construction of sessions 8–48 (each part a child graph node, an empty join node after each
/// SpMV) ran 11.2–11.4 µs — no faster than the chain — and two 2-µs kernels 4.1–5.1 µs against
/// 3.9 µs in a chain and 2.5 µs this way.
pub fn fork_join(stream: &Arc<CudaStream>, n: usize, parts: &mut [Part]) -> Option<CudaGraph> {
    capture_with(stream, || queue_branches(stream, n, parts).is_some())
}

/// `n` SpMVs as one unit: a graph of `n` copies (a chain of the parts, or fork/join), or `n`
/// direct calls of the parts in order.
enum Batch {
    Graph(CudaGraph, usize),
    Forked(CudaGraph, usize),
    Direct(usize),
}

impl Batch {
    /// A batch of `n` SpMVs: a graph if `graphs` and the parts can be captured (concurrent
    /// branches where `overlap` asks for them and there are two parts or more), else direct.
    fn new(
        stream: &Arc<CudaStream>,
        n: usize,
        graphs: bool,
        overlap: Overlap,
        parts: &mut [Part],
    ) -> Batch {
        if !graphs {
            return Batch::Direct(n);
        }
        if overlap == Overlap::Concurrent && parts.len() >= 2 {
            return match fork_join(stream, n, parts) {
                Some(g) => Batch::Forked(g, n),
                None => Batch::Direct(n),
            };
        }
        match capture(stream, n, parts) {
            Some(g) => Batch::Graph(g, n),
            None => Batch::Direct(n),
        }
    }

    fn len(&self) -> usize {
        match self {
            Batch::Graph(_, n) | Batch::Forked(_, n) | Batch::Direct(n) => *n,
        }
    }

    fn is_graph(&self) -> bool {
        !matches!(self, Batch::Direct(_))
    }

    fn queue(&self, parts: &mut [Part]) -> Result<()> {
        match self {
            Batch::Graph(g, _) | Batch::Forked(g, _) => launch(g),
            Batch::Direct(n) => (0..*n).try_for_each(|_| enqueue_in_order(parts)),
        }
    }

    /// Queue the batch between the events `(a, b)`, wait, and return seconds per SpMV.
    fn time_one(
        &self,
        (a, b): &(CudaEvent, CudaEvent),
        stream: &Arc<CudaStream>,
        parts: &mut [Part],
    ) -> Result<f64> {
        a.record(stream).map_err(event_err)?;
        self.queue(parts)?;
        b.record(stream).map_err(event_err)?;
        sync(stream)?;
        Ok(a.elapsed_ms(b).map_err(event_err)? as f64 * 1e-3 / self.len() as f64)
    }
}

/// Queue one SpMV of `parts` as `overlap` says, and wait for it: a fork/join graph of one SpMV
/// for concurrent parts (built for this call; falls back to the parts in order where it cannot
/// be built), else the parts in order. Returns whether the parts ran concurrently.
pub fn run_parts(stream: &Arc<CudaStream>, overlap: Overlap, parts: &mut [Part]) -> Result<bool> {
    let graph = (overlap == Overlap::Concurrent && parts.len() >= 2)
        .then(|| fork_join(stream, 1, parts))
        .flatten();
    match &graph {
        Some(g) => launch(g)?,
        None => enqueue_in_order(parts)?,
    }
    // The graph is destroyed only after it ran.
    sync(stream)?;
    Ok(graph.is_some())
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
    let mut parts: [Part; 1] = [Box::new(enqueue)];
    time_parts(ctx, stream, protocol, flush, Overlap::Serial, &mut parts)
}

/// Time one SpMV made of independent `parts`, run as `overlap` says, with `protocol` (see the
/// module documentation), flushing the L2 before each SpMV with `flush` in cold mode.
pub fn time_parts(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    protocol: &TimingProtocol,
    flush: Option<&mut L2Flush>,
    overlap: Overlap,
    parts: &mut [Part],
) -> Result<Timing> {
    protocol.validate()?;
    if !protocol.batched() {
        return time_single(ctx, stream, protocol, flush, overlap, parts);
    }
    // One pair of events for the pilot and the warm-up batches, which are waited for one by one.
    let pair = (new_event(ctx)?, new_event(ctx)?);
    // Pilot: one SpMV on its own, to size the batches.
    let one = Batch::new(stream, 1, true, overlap, parts);
    let graphs = one.is_graph();
    let pilot = one.time_one(&pair, stream, parts)?;
    if protocol.is_far(pilot) {
        // Step 8: the pilot and one more SpMV are the samples.
        let second = one.time_one(&pair, stream, parts)?;
        let forked = matches!(one, Batch::Forked(..));
        return Ok(Timing::far(pilot, second, graphs, forked));
    }
    drop(one);
    let mut batch = Batch::new(stream, protocol.per_batch(pilot), graphs, overlap, parts);
    let start = Instant::now();
    let mut warmup_samples = Vec::new();
    let slow = protocol.is_slow(pilot);
    loop {
        let s = batch.time_one(&pair, stream, parts)?;
        warmup_samples.push(s);
        if warmup_samples.len() == 1 {
            // The pilot included the launch latency of an idle device: size again from a batch.
            let n = protocol.per_batch(s);
            if n > 2 * batch.len() {
                batch = Batch::new(stream, n, graphs, overlap, parts);
            }
        }
        let elapsed_ms = start.elapsed().as_secs_f64() * 1e3;
        if protocol.warmup_done(pilot, warmup_samples.len(), elapsed_ms)
            || warmup_samples.len() >= 1_000_000
        {
            break;
        }
    }
    // One more batch keeps the device busy while the host queues the timed ones behind it (a
    // slow kernel's first timed SpMV outlasts the queueing of the rest).
    if !slow {
        batch.queue(parts)?;
    }
    let runs = protocol.timed_runs(pilot);
    let mut pairs = Vec::with_capacity(runs);
    for _ in 0..runs {
        pairs.push((new_event(ctx)?, new_event(ctx)?));
    }
    for (a, b) in &pairs {
        a.record(stream).map_err(event_err)?;
        batch.queue(parts)?;
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
        graph: batch.is_graph(),
        concurrent: matches!(batch, Batch::Forked(..)),
        warmup_samples,
    })
}

/// One SpMV per sample: latency mode (the host waits for each) or cold mode (L2 flushed before
/// each, queued back to back). The warm-up runs single SpMVs until its time has passed.
/// Concurrent parts run as a fork/join graph of one SpMV, built for each sample before its
/// flush and events are queued and kept until the stream is idle (see the module
/// documentation).
fn time_single(
    ctx: &Arc<CudaContext>,
    stream: &Arc<CudaStream>,
    protocol: &TimingProtocol,
    mut flush: Option<&mut L2Flush>,
    overlap: Overlap,
    parts: &mut [Part],
) -> Result<Timing> {
    let latency = protocol.mode == TimingMode::Latency;
    let forked = overlap == Overlap::Concurrent && parts.len() >= 2;
    let mut concurrent = forked;
    // The graphs of the samples queued and not yet waited for.
    let mut alive: Vec<CudaGraph> = Vec::new();
    // Queue one sample (flush, start event, the SpMV, end event); its graph goes to `alive`.
    let mut sample = |(a, b): &(CudaEvent, CudaEvent),
                      flush: &mut Option<&mut L2Flush>,
                      alive: &mut Vec<CudaGraph>,
                      parts: &mut [Part]|
     -> Result<()> {
        let graph = forked.then(|| fork_join(stream, 1, parts)).flatten();
        concurrent &= graph.is_some();
        if let Some(f) = flush.as_deref_mut() {
            f.flush(stream)?;
        }
        a.record(stream).map_err(event_err)?;
        match &graph {
            Some(g) => launch(g)?,
            None => enqueue_in_order(parts)?,
        }
        b.record(stream).map_err(event_err)?;
        alive.extend(graph);
        Ok(())
    };
    let pair = (new_event(ctx)?, new_event(ctx)?);
    let start = Instant::now();
    let mut warmup_samples = Vec::new();
    while warmup_samples.len() < 2 || start.elapsed().as_secs_f64() * 1e3 < protocol.warmup_ms {
        sample(&pair, &mut flush, &mut alive, parts)?;
        sync(stream)?;
        alive.clear();
        warmup_samples.push(pair.0.elapsed_ms(&pair.1).map_err(event_err)? as f64 * 1e-3);
        if warmup_samples.len() >= 1_000_000 {
            break;
        }
    }
    let mut pairs = Vec::with_capacity(protocol.runs);
    for _ in 0..protocol.runs {
        pairs.push((new_event(ctx)?, new_event(ctx)?));
    }
    for p in &pairs {
        sample(p, &mut flush, &mut alive, parts)?;
        if latency {
            sync(stream)?;
            alive.clear();
        }
    }
    sync(stream)?;
    drop(alive);
    let samples = pairs
        .iter()
        .map(|(a, b)| Ok(a.elapsed_ms(b).map_err(event_err)? as f64 * 1e-3))
        .collect::<Result<Vec<f64>>>()?;
    Ok(Timing {
        samples,
        warmup: protocol.warmup,
        per_batch: 1,
        graph: concurrent,
        concurrent,
        warmup_samples,
    })
}
