//! `sparsecast crossarch`: the offline cross-architecture evaluation (003 against ours) on two
//! training tables of the same matrices measured on two GPUs.

use crate::corpus::table;
use crate::evaluate::crossarch::{self, Outcome, Point, CROSS_CONFIGS, METHODS};
use crate::profile::Profile;
use crate::Precision;
use std::fmt::Write as _;
use std::path::PathBuf;

/// Predict one GPU from another, offline, and score it on the target's measurements.
///
/// Reads the training tables of a reference and a target GPU (the same matrices measured on
/// both, `sparsecast collect`) and their profiles (for 003's benchmark matrices, a subset of the
/// analytical instrument's suite). For every matrix measured on both — SuiteSparse files and
/// generated matrices of ≥ 10⁶ non-zeros — it predicts the target's time of every configuration
/// and reports the difference rate |predicted − measured| / measured (mean and median):
///
///   003       Guo & Wang's cross-architecture model: the reference's measured time carried
///             over with P_Tar.Ref and T_Init from 17 benchmark matrices (CSR, ELL, COO, HYB)
///   same      the reference's measured time unchanged
///   ours-ref  the reference's measured time × the same configuration's target / reference
///             ratio on the 3 of 17 calibration matrices nearest in bytes (measured on both)
///   ours-ratio the reference's measured time × our model's target / reference ratio
///   ours-tput as ours-ref, the 3 nearest in the throughput achieved on the reference
///             (bytes / reference time)
///   ours-mix  the geometric mean of ours-tput and ours-ratio
///   ours-bw   the reference's measured time with its DRAM seconds re-timed at the target's
///             bandwidth and L2 size (both profiles' bounds; GPUs of as many SMs only), 0.9 of
///             the change (the share a kernel shows, chosen on the training tables)
///   ours-measured  ours-bw for a streaming kernel (CSR mappings, ELL, SELL, DIA, ELL-BRO), the
///             geometric mean of ours-bw and ours-mix for the others: what
///             `predict --measured-on` predicts
///   ours-dev  our model trained on the reference's table, device parameters refitted on 17
///             matrices measured on the target (floor, bandwidth, L2)
///   ours      ours-dev plus one scalar per format family refitted on the same 17 matrices
///
/// Our model is trained per family-grouped fold on the reference (no evaluated matrix or its
/// family trained on); the 17 target matrices and their families are left out of every figure.
/// Both directions are evaluated unless --one-way.
///
/// Example:
///   sparsecast crossarch --reference data/corpus/h200.jsonl.gz --target data/corpus/h100.jsonl.gz \
///     --ref-profile profiles/h200.json.gz --target-profile profiles/h100.json.gz --report cross.md
///   sparsecast crossarch --reference data/corpus/h200{,-s2,-s3,-s4}.jsonl.gz \
///     --target data/corpus/h100{,-s2,-s3,-s4}.jsonl.gz \
///     --ref-profile profiles/h200.json.gz --target-profile profiles/h100.json.gz --report cross.md
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct Args {
    /// The reference GPU's training table(s).
    #[arg(long, num_args = 1..)]
    reference: Vec<PathBuf>,
    /// The target GPU's training table(s): the matrices measured on both are compared.
    #[arg(long, num_args = 1..)]
    target: Vec<PathBuf>,
    /// The reference GPU's profile (its benchmark measurements).
    #[arg(long)]
    ref_profile: PathBuf,
    /// The target GPU's profile.
    #[arg(long)]
    target_profile: PathBuf,
    /// Family-grouped folds for our model.
    #[arg(long, default_value_t = 5)]
    folds: usize,
    /// Only reference → target.
    #[arg(long)]
    one_way: bool,
    /// Write the Markdown report here (default: standard output).
    #[arg(long)]
    report: Option<PathBuf>,
    /// Also write every prediction here (JSON Lines: direction, matrix, configuration, times;
    /// gzip-compressed if the name ends in `.gz`).
    #[arg(long)]
    points: Option<PathBuf>,
}

/// Run the evaluation.
pub fn run(a: Args) -> anyhow::Result<()> {
    let rows = (table::read_all(&a.reference)?, table::read_all(&a.target)?);
    let profiles = (
        Profile::load(&a.ref_profile)?,
        Profile::load(&a.target_profile)?,
    );
    let mut dirs = vec![(&rows.0, &profiles.0, &rows.1, &profiles.1)];
    if !a.one_way {
        dirs.push((&rows.1, &profiles.1, &rows.0, &profiles.0));
    }
    let bar = super::common::spinner("cross-architecture evaluation");
    let mut md = String::from("# Cross-architecture prediction (offline)\n\n");
    let mut lines = String::new();
    for (rr, rp, tr, tp) in dirs {
        let tick = |m: String| bar.set_message(m);
        let out = crossarch::run((rr, rp), (tr, tp), a.folds, &tick)?;
        md.push_str(&section(&out));
        for p in &out.points {
            let mut v = serde_json::to_value(p)?;
            v["direction"] = format!("{} -> {}", out.devices.0, out.devices.1).into();
            lines.push_str(&v.to_string());
            lines.push('\n');
        }
    }
    bar.finish_and_clear();
    if let Some(p) = &a.points {
        crate::util::write_data(p, |w| w.write_all(lines.as_bytes()))?;
    }
    match &a.report {
        Some(p) => crate::util::write_atomic(p, |w| w.write_all(md.as_bytes()))?,
        None => print!("{md}"),
    }
    Ok(())
}

/// `mean / median` in percent, or `–`.
fn cell(r: Option<(f64, f64, usize)>) -> String {
    r.map_or("–".into(), |(m, d, _)| {
        format!("{:.1} / {:.1}", 100.0 * m, 100.0 * d)
    })
}

/// One direction's tables.
fn section(o: &Outcome) -> String {
    let mut s = format!("## {} → {}\n\n", o.devices.0, o.devices.1);
    let _ = writeln!(
        s,
        "003: {} benchmark matrices measured on the target. Calibration of ours: {} matrices \
         measured on the target, per precision (left out with their families).\n",
        o.benchmarks,
        o.calibration.first().map_or(0, |c| c.1.len())
    );
    for precision in [Precision::F32, Precision::F64] {
        for set in ["files", "large"] {
            let pts: Vec<&Point> = o
                .points
                .iter()
                .filter(|p| p.precision == precision && p.set == set)
                .collect();
            if pts.is_empty() {
                continue;
            }
            let what = if set == "files" {
                "SuiteSparse files"
            } else {
                "generated, ≥ 10⁶ non-zeros"
            };
            let _ = writeln!(
                s,
                "### {precision}, {what} — difference rate, mean / median %\n"
            );
            let _ = writeln!(
                s,
                "| configuration | predictions | {} |",
                METHODS.join(" | ")
            );
            let _ = writeln!(s, "|---|---:|{}", "---:|".repeat(METHODS.len()));
            let mut groups: Vec<(String, Vec<&Point>)> = CROSS_CONFIGS
                .iter()
                .map(|c| {
                    (
                        c.to_string(),
                        pts.iter().copied().filter(|p| p.config == *c).collect(),
                    )
                })
                .collect();
            groups.push((
                "003's nine".into(),
                pts.iter()
                    .copied()
                    .filter(|p| CROSS_CONFIGS.contains(&p.config.as_str()))
                    .collect(),
            ));
            groups.push(("every configuration".into(), pts.clone()));
            for (name, g) in groups {
                let n = g.len();
                let cells: Vec<String> = METHODS
                    .iter()
                    .map(|m| cell(crossarch::rates(g.iter().copied(), m)))
                    .collect();
                let _ = writeln!(s, "| {name} | {n} | {} |", cells.join(" | "));
            }
            let share = |method: &str, sigma: &str| {
                crossarch::coverage(pts.iter().copied(), method, sigma)
                    .map_or("–".into(), |(c, _)| format!("{:.0} %", 100.0 * c))
            };
            let _ = writeln!(
                s,
                "\nUncertainty (each sigma is the 68th percentile of held-out |ln error|s, so a \
                 calibrated one covers ≈ 68 %; ≈ 50 % with profiles trained before session 32, \
                 whose sigma was the median): `ours` within its stated sigma {}, within the \
                 reference model's native sigma {}; `ours-measured` within its stated sigma {}.",
                share("ours", "ours"),
                share("ours", "native"),
                share("ours-measured", "ours-measured"),
            );
            let mut by_size = Vec::new();
            for d in 3..12 {
                let g = pts.iter().copied().filter(|p| {
                    p.footprint
                        .is_some_and(|b| (b.max(1) as f64).log10().floor() as i32 == d)
                });
                if let Some((c, n)) = crossarch::coverage(g, "ours-measured", "ours-measured") {
                    by_size.push(format!("10^{d}: {:.0} % of {n}", 100.0 * c));
                }
            }
            if !by_size.is_empty() {
                let _ = writeln!(
                    s,
                    "\n`ours-measured` within its stated sigma by footprint (bytes): {}.",
                    by_size.join(", ")
                );
            }
            s.push('\n');
        }
    }
    s
}
