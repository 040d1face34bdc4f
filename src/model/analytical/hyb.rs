//! The HYB model (004 §3.5.4, 000 §III-F4): HYB is an ELL part plus a COO part, so it reuses the
//! ELL and COO relationships. Split the target at the HYB threshold `z0` (the ELL width, by
//! default Bell & Garland's rule, [`auto_width`]); the ELL part has `P_NZ = z0` and
//! `⌈N_R / S_ELL⌉` strips, the COO part holds the entries beyond `z0` in every row and has
//! `⌈N_NZ,COO / S_COO⌉` strips; `T0 = T_ELL + T_COO`.
//!
//! A part with no entries (width 0, or no row longer than the width) contributes nothing: its
//! kernel has no work. (The papers never meet that case.)

use super::coo::CooParams;
use super::ell::EllParams;
use crate::model::Shape;

/// Bell & Garland's HYB width, exactly as cusp computes it (`compute_optimal_entries_per_row`
/// with `relative_speed = 3` and `breakeven_threshold = 4096`): the smallest `K < max row length`
/// such that the rows longer than `K` number fewer than `N_R / 3` or fewer than 4096; the
/// longest row if there is none. Works on the row-length histogram, so it costs one pass over
/// the distinct row lengths.
pub fn auto_width(shape: &Shape) -> u64 {
    let n = shape.nrows;
    let max = shape.max_row_len();
    let keep_in_ell = |rows_longer: u64| !(3 * rows_longer < n || rows_longer < 4096);
    // Rows longer than k stay constant while k runs from one histogram length to the next, so
    // the first k passing the test is the start of a segment.
    let mut rows_longer = n;
    let mut start = 0;
    for &(len, cnt) in &shape.row_lengths {
        if start < len && start < max && !keep_in_ell(rows_longer) {
            return start;
        }
        rows_longer -= cnt;
        start = len;
    }
    max
}

/// Estimated seconds of HYB with ELL width `width` on `shape`.
pub fn predict(ell: &EllParams, coo: &CooParams, shape: &Shape, width: u64) -> f64 {
    let t_ell = if width > 0 && shape.nrows > 0 {
        ell.predict(width as f64, shape.nrows)
    } else {
        0.0
    };
    let overflow = shape.entries_beyond(width);
    let t_coo = if overflow > 0 {
        coo.predict(overflow)
    } else {
        0.0
    };
    t_ell + t_coo
}

#[cfg(test)]
mod tests {
    use super::*;

    /// cusp's loop, literally: the first k in 0…max−1 where rows longer than k are fewer than
    /// n / 3 or fewer than 4096.
    fn cusp(lens: &[u64]) -> u64 {
        let n = lens.len() as u64;
        let max = lens.iter().copied().max().unwrap_or(0);
        (0..max)
            .find(|&k| {
                let longer = lens.iter().filter(|&&l| l > k).count() as u64;
                3 * longer < n || longer < 4096
            })
            .unwrap_or(max)
    }

    #[test]
    fn auto_width_matches_cusp() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for case in 0..40 {
            let n = [10, 5000, 20_000][case % 3];
            let spread = [3, 40, 400][case % 5 % 3];
            let lens: Vec<u64> = (0..n)
                .map(|_| {
                    let base: u64 = rng.random_range(0..spread);
                    if rng.random_bool(0.02) {
                        base * 50
                    } else {
                        base
                    }
                })
                .collect();
            let shape = Shape::from_row_lengths(1 << 20, lens.iter().copied());
            assert_eq!(auto_width(&shape), cusp(&lens), "case {case}");
        }
        assert_eq!(auto_width(&Shape::from_row_lengths(1, [])), 0);
    }
}
