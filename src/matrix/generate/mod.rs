//! Deterministic, seeded, parallel matrix generators.
//!
//! Every family produces a [`Csr<f64>`] directly: row lengths first (by formula or drawn), row
//! pointers by prefix sum, then columns and values filled in parallel, row chunk by row chunk.
//! Random draws come from ChaCha8 streams selected by chunk, with chunk boundaries that do not
//! depend on the thread count, so a given [`GeneratorSpec`] always yields the same matrix.
//! Sizes are checked before anything large is allocated: a matrix whose CSR would exceed
//! [`crate::formats::default_max_bytes`] (or the explicit limit of
//! [`GeneratorSpec::generate_with_limit`]) is refused with an error.
//!
//! Families:
//! * [`random()`] — the papers' benchmark matrices (`R × C`, constant, uniform or normal row
//!   lengths, uniformly random distinct columns);
//! * [`stencil()`] — 2-D 5-point, 3-D 7-point and 27-point Laplacians;
//! * [`banded()`] and [`block_diagonal()`];
//! * [`power_law()`] — Chung–Lu;
//! * [`kron()`] — `A ⊗ P` of a real matrix and a small pattern.
//!
//! ```
//! use sparsecast::matrix::generate::{GeneratorSpec, RowLength};
//! let spec = GeneratorSpec::Random {
//!     rows: 100,
//!     cols: 200,
//!     row_len: RowLength::Uniform { min: 2, max: 6 },
//!     seed: 7,
//! };
//! let m = spec.generate().unwrap();
//! assert_eq!((m.nrows, m.ncols), (100, 200));
//! assert!(m.row_lengths().iter().all(|&k| (2..=6).contains(&k)));
//! assert_eq!(m, spec.generate().unwrap());
//! ```

mod banded;
mod block_diag;
mod build;
mod kron;
mod power_law;
mod random;
mod stencil;

pub use banded::{banded, banded_nnz};
pub use block_diag::block_diagonal;
pub use kron::{kron, KronPattern};
pub use power_law::power_law;
pub use random::{random, RowLength};
pub use stencil::{stencil, Stencil};

use crate::matrix::Csr;
use crate::Result;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A generated matrix, described by its family and parameters. Serializes to JSON as an object
/// tagged by `"family"`, e.g.
/// `{"family":"random","rows":1000,"cols":1000,"row_len":{"dist":"normal","mean":16.0,"std":4.0},"seed":1}`
/// or `{"family":"stencil","stencil":"3d27","n":160}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "family", rename_all = "kebab-case")]
pub enum GeneratorSpec {
    /// Benchmark matrix of the papers: see [`random()`].
    Random {
        /// Rows `R`.
        rows: usize,
        /// Columns `C`.
        cols: usize,
        /// Distribution of the row lengths.
        row_len: RowLength,
        /// Random seed.
        seed: u64,
    },
    /// Finite-difference stencil: see [`stencil()`].
    Stencil {
        /// Which stencil.
        stencil: Stencil,
        /// Grid points per side.
        n: usize,
    },
    /// Band of half-bandwidth `half_bandwidth`: see [`banded()`].
    Banded {
        /// Order.
        n: usize,
        /// Entries per side of the diagonal.
        half_bandwidth: usize,
        /// Random seed (values).
        seed: u64,
    },
    /// Dense diagonal blocks: see [`block_diagonal()`].
    BlockDiagonal {
        /// Number of blocks.
        blocks: usize,
        /// Order of each block.
        block_size: usize,
        /// Random seed (values).
        seed: u64,
    },
    /// Chung–Lu power-law matrix: see [`power_law()`].
    PowerLaw {
        /// Order.
        n: usize,
        /// Mean row length.
        mean: f64,
        /// Degree exponent γ.
        exponent: f64,
        /// Random seed.
        seed: u64,
    },
    /// `A ⊗ P` with `A` read from a Matrix Market file: see [`kron()`].
    Kronecker {
        /// Matrix Market file holding `A`.
        matrix: PathBuf,
        /// The pattern `P`.
        pattern: KronPattern,
        /// Random seed (for a random pattern).
        seed: u64,
    },
}

impl GeneratorSpec {
    /// Generate the matrix, refusing one whose CSR would exceed
    /// [`crate::formats::default_max_bytes`].
    pub fn generate(&self) -> Result<Csr<f64>> {
        self.generate_with_limit(crate::formats::default_max_bytes())
    }

    /// Generate the matrix, refusing (before allocating) one whose CSR would exceed `max_bytes`.
    pub fn generate_with_limit(&self, max_bytes: u64) -> Result<Csr<f64>> {
        match self {
            GeneratorSpec::Random {
                rows,
                cols,
                row_len,
                seed,
            } => random(*rows, *cols, *row_len, *seed, max_bytes),
            GeneratorSpec::Stencil { stencil: s, n } => stencil(*s, *n, max_bytes),
            GeneratorSpec::Banded {
                n,
                half_bandwidth,
                seed,
            } => banded(*n, *half_bandwidth, *seed, max_bytes),
            GeneratorSpec::BlockDiagonal {
                blocks,
                block_size,
                seed,
            } => block_diagonal(*blocks, *block_size, *seed, max_bytes),
            GeneratorSpec::PowerLaw {
                n,
                mean,
                exponent,
                seed,
            } => power_law(*n, *mean, *exponent, *seed, max_bytes),
            GeneratorSpec::Kronecker {
                matrix,
                pattern,
                seed,
            } => {
                let a = crate::matrix::mm::read::<f64>(matrix)?;
                let p = pattern.build(*seed)?;
                kron(&a, &p, max_bytes)
            }
        }
    }

    /// A short name that identifies the matrix (usable as a file stem), e.g.
    /// `random-1000x1000-n16-4-s1`, `stencil3d27-160`, `kron-bcsstk13-dense4-s1`.
    pub fn name(&self) -> String {
        match self {
            GeneratorSpec::Random {
                rows,
                cols,
                row_len,
                seed,
            } => format!("random-{rows}x{cols}-{}-s{seed}", row_len.label()),
            GeneratorSpec::Stencil { stencil, n } => format!("stencil{}-{n}", stencil.label()),
            GeneratorSpec::Banded {
                n,
                half_bandwidth,
                seed,
            } => format!("banded-{n}-b{half_bandwidth}-s{seed}"),
            GeneratorSpec::BlockDiagonal {
                blocks,
                block_size,
                seed,
            } => format!("blockdiag-{blocks}x{block_size}-s{seed}"),
            GeneratorSpec::PowerLaw {
                n,
                mean,
                exponent,
                seed,
            } => format!("powerlaw-{n}-m{mean}-g{exponent}-s{seed}"),
            GeneratorSpec::Kronecker {
                matrix,
                pattern,
                seed,
            } => {
                let stem = matrix
                    .file_name()
                    .and_then(|s| s.to_str())
                    .map(|s| s.trim_end_matches(".gz").trim_end_matches(".mtx"))
                    .unwrap_or("matrix");
                format!("kron-{stem}-{}-s{seed}", pattern.label())
            }
        }
    }
}
