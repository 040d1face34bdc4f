//! Features of hand-made matrices, every field computed by hand.

use sparsecast::features::Features;
use sparsecast::formats::hyb::auto_width;
use sparsecast::matrix::generate::{stencil, Stencil};
use sparsecast::Csr;

#[test]
fn small_matrix_every_field() {
    // Row 0: cols 0 2 5; row 1 empty; row 2: col 1 (NaN); row 3: cols 3 4 (inf, explicit 0).
    let m = Csr::new(
        4,
        6,
        vec![0, 3, 3, 4, 6],
        vec![0, 2, 5, 1, 3, 4],
        vec![1.0, 2.0, 3.0, f64::NAN, f64::INFINITY, 0.0],
    )
    .unwrap();
    let f = Features::compute(&m);
    assert_eq!((f.nrows, f.ncols, f.nnz), (4, 6, 6));
    // Lengths 3 0 1 2: every length once, so the mode is the smallest, 0; sorted 0 1 2 3, lower
    // median at position 1.
    assert_eq!(
        (f.min_nnz, f.max_nnz, f.mode_nnz, f.median_nnz),
        (0, 3, 0, 1)
    );
    assert_eq!(f.mean_nnz, 1.5);
    assert_eq!(f.std_nnz, 1.25f64.sqrt());
    // Gaps: row 0 → 2, 3; row 3 → 1.
    assert_eq!((f.min_dist, f.max_dist), (Some(1), Some(3)));
    assert_eq!(f.bandwidth, 5);
    assert_eq!(f.density, 0.25);
    assert_eq!(f.empty_rows, 1);
    assert_eq!(f.ell_padding_ratio, 2.0);
    // Diagonals j − i: 0 2 5 | −1 | 0 1.
    assert_eq!(f.diagonals, 5);
    assert_eq!(f.row_len_log2_hist, vec![1, 1, 2]);
    assert_eq!(f.nonfinite, 2);
    let w = auto_width(&[3, 0, 1, 2]);
    assert_eq!(f.hyb_width, w);
    let coo: usize = [3usize, 0, 1, 2].iter().map(|l| l.saturating_sub(w)).sum();
    assert_eq!(f.hyb_coo_nnz, coo);
    assert_eq!(f.hyb_coo_share, coo as f64 / 6.0);
    assert_eq!((f.strips(3), f.strips(4), f.strips(1)), (2, 1, 4));
    assert_eq!(
        (f.coo_strips(4), f.coo_strips(6), f.coo_strips(0)),
        (2, 1, 6)
    );
}

#[test]
fn degenerate_matrices() {
    let f = Features::compute(&Csr::<f64>::zeros(0, 0));
    assert_eq!(
        (f.nrows, f.nnz, f.max_nnz, f.median_nnz, f.mode_nnz),
        (0, 0, 0, 0, 0)
    );
    assert_eq!((f.mean_nnz, f.std_nnz, f.density), (0.0, 0.0, 0.0));
    assert_eq!(
        (f.min_dist, f.max_dist, f.diagonals, f.bandwidth),
        (None, None, 0, 0)
    );
    assert_eq!(f.ell_padding_ratio, 1.0);
    assert!(f.row_len_log2_hist.is_empty());
    assert_eq!(f.strips(32), 0);

    let f = Features::compute(&Csr::<f32>::zeros(3, 5));
    assert_eq!((f.empty_rows, f.min_nnz, f.max_nnz), (3, 0, 0));
    assert_eq!(f.row_len_log2_hist, vec![3]);
    assert_eq!(
        (f.density, f.ell_padding_ratio, f.hyb_coo_share),
        (0.0, 1.0, 0.0)
    );
    assert_eq!((f.min_dist, f.diagonals), (None, 0));

    // One entry per row: no row has two entries.
    let m = Csr::<f64>::from_triplets(3, 3, &[0, 1, 2], &[2, 2, 0], &[1.0; 3]).unwrap();
    let f = Features::compute(&m);
    assert_eq!((f.min_dist, f.max_dist), (None, None));
    assert_eq!((f.bandwidth, f.diagonals), (2, 3));
}

#[test]
fn hyb_split_by_bell_garland_rule() {
    // 6000 rows: 5000 of length 3, 1000 of length 10. At least max(4096, 6000/3) rows have 3 or
    // more entries, only 1000 have 4 or more: width 3, COO part 1000 × 7.
    let (mut r, mut c) = (vec![], vec![]);
    for i in 0..6000u32 {
        for j in 0..if i < 5000 { 3 } else { 10 } {
            r.push(i);
            c.push(j);
        }
    }
    let m = Csr::<f64>::from_triplets(6000, 10, &r, &c, &vec![1.0; r.len()]).unwrap();
    let f = Features::compute(&m);
    assert_eq!((f.hyb_width, f.hyb_coo_nnz), (3, 7000));
    assert_eq!(f.hyb_coo_share, 7000.0 / 25000.0);
    assert_eq!((f.mode_nnz, f.median_nnz, f.max_nnz), (3, 3, 10));
    assert_eq!(f.ell_padding_ratio, 2.4);
    assert_eq!((f.min_dist, f.max_dist), (Some(1), Some(1)));
    // Diagonals −5999 ..= 2.
    assert_eq!((f.diagonals, f.bandwidth), (6002, 5999));
    assert_eq!(f.row_len_log2_hist, vec![0, 0, 5000, 0, 1000]);
}

#[test]
fn stencil_features_follow_the_grid() {
    let n = 10usize;
    let f = Features::compute(&stencil(Stencil::D3P27, n, 1 << 30).unwrap());
    assert_eq!(f.diagonals, 27);
    assert_eq!(f.bandwidth, n * n + n + 1);
    assert_eq!((f.min_nnz, f.max_nnz, f.mode_nnz), (8, 27, 27));
    assert_eq!(f.min_dist, Some(1));
    // The widest gap: from (z−1, 1, 1) to (z, 0, 0) in a row at x = y = 0.
    assert_eq!(f.max_dist, Some(n * n - n - 1));
    assert_eq!(f.nonfinite, 0);
}

#[test]
fn nonfinite_counted_in_the_read_precision() {
    let m = Csr::<f64>::from_triplets(2, 2, &[0, 1, 1], &[0, 0, 1], &[1e300, -1e300, 1.0]).unwrap();
    assert_eq!(Features::compute(&m).nonfinite, 0);
    assert_eq!(Features::compute(&m.cast::<f32>()).nonfinite, 2);
}

#[test]
fn features_serialize() {
    let m = Csr::<f64>::from_triplets(2, 3, &[0, 1], &[2, 0], &[1.0, 2.0]).unwrap();
    let f = Features::compute(&m);
    let j = serde_json::to_string(&f).unwrap();
    assert!(j.contains("\"mode_nnz\":1"), "{j}");
    let back: Features = serde_json::from_str(&j).unwrap();
    assert_eq!(back, f);
}
