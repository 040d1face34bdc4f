//! Conversion and CPU SpMV speed on matrices of about 10^7 non-zeros. Ignored by default (it
//! needs a release build to mean anything):
//!
//! ```text
//! cargo test --release --test formats_speed -- --ignored --nocapture
//! ```
//!
//! It asserts only that every conversion finishes (or refuses) and multiplies correctly; the
//! times are printed for the record.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sparsecast::formats::{AnyFormat, FormatKind, FormatParams};
use sparsecast::Csr;
use std::time::Instant;

/// `nrows × nrows` with 5–15 random distinct columns per row (≈ 10^7 non-zeros for 10^6 rows).
fn scattered(nrows: usize) -> Csr<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut row_ptr = Vec::with_capacity(nrows + 1);
    row_ptr.push(0);
    let mut col_idx = Vec::new();
    for _ in 0..nrows {
        let n = rng.random_range(5..=15);
        let start = col_idx.len();
        for _ in 0..n {
            col_idx.push(rng.random_range(0..nrows as u32));
        }
        col_idx[start..].sort_unstable();
        let mut w = start;
        for k in start..col_idx.len() {
            if k == start || col_idx[k] != col_idx[w - 1] {
                col_idx[w] = col_idx[k];
                w += 1;
            }
        }
        col_idx.truncate(w);
        row_ptr.push(col_idx.len());
    }
    let values = (0..col_idx.len())
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    Csr::new(nrows, nrows, row_ptr, col_idx, values).unwrap()
}

/// `n × n` with 11 diagonals (offsets −5..=5).
fn banded(n: usize) -> Csr<f64> {
    let mut row_ptr = vec![0usize];
    let mut col_idx = Vec::new();
    for i in 0..n as i64 {
        for o in -5..=5i64 {
            if (0..n as i64).contains(&(i + o)) {
                col_idx.push((i + o) as u32);
            }
        }
        row_ptr.push(col_idx.len());
    }
    let values = (0..col_idx.len()).map(|k| 1.0 + (k % 7) as f64).collect();
    Csr::new(n, n, row_ptr, col_idx, values).unwrap()
}

/// CPU seconds used by this process so far (user + system, all threads), from `/proc/self/stat`
/// (10 ms resolution); NaN where unavailable. On a shared machine this is steadier than wall time.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses): utime is the 12th, stime the 13th.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<f64> = rest
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|t| t.parse().ok())
        .collect();
    if f.len() == 2 {
        (f[0] + f[1]) / 100.0
    } else {
        f64::NAN
    }
}

fn measure(name: &str, m: &Csr<f64>) {
    let x: Vec<f64> = (0..m.ncols).map(|j| (j % 13) as f64 - 6.0).collect();
    let reference = m.spmv_reference(&x);
    println!(
        "{name}: {} × {}, {} non-zeros, {} rayon threads",
        m.nrows,
        m.ncols,
        m.nnz(),
        rayon::current_num_threads()
    );
    let only = std::env::var("ONLY").ok();
    for kind in FormatKind::ALL {
        if only.as_deref().is_some_and(|o| o != kind.name()) {
            continue;
        }
        let (t, c) = (Instant::now(), cpu_seconds());
        let f = AnyFormat::convert(m, kind, &FormatParams::default());
        let conv = t.elapsed().as_secs_f64();
        let conv_cpu = cpu_seconds() - c;
        let f = match f {
            Ok(f) => f,
            Err(e) => {
                println!("  {kind:>4}: refused in {conv:.3} s ({e})");
                continue;
            }
        };
        let d = f.as_dyn();
        let mut y = vec![f64::NAN; m.nrows];
        d.spmv(&x, &mut y);
        let t = Instant::now();
        let reps = 5;
        for _ in 0..reps {
            d.spmv(&x, &mut y);
        }
        let spmv = t.elapsed().as_secs_f64() / reps as f64;
        let worst = y
            .iter()
            .zip(&reference)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(worst < 1e-9, "{kind}: max error {worst}");
        println!(
            "  {kind:>4}: convert {conv:.3} s wall ({conv_cpu:.2} CPU s), spmv {:.2} ms, \
             fill {:.2}, {} MB",
            spmv * 1e3,
            d.fill_ratio(),
            d.footprint_bytes() >> 20
        );
    }
}

#[test]
#[ignore = "speed measurement; run in release with --ignored --nocapture"]
fn conversions_of_ten_million_nonzeros() {
    measure("scattered", &scattered(1_000_000));
    measure("banded", &banded(1_000_000));
}
