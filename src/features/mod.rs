//! Matrix features: everything the performance models use, computed in one parallel pass over
//! the entries plus a pass over the row lengths.
//!
//! The features are those of Lehnert et al. (Euro-Par 2016, Table 1: nRows, nnz, minNnz,
//! maxNnz, modeNnz, medianNnz, minDist, maxDist, bandwidth, dispersion, density) and the inputs
//! of the strip models of Guo et al. (TPDS 2014 §3.4: `P_NZ` is the mode of the row lengths for
//! CSR and their maximum for ELL; the strip counts come from [`Features::strips`] and
//! [`Features::coo_strips`]), plus what the format choice needs: ELL padding, the HYB split,
//! occupied diagonals (DIA), a log2 histogram of row lengths and a count of non-finite values.
//!
//! Conventions for degenerate matrices: a matrix without rows has every row statistic 0;
//! [`Features::min_dist`]/[`Features::max_dist`] are `None` when no row holds two entries;
//! ratios with a zero denominator are documented on each field.
//!
//! ```
//! use sparsecast::{features::Features, Csr};
//! let a = Csr::<f64>::from_triplets(3, 4, &[0, 0, 2], &[0, 3, 1], &[1.0, 2.0, 3.0]).unwrap();
//! let f = Features::compute(&a);
//! assert_eq!((f.nnz, f.max_nnz, f.empty_rows, f.bandwidth), (3, 2, 1, 3));
//! assert_eq!((f.min_dist, f.max_dist), (Some(3), Some(3)));
//! ```

pub mod access;
mod rows;
pub mod scan;

pub use access::Access;
pub use scan::{Scan, StripScans};

use crate::matrix::Csr;
use crate::scalar::Scalar;
use serde::{Deserialize, Serialize};

/// The features of one matrix. Computed by [`Features::compute`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Features {
    /// Rows (nRows).
    pub nrows: usize,
    /// Columns.
    pub ncols: usize,
    /// Stored entries, explicit zeros included (nnz).
    pub nnz: usize,
    /// Fewest entries in a row (minNnz); 0 without rows.
    pub min_nnz: usize,
    /// Most entries in a row (maxNnz; `P_NZ` of the ELL model); 0 without rows.
    pub max_nnz: usize,
    /// Most frequent row length (modeNnz; `P_NZ` of the CSR model). Ties go to the **smallest**
    /// of the most frequent lengths. 0 without rows.
    pub mode_nnz: usize,
    /// Lower median of the row lengths (medianNnz): the element at 0-based position
    /// `(nrows − 1) / 2` of the sorted lengths, so always an actual row length (for an even
    /// count, the smaller of the two middle ones). Found by counting, not sorting. 0 without rows.
    pub median_nnz: usize,
    /// Mean row length `nnz / nrows`; 0 without rows.
    pub mean_nnz: f64,
    /// Population standard deviation of the row lengths (dispersion), divided by `nrows`, not
    /// `nrows − 1`; computed from exact integer sums. 0 without rows.
    pub std_nnz: f64,
    /// minDist: over every row with at least two entries, the smallest gap `c[k+1] − c[k]`
    /// between consecutive column indices (so ≥ 1); the minimum over those rows. `None` if no
    /// row has two entries.
    pub min_dist: Option<usize>,
    /// maxDist: over every row with at least two entries, the largest gap between consecutive
    /// column indices; the maximum over those rows. `None` if no row has two entries.
    pub max_dist: Option<usize>,
    /// Largest `|i − j|` over the stored entries (bandwidth); 0 without entries.
    pub bandwidth: usize,
    /// `nnz / (nrows · ncols)`; 0 when either dimension is 0.
    pub density: f64,
    /// Rows without entries.
    pub empty_rows: usize,
    /// ELL slots per entry: `max_nnz · nrows / nnz` (1 = no padding); 1 when `nnz = 0`.
    pub ell_padding_ratio: f64,
    /// Width of HYB's ELL part by the rule of Bell & Garland
    /// ([`crate::formats::hyb::auto_width`]).
    pub hyb_width: usize,
    /// Entries beyond `hyb_width` in their row, i.e. HYB's COO part: `Σ max(0, len − width)`.
    pub hyb_coo_nnz: usize,
    /// `hyb_coo_nnz / nnz`; 0 when `nnz = 0`.
    pub hyb_coo_share: f64,
    /// Distinct occupied diagonals `j − i` (what DIA would store).
    pub diagonals: usize,
    /// Log2 histogram of the row lengths: bucket 0 counts empty rows, bucket `k ≥ 1` counts rows
    /// with a length in `[2^(k−1), 2^k)`. Its length is one more than the bucket of `max_nnz`
    /// (empty for a matrix without rows).
    pub row_len_log2_hist: Vec<usize>,
    /// Values that are NaN or ±infinite (in the precision the matrix was read in).
    pub nonfinite: usize,
    /// How the kernels would touch memory ([`Access`]): per-warp imbalance, locality of `x`,
    /// the padded formats' counts. `None` in features saved before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<Access>,
}

impl Features {
    /// Compute every feature of `m`: one parallel pass over the entries ([`Scan::of`], O(nnz)
    /// work, bitsets of `nrows + ncols` and `ncols` bits) and passes over the row lengths
    /// ([`scan::compose`]).
    pub fn compute<T: Scalar>(m: &Csr<T>) -> Features {
        scan::compose(m.ncols, &m.row_lengths(), &[&Scan::of(m, 0..m.nrows)])
    }

    /// Whether these features hold the rows' `x` sectors by their length
    /// ([`Access::row_len_sectors`], session 71) — or need none, without entries. Features
    /// computed before it lack them until `sparsecast refeature` adds them.
    pub fn has_row_len_sectors(&self) -> bool {
        self.nnz == 0
            || self
                .access
                .as_ref()
                .is_some_and(|a| !a.row_len_sectors.is_empty())
    }

    /// These features (of `m`) with HYB split at `width` instead of Bell & Garland's rule: the
    /// split the HYB conversion makes with that width parameter.
    pub fn split_hyb_at<T: Scalar>(&mut self, m: &Csr<T>, width: usize) {
        self.hyb_width = width;
        self.hyb_coo_nnz = (0..m.nrows)
            .map(|i| m.row_len(i).saturating_sub(width))
            .sum();
        self.hyb_coo_share = self.hyb_coo_nnz as f64 / self.nnz.max(1) as f64;
        if let Some(a) = self.access.as_mut() {
            a.hyb_line_carries = None;
        }
    }

    /// Number of row strips `⌈nrows / strip_rows⌉` — the `I_CSR` / `I_ELL` of Guo et al. (TPDS
    /// 2014 §3.4.1). This is the hook the instrument work uses with the device's strip sizes
    /// `S_CSR` (SMs × warps per SM) and `S_ELL` (SMs × threads per SM). A `strip_rows` of 0 is
    /// treated as 1.
    pub fn strips(&self, strip_rows: usize) -> usize {
        self.nrows.div_ceil(strip_rows.max(1))
    }

    /// Number of COO strips `⌈nnz / strip_size⌉` (`I_COO`: one thread per entry). A
    /// `strip_size` of 0 is treated as 1.
    pub fn coo_strips(&self, strip_size: usize) -> usize {
        self.nnz.div_ceil(strip_size.max(1))
    }
}
