//! How the rows are cut into strips (004 §4): every strip holds `strip_rows` consecutive rows,
//! the last one what is left.
//!
//! The paper uses `S_CSR` rows (672 on its Tesla C2050) and, for very tall matrices, `S_ELL`
//! rows "to avoid huge number of matrix blocks". We do the same automatically: when the strips
//! would exceed a cap (default [`DEFAULT_MAX_STRIPS`]), the strip height is multiplied by the
//! smallest integer that brings the count under the cap, and the layout says so
//! ([`StripLayout::coarsening`]).

use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::ops::Range;

/// Default cap on the number of strips: the DP evaluates `N(N+1)/2` blocks, 5·10⁷ for 10⁴.
pub const DEFAULT_MAX_STRIPS: u64 = 10_000;

/// The strips of a matrix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StripLayout {
    /// Rows of the matrix.
    pub nrows: u64,
    /// The strip height asked for (the model's `S_CSR`, or `--strip-rows`).
    pub requested_rows: u64,
    /// The factor the height was multiplied by to respect the cap (1 = as asked).
    pub coarsening: u64,
    /// Rows of every strip but the last (`requested_rows × coarsening`).
    pub strip_rows: u64,
    /// `N`: the number of strips, `⌈nrows / strip_rows⌉`.
    pub strips: u64,
}

impl StripLayout {
    /// Strips of `requested_rows` rows, coarsened to at most `max_strips` strips.
    pub fn new(nrows: u64, requested_rows: u64, max_strips: u64) -> Result<StripLayout> {
        if requested_rows == 0 {
            return Err(Error::Invalid(
                "the strip height must be at least 1 row".into(),
            ));
        }
        if max_strips == 0 {
            return Err(Error::Invalid("the strip cap must be at least 1".into()));
        }
        let wanted = nrows.div_ceil(requested_rows);
        let coarsening = wanted.div_ceil(max_strips).max(1);
        let strip_rows = requested_rows.checked_mul(coarsening).ok_or_else(|| {
            Error::Invalid(format!(
                "strip height {requested_rows} × {coarsening} overflows"
            ))
        })?;
        Ok(StripLayout {
            nrows,
            requested_rows,
            coarsening,
            strip_rows,
            strips: nrows.div_ceil(strip_rows),
        })
    }

    /// Whether the height was multiplied to respect the cap.
    pub fn is_coarsened(&self) -> bool {
        self.coarsening > 1
    }

    /// Rows `[first, end)` of the block of strips `first..=last` (0-based).
    pub fn rows(&self, first: usize, last: usize) -> Range<usize> {
        let s = self.strip_rows as usize;
        let end = ((last + 1) * s).min(self.nrows as usize);
        first * s..end
    }

    /// One line for reports, e.g. `66 strips of 672 rows` or
    /// `10000 strips of 40 rows (2 rows × 20: coarsened from 200000 strips to at most 10000)`.
    pub fn describe(&self, max_strips: u64) -> String {
        if self.is_coarsened() {
            format!(
                "{} strips of {} rows ({} rows × {}: coarsened from {} strips to at most {max_strips})",
                self.strips,
                self.strip_rows,
                self.requested_rows,
                self.coarsening,
                self.nrows.div_ceil(self.requested_rows),
            )
        } else {
            format!(
                "{} of {}",
                crate::util::count(self.strips, "strip", "strips"),
                crate::util::count(self.strip_rows, "row", "rows")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coarsening_respects_the_cap() {
        let l = StripLayout::new(1000, 10, 100).unwrap();
        assert_eq!((l.strips, l.strip_rows, l.coarsening), (100, 10, 1));
        let l = StripLayout::new(1001, 10, 100).unwrap();
        assert_eq!((l.strips, l.strip_rows, l.coarsening), (51, 20, 2));
        assert!(l.is_coarsened());
        assert_eq!(l.rows(50, 50), 1000..1001);
        assert_eq!(l.rows(0, 1), 0..40);
        let l = StripLayout::new(0, 10, 100).unwrap();
        assert_eq!(l.strips, 0);
        assert!(StripLayout::new(10, 0, 10).is_err());
        for n in [1u64, 7, 999, 12_345, 1 << 20] {
            for s in [1u64, 3, 64] {
                for cap in [1u64, 5, 100] {
                    let l = StripLayout::new(n, s, cap).unwrap();
                    assert!(l.strips <= cap && l.strips >= 1, "{n} {s} {cap}: {l:?}");
                    assert_eq!(l.rows(0, l.strips as usize - 1), 0..n as usize);
                }
            }
        }
    }
}
