//! What the writer writes, the reader reads back identically (values bit for bit).

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use sparsecast::matrix::mm;
use sparsecast::{Csr, Scalar};

/// Values as bit patterns (NaN payloads are not preserved: every NaN maps to one pattern).
fn bits<T: Scalar>(v: &[T]) -> Vec<u64> {
    v.iter()
        .map(|x| {
            if x.is_nan() {
                u64::MAX
            } else {
                x.as_f64().to_bits()
            }
        })
        .collect()
}

/// A random matrix: shape, then entries as (row, col, value) with duplicates allowed.
fn matrix<T: Scalar + std::fmt::Debug>(
    value: impl Strategy<Value = T> + Clone,
) -> impl Strategy<Value = Csr<T>> {
    (0usize..30, 1usize..30).prop_flat_map(move |(m, n)| {
        let entry = (0..m.max(1) as u32, 0..n as u32, value.clone());
        proptest::collection::vec(entry, 0..if m == 0 { 1 } else { 120 }).prop_map(move |es| {
            let es: Vec<_> = es.into_iter().filter(|e| (e.0 as usize) < m).collect();
            let rows: Vec<u32> = es.iter().map(|e| e.0).collect();
            let cols: Vec<u32> = es.iter().map(|e| e.1).collect();
            let vals: Vec<T> = es.iter().map(|e| e.2).collect();
            Csr::from_triplets(m, n, &rows, &cols, &vals).unwrap()
        })
    })
}

fn roundtrip<T: Scalar>(m: &Csr<T>) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.mtx");
    mm::write_csr(&p, m).unwrap();
    let back: Csr<T> = mm::read(&p).unwrap();
    assert_eq!((back.nrows, back.ncols), (m.nrows, m.ncols));
    assert_eq!(back.row_ptr, m.row_ptr);
    assert_eq!(back.col_idx, m.col_idx);
    assert_eq!(bits(&back.values), bits(&m.values));
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 64,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn f64_matrices_roundtrip(m in matrix(any::<f64>())) {
        roundtrip(&m);
    }

    #[test]
    fn f32_matrices_roundtrip(m in matrix(any::<f32>())) {
        roundtrip(&m);
    }

    #[test]
    fn vectors_roundtrip(v in proptest::collection::vec(any::<f64>(), 0..200)) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("v.mtx");
        mm::write_vector(&p, &v).unwrap();
        prop_assert_eq!(bits(&mm::read_vector(&p).unwrap()), bits(&v));
        let v32: Vec<f32> = v.iter().map(|&x| x as f32).collect();
        mm::write_vector(&p, &v32).unwrap();
        let back: Vec<f32> = mm::read_vector(&p).unwrap().iter().map(|&x| x as f32).collect();
        prop_assert_eq!(bits(&back), bits(&v32));
    }
}

#[test]
fn extreme_values_roundtrip() {
    let vals = [
        0.0,
        -0.0,
        f64::MIN_POSITIVE,
        f64::MIN_POSITIVE / 3.0, // subnormal
        f64::MAX,
        f64::MIN,
        1e-5,
        f64::from_bits(1e16f64.to_bits() - 1),
        1e16,
        0.1,
        1.0 / 3.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    let n = vals.len();
    let cols: Vec<u32> = (0..n as u32).collect();
    let m = Csr::from_triplets(1, n, &vec![0; n], &cols, &vals).unwrap();
    roundtrip(&m);
    let m32: Csr<f32> =
        Csr::from_triplets(1, n, &vec![0; n], &cols, &vals.map(|v| v as f32)).unwrap();
    roundtrip(&m32);
}

#[test]
fn larger_matrix_spanning_many_write_blocks() {
    // More entries than one formatting block (65536), rows of varied length, some empty.
    let (m, n) = (5000usize, 3000usize);
    let mut rows = Vec::new();
    let mut cols = Vec::new();
    let mut vals = Vec::new();
    let mut x = 12345u64;
    for i in 0..m {
        let len = if i % 7 == 0 { 0 } else { (i * 31) % 60 };
        for _ in 0..len {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            rows.push(i as u32);
            cols.push(((x >> 33) % n as u64) as u32);
            vals.push(f64::from_bits(0x3ff0_0000_0000_0000 | (x >> 12)) - 1.5);
        }
    }
    let a = Csr::from_triplets(m, n, &rows, &cols, &vals).unwrap();
    assert!(a.nnz() > 1 << 16);
    roundtrip(&a);
}

#[test]
fn writing_reports_progress_in_entries() {
    use std::cell::RefCell;
    // Enough entries for several batches of blocks on any thread count.
    let n = 3000usize;
    let rows: Vec<u32> = (0..n as u32).collect();
    let m = Csr::<f64>::from_triplets(n, n, &rows, &rows, &vec![1.5; n]).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.mtx");
    let calls = RefCell::new(Vec::new());
    mm::write_csr_with_progress(&p, &m, &|d, t| calls.borrow_mut().push((d, t))).unwrap();
    let calls = calls.into_inner();
    assert!(!calls.is_empty());
    assert!(calls.iter().all(|&(_, t)| t == n as u64));
    assert!(calls.windows(2).all(|w| w[0].0 < w[1].0), "{calls:?}");
    assert_eq!(calls.last().unwrap().0, n as u64);
    let back = mm::read::<f64>(&p).unwrap();
    assert_eq!(back.nnz(), n);
}
