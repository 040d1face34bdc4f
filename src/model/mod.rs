//! Performance models: given a matrix's summary, a configuration (kernel and format
//! parameters) and a precision, predict the SpMV time in seconds.
//!
//! Every model implements one trait, [`Model`], so that the analytical model of the papers
//! ([`analytical`]) and the statistical, machine-learning, cross-architecture and own models of
//! later work sit side by side and are compared on the same data; the optimizer's per-block
//! predictions go through the same trait ([`Model::predict_shape`]). A device profile stores any
//! number of them by name ([`registry`]); every prediction is checked against the device's
//! measured launch floor and bandwidth ceilings ([`bounds`]). [`fit`] holds the small
//! least-squares fits they share; [`replay`] scores a model offline on saved measurements.

pub mod accuracy;
pub mod analytical;
pub mod bounds;
pub mod cross;
pub mod fit;
pub mod rank;
pub mod registry;
pub mod replay;
pub mod statistical;

use crate::backend::{KernelConfig, Variant};
use crate::features::Features;
use crate::formats::FormatParams;
use crate::instrument::Statistic;
use crate::{Error, Precision, Result};

pub use analytical::AnalyticalModel;
pub use bounds::{Bounded, DeviceBounds};
pub use cross::CrossModel;
pub use rank::{
    block_size_siblings, rank, rank_with, recommended, shortlist, stage_pick, Coverage, Ranked,
    Ranking, SHORTLIST, SHORTLIST_BAND,
};
pub use registry::{NamedModel, StoredModel};
pub use statistical::StatisticalModel;

/// One prediction with what the platform adds to the number.
#[derive(Clone, Debug, PartialEq)]
pub struct Prediction {
    /// Predicted seconds (after the sanity clamp, if any).
    pub seconds: f64,
    /// The model's own uncertainty, seconds (one standard deviation), if it gives one.
    pub uncertainty: Option<f64>,
    /// Why the raw prediction was clamped to the device's bounds, if it was.
    pub clamped: Option<String>,
}

/// A performance model of one device and precision.
///
/// Implement [`Model::predict_shape`] for a model that needs only a [`Shape`] (then the optimizer
/// can use it on row blocks), or override [`Model::predict`] for one that needs the full
/// [`Features`] (its `predict_shape` then stays [`Error::Unsupported`]).
pub trait Model: Send + Sync {
    /// Short name (`analytical`, …): the name of the model in its profile.
    fn name(&self) -> &str;
    /// The value precision the model predicts for.
    fn precision(&self) -> Precision;
    /// The statistic of the timed runs the model predicts (what it is compared with).
    fn statistic(&self) -> Statistic {
        Statistic::WarmMean
    }
    /// The configurations it covers, in display order.
    fn variants(&self) -> Vec<Variant>;
    /// Predicted seconds of one SpMV of the matrix summarized by `shape`. Fails with
    /// [`Error::Unsupported`] for a kernel or parameter the model does not cover (or when the
    /// model needs more than a shape) and with [`Error::FormatRefused`] where the format cannot
    /// hold the matrix on the device.
    fn predict_shape(&self, shape: &Shape, variant: Variant, params: &FormatParams) -> Result<f64> {
        let _ = (shape, params);
        Err(Error::Unsupported(format!(
            "the {} model needs the matrix's full features to predict {variant}",
            self.name()
        )))
    }
    /// Predicted seconds of one SpMV of the matrix described by `features` (by default
    /// [`Model::predict_shape`] on its shape).
    fn predict(&self, features: &Features, variant: Variant, params: &FormatParams) -> Result<f64> {
        self.predict_shape(&Shape::from_features(features), variant, params)
    }
    /// One standard deviation of the prediction, seconds, for models that know it.
    fn uncertainty(
        &self,
        features: &Features,
        variant: Variant,
        params: &FormatParams,
    ) -> Option<f64> {
        let _ = (features, variant, params);
        None
    }
    /// The prediction with its uncertainty and, for a model checked against device bounds
    /// ([`Bounded`]), whether it was clamped.
    fn predict_detail(
        &self,
        features: &Features,
        variant: Variant,
        params: &FormatParams,
    ) -> Result<Prediction> {
        Ok(Prediction {
            seconds: self.predict(features, variant, params)?,
            uncertainty: self.uncertainty(features, variant, params),
            clamped: None,
        })
    }
    /// A short note on what the prediction used (strip counts, `P_NZ`, the HYB split …); empty
    /// by default.
    fn explain(&self, features: &Features, variant: Variant, params: &FormatParams) -> String {
        let _ = (features, variant, params);
        String::new()
    }
    /// The full configurations it covers (kernel, format parameters, CUDA block size), in
    /// display order. By default each of [`Model::variants`] with default parameters and
    /// [`KernelConfig::DEFAULT_BLOCK_SIZE`]; learned models override it to list every
    /// configuration of their training table (block sizes, SELL-C-σ's parameter sets).
    fn configs(&self) -> Vec<KernelConfig> {
        self.variants().into_iter().map(KernelConfig::new).collect()
    }
    /// Predicted seconds of one SpMV in configuration `cfg`. By default [`Model::predict`] when
    /// `cfg` has the default block size, else [`Error::Unsupported`] (a model of the variant
    /// alone does not know the block size).
    /// One-sigma uncertainty, seconds, of [`Model::predict_config`]: by default
    /// [`Model::uncertainty`] at the default block size, none at another.
    fn uncertainty_config(&self, features: &Features, cfg: &KernelConfig) -> Option<f64> {
        if cfg.block_size != KernelConfig::DEFAULT_BLOCK_SIZE {
            return None;
        }
        self.uncertainty(features, cfg.variant, &cfg.params)
    }
    fn predict_config(&self, features: &Features, cfg: &KernelConfig) -> Result<f64> {
        if cfg.block_size != KernelConfig::DEFAULT_BLOCK_SIZE {
            return Err(Error::Unsupported(format!(
                "the {} model does not predict block size {} ({})",
                self.name(),
                cfg.block_size,
                cfg.label()
            )));
        }
        self.predict(features, cfg.variant, &cfg.params)
    }
    /// [`Model::predict_detail`] of a full configuration: by default that of the variant at
    /// the default block size, else [`Model::predict_config`] with
    /// [`Model::uncertainty_config`].
    fn predict_detail_config(&self, features: &Features, cfg: &KernelConfig) -> Result<Prediction> {
        if cfg.block_size == KernelConfig::DEFAULT_BLOCK_SIZE {
            return self.predict_detail(features, cfg.variant, &cfg.params);
        }
        Ok(Prediction {
            seconds: self.predict_config(features, cfg)?,
            uncertainty: self.uncertainty_config(features, cfg),
            clamped: None,
        })
    }
    /// [`Model::predict_detail_config`] of each of `cfgs`, all for the matrix of `features`,
    /// one result per configuration in order (a refused configuration is its own error). By
    /// default one call per configuration; a model that computes something once per matrix
    /// (`sparsecast`: the reference of its relative corrections) overrides it, and a wrapper
    /// forwards it. Must give exactly what the calls one by one give.
    fn predict_detail_configs(
        &self,
        features: &Features,
        cfgs: &[KernelConfig],
    ) -> Vec<Result<Prediction>> {
        cfgs.iter()
            .map(|c| self.predict_detail_config(features, c))
            .collect()
    }
    /// A second stage's recommendation among the model's own predictions of one matrix,
    /// `predicted` = `(configuration label, seconds)` fastest first: the index of the one to
    /// recommend, or `None` to recommend the fastest predicted (the default; see
    /// [`crate::learn::stage`] for the one `sparsecast` has). `family` is the matrix's family
    /// as the training tables name it, if known.
    fn pick(
        &self,
        features: &Features,
        predicted: &[(String, f64)],
        family: Option<&str>,
    ) -> Option<usize> {
        let _ = (features, predicted, family);
        None
    }
}

/// A reference to a model is a model (so that [`Bounded`] can wrap a model of a profile).
impl<M: Model + ?Sized> Model for &M {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn precision(&self) -> Precision {
        (**self).precision()
    }
    fn statistic(&self) -> Statistic {
        (**self).statistic()
    }
    fn variants(&self) -> Vec<Variant> {
        (**self).variants()
    }
    fn predict_shape(&self, shape: &Shape, variant: Variant, params: &FormatParams) -> Result<f64> {
        (**self).predict_shape(shape, variant, params)
    }
    fn predict(&self, features: &Features, variant: Variant, params: &FormatParams) -> Result<f64> {
        (**self).predict(features, variant, params)
    }
    fn uncertainty(
        &self,
        features: &Features,
        variant: Variant,
        params: &FormatParams,
    ) -> Option<f64> {
        (**self).uncertainty(features, variant, params)
    }
    fn predict_detail(
        &self,
        features: &Features,
        variant: Variant,
        params: &FormatParams,
    ) -> Result<Prediction> {
        (**self).predict_detail(features, variant, params)
    }
    fn explain(&self, features: &Features, variant: Variant, params: &FormatParams) -> String {
        (**self).explain(features, variant, params)
    }
    fn configs(&self) -> Vec<KernelConfig> {
        (**self).configs()
    }
    fn predict_config(&self, features: &Features, cfg: &KernelConfig) -> Result<f64> {
        (**self).predict_config(features, cfg)
    }
    fn uncertainty_config(&self, features: &Features, cfg: &KernelConfig) -> Option<f64> {
        (**self).uncertainty_config(features, cfg)
    }
    fn predict_detail_config(&self, features: &Features, cfg: &KernelConfig) -> Result<Prediction> {
        (**self).predict_detail_config(features, cfg)
    }
    fn predict_detail_configs(
        &self,
        features: &Features,
        cfgs: &[KernelConfig],
    ) -> Vec<Result<Prediction>> {
        (**self).predict_detail_configs(features, cfgs)
    }
    fn pick(
        &self,
        features: &Features,
        predicted: &[(String, f64)],
        family: Option<&str>,
    ) -> Option<usize> {
        (**self).pick(features, predicted, family)
    }
}

/// The few numbers of a matrix the analytical model reads: its size, the mode and maximum of its
/// row lengths (the papers' target `P_NZ` for CSR and ELL) and its HYB split — the formats' own
/// matrix summary ([`crate::formats::Summary`]), under the models' name.
///
/// Usually taken from [`Features`] ([`Shape::from_features`]); built directly for benchmark
/// matrices ([`Shape::constant`]) and from row lengths where a HYB width other than Bell &
/// Garland's is wanted ([`Shape::from_row_lengths`]).
pub use crate::formats::Summary as Shape;

impl Shape {
    /// The summary of `f` with the counts that size the padded formats (SELL-C-σ slots, BSR
    /// blocks, DIA diagonals) under `params`, where the features carry them
    /// ([`crate::features::Access`]); without them those formats cannot be sized.
    pub fn for_params(f: &Features, params: &FormatParams) -> Shape {
        match &f.access {
            Some(a) => a.add_counts(Shape::from_features(f), params),
            None => Shape::from_features(f),
        }
    }

    /// Bytes the format's arrays take on the device ([`crate::formats::FormatKind::footprint`]),
    /// `x` once and `y` once: what must fit in its memory (the papers' models refuse beyond
    /// it). An ELL width shorter than the longest row is refused; cuSPARSE's sliced ELL (its
    /// layout is the library's) or a count the summary lacks is [`Error::Unsupported`].
    pub fn working_set_bytes(
        &self,
        variant: Variant,
        params: &FormatParams,
        value_bytes: u64,
    ) -> Result<u64> {
        let kind = self.stored_kind(variant, params)?;
        Ok(self.working_set(kind, params, value_bytes)?)
    }

    /// Bytes one SpMV of `variant` must move at least: [`Shape::working_set_bytes`]
    /// less the padding its kernel may skip and the columns of `x` no entry can touch
    /// ([`crate::formats::Summary::moved`]). The numerator of the effective bandwidth and of
    /// the bandwidth ceiling ([`DeviceBounds::clamp`]). Refused and unsupported as
    /// [`Shape::working_set_bytes`] (the two share their checks).
    pub fn moved_bytes(
        &self,
        variant: Variant,
        params: &FormatParams,
        value_bytes: u64,
    ) -> Result<u64> {
        let kind = self.stored_kind(variant, params)?;
        Ok(self.moved(kind, params, value_bytes)?)
    }

    /// The format of `variant`'s arrays, after the checks the byte counts share: our kernel's,
    /// or the caller's CSR or COO arrays that cuSPARSE's CSR and COO algorithms read (at least
    /// those bytes move, whatever the library adds). cuSPARSE's sliced ELL is refused: its
    /// slots are laid out unsorted (σ = 1), not under `params`, and what its kernel skips is
    /// the library's.
    fn stored_kind(
        &self,
        variant: Variant,
        params: &FormatParams,
    ) -> Result<crate::formats::FormatKind> {
        use crate::formats::FormatKind;
        let kind = variant.format();
        if variant.is_vendor() && !matches!(kind, FormatKind::Csr | FormatKind::Coo) {
            return Err(Error::Unsupported(format!(
                "no working-set size for {variant} from the matrix summary"
            )));
        }
        if kind == FormatKind::Ell {
            self.ell_width(params)?;
        }
        Ok(kind)
    }
}

/// Models for the tests of this module's files.
#[cfg(test)]
pub(crate) mod testing {
    use super::*;

    /// Predicts `seconds` (f64) for every one of `variants`.
    pub struct Constant {
        pub variants: Vec<Variant>,
        pub seconds: f64,
    }

    impl Model for Constant {
        fn name(&self) -> &str {
            "constant"
        }
        fn precision(&self) -> Precision {
            Precision::F64
        }
        fn variants(&self) -> Vec<Variant> {
            self.variants.clone()
        }
        fn predict(&self, _: &Features, _: Variant, _: &FormatParams) -> Result<f64> {
            Ok(self.seconds)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Csr;

    #[test]
    fn shape_from_row_lengths_matches_features() {
        let lens = [3usize, 1, 3, 5000, 0, 1, 3];
        let s = Shape::from_row_lengths(100, &lens, None);
        assert_eq!(
            (s.nrows, s.nnz, s.mode_row_len, s.max_row_len),
            (7, 5011, 3, 5000)
        );
        // Fewer than 4096 rows: Bell & Garland put everything in COO.
        assert_eq!((s.hyb_width, s.hyb_coo_nnz), (0, 5011));
        let s3 = Shape::from_row_lengths(100, &lens, Some(3));
        assert_eq!(s3.hyb_coo_nnz, 4997);
        // Ties: the shorter length wins, as in the features.
        assert_eq!(
            Shape::from_row_lengths(9, &[2, 7, 7, 2], None).mode_row_len,
            2
        );
        let e = Shape::from_row_lengths(0, &[], None);
        assert_eq!((e.mode_row_len, e.max_row_len, e.nnz), (0, 0, 0));

        let mut rows = Vec::new();
        let mut cols = Vec::new();
        for (i, &l) in [4usize, 0, 2, 4, 9].iter().enumerate() {
            for c in 0..l {
                rows.push(i as u32);
                cols.push(c as u32);
            }
        }
        let a = Csr::<f64>::from_triplets(5, 10, &rows, &cols, &vec![1.0; rows.len()]).unwrap();
        let f = Features::compute(&a);
        assert_eq!(
            Shape::from_features(&f),
            Shape::from_row_lengths(10, &a.row_lengths(), None)
        );
    }

    #[test]
    fn constant_shape_is_a_benchmark_matrix() {
        let s = Shape::constant(5000, 5000, 7);
        assert_eq!(s, Shape::from_row_lengths(5000, &vec![7; 5000], None));
        let s = Shape::constant(10, 20, 7);
        assert_eq!(s, Shape::from_row_lengths(20, &[7; 10], None));
    }

    #[test]
    fn working_set_counts_arrays_and_vectors() {
        let s = Shape::from_row_lengths(10, &[2, 2, 4], None);
        let p = FormatParams::default();
        // CSR: 4 row pointers × 4 B + 8 entries × (4 + 8) B + (10 + 3) × 8 B.
        let csr = Variant::Csr {
            threads_per_row: 32,
        };
        assert_eq!(s.working_set_bytes(csr, &p, 8).unwrap(), 16 + 96 + 104);
        // ELL: 3 rows × width 4 × 12 B + vectors.
        assert_eq!(s.working_set_bytes(Variant::Ell, &p, 8).unwrap(), 144 + 104);
        let mut narrow = p.clone();
        narrow.ell.width = Some(2);
        assert!(s.working_set_bytes(Variant::Ell, &narrow, 8).is_err());
        // HYB of 3 rows: width 0, all 8 entries in COO.
        assert_eq!(s.working_set_bytes(Variant::Hyb, &p, 8).unwrap(), 128 + 104);
        // Width 2: ELL 3 × 2 × 12 B + COO 2 entries × 16 B + vectors.
        let s2 = Shape::from_row_lengths(10, &[2, 2, 4], Some(2));
        narrow.hyb.width = Some(2);
        assert_eq!(
            s2.working_set_bytes(Variant::Hyb, &narrow, 8).unwrap(),
            72 + 32 + 104
        );
        assert!(s.working_set_bytes(Variant::Hyb, &narrow, 8).is_err());
    }

    #[test]
    fn moved_bytes_leave_out_the_padding_the_kernels_skip_and_the_unread_x() {
        let p = FormatParams::default();
        // Rows of 2, 2 and 4 entries over 8 columns: ELL of width 4 stores 12 slots, 4 of them
        // padding, whose column indices are read (4 B) and values are not (8 B each).
        let s = Shape::from_row_lengths(8, &[2, 2, 4], None);
        assert_eq!(
            s.moved_bytes(Variant::Ell, &p, 8).unwrap(),
            144 + 88 - 4 * 8
        );
        assert_eq!(s.moved_bytes(Variant::Ell, &p, 4).unwrap(), 96 + 44 - 4 * 4);
        // A wider given width pads more: 3 × 6 slots, 10 of them padding.
        let mut wide = p.clone();
        wide.ell.width = Some(6);
        assert_eq!(
            s.moved_bytes(Variant::Ell, &wide, 8).unwrap(),
            s.working_set_bytes(Variant::Ell, &wide, 8).unwrap() - 10 * 8
        );
        // HYB of width 2: its ELL part holds 6 of the 8 entries in 6 slots, no padding.
        let s2 = Shape::from_row_lengths(8, &[2, 2, 4], Some(2));
        let mut w2 = p.clone();
        w2.hyb.width = Some(2);
        assert_eq!(
            s2.moved_bytes(Variant::Hyb, &w2, 8).unwrap(),
            s2.working_set_bytes(Variant::Hyb, &w2, 8).unwrap()
        );
        // Rows of 1, 1 and 3 at width 2: 6 slots for 4 entries, 2 padding; one entry in COO.
        let s3 = Shape::from_row_lengths(5, &[1, 1, 3], Some(2));
        assert_eq!(
            s3.moved_bytes(Variant::Hyb, &w2, 8).unwrap(),
            s3.working_set_bytes(Variant::Hyb, &w2, 8).unwrap() - 2 * 8
        );
        // Formats without padding move what they store; cuSPARSE's CSR and COO algorithms read
        // the caller's CSR and COO arrays, its sliced ELL has no size.
        use crate::backend::VendorAlg;
        let csr = Variant::Csr { threads_per_row: 4 };
        assert_eq!(
            s.moved_bytes(csr, &p, 8).unwrap(),
            s.working_set_bytes(csr, &p, 8).unwrap()
        );
        for (alg, ours) in [
            (VendorAlg::CsrAlg1, csr),
            (VendorAlg::CsrAlg2, Variant::CsrMerge),
            (VendorAlg::CooAlg1, Variant::Coo),
            (VendorAlg::CooAlg2, Variant::Coo),
        ] {
            let v = Variant::Vendor(alg);
            assert_eq!(
                s.moved_bytes(v, &p, 8).unwrap(),
                s.moved_bytes(ours, &p, 8).unwrap(),
                "{v}"
            );
        }
        assert_ne!(
            s.moved_bytes(Variant::Coo, &p, 8).unwrap(),
            s.moved_bytes(csr, &p, 8).unwrap()
        );
        let vendor = Variant::Vendor(VendorAlg::SellAlg1);
        assert!(s.moved_bytes(vendor, &p, 8).is_err());
        // 3 rows, 8 entries, 1,000 columns: at most 8 values of x are read, not 1,000.
        let wide = Shape::from_row_lengths(1000, &[2, 2, 4], None);
        assert_eq!(
            wide.working_set_bytes(csr, &p, 8).unwrap() - wide.moved_bytes(csr, &p, 8).unwrap(),
            (1000 - 8) * 8
        );
    }
}
