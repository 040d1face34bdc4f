//! The models as the optimizer sees them: a prediction from a block's summary ([`Shape`]), cheap
//! enough to run for every candidate kernel of each of the `N(N+1)/2` blocks.
//!
//! [`Model::predict`] takes a matrix's full [`crate::features::Features`] (one pass over its
//! entries); computing those per block would re-scan the rows. A model the optimizer can use
//! therefore implements [`BlockModel`] as well: the same prediction from what the prefix
//! structures deliver per block. For the analytical model that is
//! [`AnalyticalModel::predict_shape`] on the block's [`Shape`] (`Model::predict` is
//! `predict_shape` on the features' shape), evaluated without building a `Result` per block; it is
//! tested bit for bit against `Model::predict` on each block's computed features
//! (`tests/optimize_features.rs`), so the plan's single-block answer is the model's own ranking. A
//! future model that needs more than a [`Shape`] holds (say the variance of the row lengths) gets
//! that statistic and its prefix structure added to [`super::features::StripTable`].
//!
//! Models are chosen by name ([`block_model`]); `analytical` is the only one so far.

use super::admit::format_refusal;
use crate::backend::Variant;
use crate::formats::{ell, FormatKind, FormatParams};
use crate::instrument::strip_size;
use crate::model::analytical::{hyb, AnalyticalModel};
use crate::model::{Model, Shape};
use crate::profile::PrecisionProfile;
use crate::{Error, Result};

/// The names [`block_model`] accepts.
pub const MODEL_NAMES: [&str; 1] = ["analytical"];

/// A model the optimizer can use.
pub trait BlockModel: Sync {
    /// The full model (for whole-matrix rankings and notes).
    fn model(&self) -> &dyn Model;
    /// The candidate kernels of every block: the model's variants.
    fn variants(&self) -> Vec<Variant> {
        self.model().variants()
    }
    /// The default strip height in rows, and where it comes from (for reports).
    fn strip_rows(&self) -> Result<(u64, String)>;
    /// Predicted seconds of one block with `variant`, or `+∞` where the model refuses (format
    /// cannot hold the block on the device) or does not cover the variant. Must equal
    /// `self.model().predict` on the block's features.
    fn predict_block(&self, shape: &Shape, variant: Variant, params: &FormatParams) -> f64;
    /// `E` and `F` of a block: the least [`BlockModel::predict_block`] over the `variants` whose
    /// format can hold the block ([`format_refusal`]), and its index (the first on ties;
    /// `(+∞, 0)` if every candidate is refused). One call per block, so that implementations can
    /// dispatch the variants statically.
    fn best_block(&self, shape: &Shape, variants: &[Variant], params: &FormatParams) -> (f64, u32) {
        let val = self.model().precision().bytes() as u64;
        best_of(shape, variants, params, val, |s, v| {
            self.predict_block(s, v, params)
        })
    }
}

/// The least of `predict(shape, v)` over the `variants` whose format admits the block, and its
/// index, the first on ties.
#[inline(always)]
fn best_of(
    shape: &Shape,
    variants: &[Variant],
    params: &FormatParams,
    value_bytes: u64,
    mut predict: impl FnMut(&Shape, Variant) -> f64,
) -> (f64, u32) {
    let mut best = (f64::INFINITY, 0u32);
    for (k, &v) in variants.iter().enumerate() {
        if format_refusal(shape, v, params, value_bytes).is_some() {
            continue;
        }
        let t = predict(shape, v);
        if t < best.0 {
            best = (t, k as u32);
        }
    }
    best
}

/// The model `name` of a profile section.
pub fn block_model<'a>(
    name: &str,
    section: &'a PrecisionProfile,
) -> Result<Box<dyn BlockModel + 'a>> {
    match name {
        "analytical" => Ok(Box::new(AnalyticalBlocks(&section.model))),
        other => Err(Error::Invalid(format!(
            "unknown model '{other}'; expected one of: {}",
            MODEL_NAMES.join(", ")
        ))),
    }
}

/// The analytical model (004 §3) on block shapes.
#[derive(Clone, Copy, Debug)]
pub struct AnalyticalBlocks<'a>(pub &'a AnalyticalModel);

impl AnalyticalBlocks<'_> {
    /// Whether the model would refuse `variant` on `shape` for its working set or an ELL width
    /// shorter than the longest row — decided without building the error, which costs far more
    /// than a prediction and would otherwise be built for every refused block. The sizes are
    /// [`Shape::working_set`] (the formats' saturating footprints plus x and y).
    fn refused(&self, s: &Shape, variant: Variant, params: &FormatParams) -> bool {
        let val = self.0.precision.bytes() as u64;
        let kind = variant.format();
        // Only ELL refuses a width shorter than the longest row; the others ignore it.
        if kind == FormatKind::Ell && ell::width(s, params).is_err() {
            return true;
        }
        match s.working_set(kind, params, val) {
            Ok(bytes) => bytes > self.0.limits.global_mem_bytes,
            // A count the block's summary lacks: the model covers no such format.
            Err(_) => true,
        }
    }
}

impl BlockModel for AnalyticalBlocks<'_> {
    fn model(&self) -> &dyn Model {
        self.0
    }

    /// `S_CSR` of the vector kernel (`csr-vector`, 32 threads per row), as 004 §4 uses: the
    /// strip size the profile's CSR model counts strips in.
    fn strip_rows(&self) -> Result<(u64, String)> {
        let limits = &self.0.limits;
        let v = Variant::Csr {
            threads_per_row: 32,
        };
        Ok((strip_size(limits, v)?, format!("S_CSR of {}", limits.name)))
    }

    fn best_block(&self, shape: &Shape, variants: &[Variant], params: &FormatParams) -> (f64, u32) {
        let val = self.0.precision.bytes() as u64;
        best_of(shape, variants, params, val, |s, v| {
            self.predict_block(s, v, params)
        })
    }

    /// [`AnalyticalModel::predict_shape`] without its `Result`: the refusals (the memory bound
    /// of 004 §3.2.1, an ELL width shorter than the longest row, a HYB width the shape was not
    /// split at, a CSR mapping without a fit) are decided first and cheaply, then the same
    /// relationship of the model is evaluated (`CsrParams::predict` at the mode, `EllParams` at
    /// the width, `CooParams` at the non-zeros, `hyb::predict` on the split). Going through
    /// `predict_shape` itself made the `E` table about twice as slow; the property test keeps
    /// the two equal bit for bit.
    #[inline]
    fn predict_block(&self, s: &Shape, variant: Variant, params: &FormatParams) -> f64 {
        if self.refused(s, variant, params) {
            return f64::INFINITY;
        }
        let m = self.0;
        match variant {
            Variant::Csr { threads_per_row } => m
                .csr
                .iter()
                .find(|c| c.threads_per_row == threads_per_row)
                .map_or(f64::INFINITY, |c| c.predict(s.mode_row_len as f64, s.nrows)),
            Variant::Ell => {
                let width = params.ell.width.map_or(s.max_row_len, |w| w as u64);
                m.ell.predict(width as f64, s.nrows)
            }
            Variant::Coo => m.coo.predict(s.nnz),
            Variant::Hyb => match params.hyb.width {
                Some(w) if w as u64 != s.hyb_width => f64::INFINITY,
                _ => hyb::predict(&m.ell, &m.coo, s.nrows, s.hyb_width, s.hyb_coo_nnz),
            },
            _ => f64::INFINITY,
        }
    }
}
