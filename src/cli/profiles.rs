//! `sparsecast profiles`: the device profiles built into this binary.

use super::common;

/// List the device profiles built into this binary (one per measured GPU).
///
/// `predict`, `optimize` and `evaluate` use the one whose device matches the GPU found, or the
/// one named by --gpu, when no --profile is given.
///
/// Example:
///   sparsecast profiles
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {}

pub fn run(_: Args) -> anyhow::Result<()> {
    let all = crate::profile::Profile::load_embedded_all()?;
    let mut t = common::table(&[
        "profile",
        "device",
        "schema",
        "precisions",
        "models",
        "bounds",
    ]);
    for (name, p) in &all {
        let section = p.precisions.first();
        t.add_row(vec![
            name.to_string(),
            p.device_name.clone(),
            p.schema_version.to_string(),
            p.precisions
                .iter()
                .map(|s| s.precision().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            section.map_or(String::new(), |s| {
                s.models
                    .iter()
                    .map(|m| m.name.clone())
                    .collect::<Vec<_>>()
                    .join(", ")
            }),
            match section.and_then(|s| s.bounds.as_ref()) {
                Some(b) => format!(
                    "floor {}, DRAM {:.0} GB/s, L2 {:.0} GB/s",
                    common::fmt_seconds(b.launch_floor_s),
                    b.dram_gbs,
                    b.l2_gbs
                ),
                None => "not measured (re-instrument)".into(),
            },
        ]);
    }
    println!("{t}");
    Ok(())
}
