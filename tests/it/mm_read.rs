//! Reading Matrix Market content: layouts, fields, symmetries, gzip, vectors, chunking.

use sparsecast::matrix::mm::{self, Field, Layout, MmInfo, Symmetry};
use sparsecast::Csr;
use std::io::Write;

/// Parse with the automatic chunk count and with several forced ones; all must agree.
fn read<T: sparsecast::Scalar>(text: &str) -> (Csr<T>, MmInfo) {
    let (m, info) = mm::read_bytes::<T>("t.mtx", text.as_bytes()).expect("parse");
    m.validate().expect("valid CSR");
    for chunks in [1, 2, 3, 5, 8, 13] {
        let (m2, info2) =
            mm::read_bytes_chunked::<T>("t.mtx", text.as_bytes(), Some(chunks)).unwrap();
        assert_eq!(bits(&m2), bits(&m), "chunks = {chunks}");
        assert_eq!(info2, info);
    }
    (m, info)
}

/// The matrix with values as bit patterns, so NaN compares equal to itself.
fn bits<T: sparsecast::Scalar>(m: &Csr<T>) -> (Vec<usize>, Vec<u32>, Vec<u64>) {
    (
        m.row_ptr.clone(),
        m.col_idx.clone(),
        m.values.iter().map(|v| v.as_f64().to_bits()).collect(),
    )
}

/// Dense copy, with `None` where no entry is stored.
fn dense<T: sparsecast::Scalar>(m: &Csr<T>) -> Vec<Vec<Option<f64>>> {
    let mut d = vec![vec![None; m.ncols]; m.nrows];
    for (i, row) in d.iter_mut().enumerate() {
        let (c, v) = m.row(i);
        for (&c, &v) in c.iter().zip(v) {
            row[c as usize] = Some(v.as_f64());
        }
    }
    d
}

#[test]
fn general_real_with_comments_blank_lines_and_case() {
    let text = "%%matrixmarket MATRIX Coordinate REAL General\n\
                % a comment\n\
                \n\
                3 4 4\n\
                % comment between entries\n\
                1 1 1.5\n\
                \n\
                3 4 -2e3\n\
                   2 2\t0.25  \n\
                %last\n\
                1 3 7\n";
    let (m, info) = read::<f64>(text);
    assert_eq!(
        info,
        MmInfo {
            layout: Layout::Coordinate,
            field: Field::Real,
            symmetry: Symmetry::General,
            nrows: 3,
            ncols: 4,
            declared_entries: 4,
            gzip: false,
        }
    );
    assert_eq!(
        dense(&m),
        vec![
            vec![Some(1.5), None, Some(7.0), None],
            vec![None, Some(0.25), None, None],
            vec![None, None, None, Some(-2000.0)],
        ]
    );
}

#[test]
fn crlf_line_ends() {
    let text = "%%MatrixMarket matrix coordinate real general\r\n2 2 2\r\n1 1 1\r\n2 1 3\r\n";
    let (m, _) = read::<f64>(text);
    assert_eq!(m.row_ptr, vec![0, 1, 2]);
    assert_eq!(m.values, vec![1.0, 3.0]);
}

#[test]
fn symmetric_expands_without_duplicating_the_diagonal() {
    let text =
        "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 1\n2 1 2\n3 1 3\n3 3 4\n";
    let (m, info) = read::<f64>(text);
    assert_eq!(info.declared_entries, 4);
    assert_eq!(m.nnz(), 6);
    assert_eq!(
        dense(&m),
        vec![
            vec![Some(1.0), Some(2.0), Some(3.0)],
            vec![Some(2.0), None, None],
            vec![Some(3.0), None, Some(4.0)],
        ]
    );
}

#[test]
fn symmetric_entry_in_upper_triangle_is_mirrored() {
    let text = "%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 5\n";
    let (m, _) = read::<f64>(text);
    assert_eq!(
        dense(&m),
        vec![vec![None, Some(5.0)], vec![Some(5.0), None]]
    );
}

#[test]
fn skew_symmetric_negates_the_mirror() {
    let text = "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 2\n3 2 -1.5\n";
    let (m, _) = read::<f32>(text);
    assert_eq!(
        dense(&m),
        vec![
            vec![None, Some(-2.0), None],
            vec![Some(2.0), None, Some(1.5)],
            vec![None, Some(-1.5), None],
        ]
    );
}

#[test]
fn pattern_values_are_one() {
    let text = "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n2 1\n3 3\n";
    let (m, info) = read::<f64>(text);
    assert_eq!(info.field, Field::Pattern);
    assert_eq!(
        dense(&m),
        vec![
            vec![None, Some(1.0), None],
            vec![Some(1.0), None, None],
            vec![None, None, Some(1.0)],
        ]
    );
}

#[test]
fn integer_field() {
    let text = "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 -7\n2 1 +12\n";
    let (m, info) = read::<f64>(text);
    assert_eq!(info.field, Field::Integer);
    assert_eq!(
        dense(&m),
        vec![vec![None, Some(-7.0)], vec![Some(12.0), None]]
    );
}

#[test]
fn duplicates_are_summed_and_explicit_zeros_kept() {
    let text = "%%MatrixMarket matrix coordinate real general\n2 3 5\n1 2 1\n2 3 0\n1 2 2.5\n1 1 0.0\n1 2 -0.5\n";
    let (m, _) = read::<f64>(text);
    assert_eq!(m.nnz(), 3);
    assert_eq!(
        dense(&m),
        vec![
            vec![Some(0.0), Some(3.0), None],
            vec![None, None, Some(0.0)],
        ]
    );
}

#[test]
fn empty_rows_rectangular_and_empty_matrices() {
    let (m, _) = read::<f64>("%%MatrixMarket matrix coordinate real general\n5 2 1\n4 2 1\n");
    assert_eq!(m.row_ptr, vec![0, 0, 0, 0, 1, 1]);
    assert_eq!(m.col_idx, vec![1]);
    let (m, _) = read::<f64>("%%MatrixMarket matrix coordinate real general\n0 0 0\n");
    assert_eq!((m.nrows, m.ncols, m.nnz()), (0, 0, 0));
    let (m, _) = read::<f64>("%%MatrixMarket matrix coordinate real general\n3 7 0");
    assert_eq!((m.nrows, m.ncols, m.nnz()), (3, 7, 0));
}

#[test]
fn nan_and_inf_are_accepted() {
    let text = "%%MatrixMarket matrix coordinate real general\n1 4 4\n1 1 NaN\n1 2 inf\n1 3 -Infinity\n1 4 nan\n";
    let (m, _) = read::<f64>(text);
    assert!(m.values[0].is_nan() && m.values[3].is_nan());
    assert_eq!(m.values[1], f64::INFINITY);
    assert_eq!(m.values[2], f64::NEG_INFINITY);
}

#[test]
fn f32_values_are_rounded_directly_from_decimal() {
    // 0.1 and 16777217 (2^24 + 1) read as f32 give the nearest f32 of the decimal.
    let text = "%%MatrixMarket matrix coordinate real general\n1 2 2\n1 1 0.1\n1 2 16777217\n";
    let (m, _) = read::<f32>(text);
    assert_eq!(m.values, vec![0.1f32, 16777216.0]);
}

#[test]
fn array_general_is_column_major_and_keeps_zeros() {
    let text = "%%MatrixMarket matrix array real general\n% c\n2 3\n1\n2\n0\n4\n5\n\n6\n";
    let (m, info) = read::<f64>(text);
    assert_eq!(info.layout, Layout::Array);
    assert_eq!(info.declared_entries, 6);
    assert_eq!(m.nnz(), 6);
    assert_eq!(
        dense(&m),
        vec![
            vec![Some(1.0), Some(0.0), Some(5.0)],
            vec![Some(2.0), Some(4.0), Some(6.0)],
        ]
    );
}

#[test]
fn array_symmetric_and_skew() {
    let text = "%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n3\n4\n5\n6\n";
    let (m, _) = read::<f64>(text);
    assert_eq!(
        dense(&m),
        vec![
            vec![Some(1.0), Some(2.0), Some(3.0)],
            vec![Some(2.0), Some(4.0), Some(5.0)],
            vec![Some(3.0), Some(5.0), Some(6.0)],
        ]
    );
    let text = "%%MatrixMarket matrix array integer skew-symmetric\n3 3\n1\n2\n3\n";
    let (m, _) = read::<f64>(text);
    assert_eq!(
        dense(&m),
        vec![
            vec![Some(0.0), Some(-1.0), Some(-2.0)],
            vec![Some(1.0), Some(0.0), Some(-3.0)],
            vec![Some(2.0), Some(3.0), Some(0.0)],
        ]
    );
}

/// Arrays larger than the reader's row blocks (64 rows), with distinct values: every entry must
/// come from the right place of the column-major, packed file, in every chunking.
#[test]
fn large_arrays_in_every_symmetry() {
    fn file(kind: &str, m: usize, n: usize, count: usize) -> String {
        let mut t = format!("%%MatrixMarket matrix array real {kind}\n{m} {n}\n");
        for k in 0..count {
            t.push_str(&format!("{}\n", k + 1));
        }
        t
    }
    let (m, n) = (150, 131);
    let (a, _) = read::<f64>(&file("general", m, n, m * n));
    for (i, row) in dense(&a).iter().enumerate() {
        for (j, v) in row.iter().enumerate() {
            assert_eq!(*v, Some((j * m + i + 1) as f64), "general ({i}, {j})");
        }
    }
    let n = 150;
    // Packed offset of (r, c), r ≥ c + d, in a lower triangle stored column by column.
    let packed =
        |r: usize, c: usize, d: usize| c * (n - d) - c * c.saturating_sub(1) / 2 + r - c - d;
    let (s, _) = read::<f64>(&file("symmetric", n, n, n * (n + 1) / 2));
    let (k, _) = read::<f64>(&file("skew-symmetric", n, n, n * (n - 1) / 2));
    let (ds, dk) = (dense(&s), dense(&k));
    for i in 0..n {
        for j in 0..n {
            let (r, c) = (i.max(j), i.min(j));
            assert_eq!(
                ds[i][j],
                Some((packed(r, c, 0) + 1) as f64),
                "symmetric ({i}, {j})"
            );
            let want = match i.cmp(&j) {
                std::cmp::Ordering::Equal => 0.0,
                std::cmp::Ordering::Greater => (packed(i, j, 1) + 1) as f64,
                std::cmp::Ordering::Less => -((packed(j, i, 1) + 1) as f64),
            };
            assert_eq!(dk[i][j], Some(want), "skew ({i}, {j})");
        }
    }
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[test]
fn gzip_is_detected_by_content_not_name() {
    let text = "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 2\n";
    let dir = tempfile::tempdir().unwrap();
    let gz_named_plain = dir.path().join("a.mtx");
    std::fs::write(&gz_named_plain, gzip(text.as_bytes())).unwrap();
    let plain_named_gz = dir.path().join("b.mtx.gz");
    std::fs::write(&plain_named_gz, text).unwrap();
    let (a, ia) = mm::read_with_info::<f64>(&gz_named_plain).unwrap();
    let (b, ib) = mm::read_with_info::<f64>(&plain_named_gz).unwrap();
    assert!(ia.gzip && !ib.gzip);
    assert_eq!(a, b);
    assert_eq!(a.values, vec![1.0, 2.0]);
}

#[test]
fn concatenated_gzip_members_are_all_read() {
    let head = "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n";
    let mut bytes = gzip(head.as_bytes());
    bytes.extend(gzip(b"2 2 2\n"));
    let (m, info) = mm::read_bytes::<f64>("two.gz", &bytes).unwrap();
    assert!(info.gzip);
    assert_eq!(m.values, vec![1.0, 2.0]);
}

#[test]
fn read_vector_accepts_arrays_and_coordinate_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        "%%MatrixMarket matrix array real general\n3 1\n1\n-2\n3.5\n",
        "%%MatrixMarket matrix array real general\n1 3\n1\n-2\n3.5\n",
        "%%MatrixMarket matrix coordinate real general\n3 1 3\n3 1 3.5\n1 1 1\n2 1 -2\n",
        "%%MatrixMarket matrix coordinate real general\n1 3 4\n1 3 3\n1 1 1\n1 2 -2\n1 3 0.5\n",
    ];
    for (k, text) in cases.iter().enumerate() {
        let p = dir.path().join(format!("v{k}.mtx"));
        std::fs::write(&p, text).unwrap();
        assert_eq!(
            mm::read_vector(&p).unwrap(),
            vec![1.0, -2.0, 3.5],
            "case {k}"
        );
    }
    let p = dir.path().join("sparse.mtx");
    std::fs::write(
        &p,
        "%%MatrixMarket matrix coordinate real general\n4 1 1\n3 1 2\n",
    )
    .unwrap();
    assert_eq!(mm::read_vector(&p).unwrap(), vec![0.0, 0.0, 2.0, 0.0]);
}

/// A deterministic pseudo-random generator (64-bit LCG) so the test needs no seed handling.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

/// A random coordinate file (entries in random order, duplicates, comments sprinkled in) and
/// the triplets of the full matrix it describes.
fn random_file(
    nrows: usize,
    ncols: usize,
    n: usize,
    symmetry: &str,
    seed: u64,
) -> (String, Vec<u32>, Vec<u32>, Vec<f64>) {
    let mut g = Lcg(seed);
    let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    let mut text =
        format!("%%MatrixMarket matrix coordinate real {symmetry}\n{nrows} {ncols} {n}\n");
    for k in 0..n {
        let (mut i, mut j) = (g.next() as usize % nrows, g.next() as usize % ncols);
        if symmetry != "general" && i < j {
            std::mem::swap(&mut i, &mut j);
        }
        // Multiples of 1/8 with small magnitude: sums are exact in any order.
        let v = (g.next() % 2001) as f64 / 8.0 - 125.0;
        rows.push(i as u32);
        cols.push(j as u32);
        vals.push(v);
        if i != j && symmetry != "general" {
            rows.push(j as u32);
            cols.push(i as u32);
            vals.push(if symmetry == "skew-symmetric" { -v } else { v });
        }
        text.push_str(&format!("{} {} {v}\n", i + 1, j + 1));
        if k % 997 == 0 {
            text.push_str("% comment\n\n");
        }
    }
    (text, rows, cols, vals)
}

#[test]
fn chunked_parse_matches_triplets_on_a_larger_file() {
    let (nrows, ncols) = (300, 200);
    let (text, rows, cols, vals) = random_file(nrows, ncols, 20_000, "general", 42);
    let (m, _) = read::<f64>(&text);
    let expected = Csr::from_triplets(nrows, ncols, &rows, &cols, &vals).unwrap();
    assert_eq!(m, expected);
}

#[test]
fn many_row_blocks_general_and_symmetric() {
    // 200 000 entries over 20 000 rows: the reader splits rows into several blocks of about
    // 32 Ki entries, each filled by several chunks.
    for symmetry in ["general", "symmetric", "skew-symmetric"] {
        let n = 20_000;
        let (text, rows, cols, vals) = random_file(n, n, 200_000, symmetry, 7);
        let expected = Csr::from_triplets(n, n, &rows, &cols, &vals).unwrap();
        for chunks in [None, Some(1), Some(5)] {
            let (m, _) = mm::read_bytes_chunked::<f64>("big.mtx", text.as_bytes(), chunks).unwrap();
            assert_eq!(m, expected, "{symmetry}, chunks {chunks:?}");
        }
    }
}

#[test]
fn reading_a_path_equals_reading_bytes() {
    let text = "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 3 2\n3 2 3\n";
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.mtx");
    std::fs::write(&p, text).unwrap();
    let from_path = mm::read::<f64>(&p).unwrap();
    let (from_bytes, _) = mm::read_bytes::<f64>("m", text.as_bytes()).unwrap();
    assert_eq!(from_path, from_bytes);
}

#[test]
fn fortran_exponents_are_read_as_scipy_reads_them() {
    let (m, _) = read::<f64>(
        "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1.5D+00\n2 1 -2.5d-3\n2 2 4D2\n",
    );
    assert_eq!(dense(&m)[0][0], Some(1.5));
    assert_eq!(dense(&m)[1][0], Some(-2.5e-3));
    assert_eq!(dense(&m)[1][1], Some(400.0));
    let (m, _) = read::<f32>("%%MatrixMarket matrix array real general\n2 1\n1.0D0\n-3.25D+01\n");
    assert_eq!(m.values, vec![1.0f32, -32.5]);
    // Still an error: a `D` that is not an exponent.
    let bad = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 D+00\n";
    assert!(sparsecast::matrix::mm::read_bytes::<f64>("bad.mtx", bad.as_bytes()).is_err());
    let bad = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1.5D+0x\n";
    assert!(sparsecast::matrix::mm::read_bytes::<f64>("bad.mtx", bad.as_bytes()).is_err());
}

/// A legitimate 10^8 × 10^8 file with one entry (76 bytes) reads; its row pointers fit in memory.
#[test]
fn a_huge_order_with_one_entry_is_read() {
    let text = "%%MatrixMarket matrix coordinate real general\n100000000 100000000 1\n5 7 2.5\n";
    let (m, _) = mm::read_bytes::<f64>("huge.mtx", text.as_bytes()).unwrap();
    assert_eq!((m.nrows, m.ncols, m.nnz()), (100_000_000, 100_000_000, 1));
    assert_eq!(m.row_ptr[5], 1);
    assert_eq!(m.col_idx, vec![6]);
}
