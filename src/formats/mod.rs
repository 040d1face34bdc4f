//! Storage formats. CSR ([`crate::Csr`]) is canonical; every other format is converted from it.
//!
//! One module per format holds its layout, its conversion from CSR, its exact storage footprint
//! and its parallel CPU kernel. The CUDA backend uploads exactly these arrays, so the footprint
//! reported here is the number the GPU memory check uses: it counts the arrays as they are stored
//! on the device, with 32-bit indices and offsets (`u32`/`i32`) and `T` values.
//!
//! Padding entries (ELL, HYB's ELL part, SELL-C-σ) carry the column index [`PAD`] and the value 0;
//! kernels skip them.

pub mod bsr;
pub mod coo;
pub mod dia;
pub mod ell;
pub mod hyb;
pub mod jad;
pub mod sell;
mod util;

use crate::matrix::Csr;
use crate::scalar::Scalar;
use crate::Result;
use serde::{Deserialize, Serialize};

pub use bsr::Bsr;
pub use coo::Coo;
pub use dia::Dia;
pub use ell::Ell;
pub use hyb::Hyb;
pub use jad::Jad;
pub use sell::Sell;

/// Column index marking a padding slot.
pub const PAD: u32 = u32::MAX;

/// The storage formats sparsecast knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FormatKind {
    /// Compressed sparse row (canonical).
    Csr,
    /// Coordinate (row, column, value) triplets sorted by row.
    Coo,
    /// ELLPACK: every row padded to the same width, column-major.
    Ell,
    /// Hybrid: ELL part of a chosen width plus a COO remainder (Bell & Garland).
    Hyb,
    /// Jagged diagonals: rows sorted by length, stored diagonal by diagonal.
    Jad,
    /// SELL-C-σ: slices of C rows, rows sorted by length within windows of σ rows.
    Sell,
    /// Diagonal format: one dense array per occupied diagonal.
    Dia,
    /// Block sparse row with square dense blocks.
    Bsr,
}

impl FormatKind {
    /// Every format, in display order.
    pub const ALL: [FormatKind; 8] = [
        FormatKind::Csr,
        FormatKind::Coo,
        FormatKind::Ell,
        FormatKind::Hyb,
        FormatKind::Jad,
        FormatKind::Sell,
        FormatKind::Dia,
        FormatKind::Bsr,
    ];

    /// Lower-case name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            FormatKind::Csr => "csr",
            FormatKind::Coo => "coo",
            FormatKind::Ell => "ell",
            FormatKind::Hyb => "hyb",
            FormatKind::Jad => "jad",
            FormatKind::Sell => "sell",
            FormatKind::Dia => "dia",
            FormatKind::Bsr => "bsr",
        }
    }

    /// Parse a name as produced by [`FormatKind::name`].
    pub fn parse(s: &str) -> Option<FormatKind> {
        FormatKind::ALL.into_iter().find(|f| f.name() == s)
    }
}

impl std::fmt::Display for FormatKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Parameters of the formats that have any. `None` means "choose automatically".
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FormatParams {
    /// ELL width (entries per row). Default: the longest row.
    pub ell_width: Option<usize>,
    /// Width of HYB's ELL part. Default: the rule of Bell & Garland (see [`hyb::auto_width`]).
    pub hyb_width: Option<usize>,
    /// SELL-C-σ slice height C (rows per slice).
    pub sell_c: usize,
    /// SELL-C-σ sorting window σ (rows); 1 means no sorting. Must be a multiple of C or 1.
    pub sell_sigma: usize,
    /// BSR block size (square blocks).
    pub bsr_block: usize,
    /// DIA is refused when its stored entries exceed this many times the non-zeros.
    pub dia_max_fill: f64,
    /// Any conversion whose footprint would exceed this many bytes is refused before allocating.
    pub max_bytes: u64,
}

impl Default for FormatParams {
    fn default() -> Self {
        FormatParams {
            ell_width: None,
            hyb_width: None,
            sell_c: 32,
            sell_sigma: 256,
            bsr_block: 4,
            dia_max_fill: 10.0,
            max_bytes: default_max_bytes(),
        }
    }
}

/// Half the physical memory (from `/proc/meminfo`), or 4 GiB where that cannot be read.
pub fn default_max_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemTotal:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024 / 2)
        .unwrap_or(4 << 30)
}

/// What every storage format reports and does.
pub trait SparseFormat<T: Scalar>: Send + Sync {
    /// Which format this is.
    fn kind(&self) -> FormatKind;
    /// Rows of the matrix.
    fn nrows(&self) -> usize;
    /// Columns of the matrix.
    fn ncols(&self) -> usize;
    /// Stored entries that are real matrix entries (the CSR's nnz).
    fn nnz(&self) -> usize;
    /// Stored value slots, padding included.
    fn stored_entries(&self) -> usize;
    /// Exact bytes of every array as stored on the device (32-bit indices, `T` values).
    fn footprint_bytes(&self) -> u64;
    /// Stored slots per real entry (1.0 = no padding). An empty matrix reports 1.0.
    fn fill_ratio(&self) -> f64 {
        if self.nnz() == 0 {
            1.0
        } else {
            self.stored_entries() as f64 / self.nnz() as f64
        }
    }
    /// `y = A·x` on the CPU, in parallel. `x.len() == ncols`, `y.len() == nrows`; every element
    /// of `y` is written.
    fn spmv(&self, x: &[T], y: &mut [T]);
}

impl<T: Scalar> SparseFormat<T> for Csr<T> {
    fn kind(&self) -> FormatKind {
        FormatKind::Csr
    }
    fn nrows(&self) -> usize {
        self.nrows
    }
    fn ncols(&self) -> usize {
        self.ncols
    }
    fn nnz(&self) -> usize {
        Csr::nnz(self)
    }
    fn stored_entries(&self) -> usize {
        Csr::nnz(self)
    }
    fn footprint_bytes(&self) -> u64 {
        (self.nrows as u64 + 1) * 4 + Csr::nnz(self) as u64 * (4 + T::BYTES as u64)
    }
    fn spmv(&self, x: &[T], y: &mut [T]) {
        csr_spmv(self, x, y)
    }
}

/// Parallel CSR SpMV on the CPU: rows are split into chunks of roughly equal work (rows plus
/// non-zeros) so that a few long rows do not serialize the work.
pub fn csr_spmv<T: Scalar>(a: &Csr<T>, x: &[T], y: &mut [T]) {
    use rayon::prelude::*;
    assert_eq!(x.len(), a.ncols, "x has the wrong length");
    assert_eq!(y.len(), a.nrows, "y has the wrong length");
    let cuts = util::row_cuts(a.nrows, a.nnz(), |i| a.row_ptr[i]);
    util::split_at_cuts(y, &cuts)
        .into_par_iter()
        .zip(cuts.par_windows(2))
        .for_each(|(ys, w)| {
            for (yi, i) in ys.iter_mut().zip(w[0]..w[1]) {
                let (c, v) = a.row(i);
                let mut s = T::zero();
                for (&c, &v) in c.iter().zip(v) {
                    s += v * x[c as usize];
                }
                *yi = s;
            }
        });
}

/// The checks every other format makes, for CSR itself: rows and non-zeros within 32-bit device
/// offsets, footprint within `params.max_bytes` (the copy is refused before it is made).
fn check_csr<T: Scalar>(csr: &Csr<T>, params: &FormatParams) -> Result<()> {
    util::check_rows("csr", csr.nrows)?;
    util::check_u32("csr", "non-zeros", csr.nnz() as u128)?;
    util::check_bytes(
        "csr",
        SparseFormat::footprint_bytes(csr) as u128,
        params.max_bytes,
    )
}

/// A matrix in any storage format.
#[derive(Clone, Debug)]
pub enum AnyFormat<T> {
    Csr(Csr<T>),
    Coo(Coo<T>),
    Ell(Ell<T>),
    Hyb(Hyb<T>),
    Jad(Jad<T>),
    Sell(Sell<T>),
    Dia(Dia<T>),
    Bsr(Bsr<T>),
}

impl<T: Scalar> AnyFormat<T> {
    /// Convert a CSR matrix to `kind` with `params`. Refuses (with a reason) where the format
    /// cannot or should not hold the matrix. `csr` must satisfy [`Csr::validate`] (every
    /// constructor and reader guarantees it; the CPU backend checks it before converting).
    pub fn convert(csr: &Csr<T>, kind: FormatKind, params: &FormatParams) -> Result<Self> {
        Ok(match kind {
            FormatKind::Csr => {
                check_csr(csr, params)?;
                AnyFormat::Csr(csr.clone())
            }
            FormatKind::Coo => AnyFormat::Coo(Coo::from_csr(csr, params)?),
            FormatKind::Ell => AnyFormat::Ell(Ell::from_csr(csr, params)?),
            FormatKind::Hyb => AnyFormat::Hyb(Hyb::from_csr(csr, params)?),
            FormatKind::Jad => AnyFormat::Jad(Jad::from_csr(csr, params)?),
            FormatKind::Sell => AnyFormat::Sell(Sell::from_csr(csr, params)?),
            FormatKind::Dia => AnyFormat::Dia(Dia::from_csr(csr, params)?),
            FormatKind::Bsr => AnyFormat::Bsr(Bsr::from_csr(csr, params)?),
        })
    }

    /// Convert back to CSR (the inverse of [`AnyFormat::convert`]; see each format's `to_csr` for
    /// what survives the round trip).
    pub fn to_csr(&self) -> Csr<T> {
        match self {
            AnyFormat::Csr(m) => m.clone(),
            AnyFormat::Coo(m) => m.to_csr(),
            AnyFormat::Ell(m) => m.to_csr(),
            AnyFormat::Hyb(m) => m.to_csr(),
            AnyFormat::Jad(m) => m.to_csr(),
            AnyFormat::Sell(m) => m.to_csr(),
            AnyFormat::Dia(m) => m.to_csr(),
            AnyFormat::Bsr(m) => m.to_csr(),
        }
    }

    /// The format as a trait object.
    pub fn as_dyn(&self) -> &dyn SparseFormat<T> {
        match self {
            AnyFormat::Csr(m) => m,
            AnyFormat::Coo(m) => m,
            AnyFormat::Ell(m) => m,
            AnyFormat::Hyb(m) => m,
            AnyFormat::Jad(m) => m,
            AnyFormat::Sell(m) => m,
            AnyFormat::Dia(m) => m,
            AnyFormat::Bsr(m) => m,
        }
    }
}
