//! Analysis (session 36): does a stack's time follow the sum of its parts' predicted times?
//!
//! For every stack of a measured table, rebuild the matrix, cut it at its parts' boundaries
//! (rounded to a warp of rows) and into 8 equal row strips, and print one JSON line per
//! (matrix, precision, configuration): the measured time, the model's prediction for the whole
//! matrix, and its predictions for each part and each strip.
//!
//! ```sh
//! cargo run --release --example strip_parts -- TABLE.jsonl.gz PROFILE.json.gz [MAX_NNZ] > out.jsonl
//! ```

use anyhow::Context;
use sparsecast::corpus::table;
use sparsecast::evaluate::record::SourceInfo;
use sparsecast::features::StripScans;
use sparsecast::matrix::generate::GeneratorSpec;
use sparsecast::model::registry::StoredModel;
use sparsecast::profile::Profile;
use std::collections::BTreeMap;
use std::path::Path;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = || anyhow::anyhow!("usage: strip_parts TABLE.jsonl.gz PROFILE.json.gz [MAX_NNZ]");
    let rows = table::read(Path::new(args.first().ok_or_else(usage)?))?;
    let profile = Profile::load(Path::new(args.get(1).ok_or_else(usage)?))?;
    let max_nnz: usize = args
        .get(2)
        .map_or(Ok(20_000_000), |s| s.parse())
        .context("MAX_NNZ must be a whole number")?;
    let mut by_matrix: BTreeMap<&str, Vec<&table::TableRow>> = BTreeMap::new();
    for r in &rows {
        by_matrix.entry(&r.matrix).or_default().push(r);
    }
    for (id, rs) in by_matrix {
        let SourceInfo::Generated(spec @ GeneratorSpec::Stack { parts }) = &rs[0].source else {
            continue;
        };
        if rs[0].features.nnz > max_nnz {
            continue;
        }
        let m = match spec.generate_with_limit(sparsecast::formats::default_max_bytes()) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("{id}: {e}");
                continue;
            }
        };
        let n = m.nrows;
        let mut cuts = vec![0usize];
        let mut at = 0usize;
        for p in &parts[..parts.len() - 1] {
            at += p.dims().map_or(0, |d| d.0);
            let c = ((at + 16) / 32) * 32;
            if c > *cuts.last().unwrap() && c < n {
                cuts.push(c);
            }
        }
        cuts.push(n);
        let mut ucuts: Vec<usize> = (0..8).map(|k| (k * n / 8) / 32 * 32).collect();
        ucuts.dedup();
        ucuts.push(n);
        let ps = StripScans::new(&m, &cuts)?;
        let us = StripScans::new(&m, &ucuts)?;
        let pf: Vec<_> = (0..ps.len()).map(|i| ps.block(i, i)).collect();
        let uf: Vec<_> = (0..us.len()).map(|i| us.block(i, i)).collect();
        for r in rs {
            let pp = profile.precision(r.precision)?;
            let Some(own) = pp.models.iter().find_map(|nm| match &nm.model {
                StoredModel::Sparsecast(o) if nm.name == "sparsecast" => Some(o),
                _ => None,
            }) else {
                continue;
            };
            for t in &r.times {
                let Some(meas) = t.time() else { continue };
                let Ok(whole) = own.predict_label(&r.features, &t.config) else {
                    continue;
                };
                let part: Vec<f64> = pf
                    .iter()
                    .map(|f| own.predict_label(f, &t.config).unwrap_or(f64::NAN))
                    .collect();
                let strip: Vec<f64> = uf
                    .iter()
                    .map(|f| own.predict_label(f, &t.config).unwrap_or(f64::NAN))
                    .collect();
                let line = serde_json::json!({
                    "matrix": id, "precision": format!("{:?}", r.precision), "config": t.config,
                    "measured": meas, "whole": whole, "parts": part, "strips": strip,
                    "part_rows": cuts.windows(2).map(|w| w[1]-w[0]).collect::<Vec<_>>(),
                    "part_nnz": pf.iter().map(|f| f.nnz).collect::<Vec<_>>(),
                    "floor": own.device.floor_s, "nnz": r.features.nnz,
                });
                println!("{line}");
            }
        }
    }
    Ok(())
}
