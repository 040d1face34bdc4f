//! Time the Matrix Market reader (and optionally the writer) on one file; used by
//! `scripts/bench_parse.sh`.
//!
//! ```sh
//! cargo run --release --example mm_read -- FILE.mtx [--f32] [--write OUT.mtx]
//! ```
//!
//! Prints one JSON line: seconds to read (file → CSR), MB/s of input, nnz, and, with `--write`,
//! the seconds to write the matrix back.

use sparsecast::matrix::mm;
use sparsecast::{Csr, Scalar};
use std::path::{Path, PathBuf};
use std::time::Instant;

fn run<T: Scalar>(path: &Path, write: Option<&Path>) -> sparsecast::Result<()> {
    let bytes = std::fs::metadata(path)
        .map_err(|e| sparsecast::Error::io(path, e))?
        .len();
    let t = Instant::now();
    let m: Csr<T> = mm::read(path)?;
    let read_s = t.elapsed().as_secs_f64();
    let write_s = match write {
        Some(out) => {
            let t = Instant::now();
            mm::write_csr(out, &m)?;
            Some(t.elapsed().as_secs_f64())
        }
        None => None,
    };
    println!(
        "{}",
        serde_json::json!({
            "file": path.display().to_string(),
            "bytes": bytes,
            "precision": T::PRECISION.name(),
            "threads": rayon::current_num_threads(),
            "nrows": m.nrows,
            "ncols": m.ncols,
            "nnz": m.nnz(),
            "read_s": read_s,
            "read_mb_s": bytes as f64 / 1e6 / read_s,
            "write_s": write_s,
        })
    );
    Ok(())
}

fn main() {
    let mut path = None;
    let mut f32 = false;
    let mut write: Option<PathBuf> = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--f32" => f32 = true,
            "--write" => write = args.next().map(PathBuf::from),
            _ => path = Some(PathBuf::from(a)),
        }
    }
    let Some(path) = path else {
        eprintln!("usage: mm_read FILE.mtx [--f32] [--write OUT.mtx]");
        std::process::exit(2);
    };
    let r = if f32 {
        run::<f32>(&path, write.as_deref())
    } else {
        run::<f64>(&path, write.as_deref())
    };
    if let Err(e) = r {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
