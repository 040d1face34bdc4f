//! Which blocks a format can hold at all, independently of any model: the format's own refusal
//! rules ([`crate::formats::FormatKind::admit`], the very checks its conversion makes before
//! allocating) on a block's [`Shape`], so that the optimizer never chooses a format whose
//! conversion would refuse the block (an ELL block whose padded slots exceed 32-bit offsets, say)
//! — a plan must be buildable.
//!
//! A block summary holds no DIA, SELL-C-σ or BSR counts, so those formats are refused with
//! [`crate::formats::Reason::Unknown`] (no model the optimizer uses covers them).
//! `tests/it/optimize_admit.rs` checks the blocks' admissions against the conversions themselves.

use crate::backend::Variant;
use crate::formats::{FormatParams, Refusal};
use crate::model::Shape;

/// Why the conversion to `variant`'s format would refuse a block of shape `s` with `params` and
/// `value_bytes`-byte values, or `None` if it would accept it. Costs a few multiplications (it
/// runs for every candidate of every block); the refusal's message is written only if shown.
#[inline]
pub fn format_refusal(
    s: &Shape,
    variant: Variant,
    params: &FormatParams,
    value_bytes: u64,
) -> Option<Refusal> {
    variant.format().admit(s, params, value_bytes).err()
}
