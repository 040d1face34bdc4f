//! Analysis (session 78): the longest chain our SELL-C-σ kernel really walks, against the one the
//! `sparsecast` model assumes (`src/learn/own/base.rs`, `sell_chain`: the longest row, at most the
//! split threshold).
//!
//! The kernel (`kernels/sell.cu`) splits slices wider than the threshold over warps in chunks and
//! walks every other slice with one thread per row: its critical path is the widest slice left
//! whole, or a chunk. Where a part's rows sit just below the threshold (a banded part's edge rows,
//! 120–150 entries against a threshold of 150), the default C = 32 leaves them whole while
//! C = 512 puts them in a slice with the full-width rows and splits it: on the H200 the same
//! stack ran 27.5 µs at C = 32 and 9.7 µs at C = 512 (f64; docs/ACCURACY.md, session 78).
//!
//! For every matrix of a measured table (at most MAX_NNZ non-zeros; files and Kronecker
//! expansions found in `MATS`, below), one JSON line per counted (C, σ): the slices' split as
//! the CUDA backend plans it for 132 SMs × 64 warps (the model's `RESIDENT_WARPS`), the widest
//! slice left whole (`narrow_max`), the chunk, the threshold, and the model's assumed chain
//! (`min(max_nnz, threshold)`).
//!
//! Also `band_groups`: the lane groups of the slices the skew test leaves whole though wider than
//! two chunks (what `Rule::band` splits where they are few). A generator spec (a `.json` file as
//! `sparsecast generate spec @FILE` reads) in place of the table reports that one matrix.
//!
//! `MATS=DIR` finds the files and the bases of Kronecker expansions
//! (`../shared/matrices/suitesparse`). With `RULE` set (a `SPARSECAST_SELL_SPLIT` value, e.g.
//! `wide=5`), each line also gives the split under that rule (`rule_split_above`, `rule_units`,
//! `rule_narrow_max`) and whether it differs from the shipped one (`rule_changes`): which matrices a new kernel
//! rule would need re-timed.
//!
//! ```sh
//! cargo run --release --example sell_chain -- TABLE.jsonl.gz [MAX_NNZ] > chains.jsonl
//! RULE=wide=5 cargo run --release --example sell_chain -- TABLE.jsonl.gz > chains.jsonl
//! cargo run --release --example sell_chain -- docs/h200/sell-probe-s78/s39-m00700.json
//! ```

use anyhow::Context;
use sparsecast::backend::cuda::sell_split::{plan, threshold, total_lane_groups, Rule};
use sparsecast::corpus::{refeature::rebuild, table};
use sparsecast::features::access::sell_params_counted;
use sparsecast::matrix::generate::GeneratorSpec;
use sparsecast::Csr;
use std::path::Path;

/// The model's resident warps (132 SMs × 64 warps: the H200 and the H100).
const RESIDENT_WARPS: u32 = 132 * 64;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let other = match std::env::var("RULE") {
        Ok(v) => Some(Rule::parse(&v)?),
        Err(_) => None,
    };
    let usage = || anyhow::anyhow!("usage: sell_chain TABLE.jsonl.gz|SPEC.json [MAX_NNZ]");
    let first = args.first().ok_or_else(usage)?;
    if first.ends_with(".json") {
        let spec: GeneratorSpec = serde_json::from_str(&std::fs::read_to_string(first)?)
            .with_context(|| format!("{first}: not a generator spec"))?;
        return report(first, &spec.generate()?, other);
    }
    let rows = table::read(Path::new(first))?;
    let max_nnz: usize = args
        .get(1)
        .map_or(Ok(20_000_000), |s| s.parse())
        .context("MAX_NNZ must be a whole number")?;
    let mats = std::env::var_os("MATS").map(std::path::PathBuf::from);
    let mut seen = std::collections::BTreeSet::new();
    for row in rows.iter().filter(|r| r.features.nnz <= max_nnz) {
        if !seen.insert(row.matrix.as_str()) {
            continue;
        }
        match rebuild(&row.source, mats.as_deref()) {
            Ok(m) => report(&row.matrix, &m, other)?,
            Err(e) => eprintln!("{}: {e}", row.matrix),
        }
    }
    Ok(())
}

/// One JSON line per counted (C, σ) for matrix `name`; `other`: a rule to compare the split with.
fn report(name: &str, m: &Csr<f64>, other: Option<Rule>) -> anyhow::Result<()> {
    let lens = m.row_lengths();
    let max_len = lens.iter().copied().max().unwrap_or(0);
    for p in sell_params_counted() {
        let (c, sigma) = (p.c, p.sigma);
        let mut l = lens.clone();
        if sigma > 1 {
            l.chunks_mut(sigma)
                .for_each(|w| w.sort_unstable_by(|a, b| b.cmp(a)));
        }
        let widths: Vec<u32> = l
            .chunks(c)
            .map(|s| s.iter().copied().max().unwrap_or(0) as u32)
            .collect();
        let split = plan(&widths, c, m.nrows, RESIDENT_WARPS, Rule::default())?;
        let groups = total_lane_groups(m.nrows, c);
        let (chunk, above) = (split.chunk, split.split_above);
        // The model's work: `slots / 32`, which counts a short last slice as a full one.
        let slots: u64 = widths.iter().map(|&w| w as u64 * c as u64).sum();
        let (_, model_above) = threshold(slots / 32, groups, RESIDENT_WARPS, Rule::SESSION_41);
        let narrow_max = widths.iter().copied().filter(|&w| w <= above).max();
        let lane_groups = |s: usize| m.nrows.saturating_sub(s * c).min(c).div_ceil(32) as u64;
        let band_groups: u64 = (0..widths.len())
            .filter(|&s| widths[s] as u64 > 2 * chunk && widths[s] <= above)
            .map(lane_groups)
            .sum();
        let model_chain = (max_len as u64).min(model_above as u64);
        let mut line = serde_json::json!({
            "matrix": name,
            "c": c,
            "sigma": sigma,
            "nrows": m.nrows,
            "max_nnz": max_len,
            "chunk": chunk,
            "split_above": split.split_above,
            "model_split_above": model_above,
            "units": split.units(),
            "narrow_max": narrow_max.unwrap_or(0),
            "band_groups": band_groups,
            "model_chain": model_chain,
        });
        if let Some(r) = other {
            let o = plan(&widths, c, m.nrows, RESIDENT_WARPS, r)?;
            line["rule_split_above"] = o.split_above.into();
            line["rule_units"] = o.units().into();
            let whole = widths.iter().copied().filter(|&w| w <= o.split_above).max();
            line["rule_narrow_max"] = whole.unwrap_or(0).into();
            line["rule_changes"] = (o.groups != split.groups).into();
        }
        println!("{line}");
    }
    Ok(())
}
