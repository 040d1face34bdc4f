//! Which blocks a format can hold at all, independently of any model: the refusal rules of the
//! format conversions ([`crate::formats`]), restated on a block's [`Shape`] so that the optimizer
//! never chooses a format whose conversion would refuse the block (an ELL block whose padded
//! slots exceed 32-bit offsets, say) — a plan must be buildable.
//!
//! The rules, as the conversions apply them before allocating:
//! * every format: rows within 32-bit row indices;
//! * CSR: non-zeros within 32-bit offsets; footprint `(rows + 1)·4 + nnz·(4 + value)` within
//!   [`FormatParams::max_bytes`];
//! * COO: non-zeros within 32-bit offsets; footprint `nnz·(8 + value)` within the budget;
//! * ELL: no row longer than a given width; `width × rows` slots within 32-bit offsets; footprint
//!   `slots·(4 + value)` within the budget;
//! * HYB: ELL slots and COO entries within 32-bit offsets; footprint of both parts within the
//!   budget.
//!
//! Other formats are not checked here (no model the optimizer uses covers them); their conversion
//! still refuses a block when a plan is built. `tests/it/optimize_admit.rs` checks these rules
//! against the conversions themselves.

use crate::backend::Variant;
use crate::formats::{FormatKind, FormatParams};
use crate::model::Shape;

const LIMIT: u128 = u32::MAX as u128;

/// Why the conversion to `variant`'s format would refuse a block of shape `s` with `params` and
/// `value_bytes`-byte values, or `None` if it would accept it. Costs a few multiplications (it
/// runs for every candidate of every block).
pub fn format_refusal(
    s: &Shape,
    variant: Variant,
    params: &FormatParams,
    value_bytes: u64,
) -> Option<&'static str> {
    let (rows, nnz, val) = (s.nrows as u128, s.nnz as u128, value_bytes as u128);
    let budget = params.max_bytes as u128;
    if rows > LIMIT {
        return Some("more rows than 32-bit row indices hold");
    }
    const OVER_BUDGET: &str = "footprint beyond the conversion limit (max_bytes)";
    match variant.format() {
        FormatKind::Csr => {
            if nnz > LIMIT {
                return Some("more non-zeros than 32-bit offsets hold");
            }
            if (rows + 1) * 4 + nnz * (4 + val) > budget {
                return Some(OVER_BUDGET);
            }
        }
        FormatKind::Coo => {
            if nnz > LIMIT {
                return Some("more non-zeros than 32-bit offsets hold");
            }
            if nnz * (8 + val) > budget {
                return Some(OVER_BUDGET);
            }
        }
        FormatKind::Ell => {
            let width = match params.ell_width {
                Some(w) if (w as u64) < s.max_row_len => {
                    return Some("a row is longer than the ELL width")
                }
                Some(w) => w as u128,
                None => s.max_row_len as u128,
            };
            let slots = width * rows;
            if slots > LIMIT {
                return Some("more ELL slots (width × rows) than 32-bit offsets hold");
            }
            if slots * (4 + val) > budget {
                return Some(OVER_BUDGET);
            }
        }
        FormatKind::Hyb => {
            let slots = s.hyb_width as u128 * rows;
            let coo = s.hyb_coo_nnz as u128;
            if slots > LIMIT {
                return Some("more ELL slots (width × rows) than 32-bit offsets hold");
            }
            if coo > LIMIT {
                return Some("more COO entries than 32-bit offsets hold");
            }
            if slots * (4 + val) + coo * (8 + val) > budget {
                return Some(OVER_BUDGET);
            }
        }
        _ => {}
    }
    None
}
