//! Timing protocol and statistics shared by every backend.
//!
//! The papers time `β` consecutive runs and exclude the first `α` as warm-up:
//! `T = (Σ_{j≤β} φ_j − Σ_{j≤α} φ_j) / (β − α)`, i.e. the mean of runs `α+1 … β`. We report that
//! ("warm mean") and the median of the same runs.

use serde::{Deserialize, Serialize};

/// How to time a kernel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimingProtocol {
    /// β: total timed runs.
    pub runs: usize,
    /// α: leading runs excluded as warm-up (`α < β`).
    pub warmup: usize,
    /// Clear the L2 cache before every run (CUDA only); by default runs repeat on the same matrix
    /// and x, as inside an iterative solver.
    pub cold: bool,
}

impl Default for TimingProtocol {
    fn default() -> Self {
        TimingProtocol {
            runs: 30,
            warmup: 5,
            cold: false,
        }
    }
}

/// Per-run times of one kernel, in seconds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// Every run's time φ_j (seconds), warm-up included.
    pub samples: Vec<f64>,
    /// α used for the statistics.
    pub warmup: usize,
}

impl Timing {
    /// The runs after the warm-up (all runs if α ≥ β).
    fn kept(&self) -> &[f64] {
        if self.warmup < self.samples.len() {
            &self.samples[self.warmup..]
        } else {
            &self.samples
        }
    }

    /// The papers' warm-up-excluding mean `(Σ_{j≤β} φ_j − Σ_{j≤α} φ_j) / (β − α)`.
    pub fn warm_mean(&self) -> f64 {
        let k = self.kept();
        if k.is_empty() {
            return f64::NAN;
        }
        k.iter().sum::<f64>() / k.len() as f64
    }

    /// Median of the runs after the warm-up.
    pub fn median(&self) -> f64 {
        let mut k = self.kept().to_vec();
        if k.is_empty() {
            return f64::NAN;
        }
        k.sort_by(|a, b| a.total_cmp(b));
        let n = k.len();
        if n % 2 == 1 {
            k[n / 2]
        } else {
            0.5 * (k[n / 2 - 1] + k[n / 2])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warm_mean_matches_paper_formula() {
        let t = Timing {
            samples: vec![10.0, 4.0, 1.0, 2.0, 3.0],
            warmup: 2,
        };
        // (Σ_{j≤5} − Σ_{j≤2}) / (5 − 2) = (20 − 14) / 3 = 2
        assert_eq!(t.warm_mean(), 2.0);
        assert_eq!(t.median(), 2.0);
        let t = Timing {
            samples: vec![9.0, 1.0, 4.0, 2.0, 3.0],
            warmup: 1,
        };
        assert_eq!(t.median(), 2.5);
    }
}
