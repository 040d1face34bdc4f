//! The library's nearest matrices and the trees' inputs of each candidate.

use super::*;

/// Standardisation of shapes.
pub(super) struct Scaler<'a> {
    pub(super) mean: &'a [f64],
    pub(super) sd: &'a [f64],
}

impl Scaler<'_> {
    pub(super) fn z(&self, s: &[f64]) -> Vec<f64> {
        s.iter()
            .zip(self.mean.iter().zip(self.sd))
            .map(|(x, (m, d))| (x - m) / d)
            .collect()
    }
}

/// The `k` nearest of `pool` (index, squared distance), nearest first, with their weights
/// `1 / (distance + 10⁻³)`.
pub(super) fn nearest(pool: impl Iterator<Item = (usize, f64)>, k: usize) -> Vec<(usize, f64)> {
    let mut ds: Vec<(f64, usize)> = pool.map(|(j, d2)| (d2, j)).collect();
    if ds.is_empty() || k == 0 {
        return Vec::new();
    }
    let k = k.min(ds.len());
    ds.select_nth_unstable_by(k - 1, |a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    ds.truncate(k);
    ds.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    ds.into_iter()
        .map(|(d2, j)| (j, 1.0 / (d2.sqrt() + 1e-3)))
        .collect()
}

/// [`nearest`] over a stored library: the `k` rows of `shapes` (row-major, `zs.len()` fixed-point
/// coordinates a row, [`SCALE`]) nearest to `zs`, the rows of family `skip` left out — the same
/// rows, order and weights as `nearest` over every row's `Σ (s − z)² / SCALE²`, to the bit.
///
/// Why hand-written: the scan over the ≈ 10,000 library matrices was a quarter of a ranking
/// (0.10 ms a precision of ≈ 0.45, `perf` of `examples/predict_cost.rs`, session 58). It keeps
/// the `k` best so far instead of collecting and selecting all, and stops a row's sum once it
/// reaches the `k`-th best: its terms are ≥ 0 and a rounded sum never decreases, so the row
/// could only tie or lose — and a tie goes to the lower index, which the earlier row has.
pub(super) fn nearest_rows(
    shapes: &[i32],
    families: &[u32],
    zs: &[f64],
    skip: Option<u32>,
    k: usize,
) -> Vec<(usize, f64)> {
    let d = zs.len();
    // Coordinates summed between two looks at the bound.
    const STRIDE: usize = 4;
    let unit = 1.0 / (SCALE * SCALE);
    if k == 0 || d == 0 {
        // No coordinates (a stage never has none): every row at distance zero.
        let pool = families.iter().enumerate();
        return nearest(
            pool.filter(|(_, &h)| Some(h) != skip)
                .map(|(j, _)| (j, 0.0)),
            k,
        );
    }
    // (distance, row), ascending by `nearest`'s order; the bound is the k-th distance.
    let mut best: Vec<(f64, usize)> = Vec::with_capacity(k + 1);
    for (j, (&h, row)) in families.iter().zip(shapes.chunks_exact(d)).enumerate() {
        if Some(h) == skip {
            continue;
        }
        let bound = match best.len() == k {
            true => best[k - 1].0,
            false => f64::INFINITY,
        };
        // The same additions, in the same order, as `Iterator::sum` over the row.
        let mut d2 = -0.0f64;
        let mut out = false;
        for (r, z) in row.chunks(STRIDE).zip(zs.chunks(STRIDE)) {
            for (&s, x) in r.iter().zip(z) {
                d2 += (s as f64 - x).powi(2);
            }
            if d2 * unit >= bound {
                out = true;
                break;
            }
        }
        if out {
            continue;
        }
        let d2 = d2 * unit;
        let at = best.partition_point(|e| e.0.total_cmp(&d2).is_le());
        best.insert(at, (d2, j));
        best.truncate(k);
    }
    best.into_iter()
        .map(|(d2, j)| (j, 1.0 / (d2.sqrt() + 1e-3)))
        .collect()
}

pub(super) fn dist2(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).powi(2)).sum()
}

/// Weighted mean of the neighbours' regrets where measured.
pub(super) fn knn_regret(near: &[(usize, f64)], regret: impl Fn(usize) -> Option<f64>) -> f64 {
    let (s, w) = near
        .iter()
        .fold((0.0, 0.0), |(s, w), &(j, wt)| match regret(j) {
            Some(v) => (s + wt * v, w + wt),
            None => (s, w),
        });
    if w > 0.0 {
        s / w
    } else {
        UNKNOWN_REGRET
    }
}

/// The stage's inputs of each of the `top` predicted-fastest candidates of one matrix:
/// `(index into preds, inputs)`. `preds` = `(configuration id, label, predicted seconds)`;
/// `knn(id)` = the neighbours' regret of that configuration.
pub(super) fn inputs(
    preds: &[(usize, &str, f64)],
    f64: bool,
    shape: &[f64],
    top: usize,
    knn: impl Fn(usize) -> f64,
) -> Vec<(usize, Vec<f64>)> {
    let mut order: Vec<usize> = (0..preds.len()).collect();
    order.sort_by(|&a, &b| preds[a].2.total_cmp(&preds[b].2));
    let lp = |i: usize| preds[i].2.ln();
    let pmin = lp(order[0]);
    let p2 = order.get(1).map_or(pmin, |&i| lp(i));
    let vendor = preds
        .iter()
        .filter(|p| p.1.starts_with("cusparse"))
        .map(|p| p.2.ln())
        .fold(f64::INFINITY, f64::min);
    let vendor = if vendor.is_finite() { vendor } else { pmin };
    let merge = preds
        .iter()
        .find(|p| p.1 == "csr-merge")
        .map_or(pmin, |p| p.2.ln());
    order
        .iter()
        .take(top)
        .enumerate()
        .map(|(rank, &i)| {
            let l = lp(i);
            let mut x = vec![
                l - pmin,
                if rank == 0 { pmin - p2 } else { l - pmin },
                rank as f64,
                preds[i].0 as f64,
                f64 as u8 as f64,
                pmin,
                l - vendor,
                l - merge,
            ];
            x.extend_from_slice(shape);
            x.push(knn(preds[i].0));
            (i, x)
        })
        .collect()
}

pub(super) fn eval(base: f64, trees: &[Tree], x: &[f64]) -> f64 {
    base + gb::sum(trees, x)
}
