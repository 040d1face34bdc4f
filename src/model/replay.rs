//! Offline accuracy: re-predict matrices whose times were already measured, with any model, and
//! compare with the predictions recorded at measuring time.
//!
//! `sparsecast predict --measure --json` records, per matrix and precision, the matrix size, every
//! modeled kernel's prediction, the note that says what the prediction used (the row-length mode,
//! the longest row, the HYB split) and the measured time. Those notes hold every number of a
//! [`Shape`], so a model fitted later (a fix of the analytical model, a model of another family)
//! can be scored on the same measurements without a GPU. [`replay`] does that; the statistics are
//! the papers' difference rate per kernel and the ranking quality of 002 (the share of matrices
//! whose recommended kernel is within 5 % of the fastest measured one, among the kernels both
//! the recording and the model cover).

use super::accuracy::difference_rate;
use super::{Model, Shape};
use crate::backend::Variant;
use crate::formats::FormatParams;
use crate::{Error, Precision, Result};
use serde::Deserialize;
use std::collections::BTreeMap;

/// One kernel of a recorded matrix.
#[derive(Clone, Debug, Deserialize)]
struct RecordedKernel {
    variant: String,
    seconds: Option<f64>,
    note: String,
    measured_seconds: Option<f64>,
}

/// One recorded matrix in one precision.
#[derive(Clone, Debug, Deserialize)]
struct RecordedMatrix {
    input: String,
    precision: Precision,
    nrows: u64,
    ncols: u64,
    nnz: u64,
    kernels: Vec<RecordedKernel>,
}

#[derive(Clone, Debug, Deserialize)]
struct RecordedReport {
    results: Vec<RecordedMatrix>,
}

/// A measured matrix: its summary (where the notes give it) and, per kernel, the recorded
/// prediction and the measured time.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// File or spec name.
    pub input: String,
    /// Precision.
    pub precision: Precision,
    /// The summary, if the notes held every number of it.
    pub shape: Option<Shape>,
    /// `(kernel, recorded prediction, measured seconds)` for every measured kernel.
    pub kernels: Vec<(Variant, Option<f64>, f64)>,
}

/// Read a `predict --measure --json` report (the first JSON value of the file; anything after it
/// is ignored, such as a log line a remote runner appended).
pub fn read_report(name: &str, text: &str) -> Result<Vec<Recorded>> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<RecordedReport>();
    let report = stream
        .next()
        .ok_or_else(|| Error::parse(name, 1, "empty file"))?
        .map_err(|e| Error::parse(name, e.line() as u64, e.to_string()))?;
    let mut out = Vec::new();
    for r in report.results {
        let mut kernels = Vec::new();
        for k in &r.kernels {
            let Some(m) = k.measured_seconds else {
                continue;
            };
            let v = Variant::parse(&k.variant)
                .map_err(|e| Error::parse(name, 1, format!("{}: {e}", r.input)))?;
            kernels.push((v, k.seconds, m));
        }
        out.push(Recorded {
            shape: shape_from_notes(&r),
            input: r.input,
            precision: r.precision,
            kernels,
        });
    }
    Ok(out)
}

/// The number before `marker` in `note` (`"P_NZ 10 (width), 1 strips"`, `"P_NZ 10 (width)"` →
/// 10).
fn number_before(note: &str, marker: &str) -> Option<u64> {
    let head = &note[..note.find(marker)?];
    head.split_whitespace().last()?.parse().ok()
}

/// Rebuild the matrix summary from the notes of the CSR (`P_NZ m (mode)`), ELL
/// (`P_NZ w (width)`) and HYB (`ELL width k (…) + COO n entries`) predictions.
fn shape_from_notes(r: &RecordedMatrix) -> Option<Shape> {
    let note = |name: &str| {
        r.kernels
            .iter()
            .find(|k| k.variant == name)
            .map(|k| &k.note)
    };
    let mode = note("csr-vector").and_then(|n| number_before(n, " (mode)"))?;
    let max = note("ell").and_then(|n| number_before(n, " (width)"))?;
    let hyb = note("hyb")?;
    let width = hyb
        .strip_prefix("ELL width ")?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    let coo = number_before(hyb, " entries")?;
    Some(Shape {
        nrows: r.nrows,
        ncols: r.ncols,
        nnz: r.nnz,
        mode_row_len: mode,
        max_row_len: max,
        hyb_width: width,
        hyb_coo_nnz: coo,
        counts: Default::default(),
    })
}

/// Difference-rate statistics of one kernel and precision, before (the recorded predictions)
/// and after (the replayed model), on the same matrices.
#[derive(Clone, Debug, PartialEq)]
pub struct Compared {
    /// Precision.
    pub precision: Precision,
    /// Kernel.
    pub variant: Variant,
    /// Matrices.
    pub count: usize,
    /// Mean and median difference rate of the recorded predictions.
    pub before: (f64, f64),
    /// Mean and median difference rate of the model.
    pub after: (f64, f64),
    /// Predictions of the model that its sanity bounds clamped.
    pub clamped: usize,
}

/// Ranking quality of one precision: the share of matrices whose pick (the predicted-fastest
/// kernel among those measured and covered) is within 5 % of the fastest measured one.
#[derive(Clone, Debug, PartialEq)]
pub struct RankingQuality {
    /// Precision.
    pub precision: Precision,
    /// Matrices ranked.
    pub count: usize,
    /// Matrices whose recorded pick is within 5 % of the best.
    pub before_within_5: usize,
    /// Matrices whose model pick is within 5 % of the best.
    pub after_within_5: usize,
}

/// Everything [`replay`] computes.
#[derive(Clone, Debug, PartialEq)]
pub struct Replay {
    /// Per precision and kernel.
    pub accuracy: Vec<Compared>,
    /// Per precision.
    pub ranking: Vec<RankingQuality>,
    /// Matrices whose summary could not be rebuilt from the notes (not replayed).
    pub unreadable: Vec<String>,
}

/// Precision, kernel, difference rates before and after, clamped count.
type PerKernel = (Precision, Variant, Vec<f64>, Vec<f64>, usize);

fn mean_median(mut v: Vec<f64>) -> (f64, f64) {
    if v.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (v.iter().sum::<f64>() / n as f64, median)
}

/// Re-predict every recorded matrix with `models` (one per precision; a precision without a
/// model is left out) and compare with the recorded predictions. Only kernels that were measured,
/// recorded with a prediction and that the model predicts count, so before and after are on the
/// same matrices. `clamped(precision, shape, variant)` says whether a prediction was clamped by
/// the sanity bounds (counted, not removed).
pub fn replay(
    recorded: &[Recorded],
    models: &[&dyn Model],
    clamped: &dyn Fn(&dyn Model, &Shape, Variant) -> bool,
) -> Replay {
    let params = FormatParams::default();
    let mut per: BTreeMap<(String, String), PerKernel> = BTreeMap::new();
    let mut ranks: BTreeMap<String, RankingQuality> = BTreeMap::new();
    let mut unreadable = Vec::new();
    for r in recorded {
        let Some(model) = models.iter().find(|m| m.precision() == r.precision) else {
            continue;
        };
        let Some(shape) = &r.shape else {
            unreadable.push(format!("{} ({})", r.input, r.precision));
            continue;
        };
        // (kernel, before, after, measured) for every comparable kernel.
        let mut rows = Vec::new();
        for &(v, before, measured) in &r.kernels {
            let (Some(before), Ok(after)) = (before, model.predict_shape(shape, v, &params)) else {
                continue;
            };
            rows.push((v, before, after, measured));
            let e = per.entry((r.precision.to_string(), v.name())).or_insert((
                r.precision,
                v,
                Vec::new(),
                Vec::new(),
                0,
            ));
            e.2.push(difference_rate(before, measured));
            e.3.push(difference_rate(after, measured));
            if clamped(*model, shape, v) {
                e.4 += 1;
            }
        }
        if rows.len() < 2 {
            continue;
        }
        let best = rows.iter().map(|r| r.3).fold(f64::INFINITY, f64::min);
        let pick = |key: fn(&(Variant, f64, f64, f64)) -> f64| {
            rows.iter()
                .min_by(|a, b| key(a).total_cmp(&key(b)))
                .map_or(f64::INFINITY, |r| r.3)
        };
        let q = ranks
            .entry(r.precision.to_string())
            .or_insert(RankingQuality {
                precision: r.precision,
                count: 0,
                before_within_5: 0,
                after_within_5: 0,
            });
        q.count += 1;
        q.before_within_5 += usize::from(pick(|r| r.1) <= 1.05 * best);
        q.after_within_5 += usize::from(pick(|r| r.2) <= 1.05 * best);
    }
    Replay {
        accuracy: per
            .into_values()
            .map(|(precision, variant, b, a, clamped)| Compared {
                precision,
                variant,
                count: b.len(),
                before: mean_median(b),
                after: mean_median(a),
                clamped,
            })
            .collect(),
        ranking: ranks.into_values().collect(),
        unreadable,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = r#"{"profile":"p","backend":"cuda","device":"d","results":[
      {"input":"a","precision":"f64","nrows":100,"ncols":100,"nnz":500,
       "features_seconds":0,"predict_seconds":0,"kernels":[
        {"variant":"csr-vector","seconds":2e-6,"bytes":1,"effective_gbs":1,"rank":1,
         "note":"P_NZ 5 (mode), 1 strips","measured_seconds":4e-6},
        {"variant":"ell","seconds":3e-6,"bytes":1,"effective_gbs":1,"rank":2,
         "note":"P_NZ 9 (width), 1 strips","measured_seconds":3e-6},
        {"variant":"coo","seconds":1e-5,"note":"1 non-zero strips","measured_seconds":null},
        {"variant":"hyb","seconds":4e-6,"note":"ELL width 0 (0 strips) + COO 500 entries (1 strips)",
         "measured_seconds":5e-6}]}],"skipped":[],"summary":[]}
    trailing log line"#;

    /// A model that predicts a fixed time per kernel, to check the bookkeeping.
    struct Fixed;
    impl Model for Fixed {
        fn name(&self) -> &str {
            "fixed"
        }
        fn precision(&self) -> Precision {
            Precision::F64
        }
        fn variants(&self) -> Vec<Variant> {
            vec![Variant::Ell, Variant::Hyb]
        }
        fn predict_shape(&self, s: &Shape, v: Variant, _: &FormatParams) -> Result<f64> {
            match v {
                Variant::Ell => Ok(s.max_row_len as f64 * 1e-6),
                Variant::Hyb => Ok(1e-6),
                _ => Err(Error::Unsupported("no".into())),
            }
        }
    }

    #[test]
    fn notes_rebuild_the_shape_and_replay_scores_it() {
        let rec = read_report("t", REPORT).unwrap();
        assert_eq!(rec.len(), 1);
        let s = rec[0].shape.clone().unwrap();
        assert_eq!(
            (s.mode_row_len, s.max_row_len, s.hyb_width, s.hyb_coo_nnz),
            (5, 9, 0, 500)
        );
        // coo was not measured: three kernels.
        assert_eq!(rec[0].kernels.len(), 3);
        let r = replay(&rec, &[&Fixed], &|_, _, _| false);
        // ELL: before 0 %, after |9 − 3| / 3 = 200 %; HYB: before 20 %, after 80 %.
        let ell = r
            .accuracy
            .iter()
            .find(|c| c.variant == Variant::Ell)
            .unwrap();
        assert!((ell.before.0 - 0.0).abs() < 1e-12 && (ell.after.0 - 2.0).abs() < 1e-12);
        let hyb = r
            .accuracy
            .iter()
            .find(|c| c.variant == Variant::Hyb)
            .unwrap();
        assert!((hyb.before.0 - 0.2).abs() < 1e-12 && (hyb.after.0 - 0.8).abs() < 1e-12);
        // CSR is not covered by the model: not compared.
        assert!(r.accuracy.iter().all(|c| c.variant
            != Variant::Csr {
                threads_per_row: 32
            }));
        // Ranking over {ell, hyb}: best measured is ell (3 µs); recorded pick ell (3 < 4 µs),
        // model pick hyb (1 < 9 µs), 5 µs > 1.05 × 3 µs.
        assert_eq!(
            r.ranking,
            vec![RankingQuality {
                precision: Precision::F64,
                count: 1,
                before_within_5: 1,
                after_within_5: 0
            }]
        );
    }

    #[test]
    fn malformed_reports_are_errors() {
        assert!(read_report("t", "").is_err());
        assert!(read_report("t", "{\"results\": 3}").is_err());
    }
}
