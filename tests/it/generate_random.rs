//! The benchmark-matrix and power-law generators: row-length distributions, column sampling,
//! values, and refusal of nonsensical parameters.

use sparsecast::matrix::generate::{power_law, random, RowLength};

const LIMIT: u64 = 1 << 30;

fn mean_std(v: &[usize]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<usize>() as f64 / n;
    let var = v.iter().map(|&x| (x as f64 - m).powi(2)).sum::<f64>() / n;
    (m, var.sqrt())
}

#[test]
fn constant_rows_are_exact() {
    let m = random(3000, 500, RowLength::Constant { nnz: 37 }, 1, LIMIT).unwrap();
    m.validate().unwrap();
    assert!(m.row_lengths().iter().all(|&k| k == 37));
    assert!(m.values.iter().all(|v| (-1.0..1.0).contains(v)));
    // Full rows (k = C) and rows denser than C/2 use the complement path.
    let full = random(50, 40, RowLength::Constant { nnz: 40 }, 1, LIMIT).unwrap();
    full.validate().unwrap();
    assert_eq!(full.nnz(), 2000);
    let dense = random(500, 40, RowLength::Constant { nnz: 31 }, 1, LIMIT).unwrap();
    dense.validate().unwrap();
    assert_eq!(dense.nnz(), 500 * 31);
}

#[test]
fn uniform_row_lengths_follow_distribution() {
    let (min, max) = (4usize, 60usize);
    let m = random(20_000, 1000, RowLength::Uniform { min, max }, 2, LIMIT).unwrap();
    m.validate().unwrap();
    let len = m.row_lengths();
    assert!(len.iter().all(|&k| (min..=max).contains(&k)));
    let (mean, std) = mean_std(&len);
    // Discrete uniform on 4..=60: mean 32, std sqrt((57² − 1)/12) ≈ 16.45. The sample mean of
    // 20 000 rows has a standard error of ≈ 0.12.
    assert!((mean - 32.0).abs() < 0.6, "mean {mean}");
    assert!((std - 16.45).abs() < 0.5, "std {std}");
    assert!(len.contains(&min) && len.contains(&max));
}

#[test]
fn normal_row_lengths_follow_distribution() {
    let m = random(
        20_000,
        2000,
        RowLength::Normal {
            mean: 100.0,
            std: 15.0,
        },
        3,
        LIMIT,
    )
    .unwrap();
    m.validate().unwrap();
    let (mean, std) = mean_std(&m.row_lengths());
    assert!((mean - 100.0).abs() < 0.6, "mean {mean}");
    assert!((std - 15.0).abs() < 0.6, "std {std}");
    // Clamped at both ends: a mean near C cannot exceed C.
    let m = random(
        2000,
        50,
        RowLength::Normal {
            mean: 48.0,
            std: 10.0,
        },
        3,
        LIMIT,
    )
    .unwrap();
    m.validate().unwrap();
    assert!(m.row_lengths().iter().all(|&k| k <= 50));
    assert!(m.row_lengths().contains(&50));
}

#[test]
fn columns_are_spread_uniformly() {
    // 8000 rows × 16 of 64 columns: each column is hit ~2000 times (std ≈ 39).
    let m = random(8000, 64, RowLength::Constant { nnz: 16 }, 4, LIMIT).unwrap();
    let mut hits = vec![0usize; 64];
    for &c in &m.col_idx {
        hits[c as usize] += 1;
    }
    assert!(hits.iter().all(|&h| (1800..2200).contains(&h)), "{hits:?}");
}

#[test]
fn random_refuses_nonsense() {
    let e = |r: sparsecast::Result<_>| r.map(|_: sparsecast::Csr<f64>| ()).unwrap_err().to_string();
    assert!(e(random(10, 5, RowLength::Constant { nnz: 6 }, 0, LIMIT)).contains("exceed"));
    assert!(e(random(0, 5, RowLength::Constant { nnz: 2 }, 0, LIMIT)).contains("0 rows"));
    assert!(e(random(
        10,
        5,
        RowLength::Uniform { min: 3, max: 2 },
        0,
        LIMIT
    ))
    .contains("min"));
    assert!(e(random(
        10,
        5,
        RowLength::Uniform { min: 0, max: 6 },
        0,
        LIMIT
    ))
    .contains("exceeds"));
    assert!(e(random(
        10,
        5,
        RowLength::Normal {
            mean: -1.0,
            std: 1.0
        },
        0,
        LIMIT
    ))
    .contains("mean"));
    assert!(e(random(
        10,
        5,
        RowLength::Normal {
            mean: 1.0,
            std: f64::NAN
        },
        0,
        LIMIT
    ))
    .contains("std"));
    assert!(e(random(
        10,
        1 << 33,
        RowLength::Constant { nnz: 1 },
        0,
        LIMIT
    ))
    .contains("32-bit"));
    // 10^9 rows × 1000: refused on the memory limit before anything is drawn.
    assert!(e(random(
        1 << 30,
        1 << 20,
        RowLength::Constant { nnz: 1000 },
        0,
        LIMIT
    ))
    .contains("GiB"));
    // An empty matrix is fine.
    let z = random(0, 5, RowLength::Constant { nnz: 0 }, 0, LIMIT).unwrap();
    assert_eq!((z.nrows, z.nnz()), (0, 0));
}

#[test]
fn power_law_has_heavy_tail_and_target_mean() {
    let n = 20_000;
    let m = power_law(n, 8.0, 2.5, 5, LIMIT).unwrap();
    m.validate().unwrap();
    let len = m.row_lengths();
    let (mean, _) = mean_std(&len);
    // Capped probabilities in the first rows lower the realised mean a little.
    assert!(mean > 8.0 * 0.85 && mean < 8.0 * 1.03, "mean {mean}");
    let max = *len.iter().max().unwrap();
    assert!(max as f64 > 30.0 * mean, "max {max}, mean {mean}");
    // Degree order: the first 1% of rows hold far more than 1% of the entries.
    let head: usize = len[..n / 100].iter().sum();
    assert!(
        head as f64 > 0.1 * m.nnz() as f64,
        "head {head} of {}",
        m.nnz()
    );
    // Columns are skewed too.
    let mut col = vec![0usize; n];
    for &c in &m.col_idx {
        col[c as usize] += 1;
    }
    assert!(col[0] > 30 * col[n - 1].max(1));
    assert!(power_law(0, 1.0, 2.5, 0, LIMIT).is_err());
    assert!(power_law(10, 11.0, 2.5, 0, LIMIT).is_err());
    assert!(power_law(10, 2.0, 1.0, 0, LIMIT).is_err());
}
