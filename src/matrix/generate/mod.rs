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
//! * [`kron()`] — `A ⊗ P` of a real matrix and a small pattern;
//! * [`stack_rows()`] — other specs stacked by rows (heterogeneous matrices).
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
mod stack;
mod stencil;

pub use banded::{banded, banded_nnz};
pub use block_diag::block_diagonal;
pub use kron::{kron, KronPattern};
pub use power_law::power_law;
pub use random::{random, RowLength};
pub use stack::{stack_rows, stack_rows_with_limit};
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
    /// Other specs stacked by rows, top to bottom: see [`stack_rows()`].
    Stack {
        /// The parts.
        parts: Vec<GeneratorSpec>,
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
            GeneratorSpec::Stack { parts } => {
                let parts = parts
                    .iter()
                    .map(|s| s.generate_with_limit(max_bytes))
                    .collect::<Result<Vec<_>>>()?;
                stack_rows_with_limit(&parts, max_bytes)
            }
        }
    }

    /// `(rows, columns)` without generating, where the parameters say (not for a Kronecker
    /// product, whose factor is read from a file).
    pub fn dims(&self) -> Option<(usize, usize)> {
        Some(match self {
            GeneratorSpec::Random { rows, cols, .. } => (*rows, *cols),
            GeneratorSpec::Stencil { stencil: s, n } => {
                let n = match s {
                    Stencil::D2P5 => n * n,
                    _ => n * n * n,
                };
                (n, n)
            }
            GeneratorSpec::Banded { n, .. } | GeneratorSpec::PowerLaw { n, .. } => (*n, *n),
            GeneratorSpec::BlockDiagonal {
                blocks, block_size, ..
            } => (blocks * block_size, blocks * block_size),
            GeneratorSpec::Kronecker { .. } => return None,
            GeneratorSpec::Stack { parts } => {
                let d = parts.iter().map(|p| p.dims()).collect::<Option<Vec<_>>>()?;
                (
                    d.iter().map(|x| x.0).sum(),
                    d.iter().map(|x| x.1).max().unwrap_or(0),
                )
            }
        })
    }

    /// About how many non-zeros the spec makes, from its parameters alone (the mean row length
    /// times the rows; boundaries of stencils and bands ignored); `None` for a Kronecker product.
    pub fn est_nnz(&self) -> Option<f64> {
        Some(match self {
            GeneratorSpec::Random { rows, row_len, .. } => {
                let mean = match *row_len {
                    RowLength::Constant { nnz } => nnz as f64,
                    RowLength::Uniform { min, max } => (min + max) as f64 / 2.0,
                    RowLength::Normal { mean, .. } => mean,
                };
                *rows as f64 * mean
            }
            GeneratorSpec::Stencil { stencil: s, n } => {
                let n = *n as f64;
                match s {
                    Stencil::D2P5 => 5.0 * n * n,
                    Stencil::D3P7 => 7.0 * n * n * n,
                    Stencil::D3P27 => 27.0 * n * n * n,
                }
            }
            GeneratorSpec::Banded {
                n, half_bandwidth, ..
            } => *n as f64 * (2 * half_bandwidth + 1) as f64,
            GeneratorSpec::BlockDiagonal {
                blocks, block_size, ..
            } => (*blocks * block_size * block_size) as f64,
            GeneratorSpec::PowerLaw { n, mean, .. } => *n as f64 * mean,
            GeneratorSpec::Kronecker { .. } => return None,
            GeneratorSpec::Stack { parts } => {
                parts.iter().map(|p| p.est_nnz()).sum::<Option<f64>>()?
            }
        })
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
            GeneratorSpec::Stack { parts } => {
                let parts: Vec<String> = parts.iter().map(|s| s.name()).collect();
                format!("stack-{}", parts.join("+"))
            }
        }
    }
}
