//! The value type of a sparse matrix: `f32` or `f64`, behind one small trait so that hot loops are
//! monomorphized (no dynamic typing of values inside kernels).

use std::fmt::{Debug, Display};
use std::iter::Sum;
use std::ops::{Add, AddAssign, Mul};

/// Floating-point precision of matrix values, as chosen on the command line.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// 32-bit IEEE single precision.
    F32,
    /// 64-bit IEEE double precision.
    F64,
}

impl Precision {
    /// Bytes of one value.
    pub fn bytes(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F64 => 8,
        }
    }
    /// `"f32"` or `"f64"`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }
}

impl Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A matrix value type (`f32` or `f64`).
pub trait Scalar:
    Copy
    + Default
    + Send
    + Sync
    + PartialEq
    + PartialOrd
    + Debug
    + Display
    + Add<Output = Self>
    + Mul<Output = Self>
    + AddAssign
    + Sum
    + num_traits::Float
    + bytemuck::Pod
    + 'static
{
    /// The precision this type represents.
    const PRECISION: Precision;
    /// Size in bytes.
    const BYTES: usize;
    /// Convert from `f64` (rounding for `f32`). (Named so as not to clash with `num_traits`.)
    fn cast_f64(v: f64) -> Self;
    /// Widen to `f64`.
    fn as_f64(self) -> f64;
}

impl Scalar for f32 {
    const PRECISION: Precision = Precision::F32;
    const BYTES: usize = 4;
    #[inline(always)]
    fn cast_f64(v: f64) -> Self {
        v as f32
    }
    #[inline(always)]
    fn as_f64(self) -> f64 {
        self as f64
    }
}

impl Scalar for f64 {
    const PRECISION: Precision = Precision::F64;
    const BYTES: usize = 8;
    #[inline(always)]
    fn cast_f64(v: f64) -> Self {
        v
    }
    #[inline(always)]
    fn as_f64(self) -> f64 {
        self
    }
}
