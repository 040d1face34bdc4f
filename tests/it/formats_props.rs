//! Property tests of the conversions: for random CSR matrices (explicit zeros included) and random
//! format parameters, every format that accepts the matrix gives back the same matrix through
//! `to_csr`, reports consistent counts, and multiplies like the f64 reference.

use proptest::prelude::*;
use sparsecast::formats::{
    AnyFormat, BsrParams, DiaParams, FormatKind, FormatParams, HybParams, SegTileParams, SellParams,
};
use sparsecast::{Csr, Error};

/// A random CSR matrix up to 12 × 12 with up to 60 triplets (duplicates summed); about one value
/// in six is an explicit zero.
fn csr_strategy() -> impl Strategy<Value = Csr<f64>> {
    (0usize..=12, 0usize..=12).prop_flat_map(|(nr, nc)| {
        let max = if nr * nc == 0 { 0 } else { 60 };
        let value = prop_oneof![1 => Just(0.0), 5 => -8.0f64..8.0];
        proptest::collection::vec((0..nr.max(1) as u32, 0..nc.max(1) as u32, value), 0..=max)
            .prop_map(move |t| {
                let rows: Vec<u32> = t.iter().map(|e| e.0).collect();
                let cols: Vec<u32> = t.iter().map(|e| e.1).collect();
                let vals: Vec<f64> = t.iter().map(|e| e.2).collect();
                Csr::from_triplets(nr, nc, &rows, &cols, &vals).unwrap()
            })
    })
}

/// Random parameters: C in 1..=5, σ ∈ {1, C, 2C, 3C}, b in 1..=5, HYB width automatic or 0..=4,
/// ELL width automatic or the longest row plus 0..=2, SEG-TILE tiles of 1, 2, 4 or 16 columns or
/// chosen. DIA's fill limit and SEG-TILE's segment minimum are lifted so that both accept (their
/// refusals are tested elsewhere).
fn params_strategy() -> impl Strategy<Value = (FormatParams, Option<usize>)> {
    (
        1usize..=5,
        0usize..4,
        1usize..=5,
        proptest::option::of(0usize..=4),
        proptest::option::of(0usize..=2),
        prop_oneof![Just(0usize), Just(1), Just(2), Just(4), Just(16)],
    )
        .prop_map(|(c, s, b, hyb, ell_extra, w)| {
            let params = FormatParams {
                sell: SellParams {
                    c,
                    sigma: if s == 0 { 1 } else { s * c },
                },
                bsr: BsrParams { block: b },
                hyb: HybParams { width: hyb },
                dia: DiaParams {
                    max_fill: f64::INFINITY,
                },
                segtile: SegTileParams {
                    width: w,
                    min_segment: 0.0,
                },
                ..FormatParams::default()
            };
            (params, ell_extra)
        })
}

/// `m` without its explicit zeros (what DIA and BSR give back, as they cannot tell an explicit
/// zero from fill).
fn drop_zeros(m: &Csr<f64>) -> Csr<f64> {
    let (mut rows, mut cols, mut vals) = (vec![], vec![], vec![]);
    for i in 0..m.nrows {
        let (c, v) = m.row(i);
        for (&c, &v) in c.iter().zip(v) {
            if v != 0.0 {
                rows.push(i as u32);
                cols.push(c);
                vals.push(v);
            }
        }
    }
    Csr::from_triplets(m.nrows, m.ncols, &rows, &cols, &vals).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn round_trip_counts_and_spmv(m in csr_strategy(), (mut params, ell_extra) in params_strategy()) {
        let longest = (0..m.nrows).map(|i| m.row_len(i)).max().unwrap_or(0);
        params.ell.width = ell_extra.map(|e| longest + e);
        let x: Vec<f64> = (0..m.ncols).map(|j| 1.0 + j as f64 * 0.37).collect();
        let reference = m.spmv_reference(&x);
        for kind in FormatKind::ALL {
            let f = AnyFormat::convert(&m, kind, &params)
                .unwrap_or_else(|e| panic!("{kind} refused a small matrix: {e}"));
            let d = f.as_dyn();
            prop_assert_eq!(d.kind(), kind);
            prop_assert_eq!((d.nrows(), d.ncols()), (m.nrows, m.ncols));
            prop_assert_eq!(d.nnz(), m.nnz(), "{} nnz", kind);
            prop_assert!(d.stored_entries() >= d.nnz(), "{} stored < nnz", kind);
            prop_assert!(d.fill_ratio() >= 1.0, "{} fill < 1", kind);
            prop_assert!(d.footprint_bytes() >= d.stored_entries() as u64 * 8);
            let back = f.to_csr();
            back.validate().unwrap();
            if matches!(kind, FormatKind::Dia | FormatKind::Bsr) {
                prop_assert_eq!(&back, &drop_zeros(&m), "{} round trip", kind);
            } else {
                prop_assert_eq!(&back, &m, "{} round trip", kind);
            }
            let mut y = vec![f64::NAN; m.nrows];
            d.spmv(&x, &mut y);
            for i in 0..m.nrows {
                let (c, v) = m.row(i);
                let scale: f64 = c.iter().zip(v).map(|(&c, &v)| (v * x[c as usize]).abs()).sum();
                prop_assert!(
                    (y[i] - reference[i]).abs() <= 1e-12 * scale,
                    "{} row {}: {} vs {}", kind, i, y[i], reference[i]
                );
            }
        }
    }

    #[test]
    fn default_params_refuse_only_dia_and_segtile(m in csr_strategy()) {
        // With the default parameters a small matrix fits every format but DIA, which may refuse
        // (with FormatRefused) when its diagonals hold more than 10 slots per non-zero, and
        // SEG-TILE, which refuses rows of fewer than 32 entries on average (all of these).
        for kind in FormatKind::ALL {
            match AnyFormat::convert(&m, kind, &FormatParams::default()) {
                Ok(f) => prop_assert_eq!(f.as_dyn().nnz(), m.nnz()),
                Err(Error::FormatRefused { format, reason }) if kind == FormatKind::SegTile => {
                    prop_assert!(reason.contains("per segment"), "{} refused: {}", format, reason);
                }
                Err(Error::FormatRefused { format, reason }) => {
                    prop_assert_eq!(kind, FormatKind::Dia, "{} refused: {}", format, reason);
                    prop_assert!(reason.contains("diagonals"));
                }
                Err(e) => prop_assert!(false, "{} failed: {}", kind, e),
            }
        }
    }

    #[test]
    fn f32_spmv_matches_reference(m in csr_strategy(), (params, _) in params_strategy()) {
        let a: Csr<f32> = m.cast();
        let x: Vec<f32> = (0..a.ncols).map(|j| 0.5 - j as f32 * 0.11).collect();
        let xf: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let reference = a.spmv_reference(&xf);
        for kind in FormatKind::ALL {
            let f = AnyFormat::convert(&a, kind, &params).unwrap();
            let mut y = vec![f32::NAN; a.nrows];
            f.as_dyn().spmv(&x, &mut y);
            for i in 0..a.nrows {
                let (c, v) = a.row(i);
                let scale: f64 = c.iter().zip(v).map(|(&c, &v)| (v as f64 * xf[c as usize]).abs()).sum();
                prop_assert!(
                    (y[i] as f64 - reference[i]).abs() <= 1e-5 * scale,
                    "{} row {}: {} vs {}", kind, i, y[i], reference[i]
                );
            }
        }
    }
}
