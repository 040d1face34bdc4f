//! `instrument --plan-only` (the planned suites and their estimated cost on a profile's device)
//! and `instrument --base` (keep the models a run does not fit).

use super::common;
use crate::instrument::cost::{estimate, CostRates, Estimate};
use crate::instrument::rowdist::RowLengths;
use crate::instrument::{plan, SuiteConfig};
use crate::model::StatisticalModel;
use crate::profile::Profile;
use crate::Precision;
use anyhow::Context;

/// Print, per precision, the benchmarks of every suite `suite` plans for the device of `like`
/// and their estimated device and host seconds ([`crate::instrument::cost`]); `host_built`:
/// the statistical matrices are built on the host (`--source host`), not on the device.
pub fn print_plan(
    like: &Profile,
    suite: &SuiteConfig,
    precisions: &[Precision],
    budget_s: Option<f64>,
    host_built: bool,
) -> anyhow::Result<()> {
    let r = CostRates {
        host_built,
        ..CostRates::default()
    };
    let mut t = common::table(&[
        "precision",
        "suite",
        "benchmarks",
        "non-zeros",
        "largest",
        "device (est.)",
        "host (est.)",
    ]);
    let mut total = Estimate::default();
    let row = |t: &mut comfy_table::Table, p: Precision, what: &str, e: Estimate, big: u64| {
        t.add_row(vec![
            p.to_string(),
            what.to_string(),
            e.benchmarks.to_string(),
            format!("{:.2e}", e.nnz),
            format!("{big:.1e}"),
            format!("{:.0} s", e.device_s),
            format!("{:.0} s", e.host_s),
        ]);
    };
    for &p in precisions {
        let limits = like
            .precision(p)
            .with_context(|| format!("{} has no {p} section", like.device_name))?
            .limits();
        let a = plan(limits, suite, p)?;
        let e = estimate(&a.points, None, p, &r);
        let big = a.points.iter().map(|q| q.nnz()).max().unwrap_or(0);
        row(&mut t, p, "analytical (constant rows)", e, big);
        total = total + e;
        let Some(stat) = &suite.statistical else {
            continue;
        };
        for &dist in &stat.distributions {
            let planned = stat.plan(limits, dist, p, suite.memory_fraction)?;
            let lengths = RowLengths {
                dist,
                spread: stat.spread,
            };
            let e = estimate(&planned.points, Some(&lengths), p, &r);
            let big = planned.points.iter().map(|q| q.nnz()).max().unwrap_or(0);
            row(&mut t, p, StatisticalModel::name_of(dist), e, big);
            total = total + e;
        }
    }
    println!("Planned on {} (limits of the profile):", like.device_name);
    println!("{t}");
    println!(
        "total: {} benchmarks, {:.2e} non-zeros, ≈ {:.0} s ({:.0} s device, {:.0} s host) — an \
         estimate from assumed rates (src/instrument/cost.rs), not a measurement",
        total.benchmarks,
        total.nnz,
        total.seconds(),
        total.device_s,
        total.host_s
    );
    if let Some(b) = budget_s {
        println!(
            "budget {b:.0} s: {}",
            if total.seconds() <= b {
                "the whole plan fits by the estimate"
            } else {
                "by the estimate the largest statistical benchmarks would be cut"
            }
        );
    }
    Ok(())
}

/// Add to every section of `profile` the models of `base`'s section of the same precision that
/// it does not have (by name) and that are not among `own` (the models the run was to fit, which
/// a budget may have left out: a stale copy from the base would mix two sessions), after its
/// own; `base` must be of the same backend and device. Returns the names kept.
pub fn keep_base_models(
    profile: &mut Profile,
    base: &Profile,
    own: &[String],
) -> anyhow::Result<Vec<String>> {
    base.check_backend(&profile.backend)
        .context("--base was measured with another backend")?;
    if !base.matches_device(&profile.device_name) {
        anyhow::bail!(
            "--base was measured on {}, this run on {}: its models describe another device",
            base.device_name,
            profile.device_name
        );
    }
    let mut kept = Vec::new();
    for s in &mut profile.precisions {
        let Some(b) = base.precisions.iter().find(|b| b.precision == s.precision) else {
            continue;
        };
        for m in &b.models {
            if !own.contains(&m.name) && !s.models.iter().any(|n| n.name == m.name) {
                kept.push(format!("{} {}", s.precision, m.name));
                s.models.push(m.clone());
            }
        }
    }
    if !kept.is_empty() {
        eprintln!("kept from --base: {}", kept.join(", "));
    }
    Ok(kept)
}
