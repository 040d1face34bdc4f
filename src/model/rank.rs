//! Ranking the kernels a model covers for one matrix: predicted time, predicted effective
//! bandwidth, rank (1 = the recommendation).

use super::{Model, Shape};
use crate::backend::Variant;
use crate::features::Features;
use crate::formats::FormatParams;
use serde::Serialize;
use std::time::Instant;

/// One kernel's line of a ranking.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ranked {
    /// Kernel name (`csr-vector`, `ell`, …).
    #[serde(serialize_with = "variant_name")]
    pub variant: Variant,
    /// Predicted seconds, `None` if the model refused.
    pub seconds: Option<f64>,
    /// Bytes one SpMV must move (format arrays + x + y).
    pub bytes: Option<u64>,
    /// `bytes / seconds / 1e9`.
    pub effective_gbs: Option<f64>,
    /// 1 for the fastest; `None` if refused.
    pub rank: Option<usize>,
    /// What the model used (strips, P_NZ, HYB split …) or why it refused.
    pub note: String,
    /// The model's uncertainty of `seconds` (one standard deviation), if it gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uncertainty_seconds: Option<f64>,
    /// Why the model's raw prediction was clamped to the device's bounds, if it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clamped: Option<String>,
}

/// A ranking of every kernel a model covers.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ranking {
    /// Kernels, fastest first; refused ones last, in the model's order.
    pub rows: Vec<Ranked>,
    /// Wall-clock seconds the predictions took (features excluded).
    pub predict_seconds: f64,
}

impl Ranking {
    /// The recommended kernel, if any was predicted.
    pub fn best(&self) -> Option<&Ranked> {
        self.rows.first().filter(|r| r.rank == Some(1))
    }
}

fn variant_name<S: serde::Serializer>(v: &Variant, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&v.name())
}

/// Predict every kernel of `model` for the matrix of `features` and rank them.
pub fn rank(model: &dyn Model, features: &Features, params: &FormatParams) -> Ranking {
    let start = Instant::now();
    // The access counts size the padded formats (SELL-C-σ, BSR, DIA) from the features alone.
    let shape = Shape::for_params(features, params);
    let value_bytes = model.precision().bytes() as u64;
    let mut rows: Vec<Ranked> = model
        .variants()
        .into_iter()
        .map(|v| {
            // A format that refuses the matrix is refused; bytes the summary cannot size (a
            // cuSPARSE algorithm's own layout) are only left blank.
            let res = model.predict_detail(features, v, params).and_then(|p| {
                let b = match shape.working_set_bytes(v, params, value_bytes) {
                    Ok(b) => Some(b),
                    Err(crate::Error::Unsupported(_)) => None,
                    Err(e) => return Err(e),
                };
                Ok((p, b))
            });
            match res {
                Ok((p, b)) => Ranked {
                    variant: v,
                    seconds: Some(p.seconds),
                    bytes: b,
                    effective_gbs: b.map(|b| b as f64 / p.seconds / 1e9),
                    rank: None,
                    note: match &p.clamped {
                        Some(c) => format!("{}; {c}", model.explain(features, v, params)),
                        None => model.explain(features, v, params),
                    },
                    uncertainty_seconds: p.uncertainty,
                    clamped: p.clamped,
                },
                Err(e) => Ranked {
                    variant: v,
                    seconds: None,
                    bytes: None,
                    effective_gbs: None,
                    rank: None,
                    note: e.to_string(),
                    uncertainty_seconds: None,
                    clamped: None,
                },
            }
        })
        .collect();
    // Stable: ties keep the model's order; refused (None) after every prediction.
    rows.sort_by(|a, b| match (a.seconds, b.seconds) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    for (i, r) in rows.iter_mut().filter(|r| r.seconds.is_some()).enumerate() {
        r.rank = Some(i + 1);
    }
    Ranking {
        rows,
        predict_seconds: start.elapsed().as_secs_f64(),
    }
}

/// How many of the predicted-fastest configurations a *tuned* recommendation times
/// (`predict --tune`), besides the predicted-fastest cuSPARSE algorithm ([`shortlist`]).
///
/// Chosen on the held-out records of the nine-table cross-validation (session 18,
/// `docs/ACCURACY.md`): timing the 3 predicted-fastest configurations and the predicted-fastest
/// cuSPARSE algorithm (≤ 4 runs instead of ≈ 60) puts the pick within 5 % of the best on
/// 98.1–98.7 % of the matrices (model alone 89.9–92.2 %); 2 gives 96.8–97.7 %, 4 gives
/// 98.7–99.1 %.
pub const SHORTLIST: usize = 3;

/// The configurations a tuned recommendation times: the `k` predicted fastest (refused ones
/// never), plus the predicted-fastest cuSPARSE algorithm when it is not among them — the
/// recommendation then never falls far below the vendor library because the model
/// over-predicted it. Returns indices into `items`, fastest prediction first; ties keep the
/// order of `items`. Generic over what is ranked (a [`Ranked`] row, an evaluation record) so
/// that `predict --tune` and the reports' `+tune` pick follow one rule.
pub fn shortlist<T>(
    items: &[T],
    k: usize,
    seconds: impl Fn(&T) -> Option<f64>,
    vendor: impl Fn(&T) -> bool,
) -> Vec<usize> {
    let mut order: Vec<(usize, f64)> = items
        .iter()
        .enumerate()
        .filter_map(|(i, x)| seconds(x).filter(|s| s.is_finite()).map(|s| (i, s)))
        .collect();
    order.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut out: Vec<usize> = order.iter().take(k).map(|x| x.0).collect();
    if let Some(&(v, _)) = order.iter().find(|(i, _)| vendor(&items[*i])) {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Error, Precision, Result};

    /// Times by kernel: CSR 3 µs, COO 1 µs, ELL refused, HYB 2 µs.
    struct Fixed;
    impl Model for Fixed {
        fn name(&self) -> &str {
            "fixed"
        }
        fn precision(&self) -> Precision {
            Precision::F64
        }
        fn variants(&self) -> Vec<Variant> {
            vec![
                Variant::Csr {
                    threads_per_row: 32,
                },
                Variant::Ell,
                Variant::Coo,
                Variant::Hyb,
            ]
        }
        fn predict(&self, _: &Features, v: Variant, _: &FormatParams) -> Result<f64> {
            match v {
                Variant::Ell => Err(Error::refused("ell", "too wide")),
                Variant::Coo => Ok(1e-6),
                Variant::Hyb => Ok(2e-6),
                _ => Ok(3e-6),
            }
        }
    }

    #[test]
    fn fastest_first_refused_last() {
        let lens = [2usize; 100];
        let (rows, cols): (Vec<u32>, Vec<u32>) = (0..200u32).map(|k| (k / 2, k % 2)).unzip();
        let a = crate::Csr::<f64>::from_triplets(100, 100, &rows, &cols, &[1.0; 200]).unwrap();
        assert_eq!(a.row_lengths(), lens);
        let r = rank(&Fixed, &Features::compute(&a), &FormatParams::default());
        let order: Vec<String> = r.rows.iter().map(|x| x.variant.name()).collect();
        assert_eq!(order, ["coo", "hyb", "csr-vector", "ell"]);
        assert_eq!(
            r.rows.iter().map(|x| x.rank).collect::<Vec<_>>(),
            [Some(1), Some(2), Some(3), None]
        );
        assert_eq!(r.best().unwrap().variant, Variant::Coo);
        assert!(r.rows[3].note.contains("too wide"));
        // COO: 200 entries × 16 B + (100 + 100) × 8 B in 1 µs.
        let coo = &r.rows[0];
        assert_eq!(coo.bytes, Some(200 * 16 + 200 * 8));
        assert!((coo.effective_gbs.unwrap() - 4800.0 / 1e-6 / 1e9).abs() < 1e-9);
    }

    #[test]
    fn padded_formats_are_sized_from_the_access_counts() {
        // 64 rows of lengths 1…64 (columns 0…len−1): SELL pads each slice to its longest row.
        let (mut rows, mut cols) = (Vec::new(), Vec::new());
        for r in 0..64u32 {
            for c in 0..=r {
                rows.push(r);
                cols.push(c);
            }
        }
        let a =
            crate::Csr::<f64>::from_triplets(64, 64, &rows, &cols, &vec![1.0; rows.len()]).unwrap();
        // SELL-C-σ and BSR only.
        let padded = crate::model::testing::Constant {
            variants: vec![Variant::Sell, Variant::Bsr],
            seconds: 1e-6,
        };
        let r = rank(&padded, &Features::compute(&a), &FormatParams::default());
        for x in &r.rows {
            let b = x
                .bytes
                .unwrap_or_else(|| panic!("{} not sized", x.variant.name()));
            // At least the value of every non-zero, x and y.
            assert!(
                b >= a.nnz() as u64 * 8 + 2 * 64 * 8,
                "{}: {b}",
                x.variant.name()
            );
            assert!(x.effective_gbs.is_some());
        }
    }

    #[test]
    fn the_shortlist_is_the_k_fastest_and_the_fastest_vendor_algorithm() {
        // (seconds, vendor): refused and non-finite predictions are never shortlisted.
        let items = [
            (Some(5.0), true),
            (Some(1.0), false),
            (None, false),
            (Some(2.0), false),
            (Some(f64::NAN), true),
            (Some(3.0), false),
            (Some(4.0), true),
        ];
        let s = |k| shortlist(&items, k, |x| x.0, |x| x.1);
        // The 2 fastest, then the fastest vendor algorithm (4.0, not 5.0).
        assert_eq!(s(2), [1, 3, 6]);
        // The vendor algorithm already among the k fastest is not repeated.
        assert_eq!(s(4), [1, 3, 5, 6]);
        assert_eq!(s(0), [6]);
        assert_eq!(s(10), [1, 3, 5, 6, 0]);
        // No vendor algorithm: only the k fastest.
        assert_eq!(shortlist(&items, 2, |x| x.0, |_| false), [1, 3]);
    }
}
