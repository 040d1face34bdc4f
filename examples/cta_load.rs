//! Analysis (session 36): the heaviest thread block of the row-per-thread kernels.
//!
//! For every generated matrix of a table (up to MAX_NNZ), rebuild it and print one JSON line:
//! for blocks of 128, 256 and 512 consecutive rows (one row per thread), the most entries and
//! the most summed warp steps any block holds; the same with the rows sorted by length
//! (JAD's order); for warp-per-row blocks (8 rows), the most entries; and per window of 256,
//! 2,048 and 8,192 rows, the distinct 32-byte sectors of a 4-byte x it reads (summed: `xsW`) and
//! the entries of the windows whose sectors fit 256 KB, an SM's L1 (`fitW`).
//!
//! Session 60 added the warp of 32 consecutive rows that holds the longest row `L` (the
//! critical warp of a row-per-thread kernel, `chain`): its entries over `32 · L` (`fill`, the
//! share of lanes its steps keep busy), its distinct 32-byte sectors of a 4- and an 8-byte `x`
//! over its entries (`sec4`, `sec8`), the column span of the longest row over the columns
//! (`span`), and how many warps hold a row of at least `L / 2` and `L / 8` (`w2`, `w8`) with their
//! entries (`e2`, `e8`).
//!
//! ```sh
//! cargo run --release --example cta_load -- TABLE.jsonl.gz [MAX_NNZ] > out.jsonl
//! ```

use anyhow::Context;
use sparsecast::corpus::{refeature, table};
use sparsecast::Csr;
use std::collections::HashSet;
use std::path::Path;

fn heaviest(lens: &[usize], rows: usize) -> (usize, u64) {
    let mut best = (0usize, 0u64);
    for blk in lens.chunks(rows) {
        let e: usize = blk.iter().sum();
        let s: u64 = blk
            .chunks(32)
            .map(|w| *w.iter().max().unwrap_or(&0) as u64)
            .sum();
        best = (best.0.max(e), best.1.max(s));
    }
    best
}

/// The critical warp of a row-per-thread kernel: see the module doc (`chain`).
fn chain(m: &Csr<f64>, lens: &[usize]) -> serde_json::Value {
    let longest = lens.iter().copied().max().unwrap_or(0);
    let Some(row) = lens
        .iter()
        .position(|&l| l == longest)
        .filter(|_| longest > 0)
    else {
        return serde_json::Value::Null;
    };
    let warp = row / 32 * 32..(row / 32 * 32 + 32).min(m.nrows);
    let entries: usize = lens[warp.clone()].iter().sum();
    let sectors = |per: u32| {
        let mut s = HashSet::new();
        for i in warp.clone() {
            s.extend(m.row(i).0.iter().map(|&c| c / per));
        }
        s.len() as f64 / entries as f64
    };
    let cols = m.row(row).0;
    let (mut w2, mut w8, mut e2, mut e8) = (0usize, 0usize, 0usize, 0usize);
    for w in lens.chunks(32) {
        let (mx, e) = (*w.iter().max().unwrap(), w.iter().sum::<usize>());
        if mx * 2 >= longest {
            (w2, e2) = (w2 + 1, e2 + e);
        }
        if mx * 8 >= longest {
            (w8, e8) = (w8 + 1, e8 + e);
        }
    }
    serde_json::json!({
        "longest": longest, "fill": entries as f64 / (32 * longest) as f64,
        "sec4": sectors(8), "sec8": sectors(4),
        "span": (cols[cols.len() - 1] - cols[0] + 1) as f64 / m.ncols as f64,
        "w2": w2, "w8": w8, "e2": e2, "e8": e8,
    })
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = || anyhow::anyhow!("usage: cta_load TABLE.jsonl.gz [MAX_NNZ]");
    let rows = table::read(Path::new(args.first().ok_or_else(usage)?))?;
    let max_nnz: usize = args
        .get(1)
        .map_or(Ok(20_000_000), |s| s.parse())
        .context("MAX_NNZ must be a whole number")?;
    for (r, m) in refeature::generated_matrices(&rows, max_nnz) {
        let lens = m.row_lengths();
        let mut sorted = lens.clone();
        sorted.sort_unstable_by(|a, b| b.cmp(a));
        let mut out = serde_json::Map::new();
        out.insert("matrix".into(), r.matrix.clone().into());
        for b in [128usize, 256, 512] {
            let (e, s) = heaviest(&lens, b);
            let (je, js) = heaviest(&sorted, b);
            out.insert(format!("e{b}"), e.into());
            out.insert(format!("s{b}"), s.into());
            out.insert(format!("je{b}"), je.into());
            out.insert(format!("js{b}"), js.into());
        }
        // x's 32-byte sectors (4-byte values) a window of rows reads: the L1's view of x.
        for w in [256usize, 2048, 8192] {
            let mut stamp = vec![0u32; m.ncols / 8 + 1];
            let (mut sum, mut fit_entries) = (0u64, 0u64);
            for (k, start) in (0..m.nrows).step_by(w).enumerate() {
                let (mut distinct, mut entries) = (0u64, 0u64);
                for i in start..(start + w).min(m.nrows) {
                    for &c in m.row(i).0 {
                        let s = &mut stamp[c as usize / 8];
                        if *s != k as u32 + 1 {
                            *s = k as u32 + 1;
                            distinct += 1;
                        }
                        entries += 1;
                    }
                }
                sum += distinct;
                if distinct * 32 <= 256 * 1024 {
                    fit_entries += entries;
                }
            }
            out.insert(format!("xs{w}"), sum.into());
            out.insert(format!("fit{w}"), fit_entries.into());
        }
        out.insert("nnz".into(), m.nnz().into());
        out.insert("ncols".into(), m.ncols.into());
        out.insert("chain".into(), chain(&m, &lens));
        for (name, rows) in [("v8", 8usize), ("v4", 4), ("v16", 16)] {
            out.insert(name.into(), heaviest(&lens, rows).0.into());
        }
        println!("{}", serde_json::Value::Object(out));
    }
    Ok(())
}
