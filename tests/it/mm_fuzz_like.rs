//! The reader never panics on random or mutated input: it returns a matrix or an error.
//! (The coverage-guided fuzzer in `fuzz/` does the same at depth; this runs in CI.)

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use sparsecast::matrix::mm;
use sparsecast::Error;
use std::io::Write;

/// Valid files covering every layout, field and symmetry, to mutate.
const SEEDS: &[&str] = &[
    "%%MatrixMarket matrix coordinate real general\n% c\n3 4 4\n1 1 1.5\n3 4 -2e3\n2 2 0.25\n1 3 7\n",
    "%%MatrixMarket matrix coordinate real symmetric\n3 3 4\n1 1 1\n2 1 2\n3 1 3\n3 3 4\n",
    "%%MatrixMarket matrix coordinate integer skew-symmetric\n3 3 2\n2 1 2\n3 2 -1\n",
    "%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 2\n3 3\n2 1\n",
    "%%MatrixMarket matrix array real general\n2 3\n1\n2\n0\n4\n5\n6\n",
    "%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n",
];

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// Parse and check that whatever comes back is consistent.
fn must_not_panic(bytes: &[u8], chunks: Option<usize>) {
    match mm::read_bytes_chunked::<f64>("fuzz", bytes, chunks) {
        Ok((m, info)) => {
            m.validate().expect("a returned matrix is valid");
            assert_eq!((m.nrows, m.ncols), (info.nrows, info.ncols));
        }
        Err(Error::Parse { line, msg, .. }) => {
            assert!(line >= 1);
            assert!(!msg.is_empty());
        }
        Err(Error::Invalid(msg)) => assert!(!msg.is_empty()),
        Err(e) => panic!("unexpected error kind: {e:?}"),
    }
    let _ = mm::vector_from_bytes("fuzz", bytes);
}

/// One edit of a byte string.
#[derive(Debug, Clone)]
enum Edit {
    Flip(usize, u8),
    Insert(usize, Vec<u8>),
    Delete(usize, usize),
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    // Bytes that matter to the grammar are over-represented.
    let byte = prop_oneof![
        any::<u8>(),
        prop::sample::select(b"0123456789 \n\t\r%-+.eE".to_vec()),
    ];
    prop_oneof![
        (any::<usize>(), byte.clone()).prop_map(|(p, b)| Edit::Flip(p, b)),
        (any::<usize>(), prop::collection::vec(byte, 1..8)).prop_map(|(p, b)| Edit::Insert(p, b)),
        (any::<usize>(), 1usize..10).prop_map(|(p, n)| Edit::Delete(p, n)),
        any::<usize>().prop_map(Edit::Truncate),
    ]
}

fn apply(mut s: Vec<u8>, edits: &[Edit]) -> Vec<u8> {
    for e in edits {
        let n = s.len().max(1);
        match e {
            Edit::Flip(p, b) if !s.is_empty() => s[p % n] = *b,
            Edit::Flip(..) => {}
            Edit::Insert(p, b) => {
                let at = p % (s.len() + 1);
                s.splice(at..at, b.iter().copied());
            }
            Edit::Delete(p, k) => {
                let at = p % n;
                let end = (at + k).min(s.len());
                if at < end {
                    s.drain(at..end);
                }
            }
            Edit::Truncate(p) => s.truncate(p % n),
        }
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 2000,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("regressions"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..300), chunks in 1usize..6) {
        must_not_panic(&bytes, None);
        must_not_panic(&bytes, Some(chunks));
    }

    #[test]
    fn random_bytes_after_a_valid_banner(
        seed in 0..SEEDS.len(),
        tail in prop::collection::vec(prop::sample::select(b"0123456789 \n%-.e".to_vec()), 0..200),
    ) {
        let banner = SEEDS[seed].lines().next().unwrap();
        let mut bytes = format!("{banner}\n").into_bytes();
        bytes.extend(tail);
        must_not_panic(&bytes, Some(3));
    }

    #[test]
    fn mutated_valid_files(
        seed in 0..SEEDS.len(),
        edits in prop::collection::vec(edit(), 1..6),
        chunks in 1usize..6,
    ) {
        let bytes = apply(SEEDS[seed].as_bytes().to_vec(), &edits);
        must_not_panic(&bytes, None);
        must_not_panic(&bytes, Some(chunks));
    }

    #[test]
    fn mutated_gzip_files(seed in 0..SEEDS.len(), edits in prop::collection::vec(edit(), 1..4)) {
        let bytes = apply(gzip(SEEDS[seed].as_bytes()), &edits);
        must_not_panic(&bytes, None);
    }
}
