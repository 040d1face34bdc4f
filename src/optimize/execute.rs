//! Running a plan: every block converted to its format and prepared on the backend as its own
//! kernel ([`crate::backend::Backend::prepare`] on [`Csr::slice_rows`]), each writing its row
//! range of y.
//!
//! [`PreparedPlan`] implements [`PreparedSpmv`], so anything that runs or times a kernel can run or
//! time a plan. Choices:
//!
//! * **x** is set on every block: each block keeps its own copy of x on the device (the blocks are
//!   independent kernels); y is assembled from the blocks' outputs by row range.
//! * **Execution mode** ([`Overlap`]): the blocks are the independent *parts* of one SpMV. They
//!   run as the plan says ([`Plan::overlap`]; [`PreparedPlan::with_overlap`] overrides it, so
//!   one prepared plan can be run and timed both ways): `serial`, one after another, or
//!   `concurrent`, all at once (on CUDA a fork/join graph, the blocks its parallel branches).
//!   The backend owns how ([`Backend::enqueue_parts`], [`Backend::time_parts`]); the CPU
//!   backend runs the blocks in order either way.
//! * **Run** ([`PreparedSpmv::run`]) executes one SpMV in the plan's mode and waits, so that the
//!   result checked against the reference is the one of the execution that is timed.
//! * **Time**: one SpMV of the plan is its blocks in the plan's mode; the backend times it with
//!   the same protocol as any single kernel ([`Backend::time_parts`]: on CUDA one graph per
//!   batch, a chain of the blocks or a fork/join of them, replayed). So the plan is timed as it
//!   runs, in the steady state in which the single formats are timed. [`PreparedPlan::time_blocks`]
//!   also times every block alone, for the report; a block replayed alone may keep its part of
//!   the matrix in cache when the whole would not, so the per-block times can sum to less than
//!   a serial plan's.
//! * **Bytes**: the footprint is the blocks' formats summed; the effective bytes add x and y once
//!   (not once per block), as for any other kernel.
//! * **Config**: a plan has one configuration per block; [`PreparedSpmv::config`] returns the one
//!   of the block with the most non-zeros (its dominant kernel). [`PreparedPlan::blocks`] lists
//!   them all.

use super::plan::Plan;
use crate::backend::{Backend, KernelConfig, Overlap, Part, PreparedSpmv, Timing, TimingProtocol};
use crate::{Csr, Error, Result, Scalar};
use std::ops::Range;

/// One block of a prepared plan.
struct PreparedBlock<'a, T: Scalar> {
    rows: Range<usize>,
    nnz: usize,
    kernel: Box<dyn PreparedSpmv<T> + 'a>,
}

/// A plan prepared on a backend.
pub struct PreparedPlan<'a, T: Scalar> {
    backend: &'a dyn Backend<T>,
    blocks: Vec<PreparedBlock<'a, T>>,
    nrows: usize,
    ncols: usize,
    /// Index of the block with the most non-zeros.
    dominant: usize,
    /// How the blocks run.
    overlap: Overlap,
    /// The order the blocks are queued in ([`Plan::launch_order`]; row order by default).
    order: Vec<usize>,
}

/// The timing of a plan: each block's alone, and the plan's.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanTiming {
    /// Per block, in row order.
    pub blocks: Vec<Timing>,
    /// The whole plan, in its execution mode.
    pub total: Timing,
}

/// Prefix an error's message with `what`, keeping its kind.
fn context(e: Error, what: &str) -> Error {
    match e {
        Error::FormatRefused { format, reason } => Error::FormatRefused {
            format,
            reason: format!("{what}: {reason}"),
        },
        Error::Unsupported(m) => Error::Unsupported(format!("{what}: {m}")),
        Error::Invalid(m) => Error::Invalid(format!("{what}: {m}")),
        Error::Cuda(m) => Error::Cuda(format!("{what}: {m}")),
        other => other,
    }
}

impl<'a, T: Scalar> PreparedPlan<'a, T> {
    /// Check that `plan` belongs to `a` ([`super::MatrixIdentity::check`]) and is valid, then
    /// prepare every block on `backend`. `what` names the plan in errors.
    pub fn new(
        backend: &'a dyn Backend<T>,
        a: &Csr<T>,
        plan: &Plan,
        what: &str,
    ) -> Result<PreparedPlan<'a, T>> {
        plan.validate()
            .map_err(|e| Error::Invalid(format!("{what}: invalid plan: {e}")))?;
        plan.matrix.check(what, a)?;
        let mut blocks = Vec::with_capacity(plan.blocks.len());
        for (k, b) in plan.blocks.iter().enumerate() {
            let rows = b.row_range();
            let label = format!(
                "{what}: block {} (rows {}..{}, {})",
                k + 1,
                rows.start,
                rows.end,
                b.kernel
            );
            if !backend.supports(b.kernel) {
                return Err(Error::Unsupported(format!(
                    "{label}: the {} backend cannot run {}",
                    backend.name(),
                    b.kernel
                )));
            }
            let part = a.slice_rows(rows.start, rows.end);
            let kernel = backend
                .prepare(&part, &b.kernel_config())
                .map_err(|e| context(e, &label))?;
            blocks.push(PreparedBlock {
                nnz: part.nnz(),
                rows,
                kernel,
            });
        }
        let dominant = (0..blocks.len())
            .max_by_key(|&k| (blocks[k].nnz, std::cmp::Reverse(k)))
            .unwrap_or(0);
        Ok(PreparedPlan {
            backend,
            blocks,
            nrows: a.nrows,
            ncols: a.ncols,
            order: plan
                .launch_order
                .clone()
                .unwrap_or_else(|| (0..plan.blocks.len()).collect()),
            dominant,
            overlap: plan.overlap,
        })
    }

    /// Run and time the blocks as `overlap` says instead of the plan's mode.
    pub fn with_overlap(mut self, overlap: Overlap) -> Self {
        self.overlap = overlap;
        self
    }

    /// How the blocks run.
    pub fn overlap(&self) -> Overlap {
        self.overlap
    }

    /// Every block's enqueue, as the backend's parts, in the plan's launch order.
    fn parts(&mut self) -> Vec<Part<'_>> {
        self.parts_without(None)
    }

    /// The same without block `skip` (an index in row order).
    fn parts_without(&mut self, skip: Option<usize>) -> Vec<Part<'_>> {
        let mut slots: Vec<Option<&mut PreparedBlock<'a, T>>> =
            self.blocks.iter_mut().map(Some).collect();
        self.order
            .iter()
            .filter(|&&k| Some(k) != skip)
            .filter_map(|&k| slots.get_mut(k).and_then(Option::take))
            .map(|b| Box::new(move || b.kernel.enqueue()) as Part<'_>)
            .collect()
    }

    /// Each block's rows and kernel configuration, in row order.
    pub fn blocks(&self) -> Vec<(Range<usize>, KernelConfig)> {
        self.blocks
            .iter()
            .map(|b| (b.rows.clone(), b.kernel.config().clone()))
            .collect()
    }

    /// Time the plan with each block left out in turn, in the plan's mode: what the plan costs
    /// without block `k` (its rows of `y` not written, so these runs are timed, never checked).
    /// `T(plan) − T(without k)` is what block `k` costs *inside* the plan, beside the others
    /// (sharing the L2 and the SMs), against its time alone from [`PreparedPlan::time_blocks`]
    /// (issue 16: a per-block cost for the blocks' interference). Empty for a plan of one block.
    pub fn time_left_out(&mut self, protocol: &TimingProtocol) -> Result<Vec<Timing>> {
        let (backend, overlap) = (self.backend, self.overlap);
        let n = self.blocks.len();
        if n < 2 {
            return Ok(Vec::new());
        }
        let mut out = Vec::with_capacity(n);
        for k in 0..n {
            let mut parts = self.parts_without(Some(k));
            let t = backend.time_parts(protocol, overlap, &mut parts)?;
            drop(parts);
            self.finish()?;
            out.push(t);
        }
        Ok(out)
    }

    /// Time the plan with `protocol` (see the module documentation), and then every block alone.
    pub fn time_blocks(&mut self, protocol: &TimingProtocol) -> Result<PlanTiming> {
        let total = self.time(protocol)?;
        let blocks = self
            .blocks
            .iter_mut()
            .map(|b| b.kernel.time(protocol))
            .collect::<Result<Vec<Timing>>>()?;
        Ok(PlanTiming { blocks, total })
    }
}

impl<T: Scalar> PreparedSpmv<T> for PreparedPlan<'_, T> {
    /// The configuration of the block with the most non-zeros (see the module documentation).
    fn config(&self) -> &KernelConfig {
        self.blocks[self.dominant].kernel.config()
    }

    fn footprint_bytes(&self) -> u64 {
        self.blocks.iter().map(|b| b.kernel.footprint_bytes()).sum()
    }

    fn effective_bytes(&self) -> u64 {
        self.footprint_bytes()
            + crate::formats::vector_bytes(self.nrows as u64, self.ncols as u64, T::BYTES as u64)
    }

    fn set_x(&mut self, x: &[T]) -> Result<()> {
        if x.len() != self.ncols {
            return Err(Error::Invalid(format!(
                "x has {} entries, the matrix has {} columns",
                x.len(),
                self.ncols
            )));
        }
        self.blocks.iter_mut().try_for_each(|b| b.kernel.set_x(x))
    }

    fn poison_y(&mut self) -> Result<()> {
        self.blocks.iter_mut().try_for_each(|b| b.kernel.poison_y())
    }

    /// One SpMV in the plan's execution mode, waited for.
    fn run(&mut self) -> Result<()> {
        self.enqueue()?;
        self.finish()
    }

    fn y(&mut self) -> Result<Vec<T>> {
        let mut y = Vec::with_capacity(self.nrows);
        for b in &mut self.blocks {
            let part = b.kernel.y()?;
            if part.len() != b.rows.len() {
                return Err(Error::Invalid(format!(
                    "block of rows {}..{} returned {} values",
                    b.rows.start,
                    b.rows.end,
                    part.len()
                )));
            }
            y.extend(part);
        }
        Ok(y)
    }

    /// One SpMV in the plan's execution mode ([`Backend::enqueue_parts`]).
    fn enqueue(&mut self) -> Result<()> {
        let (backend, overlap) = (self.backend, self.overlap);
        backend.enqueue_parts(overlap, &mut self.parts())
    }

    fn finish(&mut self) -> Result<()> {
        self.blocks.iter_mut().try_for_each(|b| b.kernel.finish())
    }

    /// The whole plan in its execution mode (see the module documentation).
    fn time(&mut self, protocol: &TimingProtocol) -> Result<Timing> {
        let (backend, overlap) = (self.backend, self.overlap);
        let t = backend.time_parts(protocol, overlap, &mut self.parts())?;
        self.finish()?;
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::CpuBackend;
    use crate::backend::Variant;
    use std::sync::{Arc, Mutex};

    /// A block that only records when it is queued.
    struct Recorder {
        id: usize,
        log: Arc<Mutex<Vec<usize>>>,
        config: KernelConfig,
    }

    impl PreparedSpmv<f64> for Recorder {
        fn config(&self) -> &KernelConfig {
            &self.config
        }
        fn footprint_bytes(&self) -> u64 {
            0
        }
        fn effective_bytes(&self) -> u64 {
            0
        }
        fn set_x(&mut self, _: &[f64]) -> Result<()> {
            Ok(())
        }
        fn poison_y(&mut self) -> Result<()> {
            Ok(())
        }
        fn run(&mut self) -> Result<()> {
            self.log.lock().unwrap().push(self.id);
            Ok(())
        }
        fn y(&mut self) -> Result<Vec<f64>> {
            Ok(Vec::new())
        }
        fn time(&mut self, _: &TimingProtocol) -> Result<Timing> {
            Err(Error::Unsupported("a recorder is not timed".into()))
        }
    }

    /// The blocks are queued in the plan's launch order, and leaving one out (by its row-order
    /// index) keeps the others in that order.
    #[test]
    fn blocks_are_queued_in_the_launch_order() {
        let be = CpuBackend::new();
        let log = Arc::new(Mutex::new(Vec::new()));
        let block = |id: usize| PreparedBlock {
            rows: id..id + 1,
            nnz: 1,
            kernel: Box::new(Recorder {
                id,
                log: log.clone(),
                config: KernelConfig::new(Variant::Coo),
            }) as Box<dyn PreparedSpmv<f64>>,
        };
        let mut p = PreparedPlan {
            backend: &be,
            blocks: (0..3).map(block).collect(),
            nrows: 3,
            ncols: 3,
            dominant: 0,
            overlap: Overlap::Concurrent,
            order: vec![2, 0, 1],
        };
        p.enqueue().unwrap();
        assert_eq!(*log.lock().unwrap(), vec![2, 0, 1]);
        log.lock().unwrap().clear();
        for part in p.parts_without(Some(0)).iter_mut() {
            part().unwrap();
        }
        assert_eq!(*log.lock().unwrap(), vec![2, 1]);
        log.lock().unwrap().clear();
        p.order = vec![0, 1, 2];
        p.enqueue().unwrap();
        assert_eq!(*log.lock().unwrap(), vec![0, 1, 2]);
    }
}
