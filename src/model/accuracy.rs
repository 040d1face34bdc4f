//! Accuracy of a model against measurements: the papers' *difference rate*
//! `|predicted − measured| / measured` (004 §5.1) and its statistics per kernel and precision.

use super::{AnalyticalModel, Model, Shape};
use crate::backend::Variant;
use crate::formats::FormatParams;
use crate::instrument::{Measurement, Statistic};
use crate::{Precision, Result};
use serde::Serialize;

/// One prediction next to its measurement.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Sample {
    /// Which matrix.
    pub input: String,
    /// Which kernel.
    #[serde(serialize_with = "variant_name")]
    pub variant: Variant,
    /// The configuration's label (the variant's name, and its block size or parameters where
    /// not the defaults): what the statistics are grouped by.
    #[serde(skip)]
    pub label: String,
    /// Value precision.
    pub precision: Precision,
    /// Predicted seconds.
    pub predicted: f64,
    /// Measured seconds (the papers' warm-up-excluding mean).
    pub measured: f64,
}

impl Sample {
    /// `|predicted − measured| / measured`.
    pub fn difference_rate(&self) -> f64 {
        difference_rate(self.predicted, self.measured)
    }
}

/// `|predicted − measured| / measured`.
pub fn difference_rate(predicted: f64, measured: f64) -> f64 {
    (predicted - measured).abs() / measured
}

/// Difference-rate statistics of one kernel and precision.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Kernel.
    #[serde(serialize_with = "variant_name")]
    pub variant: Variant,
    /// The configuration's label ([`Sample::label`]).
    #[serde(rename = "config")]
    pub label: String,
    /// Precision.
    pub precision: Precision,
    /// Matrices.
    pub count: usize,
    /// Mean difference rate.
    pub mean: f64,
    /// Median difference rate (mean of the two middle ones for an even count).
    pub median: f64,
    /// Largest difference rate.
    pub max: f64,
    /// Matrices within 5 %.
    pub within_5: usize,
    /// Matrices within 10 %.
    pub within_10: usize,
}

fn variant_name<S: serde::Serializer>(v: &Variant, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&v.name())
}

/// The model's predictions of its own benchmark matrices (in-sample accuracy): how well the
/// fitted relationships describe the measurements they were fitted to.
pub fn benchmark_samples(
    model: &AnalyticalModel,
    ms: &[Measurement],
    statistic: Statistic,
) -> Result<Vec<Sample>> {
    let params = FormatParams::default();
    ms.iter()
        .map(|m| {
            let shape = Shape::constant(m.rows, m.cols, m.pnz);
            Ok(Sample {
                input: format!("benchmark R={} P_NZ={}", m.rows, m.pnz),
                variant: m.kernel,
                label: m.kernel.name(),
                precision: model.precision(),
                predicted: model.predict_shape(&shape, m.kernel, &params)?,
                measured: m.time(statistic),
            })
        })
        .collect()
}

/// Statistics per (kernel, precision), in order of first appearance.
pub fn summarize(samples: &[Sample]) -> Vec<Summary> {
    let mut keys: Vec<(Variant, &str, Precision)> = Vec::new();
    for s in samples {
        if !keys.contains(&(s.variant, s.label.as_str(), s.precision)) {
            keys.push((s.variant, &s.label, s.precision));
        }
    }
    keys.into_iter()
        .map(|(variant, label, precision)| {
            let mut d: Vec<f64> = samples
                .iter()
                .filter(|s| s.label == label && s.precision == precision)
                .map(Sample::difference_rate)
                .collect();
            d.sort_by(f64::total_cmp);
            let n = d.len();
            let median = if n % 2 == 1 {
                d[n / 2]
            } else {
                0.5 * (d[n / 2 - 1] + d[n / 2])
            };
            Summary {
                variant,
                label: label.to_string(),
                precision,
                count: n,
                mean: d.iter().sum::<f64>() / n as f64,
                median,
                max: d[n - 1],
                within_5: d.iter().filter(|&&x| x <= 0.05).count(),
                within_10: d.iter().filter(|&&x| x <= 0.10).count(),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: Variant, p: f64, m: f64) -> Sample {
        Sample {
            input: "m".into(),
            variant: v,
            label: v.name(),
            precision: Precision::F32,
            predicted: p,
            measured: m,
        }
    }

    #[test]
    fn statistics_of_difference_rates() {
        // Rates: 0.02, 0.08, 0.5 (ELL) and 0.1 (COO).
        let v = [
            s(Variant::Ell, 1.02, 1.0),
            s(Variant::Ell, 0.92, 1.0),
            s(Variant::Coo, 2.25, 2.5),
            s(Variant::Ell, 3.0, 2.0),
        ];
        let out = summarize(&v);
        assert_eq!(out.len(), 2);
        let e = &out[0];
        assert_eq!(
            (e.variant, e.count, e.within_5, e.within_10),
            (Variant::Ell, 3, 1, 2)
        );
        assert!((e.mean - 0.2).abs() < 1e-12);
        assert!((e.median - 0.08).abs() < 1e-12);
        assert!((e.max - 0.5).abs() < 1e-12);
        let c = &out[1];
        assert_eq!((c.count, c.within_5, c.within_10), (1, 0, 1));
        assert!((c.median - 0.1).abs() < 1e-12);
    }
}
