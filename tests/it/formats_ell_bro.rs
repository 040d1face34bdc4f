//! ELL-BRO: its layout on a hand-made matrix (the arrays the CUDA kernel reads), its footprint
//! and rules against the converted arrays, round trips with column gaps of up to 32 bits, and the
//! CPU kernel against the f64 reference on random and adversarial matrices and slice heights.

use crate::formats_layout::hand;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use sparsecast::formats::{
    AnyFormat, EllBro, EllBroParams, FormatKind, FormatParams, SparseFormat, Summary,
};
use sparsecast::{Csr, Error};

fn slice(h: usize) -> FormatParams {
    FormatParams {
        ell_bro: EllBroParams { slice: h },
        ..FormatParams::default()
    }
}

/// Every array's bytes as the CUDA backend uploads them.
fn array_bytes<T>(f: &EllBro<T>) -> u64 {
    (4 * (f.col_ptr.len() + f.sym_ptr.len())
        + f.bits.len()
        + 8 * f.symbols.len()
        + std::mem::size_of::<T>() * f.values.len()) as u64
}

#[test]
fn layout_on_a_hand_made_matrix() {
    let f = EllBro::from_csr(&hand(), &slice(2)).unwrap();
    // Slices {0, 1}, {2, 3}, {4}: widths 2, 3, 1.
    assert_eq!(f.col_ptr, [0, 2, 5, 6]);
    // Deltas (first column + 1, then differences; 0 = padding):
    //   slice 0: row 0 [1, 1], row 1 [2, 0] → widths 2, 1 bits;
    //   slice 1: row 2 [0, 0, 0], row 3 [1, 3, 2] → 1, 2, 2 bits; slice 2: row 4 [5] → 3 bits.
    assert_eq!(f.bits, [2, 1, 1, 2, 2, 3]);
    // One symbol per row everywhere; slice s's symbols start at h × sym_ptr[s].
    assert_eq!(f.sym_ptr, [0, 1, 2, 3]);
    // Row 0: 1 | 1 << 2 = 5; row 1: 2; row 2: 0; row 3: 1 | 3 << 1 | 2 << 3 = 23; row 4: 5.
    assert_eq!(f.symbols, [5, 2, 0, 23, 5]);
    // Values column-major within each slice, padding 0; slice s at h × col_ptr[s].
    assert_eq!(
        f.values,
        [1.0, 3.0, 2.0, 0.0, 0.0, 4.0, 0.0, 5.0, 0.0, 6.0, 7.0]
    );
    assert_eq!((f.nnz(), f.stored_entries(), f.nslices()), (7, 11, 3));
    // (3 + 1) × 4 × 2 + 6 bit widths + 5 symbols × 8 + 11 values × 8.
    assert_eq!(f.footprint_bytes(), 32 + 6 + 40 + 88);
    assert_eq!(f.footprint_bytes(), array_bytes(&f));
    let g = EllBro::from_csr(&hand().cast::<f32>(), &slice(2)).unwrap();
    assert_eq!(g.footprint_bytes(), 32 + 6 + 40 + 44);
    assert_eq!(g.footprint_bytes(), array_bytes(&g));
    assert_eq!(f.to_csr(), hand());
    // Default slice of 256 rows: one slice of 5 rows, widths 3 (5 ≤ 2^3), 2, 2 bits.
    let d = EllBro::from_csr(&hand(), &FormatParams::default()).unwrap();
    assert_eq!(
        (d.col_ptr.clone(), d.bits.clone()),
        (vec![0, 3], vec![3, 2, 2])
    );
    assert_eq!(d.symbols.len(), 5);
}

#[test]
fn rules_need_the_count_and_refuse_like_the_conversion() {
    let m = hand();
    let p = slice(2);
    // Without the count, ELL-BRO can neither be sized nor admitted.
    let bare = Summary::of(&m, None);
    let e = FormatKind::EllBro.footprint(&bare, &p, 8).unwrap_err();
    assert!(e.is_unknown(), "{e}");
    assert!(matches!(Error::from(e), Error::Unsupported(_)));
    let s = Summary::for_format(&m, FormatKind::EllBro, &p);
    assert_eq!(FormatKind::EllBro.footprint(&s, &p, 8), Ok(166));
    // Counted for slices of 2, the summary does not answer for slices of 3.
    assert!(FormatKind::EllBro
        .footprint(&s, &slice(3), 8)
        .unwrap_err()
        .is_unknown());
    // Slice height 0 is a parameter error, whatever the summary holds.
    let r = FormatKind::EllBro.admit(&s, &slice(0), 8).unwrap_err();
    assert!(
        r.to_string().contains("slice height must be at least 1"),
        "{r}"
    );
    let e = AnyFormat::convert(&m, FormatKind::EllBro, &slice(0)).unwrap_err();
    assert_eq!(e.to_string(), Error::from(r).to_string());
    // The byte limit: 166 bytes fit, 165 do not.
    for (limit, ok) in [(166, true), (165, false)] {
        let tight = FormatParams {
            max_bytes: limit,
            ..p.clone()
        };
        assert_eq!(FormatKind::EllBro.admit(&s, &tight, 8).is_ok(), ok);
        match EllBro::from_csr(&m, &tight) {
            Ok(_) => assert!(ok),
            Err(Error::FormatRefused { format, reason }) => {
                assert!(!ok);
                assert_eq!(format, "ell-bro");
                assert!(
                    reason.contains("more than the limit of 165 bytes"),
                    "{reason}"
                );
            }
            Err(e) => panic!("{e}"),
        }
    }
}

/// A matrix whose columns spread over `ncols` (up to `u32::MAX`): rows of random length up to 12
/// (a third empty), each at random distinct columns, some at 0 and `ncols − 1`.
fn spread(seed: u64, nrows: usize, ncols: usize) -> Csr<f64> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let (mut rows, mut cols) = (vec![], vec![]);
    for i in 0..nrows {
        let len = if i % 3 == 2 {
            0
        } else {
            rng.random_range(1..=12)
        };
        for k in 0..len {
            let c = match k {
                0 if i % 2 == 0 => 0,
                1 if i % 4 == 0 => ncols - 1,
                _ => rng.random_range(0..ncols),
            };
            rows.push(i as u32);
            cols.push(c as u32);
        }
    }
    let vals: Vec<f64> = (0..rows.len()).map(|k| k as f64 - 7.5).collect();
    Csr::from_triplets(nrows, ncols, &rows, &cols, &vals).unwrap()
}

#[test]
fn column_gaps_of_up_to_32_bits_round_trip() {
    // No x is needed to convert: columns up to u32::MAX − 1, deltas of 32 bits, widths that
    // straddle symbols.
    for (seed, nrows, ncols) in [
        (1, 700, u32::MAX as usize),
        (2, 300, (1 << 31) + 3),
        (3, 1, 7),
    ] {
        let m = spread(seed, nrows, ncols);
        for h in [1, 2, 3, 32, 256, 1000, usize::MAX] {
            let f = EllBro::from_csr(&m, &slice(h)).unwrap();
            assert_eq!(f.to_csr(), m, "seed {seed}, slice {h}");
            assert_eq!(f.footprint_bytes(), array_bytes(&f));
            let s = Summary::for_format(&m, FormatKind::EllBro, &slice(h));
            assert_eq!(
                FormatKind::EllBro.footprint(&s, &slice(h), 8),
                Ok(f.footprint_bytes())
            );
            if ncols > 1 << 31 {
                assert_eq!(f.bits.iter().max(), Some(&32), "seed {seed}, slice {h}");
            }
        }
    }
    // The largest first delta: a single entry in the last column of u32::MAX.
    let m = Csr::from_triplets(1, u32::MAX as usize, &[0], &[u32::MAX - 1], &[2.5f32]).unwrap();
    let f = EllBro::from_csr(&m, &FormatParams::default()).unwrap();
    assert_eq!(
        (f.bits.clone(), f.symbols.clone()),
        (vec![32], vec![u32::MAX as u64])
    );
    assert_eq!(f.to_csr(), m);
}

/// `f`'s CPU SpMV against the f64 reference of `m`, for an x with entries in [-1, 1).
fn check_spmv(m: &Csr<f64>, h: usize) -> std::result::Result<(), TestCaseError> {
    let f = EllBro::from_csr(m, &slice(h)).unwrap();
    let x: Vec<f64> = (0..m.ncols)
        .map(|j| ((j * 37) % 19) as f64 / 9.5 - 1.0)
        .collect();
    let reference = m.spmv_reference(&x);
    let mut y = vec![f64::NAN; m.nrows];
    f.spmv(&x, &mut y);
    for i in 0..m.nrows {
        let (c, v) = m.row(i);
        let scale: f64 = c
            .iter()
            .zip(v)
            .map(|(&c, &v)| (v * x[c as usize]).abs())
            .sum();
        prop_assert!(
            (y[i] - reference[i]).abs() <= 1e-12 * scale,
            "slice {} row {}: {} vs {}",
            h,
            i,
            y[i],
            reference[i]
        );
    }
    prop_assert_eq!(&f.to_csr(), m);
    Ok(())
}

#[test]
fn cpu_kernel_on_adversarial_matrices() {
    let one_long = {
        let mut rows = vec![3u32; 900];
        let mut cols: Vec<u32> = (0..900).map(|c| c * 3).collect();
        rows.extend([0, 7, 600]);
        cols.extend([5, 2699, 0]);
        Csr::from_triplets(601, 2700, &rows, &cols, &vec![1.5; 903]).unwrap()
    };
    let cases = [
        Csr::zeros(0, 0),
        Csr::zeros(0, 9),
        Csr::zeros(9, 0),
        Csr::zeros(300, 40),
        Csr::from_triplets(1, 1, &[0], &[0], &[2.0]).unwrap(),
        Csr::from_triplets(513, 1, &[0, 256, 512], &[0, 0, 0], &[1.0, 2.0, 3.0]).unwrap(),
        one_long,
        spread(4, 1000, 1 << 20),
        spread(5, 6000, 5000),
    ];
    for m in &cases {
        for h in [1, 2, 32, 255, 256, 257, 1000, usize::MAX] {
            check_spmv(m, h).unwrap();
        }
    }
}

#[test]
fn padding_never_reads_x() {
    // x[0] = ∞ and NaN elsewhere except where a row has an entry: rows that do not touch
    // column 0 stay finite (padding decodes to no entry, not to column 0 times 0).
    let m = Csr::from_triplets(4, 5, &[1, 1, 3], &[2, 4, 3], &[1.0f64, 2.0, 3.0]).unwrap();
    let f = EllBro::from_csr(&m, &slice(4)).unwrap();
    let x = [f64::INFINITY, f64::NAN, 1.0, 1.0, 1.0];
    let mut y = [f64::NAN; 4];
    f.spmv(&x, &mut y);
    assert_eq!(y, [0.0, 3.0, 0.0, 3.0]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn cpu_kernel_and_round_trip_on_random_matrices(
        seed in any::<u64>(),
        nrows in 0usize..=700,
        ncols_log in 0u32..=24,
        h in prop_oneof![1usize..=9, Just(32), Just(256), 250usize..=260],
    ) {
        let ncols = (1usize << ncols_log) + (seed % 7) as usize;
        check_spmv(&spread(seed, nrows, ncols), h)?;
    }
}
