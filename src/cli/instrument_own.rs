//! `instrument --cross-from REFERENCE`, our model's half: rebuild the calibration matrices the
//! reference's `sparsecast` models carry, measure every configuration of them on this device
//! (`collect`'s measurement path and protocol) and add the transferred model
//! ([`OwnModel::cross_fit`], `crate::learn::cross_own`) to the target profile.

use crate::backend::{BackendKind, KernelConfig};
use crate::corpus::collect::{collect, corpus_protocol, CollectOptions};
use crate::corpus::{Build, Item, TableRow};
use crate::learn::cross_bw::MemoryPair;
use crate::learn::cross_own::{with_times, CalibrationRow};
use crate::learn::own::OwnModel;
use crate::model::{NamedModel, StoredModel};
use crate::profile::{PrecisionProfile, Profile};
use anyhow::Context;
use indicatif::ProgressBar;
use std::collections::BTreeSet;
use std::time::Instant;

/// The reference's `sparsecast` model of each precision that carries calibration matrices.
fn calibrated(reference: &Profile) -> Vec<(&NamedModel, &OwnModel, &[CalibrationRow])> {
    reference
        .precisions
        .iter()
        .flat_map(|s| &s.models)
        .filter_map(|m| match &m.model {
            StoredModel::Sparsecast(o) => Some((m, o, o.calibration.as_deref()?)),
            _ => None,
        })
        .filter(|(_, _, c)| !c.is_empty())
        .collect()
}

/// Measure the reference's calibration matrices on `backend` and add the transferred
/// `sparsecast` model to each of `sections` whose precision the reference has one of. Returns
/// the summary line (`None` when the reference carries no calibration matrices).
pub fn transfer(
    reference: &Profile,
    sections: &mut [PrecisionProfile],
    backend: BackendKind,
    sms: Option<u32>,
    pb: &ProgressBar,
) -> anyhow::Result<Option<String>> {
    let start = Instant::now();
    let models: Vec<_> = calibrated(reference)
        .into_iter()
        .filter(|(_, o, _)| sections.iter().any(|s| s.precision == o.precision))
        .collect();
    if models.is_empty() {
        return Ok(None);
    }
    let mut items: Vec<Item> = Vec::new();
    let mut labels = BTreeSet::new();
    for (_, _, cal) in &models {
        for c in cal.iter() {
            labels.extend(c.times.keys().cloned());
            if !items.iter().any(|i| i.id == c.matrix) {
                items.push(Item {
                    id: c.matrix.clone(),
                    family: c.matrix.clone(),
                    build: Build::Spec(c.spec.clone()),
                    est_nnz: c.nnz,
                });
            }
        }
    }
    let configs: Vec<KernelConfig> = labels
        .iter()
        .filter_map(|l| KernelConfig::parse_label(l).ok())
        .filter(|c| backend == BackendKind::Cuda || !c.variant.is_vendor())
        .collect();
    let dir = tempfile::tempdir().context("a temporary directory for the calibration table")?;
    let table = dir.path().join("calibration.jsonl");
    let opts = CollectOptions {
        backend,
        out: table.clone(),
        precisions: models.iter().map(|(_, o, _)| o.precision).collect(),
        protocol: corpus_protocol(),
        configs,
        seed: 42,
        budget_s: None,
        sms,
        max_blowup: Some(16.0),
        share_arrays: true,
        // The sequence the reference's model predicts, which the transferred model keeps.
        hyb_launch: models.first().map(|(_, o, _)| o.hyb_launch),
    };
    pb.inc_length(items.len() as u64);
    pb.set_message("calibration matrices of the sparsecast model");
    let outcome = collect(&opts, &items, |_, _| pb.inc(1))?;
    if let Some((id, why)) = outcome.failed.first() {
        anyhow::bail!("calibration matrix {id} could not be built: {why}");
    }
    let rows = crate::corpus::table::read(&table)?;
    for (named, own, cal) in models {
        let p = own.precision;
        let tar: Vec<TableRow> = rows.iter().filter(|r| r.precision == p).cloned().collect();
        let refs = with_times(&tar, cal, &reference.device_name);
        let (r, t): (Vec<&TableRow>, Vec<&TableRow>) =
            (refs.iter().collect(), tar.iter().collect());
        let here = tar.first().map_or("", |r| r.device.as_str());
        let memory = MemoryPair::between(
            (
                &reference.device_name,
                reference.precision(p).ok().and_then(|s| s.bounds.as_ref()),
            ),
            (
                here,
                sections
                    .iter()
                    .find(|s| s.precision == p)
                    .and_then(|s| s.bounds.as_ref()),
            ),
        );
        let moved = own.cross_fit(&r, &t, memory);
        moved
            .validate()
            .with_context(|| format!("transferring the sparsecast model ({p})"))?;
        let mut m = NamedModel::new("sparsecast", StoredModel::Sparsecast(moved));
        m.trained_families = named.trained_families.clone();
        if let Some(s) = sections.iter_mut().find(|s| s.precision == p) {
            s.models.retain(|x| x.name != "sparsecast");
            s.models.push(m);
        }
    }
    Ok(Some(format!(
        "sparsecast: {} calibration matrices × {} configurations measured in {:.1} s, the \
         reference's model transferred",
        items.len(),
        labels.len(),
        start.elapsed().as_secs_f64()
    )))
}
