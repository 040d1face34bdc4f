//! Features against a naive sequential computation on random small matrices.

use proptest::prelude::*;
use sparsecast::features::Features;
use sparsecast::formats::hyb::auto_width;
use sparsecast::Csr;
use std::collections::{BTreeMap, BTreeSet};

/// Naive features: sort for the median, a map for the mode, a set for the diagonals.
fn naive(m: &Csr<f64>) -> Features {
    let len: Vec<usize> = (0..m.nrows).map(|i| m.row(i).0.len()).collect();
    let n = m.nrows;
    let nnz: usize = len.iter().sum();
    let mut sorted = len.clone();
    sorted.sort();
    let mut freq = BTreeMap::new();
    for &l in &len {
        *freq.entry(l).or_insert(0usize) += 1;
    }
    let top = freq.values().copied().max().unwrap_or(0);
    let mode = freq.iter().find(|(_, &c)| c == top).map_or(0, |(&l, _)| l);
    let mean = if n == 0 { 0.0 } else { nnz as f64 / n as f64 };
    let var = if n == 0 {
        0.0
    } else {
        len.iter().map(|&l| (l as f64 - mean).powi(2)).sum::<f64>() / n as f64
    };
    let (mut gaps, mut band, mut diags, mut bad) = (vec![], 0usize, BTreeSet::new(), 0usize);
    let (mut min_gap, mut max_gap) = (None::<usize>, None::<usize>);
    for i in 0..n {
        let (c, v) = m.row(i);
        for k in 0..c.len() {
            let j = c[k] as usize;
            band = band.max(i.abs_diff(j));
            diags.insert(j as i64 - i as i64);
            if !v[k].is_finite() {
                bad += 1;
            }
            if k > 0 {
                let g = j - c[k - 1] as usize;
                gaps.push(g);
                min_gap = Some(min_gap.map_or(g, |x| x.min(g)));
                max_gap = Some(max_gap.map_or(g, |x| x.max(g)));
            }
        }
    }
    let max = len.iter().copied().max().unwrap_or(0);
    let w = auto_width(&len);
    let coo: usize = len.iter().map(|&l| l.saturating_sub(w)).sum();
    let mut hist = vec![];
    for &l in &len {
        let mut k = 0;
        while l >= (1usize << k) {
            k += 1;
        }
        if hist.len() <= k {
            hist.resize(k + 1, 0);
        }
        hist[k] += 1;
    }
    Features {
        nrows: n,
        ncols: m.ncols,
        nnz,
        min_nnz: len.iter().copied().min().unwrap_or(0),
        max_nnz: max,
        mode_nnz: mode,
        median_nnz: if n == 0 { 0 } else { sorted[(n - 1) / 2] },
        mean_nnz: mean,
        std_nnz: var.sqrt(),
        min_dist: min_gap,
        max_dist: max_gap,
        bandwidth: band,
        density: if n * m.ncols == 0 {
            0.0
        } else {
            nnz as f64 / (n * m.ncols) as f64
        },
        empty_rows: len.iter().filter(|&&l| l == 0).count(),
        ell_padding_ratio: if nnz == 0 {
            1.0
        } else {
            (max * n) as f64 / nnz as f64
        },
        hyb_width: w,
        hyb_coo_nnz: coo,
        hyb_coo_share: if nnz == 0 {
            0.0
        } else {
            coo as f64 / nnz as f64
        },
        diagonals: diags.len(),
        row_len_log2_hist: hist,
        nonfinite: bad,
        // Checked by its own tests (src/features/access.rs); here only carried over.
        access: Some(sparsecast::features::Access::compute(m)),
    }
}

/// Random matrices up to 40 × 40 with a per-row fill level, some NaN / infinite values.
fn matrix() -> impl Strategy<Value = Csr<f64>> {
    (0usize..40, 0usize..40).prop_flat_map(|(r, c)| {
        let row = (
            any::<u8>(),
            proptest::collection::vec((any::<u8>(), 0u8..20), c),
        );
        proptest::collection::vec(row, r).prop_map(move |rows| {
            let (mut ri, mut ci, mut v) = (vec![], vec![], vec![]);
            for (i, (level, entries)) in rows.iter().enumerate() {
                for (j, &(e, kind)) in entries.iter().enumerate() {
                    if e < *level {
                        ri.push(i as u32);
                        ci.push(j as u32);
                        v.push(match kind {
                            0 => f64::NAN,
                            1 => f64::NEG_INFINITY,
                            k => k as f64 - 10.0,
                        });
                    }
                }
            }
            Csr::from_triplets(r, c, &ri, &ci, &v).unwrap()
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn features_match_naive(m in matrix()) {
        let f = Features::compute(&m);
        let mut g = naive(&m);
        // The population std comes from exact integer sums in `compute`, from a float sum of
        // squared deviations here: equal up to rounding.
        prop_assert!((f.std_nnz - g.std_nnz).abs() <= 1e-12 * (1.0 + g.std_nnz));
        g.std_nnz = f.std_nnz;
        prop_assert_eq!(f, g);
    }
}
