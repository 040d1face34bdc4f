//! The optimizer: strips → prefix structures → `E[i, j]`, `F[i, j]` of every block → the DP →
//! the optimal strategy, with every single format's prediction beside it (Table 3 of 004).
//!
//! `E` is computed column by column (`j` = the block's last strip), columns in parallel, in
//! chunks: the DP consumes a chunk's columns in order before the next chunk is computed, so the
//! memory is `O(chunk · N)` rather than the `O(N²)` of the full table.
//!
//! Within a block, the fastest candidate wins; among equally fast ones the first in the model's
//! order ([`super::BlockModel::variants`]).

use super::admit::format_refusal;
use super::dp::Dp;
use super::features::{StripTable, Sweep};
use super::predictor::BlockModel;
use super::strips::{StripLayout, DEFAULT_MAX_STRIPS};
use crate::backend::Variant;
use crate::features::Features;
use crate::formats::FormatParams;
use crate::model::{rank, Ranked, Shape};
use crate::{Csr, Error, Result, Scalar};
use rayon::prelude::*;
use std::ops::Range;
use std::time::Instant;

/// What to optimize over.
#[derive(Clone, Debug, PartialEq)]
pub struct OptimizeOptions {
    /// Strip height in rows; `None` = the model's default (`S_CSR`).
    pub strip_rows: Option<u64>,
    /// Cap on the number of strips; taller matrices get taller strips.
    pub max_strips: u64,
    /// Format parameters; the ELL and HYB widths fixed for every block when given.
    pub params: FormatParams,
}

impl Default for OptimizeOptions {
    fn default() -> Self {
        OptimizeOptions {
            strip_rows: None,
            max_strips: DEFAULT_MAX_STRIPS,
            params: FormatParams::default(),
        }
    }
}

/// One block of the optimal strategy.
#[derive(Clone, Debug, PartialEq)]
pub struct OptimalBlock {
    /// Strips `first..=last`, 0-based (the paper's `[first + 1, last + 1]`).
    pub strips: (usize, usize),
    /// Rows `[start, end)`.
    pub rows: Range<usize>,
    /// `F[i, j]`.
    pub variant: Variant,
    /// The block's format parameters with the widths resolved (ELL: the width used; HYB: the
    /// split), so that running the block reproduces what was predicted.
    pub params: FormatParams,
    /// `E[i, j]`, seconds.
    pub predicted: f64,
    /// Every candidate's prediction for this block (`None`: refused), in the model's order.
    pub candidates: Vec<(Variant, Option<f64>)>,
}

/// The optimizer's answer.
#[derive(Clone, Debug, PartialEq)]
pub struct Optimum {
    /// How the rows were cut.
    pub layout: StripLayout,
    /// Where the requested strip height came from (`S_CSR of …`, `--strip-rows`).
    pub strip_source: String,
    /// The candidate kernels.
    pub variants: Vec<Variant>,
    /// The optimal strategy, in row order.
    pub blocks: Vec<OptimalBlock>,
    /// `T[1, N]`, seconds.
    pub predicted: f64,
    /// Every single format on the whole matrix (the model's ranking).
    pub singles: Vec<Ranked>,
    /// Blocks evaluated (`N(N+1)/2`).
    pub blocks_evaluated: u64,
    /// Distinct row lengths and histogram entries of the strip table (the sweep's cost drivers).
    pub distinct_lengths: usize,
    /// See [`Optimum::distinct_lengths`].
    pub histogram_entries: usize,
    /// Wall-clock seconds: building the strip table, and the `E` table + DP.
    pub seconds_table: f64,
    /// See [`Optimum::seconds_table`].
    pub seconds_dp: f64,
}

impl Optimum {
    /// The single best format on the whole matrix, if any was predicted.
    pub fn best_single(&self) -> Option<&Ranked> {
        self.singles.first().filter(|r| r.seconds.is_some())
    }
}

/// Find the optimal partition of `a` into row blocks and a format per block.
pub fn optimize<T: Scalar>(
    a: &Csr<T>,
    model: &dyn BlockModel,
    opts: &OptimizeOptions,
) -> Result<Optimum> {
    optimize_with_progress(a, model, opts, &|_, _| {})
}

/// [`optimize`], calling `progress(done, total)` as the dynamic program advances: column `j` of
/// the program evaluates `j + 1` candidate blocks, so the work is counted in candidate blocks
/// (`total = n(n+1)/2` for `n` strips), which makes an estimate of the time left meaningful.
pub fn optimize_with_progress<T: Scalar>(
    a: &Csr<T>,
    model: &dyn BlockModel,
    opts: &OptimizeOptions,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<Optimum> {
    if a.nrows == 0 {
        return Err(Error::Invalid(
            "the matrix has no rows: there is nothing to partition".into(),
        ));
    }
    let (requested, strip_source) = match opts.strip_rows {
        Some(r) => (r, "--strip-rows".to_string()),
        None => model.strip_rows()?,
    };
    let layout = StripLayout::new(a.nrows as u64, requested, opts.max_strips)?;
    let params = &opts.params;
    let variants = model.variants();
    if variants.is_empty() {
        return Err(Error::Invalid(
            "the model has no kernels to choose from".into(),
        ));
    }
    let t0 = Instant::now();
    let table = StripTable::new(
        &a.row_ptr,
        a.ncols as u64,
        &layout,
        params.hyb.width.map(|w| w as u64),
    )?;
    let seconds_table = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let n = table.strips();
    let mut dp = Dp::new(n);
    let chunk = (rayon::current_num_threads() * 8).clamp(16, 256);
    let total = (n as u64) * (n as u64 + 1) / 2;
    let done_after = |j: usize| (j as u64) * (j as u64 + 1) / 2;
    for j0 in (0..n).step_by(chunk) {
        let cols: Vec<(Vec<f64>, Vec<u32>)> = (j0..(j0 + chunk).min(n))
            .into_par_iter()
            .map_init(
                || Sweep::new(&table),
                |sweep, j| {
                    let mut e = vec![f64::INFINITY; j + 1];
                    let mut f = vec![0u32; j + 1];
                    sweep.column(j, |i, feat| {
                        (e[i], f[i]) = model.best_block(feat, &variants, params);
                    });
                    (e, f)
                },
            )
            .collect();
        for (e, f) in &cols {
            dp.push_column(e, f);
        }
        progress(done_after((j0 + chunk).min(n)), total);
    }
    let part = dp.finish().expect("every column was pushed");
    let seconds_dp = t1.elapsed().as_secs_f64();
    if !part.total.is_finite() {
        return Err(Error::Invalid(format!(
            "the model ({}) refuses every candidate ({}) for part of the matrix",
            model.model().name(),
            variants
                .iter()
                .map(|v| v.name())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let value_bytes = model.model().precision().bytes() as u64;
    let blocks = part
        .blocks
        .iter()
        .map(|b| {
            let rows = layout.rows(b.first, b.last);
            let lens: Vec<usize> = a.row_ptr[rows.start..=rows.end]
                .windows(2)
                .map(|w| w[1] - w[0])
                .collect();
            let shape = Shape::from_row_lengths(a.ncols as u64, &lens, params.hyb.width);
            let variant = variants[b.format as usize];
            OptimalBlock {
                strips: (b.first, b.last),
                params: resolve_params(&shape, variant, params),
                rows,
                variant,
                predicted: b.seconds,
                candidates: variants
                    .iter()
                    .map(|&v| {
                        let t = match format_refusal(&shape, v, params, value_bytes) {
                            Some(_) => f64::INFINITY,
                            None => model.predict_block(&shape, v, params),
                        };
                        (v, t.is_finite().then_some(t))
                    })
                    .collect(),
            }
        })
        .collect();
    Ok(Optimum {
        strip_source,
        variants,
        blocks,
        predicted: part.total,
        singles: singles(model, &features_for(a, params), params),
        blocks_evaluated: (n as u64) * (n as u64 + 1) / 2,
        distinct_lengths: table.distinct_lengths(),
        histogram_entries: table.histogram_entries(),
        layout,
        seconds_table,
        seconds_dp,
    })
}

/// The features of `a` as the model ranks them: with HYB split at `params.hyb.width` when one is
/// fixed (the features hold Bell & Garland's split otherwise).
pub fn features_for<T: Scalar>(a: &Csr<T>, params: &FormatParams) -> Features {
    let mut f = Features::compute(a);
    if let Some(w) = params.hyb.width {
        f.split_hyb_at(a, w);
    }
    f
}

/// The model's ranking of every single format on the whole matrix, with the formats whose
/// conversion would refuse the matrix ([`format_refusal`]) moved to the refused end, so that the
/// single best format is the one the DP's single block `[1, N]` can choose.
fn singles(model: &dyn BlockModel, features: &Features, params: &FormatParams) -> Vec<Ranked> {
    let shape = Shape::from_features(features);
    let val = model.model().precision().bytes() as u64;
    let mut rows = rank(model.model(), features, params).rows;
    for r in &mut rows {
        if let Some(why) = format_refusal(&shape, r.config.variant, params, val) {
            r.note = format!("format {} refuses the matrix: {}", why.format, why.reason);
            (r.seconds, r.bytes, r.effective_gbs, r.rank) = (None, None, None, None);
        }
    }
    // Stable: predicted ones by time (ties in the model's order), refused ones after.
    rows.sort_by(|a, b| match (a.seconds, b.seconds) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    let mut k = 0;
    for r in &mut rows {
        if r.seconds.is_some() {
            k += 1;
            r.rank = Some(k);
        }
    }
    rows
}

/// `params` with the width the block's format uses made explicit.
fn resolve_params(shape: &Shape, variant: Variant, params: &FormatParams) -> FormatParams {
    let mut p = params.clone();
    match variant {
        Variant::Ell => p.ell.width = Some(shape.ell_width(params).unwrap_or(0) as usize),
        Variant::Hyb => p.hyb.width = Some(shape.hyb_width as usize),
        _ => {}
    }
    p
}
