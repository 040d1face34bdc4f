//! Carry a reference GPU's training rows to a target GPU of as many SMs with the bandwidth
//! transfer (`ours-bw`, [`sparsecast::learn::cross_bw`]), for an experiment: do another GPU's
//! stacks, re-timed, help the target's model where the target lacks measurements?
//!
//! ```sh
//! cargo run --release --example transfer_rows -- profiles/h200.json.gz profiles/h100.json.gz \
//!   OUT.jsonl.gz TARGET_TABLE [REF_TABLE …]
//! ```
//!
//! Every row of the `REF_TABLE`s whose matrix is in no row of `TARGET_TABLE` (whose device
//! string the new rows take) is written to `OUT` with each measured time `t` replaced by
//! `MemoryPair::transfer(touched_bytes, t)` — the reference's DRAM seconds re-timed at the
//! target's bandwidth and L2 size (0.9 of the change), for every configuration alike (no model
//! enters, so nothing the target's folds hold out leaks into the labels). A configuration whose
//! bytes are unknown is dropped from the row.
use sparsecast::backend::KernelConfig;
use sparsecast::corpus::table::{self, TableRow};
use sparsecast::learn::cross_bw::{touched_bytes, MemoryPair};
use sparsecast::learn::own::VERSION;
use sparsecast::profile::Profile;
use sparsecast::Precision;
use std::collections::HashSet;
use std::path::Path;

fn main() -> sparsecast::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [rp, tp, out, tar, refs @ ..] = args.as_slice() else {
        eprintln!("usage: transfer_rows REF_PROFILE TARGET_PROFILE OUT TARGET_TABLE REF_TABLE…");
        std::process::exit(2);
    };
    let (rp, tp) = (Profile::load(Path::new(rp))?, Profile::load(Path::new(tp))?);
    let target = table::read(Path::new(tar))?;
    let device = target
        .first()
        .map(|r| r.device.clone())
        .ok_or_else(|| sparsecast::Error::Invalid("empty target table".into()))?;
    let known: HashSet<&str> = target.iter().map(|r| r.matrix.as_str()).collect();
    // The two memories of each precision's bounds, once.
    let pair = |p: Precision| -> sparsecast::Result<MemoryPair> {
        let (a, b) = (rp.precision(p)?, tp.precision(p)?);
        MemoryPair::between(
            (&rp.device_name, a.bounds.as_ref()),
            (&tp.device_name, b.bounds.as_ref()),
        )
        .ok_or_else(|| sparsecast::Error::Invalid("no memory pair".into()))
    };
    let pairs = [pair(Precision::F32)?, pair(Precision::F64)?];
    let mut rows: Vec<TableRow> = Vec::new();
    let (mut kept, mut dropped, mut skipped) = (0usize, 0usize, 0usize);
    for path in refs {
        for mut r in table::read(Path::new(path))? {
            if known.contains(r.matrix.as_str()) {
                skipped += 1;
                continue;
            }
            let memory = pairs[usize::from(r.precision == Precision::F64)];
            let vb = r.precision.bytes() as u64;
            let TableRow {
                features, times, ..
            } = &mut r;
            times.retain_mut(|t| {
                let Some(ts) = t.median_s else {
                    return true; // not measured: kept as it was
                };
                let bytes = KernelConfig::parse_label(&t.config)
                    .ok()
                    .and_then(|c| touched_bytes(features, &c, vb, VERSION));
                match bytes {
                    Some(by) => {
                        let s = memory.transfer(by, ts) / ts;
                        t.median_s = Some(ts * s);
                        t.warm_mean_s = t.warm_mean_s.map(|w| w * s);
                        kept += 1;
                        true
                    }
                    None => {
                        dropped += 1;
                        false
                    }
                }
            });
            r.device = device.clone();
            rows.push(r);
        }
    }
    table::write_gz(Path::new(out), &rows)?;
    eprintln!(
        "{} rows written ({} times transferred, {} dropped; {} rows of matrices the target measured skipped)",
        rows.len(),
        kept,
        dropped,
        skipped
    );
    Ok(())
}
