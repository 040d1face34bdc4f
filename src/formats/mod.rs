//! Storage formats. CSR ([`crate::Csr`]) is canonical; every other format is converted from it.
//!
//! One module per format holds everything about it: its layout, its parameters with their
//! defaults (one type per format, e.g. [`EllParams`], gathered in [`FormatParams`], which is also
//! the command-line options and a plan block's `params`), its conversion from CSR, its parallel
//! CPU kernel, and its two sizing rules, computed from a [`Summary`] of the matrix:
//!
//! * `footprint`: the exact bytes of its arrays as stored on the device, with 32-bit indices and
//!   offsets (`u32`/`i32`) and `T` values, saturating ([`FormatKind::footprint`]);
//! * `admit`: whether its conversion accepts the matrix — the conversion calls it before
//!   allocating — as a [`Refusal`] whose message is written only when shown
//!   ([`FormatKind::admit`]).
//!
//! Everything else that sizes a format — the CUDA memory check, the benchmark suite's memory
//! bound, the models' working sets, the optimizer's admissions — calls these two rules; the CUDA
//! backend uploads exactly these arrays. A format is registered once: one entry of the registry
//! below (`formats!`), which generates [`FormatKind`], the rules' dispatch, [`AnyFormat`] and
//! [`FormatParams`].
//!
//! Padding entries (ELL, HYB's ELL part, SELL-C-σ) carry the column index [`PAD`] and the value 0;
//! kernels skip them (ELL-BRO marks its padding with a zero delta instead, see [`ell_bro`]).

pub mod bsr;
pub mod coo;
pub mod csr;
pub mod dia;
pub mod ell;
pub mod ell_bro;
pub mod hyb;
pub mod jad;
mod refusal;
pub mod segtile;
pub mod sell;
mod summary;
#[cfg(test)]
mod tests;
mod util;

use crate::matrix::Csr;
use crate::scalar::Scalar;
use crate::Result;
use serde::{Deserialize, Serialize};

pub use bsr::{Bsr, BsrParams};
pub use coo::Coo;
pub use csr::csr_spmv;
pub use dia::{Dia, DiaParams};
pub use ell::{Ell, EllParams};
pub use ell_bro::{EllBro, EllBroParams};
pub use hyb::{Hyb, HybParams};
pub use jad::Jad;
pub use refusal::{Missing, ParamError, Reason, Refusal};
pub use segtile::{SegTile, SegTileParams};
pub use sell::{Sell, SellParams};
pub use summary::{Counts, Summary};

/// Column index marking a padding slot.
pub const PAD: u32 = u32::MAX;

/// A format's name: its module's, or the one its registry entry gives (`as "name"`).
macro_rules! format_name {
    ($module:ident) => {
        stringify!($module)
    };
    ($module:ident, $name:literal) => {
        $name
    };
}

/// The registry of the storage formats: one entry per format — its kind (with its description),
/// its module and type, optionally its name (`as "name"`, where it is not the module's), and, if
/// it has parameters, their field in [`FormatParams`] and their type.
/// [`FormatKind`] (with its name), the dispatch of the rules
/// ([`FormatKind::footprint`], [`FormatKind::admit`]), [`AnyFormat`] and [`FormatParams`] are
/// generated from it, so registering a format is one entry here.
macro_rules! formats {
    ($(
        $(#[$doc:meta])*
        $kind:ident => $module:ident::$ty:ident $(as $name:literal)? $({ $field:ident: $params:ident })?
    ),* $(,)?) => {
        /// The storage formats sparsecast knows.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(rename_all = "lowercase")]
        pub enum FormatKind {
            $( $(#[$doc])* $(#[serde(rename = $name)])? $kind, )*
        }

        impl FormatKind {
            /// Every format, in display order.
            pub const ALL: [FormatKind; [$(FormatKind::$kind),*].len()] = [$(FormatKind::$kind),*];

            /// Lower-case name used on the command line and in reports (its module's name unless
            /// its entry gives one).
            pub fn name(self) -> &'static str {
                match self {
                    $( FormatKind::$kind => format_name!($module $(, $name)?), )*
                }
            }

            /// Bytes of the format's arrays as stored on the device (32-bit indices and offsets,
            /// `value_bytes` per value), for the matrix summarized by `s` with `params`;
            /// saturating at `u64::MAX`. The conversion's own [`SparseFormat::footprint_bytes`]
            /// uses the same formula. `Err` only with [`Reason::Unknown`] (the summary lacks a
            /// count this format needs) or [`Reason::Param`] (a parameter the size cannot be
            /// computed with).
            #[inline]
            pub fn footprint(
                self,
                s: &Summary,
                params: &FormatParams,
                value_bytes: u64,
            ) -> std::result::Result<u64, Refusal> {
                match self {
                    $( FormatKind::$kind => $module::footprint(s, params, value_bytes), )*
                }
            }

            /// Whether the conversion to this format accepts the matrix summarized by `s` with
            /// `params` and `value_bytes`-byte values: exactly the checks the conversion makes
            /// before allocating (it calls this), in its order. Cheap: a few multiplications, and
            /// a refusal builds no message until it is shown.
            #[inline]
            pub fn admit(
                self,
                s: &Summary,
                params: &FormatParams,
                value_bytes: u64,
            ) -> std::result::Result<(), Refusal> {
                match self {
                    $( FormatKind::$kind => $module::admit(s, params, value_bytes), )*
                }
            }
        }

        /// A matrix in any storage format.
        #[derive(Clone, Debug)]
        pub enum AnyFormat<T> {
            $( $(#[$doc])* $kind($ty<T>), )*
        }

        impl<T: Scalar> AnyFormat<T> {
            /// Convert a CSR matrix to `kind` with `params`. Refuses (with a reason) where the
            /// format cannot or should not hold the matrix ([`FormatKind::admit`]). `csr` must
            /// satisfy [`Csr::validate`] (every constructor and reader guarantees it; the CPU
            /// backend checks it before converting).
            pub fn convert(csr: &Csr<T>, kind: FormatKind, params: &FormatParams) -> Result<Self> {
                Ok(match kind {
                    $( FormatKind::$kind => AnyFormat::$kind(<$ty<T>>::from_csr(csr, params)?), )*
                })
            }

            /// Convert back to CSR (the inverse of [`AnyFormat::convert`]; see each format's
            /// `to_csr` for what survives the round trip).
            pub fn to_csr(&self) -> Csr<T> {
                match self {
                    $( AnyFormat::$kind(m) => m.to_csr(), )*
                }
            }

            /// The format as a trait object.
            pub fn as_dyn(&self) -> &dyn SparseFormat<T> {
                match self {
                    $( AnyFormat::$kind(m) => m, )*
                }
            }
        }

        /// The parameters of every format that has any, each format's own type (declared in its
        /// file, with its defaults). The same type is the command-line options
        /// (`#[command(flatten)]`: `--ell-width`, `--hyb-width`, `--sell-c`, `--sell-sigma`,
        /// `--dia-max-fill`, `--bsr-block`, `--ell-bro-slice`, `--segtile-width`) and a plan block's
        /// `params` (`#[serde(flatten)]`: `ell_width`, `hyb_width`, `sell_c`, `sell_sigma`,
        /// `dia_max_fill`, `bsr_block`, `ell_bro_slice`, `segtile_width`; absent
        /// fields take their defaults, unknown ones are refused).
        #[derive(clap::Args, Clone, Debug, PartialEq, Serialize, Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct FormatParams {
            $($(
                #[command(flatten)]
                #[serde(flatten)]
                pub $field: $params,
            )?)*
            /// Any conversion whose footprint would exceed this many bytes is refused before
            /// allocating. A property of the host, not of the matrix: neither an option nor
            /// stored in a plan.
            #[arg(skip = default_max_bytes())]
            #[serde(skip, default = "default_max_bytes")]
            pub max_bytes: u64,
        }

        impl Default for FormatParams {
            fn default() -> Self {
                FormatParams {
                    $($( $field: $params::default(), )?)*
                    max_bytes: default_max_bytes(),
                }
            }
        }
    };
}

formats! {
    /// Compressed sparse row (canonical).
    Csr => csr::Csr,
    /// Coordinate (row, column, value) triplets sorted by row.
    Coo => coo::Coo,
    /// ELLPACK: every row padded to the same width, column-major.
    Ell => ell::Ell { ell: EllParams },
    /// Hybrid: ELL part of a chosen width plus a COO remainder (Bell & Garland).
    Hyb => hyb::Hyb { hyb: HybParams },
    /// Jagged diagonals: rows sorted by length, stored diagonal by diagonal.
    Jad => jad::Jad,
    /// SELL-C-σ: slices of C rows, rows sorted by length within windows of σ rows.
    Sell => sell::Sell { sell: SellParams },
    /// Diagonal format: one dense array per occupied diagonal.
    Dia => dia::Dia { dia: DiaParams },
    /// Block sparse row with square dense blocks.
    Bsr => bsr::Bsr { bsr: BsrParams },
    /// ELL-BRO: sliced ELL whose column indices are delta-encoded and bit-packed into 64-bit
    /// symbols, one bit width per slice column (Tang et al.).
    EllBro => ell_bro::EllBro as "ell-bro" { ell_bro: EllBroParams },
    /// SEG-TILE: column tiles of row segments, 16-bit column offsets (for long rows).
    SegTile => segtile::SegTile { segtile: SegTileParams },
}

impl FormatKind {
    /// Parse a name as produced by [`FormatKind::name`].
    pub fn parse(s: &str) -> Option<FormatKind> {
        FormatKind::ALL.into_iter().find(|f| f.name() == s)
    }

    /// Which conversions of one matrix are the same: CSR is the matrix itself whatever the
    /// parameters; any other format is one conversion per parameter set (SELL's C and σ, HYB's
    /// width …). Kernels of one key can share the converted arrays
    /// ([`crate::backend::Backend::share_arrays`]).
    pub fn conversion_key(self, params: &FormatParams) -> String {
        match self {
            FormatKind::Csr => "csr".to_string(),
            k => format!("{}:{params:?}", k.name()),
        }
    }

    /// Bytes of the stored arrays that our kernel of this format may never read, `value_bytes`
    /// per value: the padding values of ELL and of HYB's ELL part (their kernel reads a padding
    /// slot's column index and skips its value); SELL-C-σ's padding values and column indices
    /// (its kernel skips the values, and a slice wide enough to be split over warps is walked
    /// per 32 lanes only as wide as their longest row: `kernels/sell.cu`); DIA's slots whose
    /// column lies outside the matrix ([`dia::DiaCount::outside`]: its kernel tests the column
    /// first; the zeros it stores inside the matrix it loads); 0 for the others (BSR's kernel
    /// loads its stored zeros, the rest store no padding). Saturating.
    /// See [`Summary::moved`].
    pub fn skipped_bytes(
        self,
        s: &Summary,
        params: &FormatParams,
        value_bytes: u64,
    ) -> std::result::Result<u64, Refusal> {
        Ok(match self {
            FormatKind::Ell => ell::padding_slots(s, params)?.saturating_mul(value_bytes),
            FormatKind::Hyb => hyb::padding_slots(s, params)?.saturating_mul(value_bytes),
            FormatKind::Sell => sell::padding_slots(s, params)?.saturating_mul(4 + value_bytes),
            FormatKind::Dia => dia::skipped_bytes(s, value_bytes),
            _ => 0,
        })
    }
}

impl std::fmt::Display for FormatKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Half the physical memory (from `/proc/meminfo`), or 4 GiB where that cannot be read.
/// Read once per process: every default [`FormatParams`] carries it, and the models build one
/// per configuration they parse (reading the file each time was 40 % of a prediction).
pub fn default_max_bytes() -> u64 {
    static MAX: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| {
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
    })
}

/// The option parser of a size that must be at least 1 (a size of 0 is an argument error, not a
/// skipped kernel): SELL-C-σ's C, BSR's block size, ELL-BRO's slice height.
pub(crate) fn at_least_one() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..)
}

/// Bytes of the vectors of one SpMV, `x` (`ncols` values) and `y` (`nrows` values), saturating:
/// what a working set or the effective bytes add to a format's footprint.
pub fn vector_bytes(nrows: u64, ncols: u64, value_bytes: u64) -> u64 {
    nrows.saturating_add(ncols).saturating_mul(value_bytes)
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
