//! Every real SuiteSparse matrix in `shared/matrices` reads with the shape and non-zero count
//! listed in its README (whose nnz counts the full, expanded matrix); the complex one is
//! rejected with an error naming the field.

use sparsecast::matrix::mm::{self, Field, Symmetry};
use sparsecast::Error;

/// One row of the README table.
struct Entry {
    name: String,
    rows: usize,
    cols: usize,
    nnz: usize,
    symmetry: String,
    field: String,
}

fn table(readme: &str) -> Vec<Entry> {
    readme
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| name"))
        .map(|l| {
            let c: Vec<&str> = l.split('|').map(str::trim).collect();
            Entry {
                name: c[1].into(),
                rows: c[3].parse().unwrap(),
                cols: c[4].parse().unwrap(),
                nnz: c[5].parse().unwrap(),
                symmetry: c[6].into(),
                field: c[7].into(),
            }
        })
        .collect()
}

/// The largest matrix (G3_circuit, 7.7 M non-zeros) takes a few seconds in a debug build; set
/// `SPARSECAST_SKIP_LARGE=1` to leave it out.
#[test]
fn every_suitesparse_matrix_reads_with_the_listed_nnz() {
    let Some(dir) = crate::common::shared_dir().map(|d| d.join("matrices")) else {
        return;
    };
    let readme = std::fs::read_to_string(dir.join("README.md")).unwrap();
    let entries = table(&readme);
    assert!(
        entries.len() >= 70,
        "README table has {} rows",
        entries.len()
    );
    let skip_large = std::env::var_os("SPARSECAST_SKIP_LARGE").is_some();
    let mut checked = 0;
    for e in &entries {
        let path = dir.join("suitesparse").join(format!("{}.mtx.gz", e.name));
        if e.field == "complex" {
            match mm::read::<f64>(&path) {
                Err(Error::Parse { line, msg, .. }) => {
                    assert_eq!(line, 1);
                    assert!(msg.contains("'complex'"), "{msg}");
                }
                other => panic!("{}: complex file not rejected: {other:?}", e.name),
            }
            continue;
        }
        if skip_large && e.nnz > 5_000_000 {
            eprintln!("skipping {} ({} nnz)", e.name, e.nnz);
            continue;
        }
        let t = std::time::Instant::now();
        let (m, info) =
            mm::read_with_info::<f64>(&path).unwrap_or_else(|err| panic!("{}: {err}", e.name));
        if e.nnz > 1_000_000 {
            eprintln!("{}: {} nnz in {:.2?}", e.name, m.nnz(), t.elapsed());
        }
        m.validate().unwrap();
        assert!(info.gzip);
        assert_eq!((m.nrows, m.ncols), (e.rows, e.cols), "{}", e.name);
        assert_eq!(m.nnz(), e.nnz, "{}: nnz", e.name);
        let sym = match info.symmetry {
            Symmetry::General => "general",
            Symmetry::Symmetric => "symmetric",
            Symmetry::SkewSymmetric => "skew-symmetric",
        };
        assert_eq!(sym, e.symmetry, "{}", e.name);
        let field = match info.field {
            Field::Real | Field::Integer => "real",
            Field::Pattern => "pattern",
        };
        assert_eq!(field, e.field, "{}", e.name);
        checked += 1;
    }
    eprintln!("{checked} matrices checked");
}
