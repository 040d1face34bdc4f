//! Stencil, banded and block-diagonal generators against independent naive constructions.

use sparsecast::matrix::generate::{banded, block_diagonal, stencil, Stencil};
use sparsecast::Csr;

const LIMIT: u64 = 1 << 30;

/// Naive stencil: visit every grid point and every offset, keep those inside the grid, build
/// from triplets (which sorts).
fn naive_stencil(kind: Stencil, n: usize) -> Csr<f64> {
    let (dims, offsets): (usize, Vec<[i64; 3]>) = match kind {
        Stencil::D2P5 => (
            2,
            vec![[0, 0, 0], [1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0]],
        ),
        Stencil::D3P7 => (
            3,
            vec![
                [0, 0, 0],
                [1, 0, 0],
                [-1, 0, 0],
                [0, 1, 0],
                [0, -1, 0],
                [0, 0, 1],
                [0, 0, -1],
            ],
        ),
        Stencil::D3P27 => {
            let mut v = vec![];
            for z in -1..=1 {
                for y in -1..=1 {
                    for x in -1..=1 {
                        v.push([x, y, z]);
                    }
                }
            }
            (3, v)
        }
    };
    let diag = (offsets.len() - 1) as f64;
    let nz = if dims == 2 { 1 } else { n };
    let (mut r, mut c, mut v) = (vec![], vec![], vec![]);
    let ni = n as i64;
    for z in 0..nz as i64 {
        for y in 0..ni {
            for x in 0..ni {
                let row = (z * ni + y) * ni + x;
                for o in &offsets {
                    let (a, b, d) = (x + o[0], y + o[1], z + o[2]);
                    if a < 0 || b < 0 || d < 0 || a >= ni || b >= ni || d >= nz as i64 {
                        continue;
                    }
                    r.push(row as u32);
                    c.push(((d * ni + b) * ni + a) as u32);
                    v.push(if *o == [0, 0, 0] { diag } else { -1.0 });
                }
            }
        }
    }
    let rows = n.pow(dims as u32);
    Csr::from_triplets(rows, rows, &r, &c, &v).unwrap()
}

#[test]
fn stencil_nnz_matches_boundary_formula() {
    for n in [1usize, 2, 3, 5, 8] {
        let m = stencil(Stencil::D2P5, n, LIMIT).unwrap();
        assert_eq!(m.nnz(), 5 * n * n - 4 * n, "2d5 n={n}");
        let m = stencil(Stencil::D3P7, n, LIMIT).unwrap();
        assert_eq!(m.nnz(), 7 * n * n * n - 6 * n * n, "3d7 n={n}");
        let m = stencil(Stencil::D3P27, n, LIMIT).unwrap();
        assert_eq!(m.nnz(), (3 * n - 2).pow(3), "3d27 n={n}");
        m.validate().unwrap();
        assert_eq!(m.nrows, n * n * n);
    }
}

#[test]
fn stencils_equal_naive_construction() {
    for kind in [Stencil::D2P5, Stencil::D3P7, Stencil::D3P27] {
        for n in [1usize, 2, 4, 9] {
            let m = stencil(kind, n, LIMIT).unwrap();
            m.validate().unwrap();
            assert_eq!(m, naive_stencil(kind, n), "{kind:?} n={n}");
        }
    }
}

#[test]
fn laplacian_interior_rows_sum_to_zero() {
    let n = 6;
    let m = stencil(Stencil::D3P27, n, LIMIT).unwrap();
    let y = m.spmv_reference(&vec![1.0; m.ncols]);
    let interior = (2 * n + 2) * n + 2; // point (2, 2, 2)
    assert_eq!(y[interior], 0.0);
    assert!(y[0] > 0.0, "corner rows keep the interior diagonal");
}

#[test]
fn stencil_refuses_bad_sizes() {
    assert!(stencil(Stencil::D2P5, 0, LIMIT).is_err());
    // 1700³ > 2^32 grid points.
    let e = stencil(Stencil::D3P7, 1700, u64::MAX)
        .unwrap_err()
        .to_string();
    assert!(e.contains("32-bit"), "{e}");
    // Fits the index range but not the memory limit: refused before allocating.
    let e = stencil(Stencil::D3P27, 1000, 1 << 30)
        .unwrap_err()
        .to_string();
    assert!(e.contains("GiB"), "{e}");
}

#[test]
fn banded_has_exact_band() {
    for (n, b) in [(1usize, 0usize), (10, 0), (10, 3), (10, 9), (500, 17)] {
        let m = banded(n, b, 3, LIMIT).unwrap();
        m.validate().unwrap();
        let mut expected = 0;
        for i in 0..n {
            let lo = i.saturating_sub(b);
            let hi = (i + b).min(n - 1);
            let (c, v) = m.row(i);
            assert_eq!(c, (lo as u32..=hi as u32).collect::<Vec<_>>(), "row {i}");
            assert!(v.iter().all(|x| (-1.0..1.0).contains(x)));
            expected += hi - lo + 1;
        }
        assert_eq!(m.nnz(), expected);
        assert_eq!(
            m.nnz() as u128,
            sparsecast::matrix::generate::banded_nnz(n as u64, b as u64)
        );
    }
    assert!(banded(10, 10, 0, LIMIT).is_err());
    assert!(banded(0, 0, 0, LIMIT).is_err());
}

#[test]
fn block_diagonal_blocks_are_dense() {
    let (nb, b) = (13usize, 5usize);
    let m = block_diagonal(nb, b, 4, LIMIT).unwrap();
    m.validate().unwrap();
    assert_eq!((m.nrows, m.nnz()), (nb * b, nb * b * b));
    for i in 0..m.nrows {
        let q = (i / b * b) as u32;
        assert_eq!(m.row(i).0, (q..q + b as u32).collect::<Vec<_>>());
    }
    assert!(block_diagonal(0, 3, 0, LIMIT).is_err());
    assert!(block_diagonal(3, 0, 0, LIMIT).is_err());
    assert!(block_diagonal(1 << 20, 1 << 13, 0, u64::MAX).is_err());
}
