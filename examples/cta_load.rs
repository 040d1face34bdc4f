//! Analysis (session 36): the heaviest thread block of the row-per-thread kernels.
//!
//! For every generated matrix of a table (up to MAX_NNZ), rebuild it and print one JSON line:
//! for blocks of 128, 256 and 512 consecutive rows (one row per thread), the most entries and
//! the most summed warp steps any block holds; the same with the rows sorted by length
//! (JAD's order); for warp-per-row blocks (8 rows), the most entries; and per window of 256,
//! 2,048 and 8,192 rows, the distinct 32-byte sectors of a 4-byte x it reads (summed: `xsW`) and
//! the entries of the windows whose sectors fit 256 KB, an SM's L1 (`fitW`).
//!
//! ```sh
//! cargo run --release --example cta_load -- TABLE.jsonl.gz [MAX_NNZ] > out.jsonl
//! ```

use anyhow::Context;
use sparsecast::corpus::table;
use sparsecast::evaluate::record::SourceInfo;
use std::collections::BTreeSet;
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

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = || anyhow::anyhow!("usage: cta_load TABLE.jsonl.gz [MAX_NNZ]");
    let rows = table::read(Path::new(args.first().ok_or_else(usage)?))?;
    let max_nnz: usize = args
        .get(1)
        .map_or(Ok(20_000_000), |s| s.parse())
        .context("MAX_NNZ must be a whole number")?;
    let mut seen = BTreeSet::new();
    for r in &rows {
        if !seen.insert(r.matrix.clone()) || r.features.nnz > max_nnz {
            continue;
        }
        let SourceInfo::Generated(spec) = &r.source else {
            continue;
        };
        let m = match spec.generate_with_limit(sparsecast::formats::default_max_bytes()) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("{}: {e}", r.matrix);
                continue;
            }
        };
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
        for (name, rows) in [("v8", 8usize), ("v4", 4), ("v16", 16)] {
            out.insert(name.into(), heaviest(&lens, rows).0.into());
        }
        println!("{}", serde_json::Value::Object(out));
    }
    Ok(())
}
