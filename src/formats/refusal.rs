//! Why a format refuses a matrix, as a small `Copy` value: the formats' `admit` rules run for every
//! candidate of every block in the optimizer, so a refusal carries numbers only and its message is
//! written when it is shown ([`std::fmt::Display`], or converted into an [`Error`]).

use super::FormatKind;
use crate::Error;

/// A format refusing a matrix (or unable to size it from a [`super::Summary`]), and why.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Refusal {
    /// The format that refuses.
    pub format: FormatKind,
    /// Why.
    pub reason: Reason,
}

/// The reasons a format refuses a matrix.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Reason {
    /// More rows than the 32-bit row indices and permutations used on the device hold.
    Rows(u64),
    /// A count that is a 32-bit offset on the device (`what`) exceeds `u32::MAX`.
    Offsets {
        /// What is counted (`non-zeros`, `ELL slots (width × rows)`, …).
        what: &'static str,
        /// The count.
        count: u128,
    },
    /// The footprint (`bytes`, saturated at `u64::MAX`) exceeds the conversion limit
    /// ([`super::FormatParams::max_bytes`]).
    Budget {
        /// The footprint.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// A row is longer than the requested ELL width.
    RowLongerThanWidth {
        /// The longest row.
        longest: u64,
        /// The requested width.
        width: u64,
    },
    /// DIA would store more than `limit` times the non-zeros.
    Fill {
        /// Occupied diagonals.
        diagonals: u64,
        /// Rows.
        rows: u64,
        /// Non-zeros.
        nnz: u64,
        /// [`super::dia::DiaParams::max_fill`].
        limit: f64,
    },
    /// A DIA diagonal offset does not fit 32-bit signed offsets.
    DiagonalOffset(i64),
    /// SEG-TILE's row segments average fewer than `least` entries.
    ShortSegments {
        segments: u64,
        nnz: u64,
        width: u64,
        least: f64,
    },
    /// A parameter is out of its range.
    Param(ParamError),
    /// Not a refusal of the matrix: the summary lacks a count this format needs under these
    /// parameters (see [`super::Summary::with_counts`]), so it can neither be sized nor admitted.
    Unknown(Missing),
}

/// A format parameter out of its range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamError {
    /// SELL-C-σ with C = 0.
    SellC,
    /// SELL-C-σ with σ neither 1 nor a multiple of C.
    SellSigma {
        /// σ.
        sigma: usize,
        /// C.
        c: usize,
    },
    /// BSR with block size 0.
    BsrBlock,
    /// ELL-BRO with slice height 0.
    EllBroSlice,
    /// SEG-TILE with a tile width that is not a power of two up to 65,536.
    SegTileWidth,
}

/// A count a [`super::Summary`] does not hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Missing {
    /// The HYB split at `wanted`; the summary holds it at `held` only.
    HybSplit {
        /// Width of the split the summary holds.
        held: u64,
        /// Width asked for.
        wanted: u64,
    },
    /// DIA's occupied diagonals.
    Diagonals,
    /// SELL-C-σ's stored slots for this C and σ.
    SellSlots {
        /// C.
        c: usize,
        /// σ.
        sigma: usize,
    },
    /// BSR's block count for this block size.
    BsrBlocks {
        /// Block size.
        block: usize,
    },
    /// ELL-BRO's bit widths and symbols for this slice height.
    EllBroSymbols {
        /// Slice height.
        slice: usize,
    },
}

impl Refusal {
    /// A refusal of `format` for `reason`.
    pub fn new(format: FormatKind, reason: Reason) -> Self {
        Refusal { format, reason }
    }

    /// Whether this says only that the summary lacks a count ([`Reason::Unknown`]).
    pub fn is_unknown(&self) -> bool {
        matches!(self.reason, Reason::Unknown(_))
    }
}

fn gib(bytes: f64) -> f64 {
    bytes / (1u64 << 30) as f64
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Reason::Rows(rows) => write!(
                f,
                "{rows} rows exceed 32-bit row indices (at most {})",
                u32::MAX
            ),
            Reason::Offsets { what, count } => write!(
                f,
                "{what} = {count} exceeds 32-bit offsets (at most {})",
                u32::MAX
            ),
            Reason::Budget { bytes, limit } => {
                let need = if bytes == u64::MAX {
                    "more than 2^64 bytes".to_string()
                } else {
                    format!("{bytes} bytes ({:.2} GiB)", gib(bytes as f64))
                };
                write!(
                    f,
                    "needs {need}, more than the limit of {limit} bytes ({:.2} GiB)",
                    gib(limit as f64)
                )
            }
            Reason::RowLongerThanWidth { longest, width } => write!(
                f,
                "the longest row has {longest} entries, more than the requested ELL width {width}"
            ),
            Reason::Fill {
                diagonals,
                rows,
                nnz,
                limit,
            } => {
                let slots = diagonals as u128 * rows as u128;
                write!(
                    f,
                    "{diagonals} occupied diagonals × {rows} rows = {slots} stored slots for \
                     {nnz} non-zeros: fill {:.2} exceeds the limit dia_max_fill = {limit}",
                    slots as f64 / nnz as f64
                )
            }
            Reason::DiagonalOffset(o) => {
                write!(f, "diagonal offset {o} does not fit 32-bit signed offsets")
            }
            Reason::Param(ParamError::SellC) => f.write_str("slice height C must be at least 1"),
            Reason::Param(ParamError::SellSigma { sigma, c }) => write!(
                f,
                "sorting window σ = {sigma} must be 1 or a multiple of C = {c}"
            ),
            Reason::Param(ParamError::BsrBlock) => f.write_str("block size must be at least 1"),
            Reason::Param(ParamError::EllBroSlice) => {
                f.write_str("slice height must be at least 1")
            }
            Reason::ShortSegments {
                segments,
                nnz,
                width,
                least,
            } => write!(
                f,
                "tiles of {width} columns cut the rows into {segments} segments for {nnz} \
                 non-zeros: {:.2} per segment, fewer than segtile_min_segment = {least} (the format \
                 is for long rows)",
                nnz as f64 / segments as f64
            ),
            Reason::Param(ParamError::SegTileWidth) => {
                f.write_str("tile width must be a power of two up to 65536 (or 0: chosen)")
            }
            Reason::Unknown(Missing::HybSplit { held, wanted }) => write!(
                f,
                "HYB width {wanted}: the matrix summary holds the split at width {held} only \
                 (compute the features or summary with that width)"
            ),
            Reason::Unknown(Missing::Diagonals) => f.write_str(
                "the matrix summary does not hold the occupied diagonals (Summary::with_counts)",
            ),
            Reason::Unknown(Missing::SellSlots { c, sigma }) => write!(
                f,
                "the matrix summary does not hold the SELL-C-σ slots for C = {c}, σ = {sigma} \
                 (Summary::with_counts)"
            ),
            Reason::Unknown(Missing::BsrBlocks { block }) => write!(
                f,
                "the matrix summary does not hold the BSR blocks of size {block} \
                 (Summary::with_counts)"
            ),
            Reason::Unknown(Missing::EllBroSymbols { slice }) => write!(
                f,
                "the matrix summary does not hold the ELL-BRO symbols for slices of {slice} rows \
                 (Summary::with_counts)"
            ),
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "format {}: {}", self.format, self.reason)
    }
}

impl From<Refusal> for Error {
    /// [`Error::FormatRefused`], or [`Error::Unsupported`] where the summary only lacked a count.
    fn from(r: Refusal) -> Error {
        if r.is_unknown() {
            Error::Unsupported(r.to_string())
        } else {
            Error::refused(r.format.name(), r.reason.to_string())
        }
    }
}

/// `Err` when `rows` exceeds 32-bit row indices.
pub(crate) fn rows32(format: FormatKind, rows: u64) -> Result<(), Refusal> {
    if rows > u32::MAX as u64 {
        return Err(Refusal::new(format, Reason::Rows(rows)));
    }
    Ok(())
}

/// `Err` when `count` (a 32-bit offset on the device) exceeds `u32::MAX`.
pub(crate) fn offsets32(
    format: FormatKind,
    what: &'static str,
    count: u128,
) -> Result<(), Refusal> {
    if count > u32::MAX as u128 {
        return Err(Refusal::new(format, Reason::Offsets { what, count }));
    }
    Ok(())
}

/// `Err` when `bytes` exceeds `limit`.
pub(crate) fn budget(format: FormatKind, bytes: u64, limit: u64) -> Result<(), Refusal> {
    if bytes > limit {
        return Err(Refusal::new(format, Reason::Budget { bytes, limit }));
    }
    Ok(())
}
