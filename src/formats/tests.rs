//! The formats' declared rules against their conversions: on random matrices and parameters,
//! [`FormatKind::admit`] on the matrix's [`Summary`] accepts exactly when the conversion does
//! (with the same message when both refuse), and [`FormatKind::footprint`] equals the converted
//! format's own [`SparseFormat::footprint_bytes`], counted from its arrays. Also: the parameters
//! as options and as plan JSON.

use super::*;
use crate::{Error, Scalar};
use proptest::prelude::*;

/// A random matrix up to 40 × 40: a band of random width plus scattered entries and a few long
/// rows, so that DIA, BSR, SELL and HYB all see padding (entries are summed where they repeat).
fn matrix() -> impl Strategy<Value = Csr<f64>> {
    (
        0usize..=40,
        1usize..=40,
        0usize..=3,
        0usize..=80,
        0usize..=3,
        any::<u64>(),
    )
        .prop_map(|(nr, nc, band, scattered, long, seed)| {
            use rand::{Rng, SeedableRng};
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let (mut rows, mut cols) = (Vec::new(), Vec::new());
            for i in 0..nr {
                for d in 0..band {
                    if i + d < nc {
                        rows.push(i as u32);
                        cols.push((i + d) as u32);
                    }
                }
            }
            for _ in 0..if nr > 0 { scattered } else { 0 } {
                rows.push(rng.random_range(0..nr) as u32);
                cols.push(rng.random_range(0..nc) as u32);
            }
            for _ in 0..if nr > 0 { long } else { 0 } {
                let r = rng.random_range(0..nr) as u32;
                for c in 0..nc {
                    rows.push(r);
                    cols.push(c as u32);
                }
            }
            let vals: Vec<f64> = (0..rows.len()).map(|k| 1.0 + k as f64).collect();
            Csr::from_triplets(nr, nc, &rows, &cols, &vals).unwrap()
        })
}

/// Random parameters, out-of-range ones included (C = 0, σ not a multiple of C, b = 0, ELL widths
/// shorter than the longest row, tight DIA fill limits, ELL-BRO slices of 0 rows and slices
/// taller than the matrix, SEG-TILE widths that are not powers of two or too wide, and segment
/// minimums from none to most of these matrices' rows). The byte limit is set per case.
fn params() -> impl Strategy<Value = FormatParams> {
    (
        proptest::option::of(0usize..=45),
        proptest::option::of(0usize..=6),
        0usize..=5,
        0usize..=12,
        0usize..=5,
        prop_oneof![Just(f64::INFINITY), 0.5f64..12.0],
        prop_oneof![0usize..=9, Just(256), Just(usize::MAX)],
        (
            prop_oneof![0usize..=4, Just(65536), Just(131072)],
            prop_oneof![Just(0.0), 0.5f64..10.0],
        ),
    )
        .prop_map(
            |(ell, hyb, c, sigma, block, fill, slice, (w, least))| FormatParams {
                ell: EllParams { width: ell },
                hyb: HybParams { width: hyb },
                sell: SellParams { c, sigma },
                bsr: BsrParams { block },
                dia: DiaParams { max_fill: fill },
                ell_bro: EllBroParams { slice },
                segtile: SegTileParams {
                    width: w,
                    min_segment: least,
                },
                max_bytes: u64::MAX,
            },
        )
}

/// The rules against the conversion of `m` to `kind` with `p`, in precision `T`.
fn agree<T: Scalar>(
    m: &Csr<f64>,
    kind: FormatKind,
    p: &FormatParams,
) -> std::result::Result<(), TestCaseError> {
    let m: Csr<T> = m.cast();
    let vb = T::BYTES as u64;
    let s = Summary::for_format(&m, kind, p);
    let admitted = kind.admit(&s, p, vb);
    let converted = AnyFormat::convert(&m, kind, p);
    match (&admitted, &converted) {
        (Ok(()), Ok(f)) => {
            let fp = kind.footprint(&s, p, vb);
            prop_assert_eq!(fp, Ok(f.as_dyn().footprint_bytes()), "{} footprint", kind);
            prop_assert!(f.as_dyn().footprint_bytes() <= p.max_bytes);
            if let AnyFormat::Dia(d) = f {
                // The slots the kernel skips, counted slot by slot; the one-pass features count
                // the same (and the same diagonals).
                let outside = d
                    .offsets
                    .iter()
                    .flat_map(|&o| (0..d.nrows as i64).map(move |i| i + o as i64))
                    .filter(|&j| j < 0 || j >= d.ncols as i64)
                    .count() as u64;
                let count = s.counts.dia.expect("counted for DIA");
                prop_assert_eq!(count.outside, Some(outside));
                let f = crate::features::Features::compute(&m);
                prop_assert_eq!(f.access.and_then(|a| a.dia), Some(count));
                prop_assert_eq!(
                    s.moved(kind, p, vb),
                    Ok(s.working_set(kind, p, vb).unwrap()
                        - outside * vb
                        - (s.ncols - s.ncols.min(s.nnz)) * vb)
                );
            }
        }
        (Err(r), Err(e)) => prop_assert_eq!(Error::from(*r).to_string(), e.to_string()),
        _ => prop_assert!(
            false,
            "{kind}: admit says {admitted:?}, the conversion {:?}",
            converted.as_ref().map(|_| ()).map_err(|e| e.to_string())
        ),
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn admit_and_footprint_agree_with_the_conversions(m in matrix(), mut p in params(), cut in 0u64..=2) {
        for kind in FormatKind::ALL {
            // Limits just below, at and far above the footprint where it is known.
            let s = Summary::for_format(&m, kind, &p);
            p.max_bytes = match (kind.footprint(&s, &p, 8), cut) {
                (Ok(fp), 0) => fp.saturating_sub(1),
                (Ok(fp), 1) => fp,
                _ => u64::MAX,
            };
            agree::<f64>(&m, kind, &p)?;
            agree::<f32>(&m, kind, &p)?;
        }
    }

    #[test]
    fn auto_width_from_a_histogram_is_cusps_rule(lens in proptest::collection::vec(
        prop_oneof![3 => 0usize..6, 1 => 0usize..100_000], 0..9000)) {
        // cusp's loop over a dense histogram, as written before the histogram became sparse.
        let longest = lens.iter().copied().max().unwrap_or(0);
        let mut dense = vec![0usize; longest + 1];
        for &l in &lens {
            dense[l] += 1;
        }
        let mut longer = lens.len();
        let mut expected = longest;
        for (i, &h) in dense.iter().enumerate().take(longest) {
            longer -= h;
            if 3 * longer < lens.len() || longer < 4096 {
                expected = i;
                break;
            }
        }
        prop_assert_eq!(hyb::auto_width(&lens), expected);
    }
}

#[test]
fn summary_counts_are_the_formats_own() {
    // 5 × 6, rows of 3, 0, 1, 6, 2 entries.
    let lens = [3usize, 0, 1, 6, 2];
    let (mut rows, mut cols) = (vec![], vec![]);
    for (i, &l) in lens.iter().enumerate() {
        for c in 0..l {
            rows.push(i as u32);
            cols.push(c as u32);
        }
    }
    let m = Csr::<f64>::from_triplets(5, 6, &rows, &cols, &vec![1.0; rows.len()]).unwrap();
    let p = FormatParams {
        sell: SellParams { c: 2, sigma: 4 },
        bsr: BsrParams { block: 2 },
        ..FormatParams::default()
    };
    let s = Summary::of(&m, None);
    assert_eq!((s.nrows, s.ncols, s.nnz, s.max_row_len), (5, 6, 12, 6));
    // Fewer than 4096 rows: Bell & Garland put everything in COO.
    assert_eq!((s.hyb_width, s.hyb_coo_nnz), (0, 12));
    // Without its count, DIA / SELL / BSR / ELL-BRO can neither be sized nor admitted.
    for kind in [
        FormatKind::Dia,
        FormatKind::Sell,
        FormatKind::Bsr,
        FormatKind::EllBro,
    ] {
        let e = kind.footprint(&s, &p, 8).unwrap_err();
        assert!(e.is_unknown(), "{e}");
        assert!(matches!(Error::from(e), Error::Unsupported(_)));
    }
    let dia = Summary::for_format(&m, FormatKind::Dia, &p)
        .counts
        .dia
        .unwrap();
    let d = match AnyFormat::convert(&m, FormatKind::Dia, &p).unwrap() {
        AnyFormat::Dia(d) => d,
        _ => unreachable!(),
    };
    assert_eq!(dia.diagonals, d.offsets.len() as u64);
    // Offsets −4..=2 over 5 rows and 6 columns: the diagonal at −k leaves its first k rows
    // outside the columns, the one at 2 its last row: 4 + 3 + 2 + 1 + 1 slots.
    assert_eq!(d.offsets, [-4, -3, -2, -1, 0, 1, 2]);
    assert_eq!(dia.outside, Some(11));
    assert_eq!(crate::formats::dia::outside_slots(5, 6, -2), 2);
    assert_eq!(crate::formats::dia::outside_slots(5, 6, 9), 5);
    assert_eq!(crate::formats::dia::outside_slots(5, 6, -7), 5);
    assert_eq!(
        dia.offsets,
        (d.offsets[0] as i64, *d.offsets.last().unwrap() as i64)
    );
    let sell = Summary::for_format(&m, FormatKind::Sell, &p)
        .counts
        .sell
        .unwrap();
    assert_eq!((sell.c, sell.sigma), (2, 4));
    // Sorted windows of 4 rows: [6, 3, 1, 0] and [2]: slices of widths 6, 1, 2, two lanes each.
    assert_eq!(sell.slots, (6 + 1 + 2) * 2);
    let bsr = Summary::for_format(&m, FormatKind::Bsr, &p)
        .counts
        .bsr
        .unwrap();
    // Block rows {0,1}: block columns 0, 1; {2,3}: 0, 1, 2; {4}: 0.
    assert_eq!((bsr.block, bsr.blocks), (2, 6));
    // ELL-BRO with slices of 2 rows: lengths {3, 0}, {1, 6}, {2}, so 3 + 6 + 2 slice columns;
    // every delta is 1 (first column 0, + 1; then steps of 1): one bit each, one symbol per row.
    let p2 = FormatParams {
        ell_bro: EllBroParams { slice: 2 },
        ..p.clone()
    };
    let bro = Summary::for_format(&m, FormatKind::EllBro, &p2)
        .counts
        .ell_bro
        .unwrap();
    assert_eq!((bro.slice, bro.columns), (2, 3 + 6 + 2));
    assert_eq!((bro.slots, bro.symbols), (3 * 2 + 6 * 2 + 2, 5));
    // A summary counted for other parameters does not answer for these.
    let other = FormatParams {
        bsr: BsrParams { block: 3 },
        ..p.clone()
    };
    let s_bsr = Summary::for_format(&m, FormatKind::Bsr, &p);
    assert!(FormatKind::Bsr
        .footprint(&s_bsr, &other, 8)
        .unwrap_err()
        .is_unknown());
}

#[test]
fn refusals_name_the_rule_and_its_numbers() {
    let s = Summary::from_row_lengths(100, &[7, 2, 2], None);
    let narrow = FormatParams {
        ell: EllParams { width: Some(3) },
        ..FormatParams::default()
    };
    let r = FormatKind::Ell.admit(&s, &narrow, 8).unwrap_err();
    assert_eq!(
        r.reason,
        Reason::RowLongerThanWidth {
            longest: 7,
            width: 3
        }
    );
    let e = Error::from(r).to_string();
    assert!(
        e.contains("format ell") && e.contains("7 entries") && e.contains("width 3"),
        "{e}"
    );
    let tight = FormatParams {
        max_bytes: 10,
        ..FormatParams::default()
    };
    let r = FormatKind::Coo.admit(&s, &tight, 8).unwrap_err();
    assert_eq!(
        r.reason,
        Reason::Budget {
            bytes: 11 * 16,
            limit: 10
        }
    );
    assert!(
        r.to_string().contains("more than the limit of 10 bytes"),
        "{r}"
    );
    // Saturating: a footprint beyond 64 bits is reported as such, and refused.
    let huge = Summary::constant(u64::MAX / 2, 10, u64::MAX / 2);
    assert_eq!(FormatKind::Coo.footprint(&huge, &tight, 8), Ok(u64::MAX));
    let r = FormatKind::Csr.admit(&huge, &tight, 8).unwrap_err();
    assert!(matches!(r.reason, Reason::Rows(_)), "{r}");
    // A HYB width the summary was not split at is unknown, not refused.
    let hyb5 = FormatParams {
        hyb: HybParams { width: Some(5) },
        ..FormatParams::default()
    };
    let r = FormatKind::Hyb.admit(&s, &hyb5, 8).unwrap_err();
    assert!(r.is_unknown(), "{r}");
}

/// Parameters with these values and this host's byte limit.
fn with(
    ell: Option<usize>,
    hyb: Option<usize>,
    (c, sigma): (usize, usize),
    block: usize,
    max_fill: f64,
) -> FormatParams {
    FormatParams {
        ell: EllParams { width: ell },
        hyb: HybParams { width: hyb },
        sell: SellParams { c, sigma },
        bsr: BsrParams { block },
        dia: DiaParams { max_fill },
        ell_bro: EllBroParams::default(),
        segtile: SegTileParams::default(),
        max_bytes: default_max_bytes(),
    }
}

#[test]
fn parameters_as_options() {
    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        params: FormatParams,
    }
    use clap::Parser;
    let d = Cli::try_parse_from(["x"]).unwrap().params;
    assert_eq!(d, FormatParams::default());
    let p = Cli::try_parse_from([
        "x",
        "--ell-width",
        "5",
        "--hyb-width",
        "2",
        "--sell-c",
        "8",
        "--sell-sigma",
        "64",
        "--bsr-block",
        "3",
        "--dia-max-fill",
        "2.5",
    ])
    .unwrap()
    .params;
    assert_eq!(p, with(Some(5), Some(2), (8, 64), 3, 2.5));
    let p = Cli::try_parse_from(["x", "--ell-bro-slice", "32"])
        .unwrap()
        .params;
    assert_eq!(p.ell_bro, EllBroParams { slice: 32 });
    assert!(Cli::try_parse_from(["x", "--ell-bro-slice", "0"]).is_err());
    assert!(Cli::try_parse_from(["x", "--max-bytes", "5"]).is_err());
}

#[test]
fn parameters_as_plan_json() {
    // A plan block's params as plans wrote them before the parameters moved to their formats.
    let old = r#"{"ell_width": 5, "hyb_width": null, "sell_c": 8, "sell_sigma": 64,
                  "bsr_block": 2, "dia_max_fill": 10.0}"#;
    let p: FormatParams = serde_json::from_str(old).unwrap();
    assert_eq!(p, with(Some(5), None, (8, 64), 2, 10.0));
    // Written back: the same fields, and no host-dependent byte limit.
    let v: serde_json::Value = serde_json::to_value(&p).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    let mut expected = vec![
        "bsr_block",
        "dia_max_fill",
        "ell_bro_slice",
        "ell_width",
        "hyb_width",
        "segtile_min_segment",
        "segtile_width",
        "sell_c",
        "sell_sigma",
    ];
    expected.sort();
    let mut keys = keys;
    keys.sort();
    assert_eq!(keys, expected);
    assert_eq!(serde_json::from_value::<FormatParams>(v).unwrap(), p);
    // Absent fields take their defaults; unknown ones are refused.
    let sparse: FormatParams = serde_json::from_str(r#"{"sell_c": 4}"#).unwrap();
    assert_eq!(
        sparse,
        FormatParams {
            sell: SellParams {
                c: 4,
                ..SellParams::default()
            },
            ..FormatParams::default()
        }
    );
    let e = serde_json::from_str::<FormatParams>(r#"{"ell_widht": 4}"#).unwrap_err();
    assert!(e.to_string().contains("ell_widht"), "{e}");
    assert!(serde_json::from_str::<FormatParams>(r#"{"max_bytes": 4}"#).is_err());
}

#[test]
fn conversion_keys_follow_the_format_and_its_parameters() {
    let p = FormatParams::default();
    let mut q = p.clone();
    q.sell.sigma = 1;
    // CSR is the matrix itself whatever the parameters; SELL with another σ is another
    // conversion, and two formats never share one.
    assert_eq!(
        FormatKind::Csr.conversion_key(&p),
        FormatKind::Csr.conversion_key(&q)
    );
    assert_ne!(
        FormatKind::Sell.conversion_key(&p),
        FormatKind::Sell.conversion_key(&q)
    );
    assert_eq!(
        FormatKind::Sell.conversion_key(&p),
        FormatKind::Sell.conversion_key(&p.clone())
    );
    assert_ne!(
        FormatKind::Coo.conversion_key(&p),
        FormatKind::Ell.conversion_key(&p)
    );
}

#[test]
fn hyb_has_a_coo_part_exactly_where_a_row_outruns_its_width() {
    // 5,000 rows of 1 entry and one of 6: Bell & Garland's width is 1 (at least 4,096 rows
    // reach it), the long row's tail of 5 in COO.
    let mut lens = vec![1; 5_000];
    lens.push(6);
    let s = Summary::from_row_lengths(8, &lens, None);
    let width = |w| FormatParams {
        hyb: HybParams { width: w },
        ..FormatParams::default()
    };
    assert_eq!((s.hyb_width, s.hyb_coo_nnz), (1, 5));
    assert!(hyb::has_coo_part(&s, &width(None)));
    assert!(hyb::has_coo_part(&s, &width(Some(5))));
    assert!(!hyb::has_coo_part(&s, &width(Some(6))));
    // Every row within the split's width: one kernel.
    let even = Summary::from_row_lengths(8, &[3; 5_000], None);
    assert!(!hyb::has_coo_part(&even, &width(None)));
    // Fewer than 4,096 rows: width 0, every entry in COO.
    let small = Summary::from_row_lengths(8, &[3, 3, 3], None);
    assert!(hyb::has_coo_part(&small, &width(None)));
}
