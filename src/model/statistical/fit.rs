//! Fitting a [`StatisticalModel`] to its benchmark measurements (see the parent module for the
//! relationships and the choices).

use super::StatisticalModel;
use crate::backend::Variant;
use crate::instrument::{strip_size, DeviceLimits, Measurement, RowDist, Spread, Statistic};
use crate::model::analytical::{floor_of, CsrParams, EllParams};
use crate::{Error, Precision, Result};

impl StatisticalModel {
    /// Fit every kernel's relationships from the measurements of one distribution's suite
    /// ([`crate::instrument::StatSuite::plan`]), each kernel on its own benchmarks and strip
    /// size. Fails, naming the kernel, where a relationship lacks the points it needs.
    pub fn fit(
        precision: Precision,
        limits: &DeviceLimits,
        statistic: Statistic,
        distribution: RowDist,
        spread: Spread,
        measurements: Vec<Measurement>,
    ) -> Result<StatisticalModel> {
        limits.validate()?;
        let what = StatisticalModel::name_of(distribution);
        let all: Vec<&Measurement> = measurements.iter().collect();
        let floor = floor_of(what, statistic, &all)?;
        let of = |v: Variant| -> Vec<&Measurement> {
            measurements.iter().filter(|m| m.kernel == v).collect()
        };
        let ctx = |v: Variant| move |e: Error| Error::Invalid(format!("{what} {v}: {e}"));
        let csr_v_kernel = Variant::Csr {
            threads_per_row: 16,
        };
        let csr_v = CsrParams::fit(
            16,
            strip_size(limits, csr_v_kernel)?,
            limits.max_threads_per_block,
            floor,
            statistic,
            &of(csr_v_kernel),
        )
        .map_err(ctx(csr_v_kernel))?;
        let ell_form = |v: Variant| {
            EllParams::fit(strip_size(limits, v)?, floor, statistic, &of(v)).map_err(ctx(v))
        };
        Ok(StatisticalModel {
            distribution,
            spread,
            precision,
            limits: limits.clone(),
            statistic,
            csr_v,
            csr_s: ell_form(Variant::Csr { threads_per_row: 1 })?,
            ell: ell_form(Variant::Ell)?,
            jad: ell_form(Variant::Jad)?,
            measurements,
        })
    }

    /// The same model fitted again from its own measurements (a loaded profile is checked
    /// against it).
    pub fn refit(&self) -> Result<StatisticalModel> {
        StatisticalModel::fit(
            self.precision,
            &self.limits,
            self.statistic,
            self.distribution,
            self.spread,
            self.measurements.clone(),
        )
    }

    /// Every relationship whose free least-squares fit made time fall with more work and was
    /// replaced by the constrained fit, for `instrument` to report.
    pub fn rejected_fits(&self) -> Vec<String> {
        let mut v: Vec<String> = self
            .csr_v
            .rejected
            .iter()
            .map(|r| format!("csr-t16: {r}"))
            .collect();
        for (k, p) in [
            ("csr-scalar", &self.csr_s),
            ("ell", &self.ell),
            ("jad", &self.jad),
        ] {
            v.extend(p.rejected.iter().map(|r| format!("{k}: {r}")));
        }
        v
    }
}
