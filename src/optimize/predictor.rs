//! The models as the optimizer sees them: a prediction from a block's [`BlockFeatures`], cheap
//! enough to run for every variant of each of the `N(N+1)/2` blocks.
//!
//! [`crate::model::Model::predict`] takes a [`Shape`] (a full row-length histogram). Building one
//! per block would cost the histogram's size per block, so a model the optimizer can use
//! implements [`BlockModel`] as well: the same prediction from the summary the prefix structures
//! deliver. Each implementation is tested to agree exactly with its model's `predict` on the
//! block's `Shape` (`tests/optimize_features.rs`), so the plan's single-block answer is the
//! model's own ranking. A future model that needs more than [`BlockFeatures`] holds (say the
//! variance of the row lengths) adds the field there and its prefix sum to
//! [`super::features::StripTable`].
//!
//! Models are chosen by name ([`block_model`]); `analytical` is the only one so far.

use super::features::BlockFeatures;
use crate::backend::Variant;
use crate::formats::FormatParams;
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
    /// `self.model().predict(&shape, variant, params)` for the block's shape.
    fn predict_block(&self, f: &BlockFeatures, variant: Variant, params: &FormatParams) -> f64;
    /// `E` and `F` of a block: the least [`BlockModel::predict_block`] over `variants` and its
    /// index (the first on ties; `(+∞, 0)` if every candidate is refused). One call per block,
    /// so that implementations can dispatch the variants statically.
    fn best_block(
        &self,
        f: &BlockFeatures,
        variants: &[Variant],
        params: &FormatParams,
    ) -> (f64, u32) {
        best_of(f, variants, |f, v| self.predict_block(f, v, params))
    }
}

/// The least of `predict(f, v)` over `variants` and its index, the first on ties.
#[inline(always)]
fn best_of(
    f: &BlockFeatures,
    variants: &[Variant],
    mut predict: impl FnMut(&BlockFeatures, Variant) -> f64,
) -> (f64, u32) {
    let mut best = (f64::INFINITY, 0u32);
    for (k, &v) in variants.iter().enumerate() {
        let t = predict(f, v);
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

/// The analytical model (004 §3) on block features.
#[derive(Clone, Copy, Debug)]
pub struct AnalyticalBlocks<'a>(pub &'a AnalyticalModel);

impl AnalyticalBlocks<'_> {
    /// [`Shape::working_set_bytes`] from the features (saturating instead of overflowing).
    fn working_set(&self, f: &BlockFeatures, variant: Variant, ell_width: u64) -> Option<u64> {
        let val = self.0.precision.bytes() as u64;
        let vectors = (f.ncols + f.nrows).saturating_mul(val);
        let arrays = match variant {
            Variant::Csr { .. } | Variant::CsrMerge => (f.nrows + 1)
                .saturating_mul(4)
                .saturating_add(f.nnz.saturating_mul(4 + val)),
            Variant::Coo => f.nnz.saturating_mul(8 + val),
            Variant::Ell => f.nrows.saturating_mul(ell_width).saturating_mul(4 + val),
            Variant::Hyb => f
                .nrows
                .saturating_mul(f.hyb_width)
                .saturating_mul(4 + val)
                .saturating_add(f.hyb_coo_nnz.saturating_mul(8 + val)),
            _ => return None,
        };
        Some(arrays.saturating_add(vectors))
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

    /// [`AnalyticalModel::predict`] on the features: the memory bound of 004 §3.2.1, then the
    /// CSR model at the mode, ELL at the width (the longest row unless fixed), COO at the
    /// non-zeros, HYB as ELL part + COO part (a part without entries costs nothing).
    fn best_block(
        &self,
        f: &BlockFeatures,
        variants: &[Variant],
        params: &FormatParams,
    ) -> (f64, u32) {
        best_of(f, variants, |f, v| self.predict_block(f, v, params))
    }

    #[inline]
    fn predict_block(&self, f: &BlockFeatures, variant: Variant, params: &FormatParams) -> f64 {
        let m = self.0;
        let ell_width = match params.ell_width {
            None => f.max_row_len,
            Some(w) if w as u64 >= f.max_row_len => w as u64,
            // ELL refuses a width shorter than the longest row; the other formats ignore it.
            Some(_) if variant == Variant::Ell => return f64::INFINITY,
            Some(w) => w as u64,
        };
        match self.working_set(f, variant, ell_width) {
            Some(b) if b <= m.limits.global_mem_bytes => {}
            _ => return f64::INFINITY,
        }
        match variant {
            Variant::Csr { threads_per_row } => m
                .csr
                .iter()
                .find(|c| c.threads_per_row == threads_per_row)
                .map_or(f64::INFINITY, |c| c.predict(f.mode_row_len as f64, f.nrows)),
            Variant::Ell => m.ell.predict(ell_width as f64, f.nrows),
            Variant::Coo => m.coo.predict(f.nnz),
            Variant::Hyb => {
                let t_ell = if f.hyb_width > 0 && f.nrows > 0 {
                    m.ell.predict(f.hyb_width as f64, f.nrows)
                } else {
                    0.0
                };
                let t_coo = if f.hyb_coo_nnz > 0 {
                    m.coo.predict(f.hyb_coo_nnz)
                } else {
                    0.0
                };
                t_ell + t_coo
            }
            _ => f64::INFINITY,
        }
    }
}

/// `model.predict` on a shape as the optimizer compares it: `+∞` for a refusal.
pub fn predict_or_inf(model: &dyn Model, shape: &Shape, v: Variant, p: &FormatParams) -> f64 {
    model.predict(shape, v, p).unwrap_or(f64::INFINITY)
}
