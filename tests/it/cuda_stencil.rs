//! Performance acceptance test (ignored by default; needs a GPU): on a 3-D 27-point stencil with
//! ≥ 50 M non-zeros in f64, the best of our kernels reaches ≥ 75 % of the measured copy bandwidth
//! (effective bytes: the format's arrays once, x once, y once) and is at least as fast as the best
//! cuSPARSE CSR algorithm. Prints every kernel's best time over block sizes.
//!
//! Run: `cargo test --release --test cuda_stencil -- --ignored --nocapture`
//! (`SPARSECAST_STENCIL_N` sets the grid edge, default 130 → 58.4 M non-zeros;
//! `SPARSECAST_STENCIL_FORMATS` restricts the kernels, comma-separated names.)

use rand::{Rng, SeedableRng};
use sparsecast::backend::{Backend, KernelConfig, TimingProtocol, Variant};
use sparsecast::Csr;

/// 27-point stencil on an n³ grid, random values in [-1, 1).
fn stencil27(n: usize, seed: u64) -> Csr<f64> {
    let rows = n * n * n;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut row_ptr = Vec::with_capacity(rows + 1);
    let mut col_idx = Vec::with_capacity(rows * 27);
    row_ptr.push(0usize);
    for i in 0..n {
        for j in 0..n {
            for k in 0..n {
                for di in -1i64..=1 {
                    for dj in -1i64..=1 {
                        for dk in -1i64..=1 {
                            let (a, b, c) = (i as i64 + di, j as i64 + dj, k as i64 + dk);
                            let inside = |v: i64| (0..n as i64).contains(&v);
                            if inside(a) && inside(b) && inside(c) {
                                col_idx.push(((a * n as i64 + b) * n as i64 + c) as u32);
                            }
                        }
                    }
                }
                row_ptr.push(col_idx.len());
            }
        }
    }
    let values = (0..col_idx.len())
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    Csr::new(rows, rows, row_ptr, col_idx, values).unwrap()
}

struct Best {
    name: String,
    block: u32,
    median: f64,
    warm_mean: f64,
    bytes: u64,
}

#[test]
#[ignore]
fn stencil27_f64_reaches_bandwidth_and_beats_cusparse() {
    let _serial = crate::common::gpu_serial();
    let Some(be) = crate::common::cuda() else {
        return;
    };
    let n: usize = std::env::var("SPARSECAST_STENCIL_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(130);
    let t0 = std::time::Instant::now();
    let csr = stencil27(n, 42);
    println!(
        "27-point stencil {n}^3: {} rows, {} non-zeros (built in {:.1} s)",
        csr.nrows,
        csr.nnz(),
        t0.elapsed().as_secs_f64()
    );
    let d = be.describe();
    println!(
        "{}: copy bandwidth {:.0} GB/s (theoretical {:.0} GB/s)",
        d.name, d.copy_bandwidth_gbs, d.theoretical_bandwidth_gbs
    );
    let only: Vec<String> = std::env::var("SPARSECAST_STENCIL_FORMATS")
        .map(|v| v.split(',').map(|s| s.to_string()).collect())
        .unwrap_or_default();
    let protocol = TimingProtocol {
        runs: 40,
        warmup: 5,
        cold: false,
        ..TimingProtocol::default()
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let x: Vec<f64> = (0..csr.ncols)
        .map(|_| rng.random_range(-1.0..1.0))
        .collect();
    let mut bests: Vec<Best> = Vec::new();
    for v in Variant::ours().into_iter().chain(Variant::vendor()) {
        if !only.is_empty() && !only.contains(&v.name()) {
            continue;
        }
        let blocks: &[u32] = if v.is_vendor() {
            &[256]
        } else {
            &[128, 256, 512]
        };
        let mut best: Option<Best> = None;
        for &block in blocks {
            let mut kc = KernelConfig::new(v);
            kc.block_size = block;
            let mut p = match Backend::<f64>::prepare(&be, &csr, &kc) {
                Ok(p) => p,
                Err(e) => {
                    println!("{v} (block {block}): {e}");
                    continue;
                }
            };
            p.set_x(&x).unwrap();
            let t = p.time(&protocol).unwrap();
            let (median, warm_mean) = (t.median(), t.warm_mean());
            if best.as_ref().map_or(true, |b| median < b.median) {
                best = Some(Best {
                    name: v.name(),
                    block,
                    median,
                    warm_mean,
                    bytes: p.effective_bytes(),
                });
            }
        }
        if let Some(b) = best {
            bests.push(b);
        }
    }
    bests.sort_by(|a, b| a.median.total_cmp(&b.median));
    let cusparse_csr = bests
        .iter()
        .filter(|b| b.name.starts_with("cusparse-csr"))
        .map(|b| b.median)
        .fold(f64::INFINITY, f64::min);
    println!(
        "{:<20} {:>6} {:>11} {:>11} {:>10} {:>8} {:>10}",
        "kernel", "block", "median us", "mean us", "eff GB/s", "% copy", "vs cuSP"
    );
    for b in &bests {
        let gbs = b.bytes as f64 / b.median / 1e9;
        println!(
            "{:<20} {:>6} {:>11.1} {:>11.1} {:>10.0} {:>7.1}% {:>9.2}x",
            b.name,
            b.block,
            b.median * 1e6,
            b.warm_mean * 1e6,
            gbs,
            100.0 * gbs / d.copy_bandwidth_gbs,
            cusparse_csr / b.median
        );
    }
    let ours = bests
        .iter()
        .find(|b| !b.name.starts_with("cusparse"))
        .expect("at least one of our kernels ran");
    let ours_gbs = ours.bytes as f64 / ours.median / 1e9;
    println!(
        "best of ours: {} at {:.1} us, {:.0} GB/s = {:.1} % of copy bandwidth; best cuSPARSE CSR {:.1} us",
        ours.name,
        ours.median * 1e6,
        ours_gbs,
        100.0 * ours_gbs / d.copy_bandwidth_gbs,
        cusparse_csr * 1e6
    );
    if only.is_empty() {
        assert!(
            ours_gbs >= 0.75 * d.copy_bandwidth_gbs,
            "below 75 % of copy bandwidth"
        );
        assert!(
            ours.median <= cusparse_csr,
            "slower than the best cuSPARSE CSR"
        );
    }
}
