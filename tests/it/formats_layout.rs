//! Layouts, footprints and refusals of every format on hand-made matrices: the arrays the CUDA
//! backend uploads, and the byte counts the GPU memory check uses, computed by hand from each
//! format's documented formula.

use sparsecast::formats::hyb::auto_width;
use sparsecast::formats::{
    AnyFormat, Bsr, BsrParams, Coo, Dia, DiaParams, Ell, EllParams, FormatKind, FormatParams, Hyb,
    HybParams, Jad, SegTileParams, Sell, SellParams, SparseFormat, PAD,
};
use sparsecast::{Csr, Error};
use std::time::Instant;

/// The 5 × 6 matrix
/// ```text
/// row 0: (0,0)=1 (0,1)=2
/// row 1:         (1,1)=3
/// row 2: (empty)
/// row 3: (3,0)=4 (3,3)=5 (3,5)=6
/// row 4:         (4,4)=7
/// ```
pub(crate) fn hand() -> Csr<f64> {
    Csr::from_triplets(
        5,
        6,
        &[0, 0, 1, 3, 3, 3, 4],
        &[0, 1, 1, 0, 3, 5, 4],
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0],
    )
    .unwrap()
}

fn params() -> FormatParams {
    FormatParams {
        sell: SellParams { c: 2, sigma: 4 },
        bsr: BsrParams { block: 2 },
        hyb: HybParams { width: Some(1) },
        // Tiles of one column: 6 tiles × 5 rows = 30 segments; no segment minimum.
        segtile: SegTileParams {
            width: 1,
            min_segment: 0.0,
        },
        ..FormatParams::default()
    }
}

fn refusal<T: std::fmt::Debug>(r: sparsecast::Result<T>) -> (String, String) {
    match r {
        Err(Error::FormatRefused { format, reason }) => (format, reason),
        other => panic!("expected FormatRefused, got {other:?}"),
    }
}

#[test]
fn coo_layout_and_footprint() {
    let m = hand();
    let f = Coo::from_csr(&m, &params()).unwrap();
    assert_eq!(f.rows, [0, 0, 1, 3, 3, 3, 4]);
    assert_eq!(f.cols, [0, 1, 1, 0, 3, 5, 4]);
    assert_eq!((f.nnz(), f.stored_entries()), (7, 7));
    // nnz × (4 + 4 + sizeof T)
    assert_eq!(f.footprint_bytes(), 7 * 16);
    let g = Coo::from_csr(&m.cast::<f32>(), &params()).unwrap();
    assert_eq!(g.footprint_bytes(), 7 * 12);
}

#[test]
fn ell_layout_and_footprint() {
    let m = hand();
    let f = Ell::from_csr(&m, &params()).unwrap();
    assert_eq!(f.width, 3);
    let p = PAD;
    #[rustfmt::skip]
    assert_eq!(f.col_idx, [
        0, 1, p, 0, 4,
        1, p, p, 3, p,
        p, p, p, 5, p,
    ]);
    #[rustfmt::skip]
    assert_eq!(f.values, [
        1.0, 3.0, 0.0, 4.0, 7.0,
        2.0, 0.0, 0.0, 5.0, 0.0,
        0.0, 0.0, 0.0, 6.0, 0.0,
    ]);
    assert_eq!((f.nnz(), f.stored_entries()), (7, 15));
    assert_eq!(f.fill_ratio(), 15.0 / 7.0);
    // width × nrows × (4 + sizeof T)
    assert_eq!(f.footprint_bytes(), 15 * 12);
    let g = Ell::from_csr(&m.cast::<f32>(), &params()).unwrap();
    assert_eq!(g.footprint_bytes(), 15 * 8);
    // A wider requested width pads every row.
    let wide = FormatParams {
        ell: EllParams { width: Some(4) },
        ..params()
    };
    assert_eq!(Ell::from_csr(&m, &wide).unwrap().stored_entries(), 20);
}

#[test]
fn hyb_layout_and_footprint() {
    let m = hand();
    let f = Hyb::from_csr(&m, &params()).unwrap();
    assert_eq!(f.ell.width, 1);
    assert_eq!(f.ell.col_idx, [0, 1, PAD, 0, 4]);
    assert_eq!(f.coo.rows, [0, 3, 3]);
    assert_eq!(f.coo.cols, [1, 3, 5]);
    assert_eq!((f.nnz(), f.stored_entries()), (7, 8));
    // ELL 1 × 5 × 12 + COO 3 × 16
    assert_eq!(f.footprint_bytes(), 60 + 48);
    let g = Hyb::from_csr(&m.cast::<f32>(), &params()).unwrap();
    assert_eq!(g.footprint_bytes(), 5 * 8 + 3 * 12);
    // Automatic width on 5 rows (< 4096): all entries go to the COO part.
    let auto = Hyb::from_csr(&m, &FormatParams::default()).unwrap();
    assert_eq!((auto.ell.width, auto.coo.values.len()), (0, 7));
}

#[test]
fn jad_layout_and_footprint() {
    let m = hand();
    let f = Jad::from_csr(&m, &params()).unwrap();
    // Lengths 2, 1, 0, 3, 1 → stable decreasing order 3, 0, 1, 4, 2.
    assert_eq!(f.perm, [3, 0, 1, 4, 2]);
    assert_eq!(f.jd_ptr, [0, 4, 6, 7]);
    assert_eq!(f.col_idx, [0, 0, 1, 4, 3, 1, 5]);
    assert_eq!(f.values, [4.0, 1.0, 3.0, 7.0, 5.0, 2.0, 6.0]);
    // perm 5 × 4 + jd_ptr 4 × 4 + 7 × (4 + 8)
    assert_eq!(f.footprint_bytes(), 20 + 16 + 84);
    let g = Jad::from_csr(&m.cast::<f32>(), &params()).unwrap();
    assert_eq!(g.footprint_bytes(), 20 + 16 + 56);
}

#[test]
fn sell_layout_and_footprint() {
    let m = hand();
    let f = Sell::from_csr(&m, &params()).unwrap();
    // Window rows 0..4 sorted: 3, 0, 1, 2; window 4..5: 4.
    assert_eq!(f.perm, [3, 0, 1, 2, 4]);
    assert_eq!(f.slice_width, [3, 1, 1]);
    assert_eq!(f.slice_ptr, [0, 6, 8, 10]);
    let p = PAD;
    // Slice 0 (rows 3, 0) column-major, slice 1 (rows 1, 2), slice 2 (row 4, padding lane).
    assert_eq!(f.col_idx, [0, 0, 3, 1, 5, p, 1, p, 4, p]);
    assert_eq!((f.nnz(), f.stored_entries()), (7, 10));
    // slice_ptr 4 × 4 + slice_width 3 × 4 + perm 5 × 4 + 10 × (4 + 8)
    assert_eq!(f.footprint_bytes(), 16 + 12 + 20 + 120);
    let g = Sell::from_csr(&m.cast::<f32>(), &params()).unwrap();
    assert_eq!(g.footprint_bytes(), 16 + 12 + 20 + 80);
    // σ = 1: no sorting.
    let unsorted = FormatParams {
        sell: SellParams {
            sigma: 1,
            ..params().sell
        },
        ..params()
    };
    let u = Sell::from_csr(&m, &unsorted).unwrap();
    assert_eq!(u.perm, [0, 1, 2, 3, 4]);
    assert_eq!(u.slice_width, [2, 3, 1]);
}

#[test]
fn dia_layout_and_footprint() {
    let m = hand();
    let f = Dia::from_csr(&m, &params()).unwrap();
    assert_eq!(f.offsets, [-3, 0, 1, 2]);
    #[rustfmt::skip]
    assert_eq!(f.values, [
        0.0, 0.0, 0.0, 4.0, 0.0,
        1.0, 3.0, 0.0, 5.0, 7.0,
        2.0, 0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 6.0, 0.0,
    ]);
    assert_eq!((f.nnz(), f.stored_entries()), (7, 20));
    // offsets 4 × 4 + 4 × 5 × 8
    assert_eq!(f.footprint_bytes(), 16 + 160);
    let g = Dia::from_csr(&m.cast::<f32>(), &params()).unwrap();
    assert_eq!(g.footprint_bytes(), 16 + 80);
}

#[test]
fn bsr_layout_and_footprint() {
    let m = hand();
    let f = Bsr::from_csr(&m, &params()).unwrap();
    assert_eq!(f.row_ptr, [0, 1, 4, 5]);
    assert_eq!(f.col_idx, [0, 0, 1, 2, 2]);
    #[rustfmt::skip]
    assert_eq!(f.values, [
        1.0, 2.0, 0.0, 3.0,
        0.0, 0.0, 4.0, 0.0,
        0.0, 0.0, 0.0, 5.0,
        0.0, 0.0, 0.0, 6.0,
        7.0, 0.0, 0.0, 0.0,
    ]);
    assert_eq!((f.nnz(), f.stored_entries()), (7, 20));
    // row_ptr 4 × 4 + col_idx 5 × 4 + 5 × 2² × 8
    assert_eq!(f.footprint_bytes(), 16 + 20 + 160);
    let g = Bsr::from_csr(&m.cast::<f32>(), &params()).unwrap();
    assert_eq!(g.footprint_bytes(), 16 + 20 + 80);
    // b = 4 on 5 × 6: block rows {0..4, 4}, block columns {0..4, 4..6}, partial blocks zero-filled.
    let b4 = Bsr::from_csr(
        &m,
        &FormatParams {
            bsr: BsrParams { block: 4 },
            ..params()
        },
    )
    .unwrap();
    assert_eq!(b4.row_ptr, [0, 2, 3]);
    assert_eq!(b4.col_idx, [0, 1, 1]);
    assert_eq!(b4.stored_entries(), 3 * 16);
}

#[test]
fn csr_footprint() {
    let m = hand();
    // row_ptr 6 × 4 + 7 × (4 + 8)
    assert_eq!(SparseFormat::footprint_bytes(&m), 24 + 84);
    let f = AnyFormat::convert(&m, FormatKind::Csr, &params()).unwrap();
    assert_eq!(f.as_dyn().footprint_bytes(), 24 + 84);
}

#[test]
fn hyb_auto_width_follows_cusp() {
    // 12 288 rows: 9000 of length 5, 3288 of length 1. K = 5: 9000 rows ≥ max(4096, 4096).
    let mut lens = vec![5usize; 9000];
    lens.extend(std::iter::repeat_n(1, 3288));
    assert_eq!(auto_width(&lens), 5);
    // 30 000 rows: 10 000 of length 10 satisfy 3 × 10 000 ≥ 30 000 exactly → K = 10.
    let mut lens = vec![10usize; 10_000];
    lens.extend(std::iter::repeat_n(2, 20_000));
    assert_eq!(auto_width(&lens), 10);
    // 9 999 of length 10: 3 × 9 999 < 30 000, so K stops at 2 (30 000 rows have ≥ 2).
    let mut lens = vec![10usize; 9_999];
    lens.extend(std::iter::repeat_n(2, 20_001));
    assert_eq!(auto_width(&lens), 2);
    // Fewer than 4096 rows of any length: K = 0.
    assert_eq!(auto_width(&[7; 4095]), 0);
    // Exactly 4096 rows of length 3 among 4096: K = 3 (the longest row).
    assert_eq!(auto_width(&[3; 4096]), 3);
    assert_eq!(auto_width(&[]), 0);
}

#[test]
fn ell_refuses_a_huge_width_without_allocating() {
    // One row of 10^6 entries among 10^6 rows: 10^12 slots. Refused at once.
    let n = 1_000_000usize;
    let mut row_ptr = vec![n; n + 1];
    row_ptr[0] = 0;
    let m = Csr::new(n, n, row_ptr, (0..n as u32).collect(), vec![1.0f64; n]).unwrap();
    let t = Instant::now();
    let (format, reason) = refusal(Ell::from_csr(&m, &FormatParams::default()));
    let elapsed = t.elapsed();
    assert_eq!(format, "ell");
    assert!(reason.contains("1000000000000"), "{reason}");
    assert!(elapsed.as_secs_f64() < 1.0, "took {elapsed:?}");
    // HYB with that width requested is refused the same way; with its own rule it is fine.
    let wide = FormatParams {
        hyb: HybParams { width: Some(n) },
        ..FormatParams::default()
    };
    assert_eq!(refusal(Hyb::from_csr(&m, &wide)).0, "hyb");
    let h = Hyb::from_csr(&m, &FormatParams::default()).unwrap();
    assert_eq!((h.ell.width, h.coo.values.len()), (0, n));
}

#[test]
fn refusals_by_memory_budget() {
    let m = hand();
    let tight = FormatParams {
        max_bytes: 100,
        ..params()
    };
    // Footprints (f64): CSR 108, COO 112, ELL 180, HYB 108, JAD 120, SELL 168, DIA 176, BSR 196,
    // SEG-TILE 194.
    for kind in FormatKind::ALL {
        let (format, reason) = refusal(AnyFormat::convert(&m, kind, &tight));
        assert_eq!(format, kind.name());
        assert!(
            reason.contains("more than the limit of 100 bytes"),
            "{reason}"
        );
    }
    let exact = FormatParams {
        max_bytes: 180,
        ..params()
    };
    assert!(Ell::from_csr(&m, &exact).is_ok());
    // BSR with b = 2000 on a 2 × 2 matrix: one block of 4 · 10^6 values.
    let small = Csr::from_triplets(2, 2, &[0, 1], &[0, 1], &[1.0f64, 2.0]).unwrap();
    let big_block = FormatParams {
        bsr: BsrParams { block: 2000 },
        max_bytes: 1 << 20,
        ..FormatParams::default()
    };
    assert!(refusal(Bsr::from_csr(&small, &big_block))
        .1
        .contains("bytes"));
    // b = 100 000: 10^10 slots exceed 32-bit offsets.
    let huge_block = FormatParams {
        bsr: BsrParams { block: 100_000 },
        ..FormatParams::default()
    };
    assert!(refusal(Bsr::from_csr(&small, &huge_block))
        .1
        .contains("32-bit"));
}

#[test]
fn dia_refusal_names_diagonals_and_fill() {
    // Anti-diagonal of 100 entries: 100 diagonals × 100 rows for 100 non-zeros, fill 100.
    let n = 100u32;
    let rows: Vec<u32> = (0..n).collect();
    let cols: Vec<u32> = (0..n).rev().collect();
    let m = Csr::from_triplets(100, 100, &rows, &cols, &vec![1.0f64; 100]).unwrap();
    let (format, reason) = refusal(Dia::from_csr(&m, &FormatParams::default()));
    assert_eq!(format, "dia");
    assert!(
        reason.contains("100 occupied diagonals") && reason.contains("fill 100.00"),
        "{reason}"
    );
    // With the limit lifted it converts and stores 100 × 100 slots.
    let lifted = FormatParams {
        dia: DiaParams { max_fill: 100.0 },
        ..FormatParams::default()
    };
    assert_eq!(Dia::from_csr(&m, &lifted).unwrap().stored_entries(), 10_000);
    // An empty matrix has 0 diagonals and is accepted.
    let e = Dia::from_csr(&Csr::<f64>::zeros(4, 3), &FormatParams::default()).unwrap();
    assert_eq!((e.offsets.len(), e.footprint_bytes()), (0, 0));
}

#[test]
fn sell_and_bsr_parameter_refusals() {
    let m = hand();
    for (c, sigma) in [(0, 1), (4, 0), (4, 6), (4, 2)] {
        let p = FormatParams {
            sell: SellParams { c, sigma },
            ..FormatParams::default()
        };
        assert_eq!(refusal(Sell::from_csr(&m, &p)).0, "sell", "C={c} σ={sigma}");
    }
    for (c, sigma) in [(4, 1), (4, 4), (4, 12), (1, 7)] {
        let p = FormatParams {
            sell: SellParams { c, sigma },
            ..FormatParams::default()
        };
        assert!(Sell::from_csr(&m, &p).is_ok(), "C={c} σ={sigma}");
    }
    let b0 = FormatParams {
        bsr: BsrParams { block: 0 },
        ..FormatParams::default()
    };
    assert_eq!(refusal(Bsr::from_csr(&m, &b0)).0, "bsr");
}
