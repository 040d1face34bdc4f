//! Where the strips of the feature-based optimizer ([`super::learned`]) are cut.
//!
//! A model on full features costs one feature pass per candidate block, so the strips are few
//! (`N` ≲ 8, [`super::learned::LearnedOptions::feature_passes`]) and where they are cut matters
//! more than with 004's thousands of `S_CSR` strips. The cuts go first where the rows change
//! character, then into the largest remaining pieces:
//!
//! 1. the rows are summarized in `F ≤ 512` fine pieces of whole 32-row groups (a warp of the
//!    thread-per-row kernels, so no cut splits a warp), each by `(ln(1 + mean row length),
//!    ln(1 + longest row))`;
//! 2. **change points**: greedy binary segmentation — the cut that most reduces the summed
//!    squared deviation of the pieces' summaries from their segment's mean, while the reduction
//!    exceeds [`CHANGE_GAIN`] per fine piece (a part of half the rows with twice the row length
//!    reduces it by `F/4 · ln²2 ≈ 0.12 F`);
//! 3. **balance**: the segment with the most non-zeros is halved (by non-zeros, at a fine
//!    boundary) until there are `N` strips, so that the program can also choose by size;
//! 4. **refinement**: each change-point cut moves to the 32-row group boundary, within the two
//!    fine pieces around it, that best splits those pieces' groups in two (the least summed
//!    squared deviation of the groups' summaries from their side's mean). A fine piece holds up
//!    to `nrows / 512` rows, so without this step a block of a few long rows after a large
//!    stencil also held ~2,000 of the stencil's rows (session 35's cut of the heterogeneous set's
//!    stencil stack: 1,956), on which a kernel for long rows loses or refuses the block
//!    (docs/OPTIMIZER.md, SEG-TILE). Balance cuts stay where the non-zeros put them.
//!
//! Only row pointers are read: `O(nrows)`.

/// Least reduction of the squared deviation per fine piece for a change-point cut.
pub const CHANGE_GAIN: f64 = 0.05;

/// Rows per group: cuts fall on multiples of this (or the last row).
pub const ALIGN: usize = 32;

/// Boundaries `[0, b₁, …, nrows]` of at most `strips` strips (at least one; fewer when the
/// matrix has too few 32-row groups).
pub fn cut_rows(row_ptr: &[usize], strips: usize) -> Vec<usize> {
    let nrows = row_ptr.len().saturating_sub(1);
    let groups = nrows.div_ceil(ALIGN);
    let f = groups.clamp(1, 512);
    // Fine boundaries, on 32-row groups.
    let fine: Vec<usize> = (0..=f)
        .map(|k| ((groups * k / f) * ALIGN).min(nrows))
        .collect();
    let sum = &Summaries::new(row_ptr, &fine);
    // Segments as fine-index ranges; the fine indices where a change point cut.
    let mut segs: Vec<(usize, usize)> = vec![(0, f)];
    let mut changes = Vec::new();
    let want = strips.max(1).min(f);
    while segs.len() < want {
        let best = segs
            .iter()
            .enumerate()
            .flat_map(|(i, &(a, b))| {
                (a + 1..b).map(move |m| (i, m, sum.sse(a, b) - sum.sse(a, m) - sum.sse(m, b)))
            })
            .max_by(|x, y| x.2.total_cmp(&y.2));
        match best {
            Some((i, m, gain)) if gain > CHANGE_GAIN * f as f64 => {
                let (a, b) = segs[i];
                segs.splice(i..=i, [(a, m), (m, b)]);
                changes.push(m);
            }
            _ => break,
        }
    }
    while segs.len() < want {
        // Halve the segment with the most non-zeros, at the fine boundary nearest its middle.
        let nnz = |a: usize, b: usize| row_ptr[fine[b]] - row_ptr[fine[a]];
        let Some((i, &(a, b))) = segs
            .iter()
            .enumerate()
            .filter(|(_, &(a, b))| b - a >= 2)
            .max_by_key(|(_, &(a, b))| (nnz(a, b), b - a))
        else {
            break;
        };
        let half = row_ptr[fine[a]] + nnz(a, b) / 2;
        let m = (a + 1..b)
            .min_by_key(|&m| row_ptr[fine[m]].abs_diff(half))
            .unwrap_or(a + 1);
        segs.splice(i..=i, [(a, m), (m, b)]);
    }
    let starts: Vec<usize> = segs.iter().map(|&(a, _)| a).collect();
    let mut cuts: Vec<usize> = starts.iter().map(|&a| fine[a]).collect();
    cuts.push(nrows);
    for (k, &a) in starts.iter().enumerate().skip(1) {
        if changes.contains(&a) {
            // Within the fine pieces either side, strictly between the neighbouring cuts.
            let lo = fine[a - 1].max(cuts[k - 1]);
            let hi = fine[(a + 1).min(f)].min(cuts[k + 1]);
            cuts[k] = refine(row_ptr, lo, hi, cuts[k]);
        }
    }
    cuts.dedup();
    cuts
}

/// The 32-row group boundary strictly inside `lo..hi` that best splits the groups of those rows
/// in two (least summed squared deviation of the groups' `(ln(1 + mean row), ln(1 + longest
/// row))` from their side's mean); `at` where `lo..hi` holds fewer than two groups. Ties keep
/// the boundary nearest `at`. `O(hi − lo)`.
fn refine(row_ptr: &[usize], lo: usize, hi: usize, at: usize) -> usize {
    let nrows = row_ptr.len() - 1;
    let bounds: Vec<usize> = (lo..hi)
        .step_by(ALIGN)
        .chain(std::iter::once(hi))
        .map(|r| r.min(nrows))
        .collect();
    if bounds.len() < 3 {
        return at;
    }
    let sum = Summaries::new(row_ptr, &bounds);
    let g = bounds.len() - 1;
    (1..g)
        .min_by(|&x, &y| {
            let (cx, cy) = (sum.sse(0, x) + sum.sse(x, g), sum.sse(0, y) + sum.sse(y, g));
            cx.total_cmp(&cy)
                .then(bounds[x].abs_diff(at).cmp(&bounds[y].abs_diff(at)))
        })
        .map_or(at, |k| bounds[k])
}

/// The pieces between consecutive `bounds`, each summarized by `(ln(1 + mean row), ln(1 +
/// longest row))`, with prefix sums of the summaries and their squares: the squared deviation
/// of any run of pieces from its mean in `O(1)`.
struct Summaries {
    s1: Vec<[f64; 2]>,
    s2: Vec<f64>,
}

impl Summaries {
    fn new(row_ptr: &[usize], bounds: &[usize]) -> Self {
        let n = bounds.len().saturating_sub(1);
        let (mut s1, mut s2) = (vec![[0.0; 2]; n + 1], vec![0.0; n + 1]);
        for (k, w) in bounds.windows(2).enumerate() {
            let rows = (w[1] - w[0]).max(1) as f64;
            let nnz = (row_ptr[w[1]] - row_ptr[w[0]]) as f64;
            let max = (w[0]..w[1])
                .map(|r| row_ptr[r + 1] - row_ptr[r])
                .max()
                .unwrap_or(0) as f64;
            let v = [(nnz / rows).ln_1p(), max.ln_1p()];
            s1[k + 1] = [s1[k][0] + v[0], s1[k][1] + v[1]];
            s2[k + 1] = s2[k] + v[0] * v[0] + v[1] * v[1];
        }
        Summaries { s1, s2 }
    }

    /// Squared deviation of pieces `a..b` from their mean (0 for none).
    fn sse(&self, a: usize, b: usize) -> f64 {
        let n = (b - a) as f64;
        if n == 0.0 {
            return 0.0;
        }
        let (s1, s2) = (&self.s1, &self.s2);
        let m = [s1[b][0] - s1[a][0], s1[b][1] - s1[a][1]];
        (s2[b] - s2[a]) - (m[0] * m[0] + m[1] * m[1]) / n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ptr(lens: &[usize]) -> Vec<usize> {
        let mut p = vec![0];
        for &l in lens {
            p.push(p.last().unwrap() + l);
        }
        p
    }

    #[test]
    fn cuts_where_the_rows_change_then_balance() {
        // 3200 rows of length 4, then 800 rows of length 300.
        let mut lens = vec![4usize; 3200];
        lens.extend(vec![300usize; 800]);
        let c = cut_rows(&ptr(&lens), 2);
        assert_eq!(c, vec![0, 3200, 4000]);
        let c = cut_rows(&ptr(&lens), 4);
        assert!(c.contains(&3200), "{c:?}");
        assert_eq!(c.len(), 5);
        assert!(c.iter().all(|&r| r % ALIGN == 0 || r == 4000));
        // Homogeneous: balanced by non-zeros.
        let c = cut_rows(&ptr(&vec![5usize; 6400]), 4);
        assert_eq!(c, vec![0, 1600, 3200, 4800, 6400]);
        assert_eq!(cut_rows(&ptr(&[1, 2]), 5), vec![0, 2]);
    }

    #[test]
    fn change_points_are_refined_to_the_group() {
        // 100,000 short rows then 200 long ones: the fine pieces hold ~6,272 rows, yet the cut
        // falls on the 32-row group where the long rows begin (99,968 holds rows 99,968..100,000
        // of the stencil and the long block begins at 100,000, a multiple of 32).
        let mut lens = vec![5usize; 100_000];
        lens.extend(vec![20_000usize; 200]);
        let c = cut_rows(&ptr(&lens), 2);
        assert_eq!(c, vec![0, 100_000, 100_200]);
        // The other way round, and off the 32-row grid: 210 long rows then short ones; the group
        // of rows 192..224 is mostly long, so the cut is 224.
        let mut lens = vec![20_000usize; 210];
        lens.extend(vec![5usize; 100_000]);
        let c = cut_rows(&ptr(&lens), 2);
        assert_eq!(c, vec![0, 224, 100_210]);
        // With more strips the balance cuts stay on fine pieces, the change point exact.
        let mut lens = vec![5usize; 100_000];
        lens.extend(vec![20_000usize; 200]);
        let c = cut_rows(&ptr(&lens), 4);
        assert!(c.contains(&100_000), "{c:?}");
        assert!(c.windows(2).all(|w| w[0] < w[1]), "{c:?}");
        assert_eq!(cut_rows(&ptr(&[]), 5), vec![0]);
    }
}
