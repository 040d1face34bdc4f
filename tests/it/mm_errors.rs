//! Every kind of malformed input gives `Error::Parse` naming the file, the 1-based line and what
//! was expected — never a panic, never a huge allocation.

use sparsecast::matrix::mm;
use sparsecast::Error;
use std::io::Write;

/// Parse `bytes` (with automatic and forced chunk counts) and return the error's line and
/// message, checking that every chunking reports the same error.
fn parse_err(bytes: &[u8]) -> (u64, String) {
    let first = mm::read_bytes::<f64>("bad.mtx", bytes).expect_err("input must be rejected");
    let (line, msg) = match first {
        Error::Parse { file, line, msg } => {
            assert_eq!(file, "bad.mtx");
            (line, msg)
        }
        other => panic!("expected a parse error, got {other:?}"),
    };
    for chunks in [1, 2, 3, 7] {
        match mm::read_bytes_chunked::<f32>("bad.mtx", bytes, Some(chunks)) {
            Err(Error::Parse {
                line: l, msg: m, ..
            }) => {
                assert_eq!((l, &m), (line, &msg), "chunks = {chunks}")
            }
            other => panic!("chunks = {chunks}: expected a parse error, got {other:?}"),
        }
    }
    (line, msg)
}

/// Assert the error is on `line` and its message contains every one of `words`.
fn check(text: &str, line: u64, words: &[&str]) {
    let (l, msg) = parse_err(text.as_bytes());
    assert_eq!(l, line, "wrong line for {text:?}: {msg}");
    for w in words {
        assert!(msg.contains(w), "message {msg:?} lacks {w:?}");
    }
}

const COORD: &str = "%%MatrixMarket matrix coordinate real general\n";

#[test]
fn empty_file() {
    check("", 1, &["expected the Matrix Market banner"]);
}

#[test]
fn wrong_banner() {
    check(
        "%%MatrixMarkt matrix coordinate real general\n1 1 0\n",
        1,
        &["expected the Matrix Market banner", "%%MatrixMarkt"],
    );
    check(
        "1 1 1\n1 1 1\n",
        1,
        &["expected the Matrix Market banner", "\"1\""],
    );
    check(
        "%%MatrixMarket matrix coordinate\n",
        1,
        &["incomplete banner"],
    );
    check(
        "%%MatrixMarket matrix coordinate real general extra\n",
        1,
        &["\"extra\""],
    );
    check(
        "%%MatrixMarket vector coordinate real general\n",
        1,
        &["object", "\"vector\"", "'matrix'"],
    );
    check(
        "%%MatrixMarket matrix sparse real general\n",
        1,
        &["layout", "\"sparse\"", "'coordinate' or 'array'"],
    );
}

#[test]
fn unknown_field_is_named() {
    check(
        "%%MatrixMarket matrix coordinate quaternion general\n",
        1,
        &[
            "unknown field",
            "\"quaternion\"",
            "'real', 'integer' or 'pattern'",
        ],
    );
    check(
        "%%MatrixMarket matrix coordinate real triangular\n",
        1,
        &["unknown symmetry", "\"triangular\""],
    );
}

#[test]
fn complex_and_hermitian_are_rejected_by_name() {
    check(
        "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n",
        1,
        &["field 'complex'"],
    );
    check(
        "%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n",
        1,
        &["symmetry 'hermitian'"],
    );
}

#[test]
fn meaningless_combinations() {
    check(
        "%%MatrixMarket matrix array pattern general\n1 1\n",
        1,
        &["'pattern'", "'array'"],
    );
    check(
        "%%MatrixMarket matrix coordinate pattern skew-symmetric\n1 1 0\n",
        1,
        &["'pattern'", "skew-symmetric"],
    );
}

#[test]
fn missing_size_line() {
    check(
        &format!("{COORD}% only comments\n\n"),
        4,
        &["unexpected end of file", "size line 'rows columns entries'"],
    );
    check(COORD, 2, &["size line"]);
}

#[test]
fn bad_size_line() {
    check(
        &format!("{COORD}% c\n3 x 2\n"),
        3,
        &["size line", "\"x\"", "rows columns entries"],
    );
    check(&format!("{COORD}3 3\n"), 2, &["size line", "end of line"]);
    check(
        &format!("{COORD}3 3 1 4\n1 1 1\n"),
        2,
        &["\"4\"", "after 3 numbers"],
    );
    check(
        &format!("{COORD}-3 3 1\n"),
        2,
        &["\"-3\"", "non-negative integer"],
    );
    check(
        "%%MatrixMarket matrix array real general\n2 2 4\n",
        2,
        &["\"4\"", "'rows columns'"],
    );
    check(
        &format!("{COORD}1 99999999999999999999 0\n"),
        2,
        &["too large"],
    );
}

#[test]
fn too_many_columns_for_u32_indices() {
    check(
        &format!("{COORD}2 4294967296 1\n1 1 1\n"),
        2,
        &["4294967296 columns", "32-bit"],
    );
    // The largest u32 is accepted.
    let ok = format!("{COORD}2 4294967295 1\n1 4294967295 1\n");
    let (m, _) = mm::read_bytes::<f64>("ok", ok.as_bytes()).unwrap();
    assert_eq!(m.col_idx, vec![u32::MAX - 1]);
}

#[test]
fn symmetric_must_be_square() {
    check(
        "%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n",
        2,
        &["must be square", "2 × 3"],
    );
}

#[test]
fn zero_negative_and_out_of_range_indices() {
    check(
        &format!("{COORD}3 3 2\n1 1 1\n0 1 1\n"),
        4,
        &["row index 0 is out of range", "1..=3", "1-based"],
    );
    check(
        &format!("{COORD}3 3 2\n1 1 1\n1 0 1\n"),
        4,
        &["column index 0 is out of range"],
    );
    check(
        &format!("{COORD}3 3 1\n-1 1 1\n"),
        3,
        &["row index \"-1\" is out of range"],
    );
    check(
        &format!("{COORD}3 3 2\n1 1 1\n% c\n4 1 1\n"),
        5,
        &["row index 4 is out of range", "1..=3"],
    );
    check(
        &format!("{COORD}3 2 1\n1 3 1\n"),
        3,
        &["column index 3 is out of range", "1..=2"],
    );
    check(
        &format!("{COORD}3 2 1\n1 99999999999999999999999 1\n"),
        3,
        &["column index \"99999999999999999999999\" is out of range"],
    );
}

#[test]
fn non_numeric_tokens() {
    check(
        &format!("{COORD}3 3 1\nx 1 1\n"),
        3,
        &["expected a row index", "\"x\""],
    );
    check(
        &format!("{COORD}3 3 1\n1 1.0 1\n"),
        3,
        &["expected a column index", "\"1.0\""],
    );
    check(
        &format!("{COORD}3 3 2\n1 1 1\n2 2 abc\n"),
        4,
        &["expected a real value", "\"abc\""],
    );
    check(
        &format!("{COORD}3 3 1\n2 2\n"),
        3,
        &["expected a real value", "end of line"],
    );
    check(
        &format!("{COORD}3 3 1\n2 2 1.5 7\n"),
        3,
        &["unexpected \"7\"", "'row column value'"],
    );
    check(
        "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n2 2 1.5\n",
        3,
        &["unexpected \"1.5\"", "pattern"],
    );
    check(
        "%%MatrixMarket matrix coordinate integer general\n3 3 1\n2 2 1.5\n",
        3,
        &["expected an integer value", "\"1.5\""],
    );
}

#[test]
fn fewer_entries_than_declared() {
    check(
        &format!("{COORD}3 3 3\n1 1 1\n2 2 2\n"),
        5,
        &[
            "unexpected end of file",
            "expected 3 entries",
            "found 2",
            "line 2",
        ],
    );
    // Without a final newline the end of file is still the line after the last.
    check(
        &format!("{COORD}3 3 3\n1 1 1\n2 2 2"),
        5,
        &["expected 3 entries", "found 2"],
    );
}

#[test]
fn more_entries_than_declared() {
    check(
        &format!("{COORD}3 3 2\n1 1 1\n% c\n2 2 2\n3 3 3\n1 2 4\n"),
        6,
        &[
            "more entries than the 2 declared",
            "line 2",
            "expected end of file",
        ],
    );
    // The surplus entry is reported even when a later line is also malformed.
    check(
        &format!("{COORD}3 3 1\n1 1 1\n2 2 2\n9 9 9\n"),
        4,
        &["more entries than the 1 declared"],
    );
}

#[test]
fn huge_declared_count_in_a_tiny_file_does_not_allocate() {
    let text = format!("{COORD}1000000 1000000 1000000000000\n1 1 1\n2 2 2\n3 3 3\n");
    assert!(text.len() < 1024);
    let start = std::time::Instant::now();
    check(&text, 6, &["expected 1000000000000 entries", "found 3"]);
    // Allocating (or zeroing) 10^12 entries would take far longer than this.
    assert!(start.elapsed().as_secs_f64() < 5.0);
    check(
        "%%MatrixMarket matrix array real general\n1000000 1000000\n1\n2\n",
        5,
        &["expected 1000000000000 entries", "found 2"],
    );
}

#[test]
fn implausible_row_count_is_rejected() {
    check(
        &format!("{COORD}1000000000000000 3 1\n1 1 1\n"),
        2,
        &["1000000000000000 rows is implausible"],
    );
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// A file with many lines whose gzip form is long enough to cut in the middle.
fn long_text() -> String {
    let mut text = format!("{COORD}1000 1000 5000\n");
    for k in 0..5000u64 {
        text.push_str(&format!(
            "{} {} {}\n",
            k * 7919 % 1000 + 1,
            k * 104729 % 1000 + 1,
            k as f64 * 0.37
        ));
    }
    text
}

#[test]
fn truncated_gzip() {
    let text = long_text();
    let gz = gzip(text.as_bytes());
    let cut = &gz[..gz.len() / 2];
    let (line, msg) = parse_err(cut);
    assert!(msg.contains("truncated or corrupt gzip"), "{msg}");
    assert!(msg.contains("expected a complete gzip stream"), "{msg}");
    // The line is where decompression stopped: inside the file, past the header.
    let lines = text.lines().count() as u64;
    assert!(line > 2 && line <= lines, "line {line} of {lines}");
    // Cutting only the 8-byte trailer is caught too.
    let (_, msg) = parse_err(&gz[..gz.len() - 4]);
    assert!(msg.contains("gzip"), "{msg}");
}

#[test]
fn corrupt_gzip_checksum() {
    let text = long_text();
    let mut gz = gzip(text.as_bytes());
    let n = gz.len();
    gz[n - 8] ^= 0xff; // CRC32 of the trailer
    let (line, msg) = parse_err(&gz);
    assert!(msg.contains("truncated or corrupt gzip"), "{msg}");
    assert_eq!(line, text.lines().count() as u64 + 1);
}

#[test]
fn array_value_count_and_tokens() {
    let arr = "%%MatrixMarket matrix array real general\n";
    check(
        &format!("{arr}2 2\n1\n2\n3\n"),
        6,
        &["expected 4 entries", "found 3"],
    );
    check(
        &format!("{arr}2 1\n1\n2\n3\n"),
        5,
        &["more entries than the 2 declared"],
    );
    check(
        &format!("{arr}2 1\n1\nx\n"),
        4,
        &["expected a real value", "\"x\""],
    );
    check(&format!("{arr}2 1\n1 2\n3\n"), 3, &["one value per line"]);
    check(
        "%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n",
        5,
        &["expected 3 entries", "found 2"],
    );
}

#[test]
fn error_lines_are_exact_deep_inside_large_inputs() {
    // An error far into the file, found by whichever chunk holds it.
    let mut text = long_text();
    let good_lines = text.lines().count() as u64;
    text = text.replace("5000\n", "5001\n");
    text.push_str("1 1 oops\n");
    let (line, msg) = parse_err(text.as_bytes());
    assert_eq!(line, good_lines + 1);
    assert!(msg.contains("\"oops\""), "{msg}");
    // And an index error in the middle.
    let mut lines: Vec<String> = long_text().lines().map(String::from).collect();
    lines[2500] = "1 1001 1".into();
    let (line, msg) = parse_err(lines.join("\n").as_bytes());
    assert_eq!(line, 2501);
    assert!(msg.contains("column index 1001 is out of range"), "{msg}");
}

#[test]
fn read_vector_rejects_matrices() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("m.mtx");
    std::fs::write(&p, format!("{COORD}2 2 1\n1 1 1\n")).unwrap();
    match mm::read_vector(&p) {
        Err(Error::Parse { line, msg, .. }) => {
            assert_eq!(line, 2);
            assert!(msg.contains("expected a vector"), "{msg}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn missing_file_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("nope.mtx");
    assert!(matches!(
        mm::read::<f64>(&p),
        Err(Error::Io { path, .. }) if path == p
    ));
}
