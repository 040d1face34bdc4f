//! Sanity bounds of a device: no SpMV runs faster than the device's launch floor, and none moves
//! its bytes faster than the device can deliver them — its DRAM bandwidth, or its L2 bandwidth
//! when the working set fits in L2 (a repeated SpMV of such a matrix runs from L2).
//!
//! The bounds are **measured** by `instrument` with micro-benchmarks (see
//! [`crate::instrument::micro`]), never assumed. [`Bounded`] wraps any [`Model`] so that a
//! prediction outside them is clamped to the bound and flagged; a profile whose bounds contradict
//! its own measurements is refused at load ([`DeviceBounds::check_measurement`]).

use super::{Model, Prediction, Shape};
use crate::backend::Variant;
use crate::features::Features;
use crate::formats::FormatParams;
use crate::instrument::Statistic;
use crate::{Error, Precision, Result};
use serde::{Deserialize, Serialize};

/// How far a benchmark of the profile may lie outside the bounds before the profile is refused
/// (timing noise between the micro-benchmarks and the suite).
pub const MEASUREMENT_SLACK: f64 = 0.25;

/// The measured bounds of one device and precision.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceBounds {
    /// The fastest SpMV the device runs: the least time of the launch micro-benchmarks, seconds.
    pub launch_floor_s: f64,
    /// The most bytes per second an SpMV (or a copy) moves from DRAM, GB/s.
    pub dram_gbs: f64,
    /// The most bytes per second an SpMV moves when its working set fits in L2, GB/s.
    pub l2_gbs: f64,
    /// L2 size in bytes (0: unknown, then only the DRAM ceiling applies).
    pub l2_bytes: u64,
    /// The backend's measured L2 read bandwidth, GB/s (one of the figures `l2_gbs` is the
    /// largest of; absent where the backend has none, and in profiles measured before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2_read_gbs: Option<f64>,
}

impl DeviceBounds {
    /// Check that every number is a positive finite value and that L2 is no slower than DRAM.
    pub fn validate(&self) -> Result<()> {
        for (what, v) in [
            ("launch floor", self.launch_floor_s),
            ("DRAM bandwidth", self.dram_gbs),
            ("L2 bandwidth", self.l2_gbs),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::Invalid(format!(
                    "device bounds: {what} {v} is not a positive number"
                )));
            }
        }
        Ok(())
    }

    /// The bandwidth ceiling for a working set of `bytes`, GB/s, stepped: the L2's where it fits
    /// there, the DRAM's beyond (the optimizer's bandwidth share of a plan's blocks reads this;
    /// the bound itself reads [`DeviceBounds::effective_ceiling_gbs`]).
    pub fn ceiling_gbs(&self, bytes: u64) -> f64 {
        if self.l2_bytes > 0 && bytes <= self.l2_bytes {
            self.l2_gbs.max(self.dram_gbs)
        } else {
            self.dram_gbs
        }
    }

    /// The least time that moving `bytes` can take, the launch floor aside. Beyond the L2, a
    /// repeated SpMV can still find up to the L2's size of its working set there, so it is the
    /// longer of the rest from DRAM and all of them at the L2's bandwidth (the two overlap at
    /// best): it meets the L2 ceiling at the L2's size and tends to the DRAM ceiling above it.
    /// (Until session 55 it stepped from the one to the other at the L2's size, which clamped
    /// DIA and row-per-thread CSR at 1–2 L2s a median 30 % above their measured times.)
    fn moving_seconds(&self, bytes: u64) -> f64 {
        let b = bytes as f64;
        if self.l2_bytes > 0 && bytes > self.l2_bytes {
            let rest = (bytes - self.l2_bytes) as f64 / (self.dram_gbs * 1e9);
            rest.max(b / (self.l2_gbs.max(self.dram_gbs) * 1e9))
        } else {
            b / (self.ceiling_gbs(bytes) * 1e9)
        }
    }

    /// The bandwidth the bound allows `bytes`, GB/s: [`DeviceBounds::ceiling_gbs`] where they
    /// fit in L2 or dwarf it, above the DRAM's in between (see `moving_seconds`).
    pub fn effective_ceiling_gbs(&self, bytes: u64) -> f64 {
        match bytes {
            0 => self.ceiling_gbs(0),
            _ => bytes as f64 / self.moving_seconds(bytes) / 1e9,
        }
    }

    /// Which memory [`DeviceBounds::effective_ceiling_gbs`] of `bytes` is: `L2`, `DRAM`, or
    /// `L2 + DRAM` where part of a working set larger than the L2 may come from it.
    pub fn ceiling_level(&self, bytes: u64) -> &'static str {
        if self.l2_bytes > 0 && bytes <= self.l2_bytes {
            "L2"
        } else if self.effective_ceiling_gbs(bytes) > self.dram_gbs * (1.0 + 1e-9) {
            "L2 + DRAM"
        } else {
            "DRAM"
        }
    }

    /// The least time that moving `bytes` can take: the launch floor, or the bytes at the
    /// ceiling bandwidth ([`DeviceBounds::effective_ceiling_gbs`]), whichever is longer.
    pub fn least_seconds(&self, bytes: u64) -> f64 {
        self.moving_seconds(bytes).max(self.launch_floor_s)
    }

    /// `seconds` raised to [`DeviceBounds::least_seconds`] of `bytes`, and why, if it was.
    pub fn clamp(&self, seconds: f64, bytes: u64) -> (f64, Option<String>) {
        let least = self.least_seconds(bytes);
        if seconds >= least {
            return (seconds, None);
        }
        let why = if least == self.launch_floor_s {
            format!(
                "clamped: {} is below the launch floor {}",
                crate::util::fmt_seconds(seconds, "-"),
                crate::util::fmt_seconds(least, "-")
            )
        } else {
            format!(
                "clamped: {} implies {:.0} GB/s, above the {:.0} GB/s {} ceiling",
                crate::util::fmt_seconds(seconds, "-"),
                bytes as f64 / seconds / 1e9,
                self.effective_ceiling_gbs(bytes),
                self.ceiling_level(bytes)
            )
        };
        (least, Some(why))
    }

    /// Fail if a measured time of `bytes` is more than [`MEASUREMENT_SLACK`] outside the bounds:
    /// the bounds (or the measurement) are wrong.
    pub fn check_measurement(&self, what: &str, seconds: f64, bytes: u64) -> Result<()> {
        let least = self.least_seconds(bytes);
        if seconds < least * (1.0 - MEASUREMENT_SLACK) {
            return Err(Error::Invalid(format!(
                "{what} was measured at {} ({:.0} GB/s), faster than the device bounds allow \
                 ({}: launch floor {}, ceiling {:.0} GB/s)",
                crate::util::fmt_seconds(seconds, "-"),
                bytes as f64 / seconds / 1e9,
                crate::util::fmt_seconds(least, "-"),
                crate::util::fmt_seconds(self.launch_floor_s, "-"),
                self.effective_ceiling_gbs(bytes)
            )));
        }
        Ok(())
    }
}

/// A model whose every prediction is clamped to the device's [`DeviceBounds`] (when the profile
/// has them) and flagged.
pub struct Bounded<M> {
    /// The model.
    pub model: M,
    /// The bounds; `None` (a profile measured before they were) leaves predictions unchanged.
    pub bounds: Option<DeviceBounds>,
}

impl<M: Model> Bounded<M> {
    /// `raw` of `cfg` for the matrix of `shape`, clamped to the bounds.
    fn bound(
        &self,
        shape: &Shape,
        cfg: &crate::backend::KernelConfig,
        raw: Prediction,
    ) -> Prediction {
        let (seconds, clamped) = self.checked(shape, cfg.variant, &cfg.params, raw.seconds);
        Prediction {
            seconds,
            uncertainty: raw.uncertainty,
            clamped: clamped.or(raw.clamped),
        }
    }

    fn checked(
        &self,
        shape: &Shape,
        variant: Variant,
        params: &FormatParams,
        raw: f64,
    ) -> (f64, Option<String>) {
        let Some(b) = &self.bounds else {
            return (raw, None);
        };
        // The bytes the kernel moves, not those stored: ELL's, HYB's and SELL's kernels skip
        // the padding values (session 54: the stored bytes held ELL at 2.4× its measured time
        // on large stacks of short rows under a few long ones).
        let bytes = shape
            .moved_bytes(variant, params, self.model.precision().bytes() as u64)
            .unwrap_or(0);
        b.clamp(raw, bytes)
    }
}

impl<M: Model> Model for Bounded<M> {
    fn name(&self) -> &str {
        self.model.name()
    }
    fn precision(&self) -> Precision {
        self.model.precision()
    }
    fn statistic(&self) -> Statistic {
        self.model.statistic()
    }
    fn variants(&self) -> Vec<Variant> {
        self.model.variants()
    }
    fn predict_shape(&self, shape: &Shape, variant: Variant, params: &FormatParams) -> Result<f64> {
        let raw = self.model.predict_shape(shape, variant, params)?;
        Ok(self.checked(shape, variant, params, raw).0)
    }
    fn predict(&self, features: &Features, variant: Variant, params: &FormatParams) -> Result<f64> {
        Ok(self.predict_detail(features, variant, params)?.seconds)
    }
    fn uncertainty(
        &self,
        features: &Features,
        variant: Variant,
        params: &FormatParams,
    ) -> Option<f64> {
        self.model.uncertainty(features, variant, params)
    }
    fn predict_detail(
        &self,
        features: &Features,
        variant: Variant,
        params: &FormatParams,
    ) -> Result<Prediction> {
        let raw = self.model.predict_detail(features, variant, params)?;
        // With the access counts: without them the padded formats (DIA, SELL, BSR) had no
        // working set and were never held to the bandwidth ceiling (a DIA row block of a 3-D
        // stencil was predicted at 4.3 TB/s on the H100 and made the optimizer adopt a plan
        // that ran 0.88× of the best single configuration).
        let shape = Shape::for_params(features, params);
        let (seconds, clamped) = self.checked(&shape, variant, params, raw.seconds);
        Ok(Prediction {
            seconds,
            uncertainty: raw.uncertainty,
            clamped: clamped.or(raw.clamped),
        })
    }
    fn explain(&self, features: &Features, variant: Variant, params: &FormatParams) -> String {
        self.model.explain(features, variant, params)
    }
    fn configs(&self) -> Vec<crate::backend::KernelConfig> {
        self.model.configs()
    }
    fn predict_config(
        &self,
        features: &Features,
        cfg: &crate::backend::KernelConfig,
    ) -> Result<f64> {
        let raw = self.model.predict_config(features, cfg)?;
        let shape = Shape::for_params(features, &cfg.params);
        Ok(self.checked(&shape, cfg.variant, &cfg.params, raw).0)
    }
    fn uncertainty_config(
        &self,
        features: &Features,
        cfg: &crate::backend::KernelConfig,
    ) -> Option<f64> {
        self.model.uncertainty_config(features, cfg)
    }
    fn predict_detail_config(
        &self,
        features: &Features,
        cfg: &crate::backend::KernelConfig,
    ) -> Result<Prediction> {
        let raw = self.model.predict_detail_config(features, cfg)?;
        let shape = Shape::for_params(features, &cfg.params);
        Ok(self.bound(&shape, cfg, raw))
    }
    fn predict_detail_configs(
        &self,
        features: &Features,
        cfgs: &[crate::backend::KernelConfig],
    ) -> Vec<Result<Prediction>> {
        let raw = self.model.predict_detail_configs(features, cfgs);
        // The access counts size the padded formats under each configuration's parameters:
        // once per distinct parameters (most configurations share the defaults), not once per
        // configuration.
        let mut shapes: Vec<(&FormatParams, Shape)> = Vec::new();
        cfgs.iter()
            .zip(raw)
            .map(|(cfg, raw)| {
                let raw = raw?;
                let i = match shapes.iter().position(|(p, _)| **p == cfg.params) {
                    Some(i) => i,
                    None => {
                        shapes.push((&cfg.params, Shape::for_params(features, &cfg.params)));
                        shapes.len() - 1
                    }
                };
                Ok(self.bound(&shapes[i].1, cfg, raw))
            })
            .collect()
    }
    fn pick(
        &self,
        features: &Features,
        predicted: &[(String, f64)],
        family: Option<&str>,
    ) -> Option<usize> {
        self.model.pick(features, predicted, family)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h() -> DeviceBounds {
        DeviceBounds {
            launch_floor_s: 4e-6,
            dram_gbs: 4000.0,
            l2_gbs: 10000.0,
            l2_bytes: 60_000_000,
            l2_read_gbs: None,
        }
    }

    #[test]
    fn clamps_below_the_floor_and_above_the_ceilings() {
        let b = h();
        // A small matrix predicted at 1 µs: the launch floor.
        let (t, why) = b.clamp(1e-6, 1000);
        assert_eq!(t, 4e-6);
        assert!(why.unwrap().contains("launch floor"));
        // 50 MB fits in L2: 50e6 / 10e12 = 5 µs.
        let (t, why) = b.clamp(4.5e-6, 50_000_000);
        assert!((t - 5e-6).abs() < 1e-15 && why.unwrap().contains("L2"));
        // 1 GB does not: at best 60 MB of it from L2, the rest (940 MB) at 4e12 B/s = 235 µs.
        let (t, why) = b.clamp(1e-4, 1_000_000_000);
        assert!((t - 2.35e-4).abs() < 1e-12 && why.unwrap().contains("DRAM"));
        // Plausible predictions are untouched.
        assert_eq!(b.clamp(3e-4, 1_000_000_000), (3e-4, None));
    }

    #[test]
    fn the_bytes_bound_goes_from_the_l2_to_the_dram_without_a_step() {
        let b = h();
        let l2 = b.l2_bytes;
        // At the L2's size, the L2 ceiling; just above it, still about the L2's (not the DRAM's,
        // as before session 55: 60 MB at 4e12 B/s = 15 µs where the L2 gives 6 µs).
        assert_eq!(b.effective_ceiling_gbs(l2), 10000.0);
        assert!((b.least_seconds(l2 + 1_000) - 6e-6).abs() < 1e-9);
        assert_eq!(b.ceiling_level(l2), "L2");
        assert_eq!(b.ceiling_level(l2 + 1_000), "L2 + DRAM");
        // 100 MB: the 40 MB beyond the L2 from DRAM (10 µs) against all at the L2's bandwidth
        // (10 µs): 10 µs, 10,000 GB/s.
        assert!((b.least_seconds(100_000_000) - 1e-5).abs() < 1e-12);
        // Far beyond, it tends to the DRAM ceiling from above and never crosses it.
        let far = b.effective_ceiling_gbs(100 * l2);
        assert!(far > 4000.0 && far < 4000.0 * 1.011, "{far}");
        // The least time never falls as the bytes grow.
        let mut last = 0.0;
        for mb in (1..400).map(|k| k * 1_000_000u64) {
            let t = b.least_seconds(mb);
            assert!(t >= last, "{mb}: {t} < {last}");
            last = t;
        }
        // Without an L2 size, only the DRAM ceiling.
        let no_l2 = DeviceBounds { l2_bytes: 0, ..h() };
        assert_eq!(no_l2.effective_ceiling_gbs(100_000_000), 4000.0);
        assert_eq!(no_l2.ceiling_level(100_000_000), "DRAM");
    }

    /// Bounds of 1 GB/s without an L2 and no launch floor to speak of: a prediction is at least
    /// its bytes in nanoseconds.
    fn one_gbs() -> DeviceBounds {
        DeviceBounds {
            launch_floor_s: 1e-12,
            dram_gbs: 1.0,
            l2_gbs: 1.0,
            l2_bytes: 0,
            l2_read_gbs: None,
        }
    }

    #[test]
    fn padded_formats_are_held_to_the_bandwidth_ceiling_too() {
        use crate::backend::KernelConfig;
        use crate::matrix::generate::{stencil, Stencil};
        let a = stencil(Stencil::D2P5, 100, u64::MAX).unwrap();
        let f = Features::compute(&a);
        // 1 GB/s, no L2: a prediction is at least its bytes in nanoseconds.
        let b = one_gbs();
        let m = Bounded {
            // Predicts 1 ns for every configuration.
            model: crate::model::testing::Constant {
                variants: vec![Variant::Dia, Variant::Coo],
                seconds: 1e-9,
            },
            bounds: Some(b),
        };
        let params = FormatParams::default();
        for v in [Variant::Dia, Variant::Coo] {
            let shape = Shape::for_params(&f, &params);
            let bytes = shape.moved_bytes(v, &params, 8).unwrap();
            // DIA: 5 diagonals × 10⁴ rows × 8 bytes, x and y: more than COO's arrays alone —
            // less the slots outside the columns its kernel skips (1 + 1 + 100 + 100).
            assert!(bytes > 5 * 10_000 * 8, "{v}: {bytes}");
            let stored = shape.working_set_bytes(v, &params, 8).unwrap();
            let outside = if v == Variant::Dia { 202 * 8 } else { 0 };
            assert_eq!(stored - bytes, outside, "{v}");
            let want = bytes as f64 / 1e9;
            let t = m.predict_config(&f, &KernelConfig::new(v)).unwrap();
            assert!((t - want).abs() <= 1e-12 * want, "{v}: {t} vs {want}");
            let d = m.predict_detail(&f, v, &params).unwrap();
            assert!(
                (d.seconds - want).abs() <= 1e-12 * want && d.clamped.is_some(),
                "{v}"
            );
        }
    }

    #[test]
    fn the_ceiling_counts_the_bytes_the_kernel_moves_not_the_padding_it_skips() {
        use crate::backend::KernelConfig;
        // 1,024 rows of one entry under one row of 64: ELL of width 64 stores 65,600 slots for
        // 1,088 entries; its kernel reads every column index and only the entries' values.
        let n = 1025usize;
        let mut row_ptr = vec![0usize];
        let mut cols = Vec::new();
        for r in 0..n {
            let len = if r == 0 { 64 } else { 1 };
            cols.extend((0..len).map(|k| ((r + k) % n) as u32));
            cols[row_ptr[r]..].sort_unstable();
            row_ptr.push(cols.len());
        }
        let vals = vec![1.0f64; cols.len()];
        let a = crate::Csr::new(n, n, row_ptr, cols, vals).unwrap();
        let f = Features::compute(&a);
        let params = FormatParams::default();
        let shape = Shape::for_params(&f, &params);
        let stored = shape.working_set_bytes(Variant::Ell, &params, 8).unwrap();
        let moved = shape.moved_bytes(Variant::Ell, &params, 8).unwrap();
        assert_eq!(stored - moved, (64 * 1025 - 1088) * 8);
        // SELL-C-σ: neither the padding's values nor (in a split slice) its column indices.
        let slots = shape.counts.sell.unwrap().slots;
        assert_eq!(
            shape.working_set_bytes(Variant::Sell, &params, 8).unwrap()
                - shape.moved_bytes(Variant::Sell, &params, 8).unwrap(),
            (slots - 1088) * 12
        );
        let b = one_gbs();
        // A prediction at the moved bytes' time stands; below it, it is raised to it.
        for (predicted, want) in [(moved as f64 / 1e9, moved), (1e-9, moved)] {
            let m = Bounded {
                model: crate::model::testing::Constant {
                    variants: vec![Variant::Ell],
                    seconds: predicted,
                },
                bounds: Some(b.clone()),
            };
            let t = m
                .predict_config(&f, &KernelConfig::new(Variant::Ell))
                .unwrap();
            assert!((t - want as f64 / 1e9).abs() <= 1e-12 * t, "{t} vs {want}");
        }
    }

    #[test]
    fn measurements_outside_the_bounds_are_refused() {
        let b = h();
        assert!(b.check_measurement("m", 2.5e-4, 1_000_000_000).is_ok());
        // Within the slack.
        assert!(b.check_measurement("m", 2.0e-4, 1_000_000_000).is_ok());
        let e = b
            .check_measurement("m", 1e-4, 1_000_000_000)
            .unwrap_err()
            .to_string();
        assert!(e.contains("faster than the device bounds"), "{e}");
        let mut bad = h();
        bad.l2_gbs = f64::NAN;
        assert!(bad.validate().is_err());
    }
}
