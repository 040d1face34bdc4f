//! From training-table rows to per-configuration training sets, and the family-grouped
//! cross-validation split.
//!
//! A training *example* of configuration `c` is one table row (a matrix in one precision) whose
//! entry for `c` has status `ok`; its target is `ln(median_s)` (the learned models predict the
//! median over the timed batches, [`Statistic::Median`]). Rows of the other precision, and
//! entries that were refused, skipped or failed, are left out.
//!
//! **Folds** ([`fold_of`]): the fold of a row is a hash (64-bit FNV-1a) of its *family* name modulo
//! K, so a real matrix and its Kronecker expansions are always on the same side, and the split
//! is the same on every machine and in every run.

use crate::backend::KernelConfig;
use crate::corpus::table::TableRow;
use crate::instrument::Statistic;
use crate::{Error, Precision, Result};

/// The statistic every learned model predicts: the median over the timed batches.
pub const STATISTIC: Statistic = Statistic::Median;

/// The training examples of one configuration.
#[derive(Clone, Debug)]
pub struct ConfigSet<'a> {
    /// The configuration.
    pub config: KernelConfig,
    /// Its label in the table.
    pub label: String,
    /// The rows measured `ok` in it, with `ln(median seconds)`.
    pub examples: Vec<(&'a TableRow, f64)>,
}

/// The per-configuration training sets of `precision` in `rows`, in display order (our kernels
/// in [`crate::backend::Variant::ours`] order, then cuSPARSE, each by label). A label this build
/// cannot parse is an error naming it.
pub fn per_config<'a>(rows: &[&'a TableRow], precision: Precision) -> Result<Vec<ConfigSet<'a>>> {
    let mut sets: Vec<ConfigSet<'a>> = Vec::new();
    for row in rows.iter().filter(|r| r.precision == precision) {
        for t in &row.times {
            let Some(s) = t.time().filter(|s| s.is_finite() && *s > 0.0) else {
                continue;
            };
            let i = match sets.iter().position(|c| c.label == t.config) {
                Some(i) => i,
                None => {
                    let config = KernelConfig::parse_label(&t.config).map_err(|e| {
                        Error::Invalid(format!("{}: configuration of the table: {e}", row.matrix))
                    })?;
                    sets.push(ConfigSet {
                        config,
                        label: t.config.clone(),
                        examples: Vec::new(),
                    });
                    sets.len() - 1
                }
            };
            sets[i].examples.push((*row, s.ln()));
        }
    }
    sets.sort_by_key(|c| display_key(&c.config, &c.label));
    Ok(sets)
}

/// Sort key of a configuration in every table: the variant's display position, then the label.
pub fn display_key(cfg: &KernelConfig, label: &str) -> (usize, String) {
    (
        crate::evaluate::stats::config_order(&cfg.variant.name()).0,
        label.to_string(),
    )
}

/// 64-bit FNV-1a of `s`.
fn fnv1a(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The cross-validation fold (`0..k`) of a family: a hash of its name modulo `k` (`k = 0` is
/// treated as 1).
pub fn fold_of(family: &str, k: usize) -> usize {
    (fnv1a(family) % k.max(1) as u64) as usize
}

/// The rows of fold `fold` (test) and the others (train).
pub fn split<'a>(
    rows: &[&'a TableRow],
    k: usize,
    fold: usize,
) -> (Vec<&'a TableRow>, Vec<&'a TableRow>) {
    rows.iter().partition(|r| fold_of(&r.family, k) != fold)
}

/// Which set a matrix id belongs to: `kron` (`kron/…`), `gen` (`gen/…`) or `files`.
pub fn matrix_set(matrix: &str) -> &'static str {
    if matrix.starts_with("kron/") {
        "kron"
    } else if matrix.starts_with("gen/") {
        "gen"
    } else {
        "files"
    }
}
