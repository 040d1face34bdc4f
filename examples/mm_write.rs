//! Time the Matrix Market writer on a synthetic matrix; used for `docs/PERFORMANCE.md`.
//!
//! ```sh
//! cargo run --release --example mm_write -- NNZ OUT.mtx
//! ```
//!
//! Builds an `NNZ/10 × NNZ/10` matrix with 10 entries per row (pseudo-random columns and
//! values, fixed seed), writes it with `write_csr` and prints one JSON line with the time.

use sparsecast::matrix::mm;
use sparsecast::Csr;
use std::path::PathBuf;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(nnz), Some(out)) = (
        args.first().and_then(|a| a.parse::<usize>().ok()),
        args.get(1).map(PathBuf::from),
    ) else {
        eprintln!("usage: mm_write NNZ OUT.mtx");
        std::process::exit(2);
    };
    let n = (nnz / 10).max(1);
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut row_ptr = Vec::with_capacity(n + 1);
    let mut col_idx = Vec::with_capacity(n * 10);
    let mut values = Vec::with_capacity(n * 10);
    row_ptr.push(0);
    for _ in 0..n {
        let mut cols: Vec<u32> = (0..10).map(|_| (next() % n as u64) as u32).collect();
        cols.sort_unstable();
        cols.dedup();
        for c in cols {
            col_idx.push(c);
            values.push((next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5);
        }
        row_ptr.push(col_idx.len());
    }
    let m = match Csr::new(n, n, row_ptr, col_idx, values) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let t = Instant::now();
    if let Err(e) = mm::write_csr(&out, &m) {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
    let s = t.elapsed().as_secs_f64();
    let bytes = std::fs::metadata(&out).map(|m| m.len()).unwrap_or(0);
    println!(
        "{}",
        serde_json::json!({
            "nnz": m.nnz(),
            "bytes": bytes,
            "threads": rayon::current_num_threads(),
            "write_s": s,
            "write_mb_s": bytes as f64 / 1e6 / s,
        })
    );
}
