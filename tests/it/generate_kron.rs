//! Kronecker products: exact non-zero count, entry values against a dense computation, patterns.

use sparsecast::matrix::generate::{kron, random, KronPattern, RowLength};
use sparsecast::Csr;

const LIMIT: u64 = 1 << 30;

fn dense(m: &Csr<f64>) -> Vec<Vec<f64>> {
    let mut d = vec![vec![0.0; m.ncols]; m.nrows];
    for (i, di) in d.iter_mut().enumerate() {
        let (c, v) = m.row(i);
        for (&j, &x) in c.iter().zip(v) {
            di[j as usize] = x;
        }
    }
    d
}

#[test]
fn kron_entries_and_count() {
    let a = random(17, 11, RowLength::Uniform { min: 0, max: 5 }, 1, LIMIT).unwrap();
    for pat in [
        KronPattern::Dense { k: 3 },
        KronPattern::Identity { k: 4 },
        KronPattern::Random { k: 3, density: 0.5 },
    ] {
        let p = pat.build(9).unwrap();
        let m = kron(&a, &p, LIMIT).unwrap();
        m.validate().unwrap();
        assert_eq!(m.nnz(), a.nnz() * p.nnz(), "{pat:?}");
        assert_eq!((m.nrows, m.ncols), (a.nrows * p.nrows, a.ncols * p.ncols));
        let (da, dp, dm) = (dense(&a), dense(&p), dense(&m));
        for i in 0..a.nrows {
            for j in 0..a.ncols {
                for r in 0..p.nrows {
                    for c in 0..p.ncols {
                        assert_eq!(dm[i * p.nrows + r][j * p.ncols + c], da[i][j] * dp[r][c]);
                    }
                }
            }
        }
    }
}

#[test]
fn kron_keeps_explicit_zeros_and_rectangular_patterns() {
    let a = Csr::from_triplets(2, 3, &[0, 0, 1], &[0, 2, 1], &[0.0, 2.0, -3.0]).unwrap();
    let p = Csr::from_triplets(2, 3, &[0, 1, 1], &[1, 0, 2], &[5.0, 7.0, 1.0]).unwrap();
    let m = kron(&a, &p, LIMIT).unwrap();
    m.validate().unwrap();
    assert_eq!(m.nnz(), 9);
    assert_eq!(m.row(0), (&[1u32, 7][..], &[0.0, 10.0][..]));
    assert_eq!(m.row(1), (&[0u32, 2, 6, 8][..], &[0.0, 0.0, 14.0, 2.0][..]));
    assert_eq!(m.row(2), (&[4u32][..], &[-15.0][..]));
    assert_eq!(m.row(3), (&[3u32, 5][..], &[-21.0, -3.0][..]));
}

#[test]
fn patterns_have_expected_shape() {
    assert_eq!(KronPattern::Dense { k: 5 }.build(0).unwrap().nnz(), 25);
    let eye = KronPattern::Identity { k: 6 }.build(0).unwrap();
    assert_eq!(eye.nnz(), 6);
    assert!((0..6).all(|i| eye.row(i) == (&[i as u32][..], &[1.0][..])));
    let r = KronPattern::Random {
        k: 200,
        density: 0.25,
    }
    .build(3)
    .unwrap();
    let share = r.nnz() as f64 / 40_000.0;
    assert!((share - 0.25).abs() < 0.02, "{share}");
    assert_eq!(
        r,
        KronPattern::Random {
            k: 200,
            density: 0.25
        }
        .build(3)
        .unwrap()
    );
    assert!(KronPattern::Dense { k: 0 }.build(0).is_err());
    assert!(KronPattern::Random { k: 2, density: 1.5 }.build(0).is_err());
}

#[test]
fn kron_refuses_oversized_products() {
    let a = Csr::<f64>::zeros(10, 1 << 30);
    let p = KronPattern::Identity { k: 8 }.build(0).unwrap();
    assert!(kron(&a, &p, LIMIT)
        .unwrap_err()
        .to_string()
        .contains("32-bit"));
    let a = random(1000, 1000, RowLength::Constant { nnz: 100 }, 0, LIMIT).unwrap();
    let p = KronPattern::Dense { k: 1000 }.build(0).unwrap();
    assert!(kron(&a, &p, LIMIT).unwrap_err().to_string().contains("GiB"));
}
