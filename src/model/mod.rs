//! Performance models: given a matrix's features, a kernel and its format parameters, predict
//! the SpMV time in seconds.
//!
//! Every model implements one trait, [`Model`], so that the analytical model of the papers
//! ([`analytical`]) and the statistical and machine-learning models of later work sit side by side
//! and are compared on the same data. [`fit`] holds the small least-squares fits they share.

pub mod accuracy;
pub mod analytical;
pub mod fit;
pub mod rank;

use crate::backend::Variant;
use crate::formats::FormatParams;
use crate::{Csr, Error, Precision, Result, Scalar};

pub use analytical::AnalyticalModel;
pub use rank::{rank, Ranked, Ranking};

/// A performance model of one device and precision.
pub trait Model: Send + Sync {
    /// Short name (`analytical`, …).
    fn name(&self) -> &str;
    /// The value precision the model predicts for.
    fn precision(&self) -> Precision;
    /// The kernels it can predict, in display order.
    fn variants(&self) -> Vec<Variant>;
    /// Predicted seconds of one SpMV of the matrix described by `shape` with `variant` and
    /// `params`. Fails with [`Error::Unsupported`] for a kernel the model does not cover and with
    /// [`Error::FormatRefused`] where the format cannot hold the matrix on the device.
    fn predict(&self, shape: &Shape, variant: Variant, params: &FormatParams) -> Result<f64>;
    /// A short note on what the prediction used (strip counts, `P_NZ`, the HYB split …); empty
    /// by default.
    fn explain(&self, shape: &Shape, variant: Variant, params: &FormatParams) -> String {
        let _ = (shape, variant, params);
        String::new()
    }
}

/// What the models need to know about a matrix: its size and its row-length distribution.
///
/// The distribution is a histogram of `(row length, number of rows)` pairs sorted by length,
/// without zero counts; every quantity the analytical model uses (mode, maximum, HYB width, the
/// entries beyond a width) is one pass over it, so a prediction costs microseconds however large
/// the matrix.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    /// Rows.
    pub nrows: u64,
    /// Columns.
    pub ncols: u64,
    /// Stored entries.
    pub nnz: u64,
    /// `(length, rows)` sorted by length, counts positive.
    pub row_lengths: Vec<(u64, u64)>,
}

impl Shape {
    /// The shape of a CSR matrix (one pass over the row pointers).
    pub fn from_csr<T: Scalar>(a: &Csr<T>) -> Shape {
        Shape::from_row_lengths(
            a.ncols as u64,
            a.row_ptr.windows(2).map(|w| (w[1] - w[0]) as u64),
        )
    }

    /// The shape of a matrix with `ncols` columns and the given row lengths.
    pub fn from_row_lengths(ncols: u64, lens: impl IntoIterator<Item = u64>) -> Shape {
        let mut counts: std::collections::BTreeMap<u64, u64> = Default::default();
        // Most matrices have few distinct lengths; a dense table for short rows avoids a tree
        // lookup per row.
        const DENSE: usize = 4096;
        let mut dense = vec![0u64; DENSE];
        let (mut nrows, mut nnz) = (0u64, 0u64);
        for l in lens {
            nrows += 1;
            nnz += l;
            match dense.get_mut(l as usize) {
                Some(c) => *c += 1,
                None => *counts.entry(l).or_default() += 1,
            }
        }
        let mut row_lengths: Vec<(u64, u64)> = dense
            .into_iter()
            .enumerate()
            .filter(|&(_, c)| c > 0)
            .map(|(l, c)| (l as u64, c))
            .collect();
        row_lengths.extend(counts);
        Shape {
            nrows,
            ncols,
            nnz,
            row_lengths,
        }
    }

    /// A matrix of `rows` rows of `pnz` entries each (a benchmark matrix).
    pub fn constant(rows: u64, cols: u64, pnz: u64) -> Shape {
        Shape {
            nrows: rows,
            ncols: cols,
            nnz: rows * pnz,
            row_lengths: if rows > 0 { vec![(pnz, rows)] } else { Vec::new() },
        }
    }

    /// The longest row (0 for a matrix without rows).
    pub fn max_row_len(&self) -> u64 {
        self.row_lengths.last().map_or(0, |&(l, _)| l)
    }

    /// The most frequent row length; among equally frequent lengths, the shortest. (0 for a
    /// matrix without rows.)
    pub fn mode_row_len(&self) -> u64 {
        let mut best = (0u64, 0u64);
        for &(l, c) in &self.row_lengths {
            if c > best.1 {
                best = (l, c);
            }
        }
        best.0
    }

    /// Entries beyond the first `width` of every row (HYB's COO part).
    pub fn entries_beyond(&self, width: u64) -> u64 {
        self.row_lengths
            .iter()
            .filter(|&&(l, _)| l > width)
            .map(|&(l, c)| (l - width) * c)
            .sum()
    }

    /// The ELL width for `params`: the given width, or the longest row. A width shorter than the
    /// longest row is refused.
    pub fn ell_width(&self, params: &FormatParams) -> Result<u64> {
        let max = self.max_row_len();
        match params.ell_width {
            None => Ok(max),
            Some(w) if (w as u64) >= max => Ok(w as u64),
            Some(w) => Err(Error::refused(
                "ell",
                format!("width {w} is shorter than the longest row ({max} entries)"),
            )),
        }
    }

    /// The HYB width for `params`: the given width, or Bell & Garland's rule.
    pub fn hyb_width(&self, params: &FormatParams) -> u64 {
        params
            .hyb_width
            .map_or_else(|| analytical::hyb::auto_width(self), |w| w as u64)
    }

    /// Bytes one SpMV must move at least: the format's arrays as stored on the device (32-bit
    /// indices and offsets, `value_bytes` per value, as [`crate::formats`] counts them), `x`
    /// once and `y` once. The numerator of the effective bandwidth.
    pub fn working_set_bytes(
        &self,
        variant: Variant,
        params: &FormatParams,
        value_bytes: u64,
    ) -> Result<u64> {
        let vectors = (self.ncols + self.nrows) * value_bytes;
        let arrays = match variant {
            Variant::Csr { .. } | Variant::CsrMerge => {
                (self.nrows + 1) * 4 + self.nnz * (4 + value_bytes)
            }
            Variant::Coo => self.nnz * (8 + value_bytes),
            Variant::Ell => self.nrows * self.ell_width(params)? * (4 + value_bytes),
            Variant::Hyb => {
                let w = self.hyb_width(params);
                self.nrows * w * (4 + value_bytes) + self.entries_beyond(w) * (8 + value_bytes)
            }
            other => {
                return Err(Error::Unsupported(format!(
                    "no working-set size for {other} from the row-length distribution"
                )))
            }
        };
        Ok(arrays + vectors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape_statistics() {
        let s = Shape::from_row_lengths(100, [3, 1, 3, 5000, 0, 1, 3]);
        assert_eq!(s.nrows, 7);
        assert_eq!(s.nnz, 5011);
        assert_eq!(s.row_lengths, vec![(0, 1), (1, 2), (3, 3), (5000, 1)]);
        assert_eq!(s.mode_row_len(), 3);
        assert_eq!(s.max_row_len(), 5000);
        assert_eq!(s.entries_beyond(3), 4997);
        assert_eq!(s.entries_beyond(0), 5011);
        // Ties: the shorter length wins.
        assert_eq!(Shape::from_row_lengths(9, [2, 7, 7, 2]).mode_row_len(), 2);
        let e = Shape::from_row_lengths(0, []);
        assert_eq!((e.mode_row_len(), e.max_row_len(), e.nnz), (0, 0, 0));
    }

    #[test]
    fn shape_of_csr_matches_rows() {
        let a =
            Csr::<f64>::from_triplets(4, 5, &[0, 0, 2, 3, 3, 3], &[0, 4, 1, 0, 2, 3], &[1.0; 6])
                .unwrap();
        let s = Shape::from_csr(&a);
        assert_eq!(s.row_lengths, vec![(0, 1), (1, 1), (2, 1), (3, 1)]);
        assert_eq!((s.nrows, s.ncols, s.nnz), (4, 5, 6));
    }

    #[test]
    fn working_set_counts_arrays_and_vectors() {
        let s = Shape::from_row_lengths(10, [2, 2, 4]);
        let p = FormatParams::default();
        // CSR: 4 row pointers × 4 B + 8 entries × (4 + 8) B + (10 + 3) × 8 B.
        assert_eq!(
            s.working_set_bytes(
                Variant::Csr {
                    threads_per_row: 32
                },
                &p,
                8
            )
            .unwrap(),
            16 + 96 + 104
        );
        // ELL: 3 rows × width 4 × 12 B + vectors.
        assert_eq!(s.working_set_bytes(Variant::Ell, &p, 8).unwrap(), 144 + 104);
        let mut narrow = p.clone();
        narrow.ell_width = Some(2);
        assert!(s.working_set_bytes(Variant::Ell, &narrow, 8).is_err());
        narrow.hyb_width = Some(2);
        // HYB width 2: ELL 3 × 2 × 12 B + COO 2 entries × 16 B + vectors.
        assert_eq!(
            s.working_set_bytes(Variant::Hyb, &narrow, 8).unwrap(),
            72 + 32 + 104
        );
    }
}
