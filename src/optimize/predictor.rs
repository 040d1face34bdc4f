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
//! (`tests/it/optimize_features.rs`), so the plan's single-block answer is the model's own ranking. A
//! future model that needs more than a [`Shape`] holds (say the variance of the row lengths) gets
//! that statistic and its prefix structure added to [`super::features::StripTable`].
//!
//! Models are chosen by name ([`block_model`]); `analytical` is the only one so far.

use super::admit::format_refusal;
use crate::backend::Variant;
use crate::formats::{ell, FormatKind, FormatParams};
use crate::instrument::strip_size;
use crate::model::analytical::AnalyticalModel;
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
    // Any model of the profile whose family the optimizer can evaluate per block.
    let named = crate::model::registry::select(&section.models, Some(&[name.to_string()]))?;
    match named[0].model.analytical() {
        Some(m) => Ok(Box::new(AnalyticalBlocks(m))),
        None => Err(Error::Invalid(format!(
            "the optimizer cannot use model '{name}' (families it can use: {})",
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

    /// [`Model::predict_shape`] of the model, `+∞` where it fails: the refusals of the working
    /// set (the memory bound of 004 §3.2.1) and of an ELL width shorter than the longest row are
    /// decided first and cheaply, so that no error is built for a refused block (building it
    /// cost more than a prediction); the property test keeps this equal to `Model::predict` bit
    /// for bit.
    #[inline]
    fn predict_block(&self, s: &Shape, variant: Variant, params: &FormatParams) -> f64 {
        if self.refused(s, variant, params) {
            return f64::INFINITY;
        }
        // The model's own prediction, through the trait (no second copy of the relationships).
        Model::predict_shape(self.0, s, variant, params).unwrap_or(f64::INFINITY)
    }
}
