//! The generated matrices of an evaluation, built on the fly and never stored.
//!
//! The real matrices of the corpus are small (the largest SuiteSparse matrix shipped has 7.7 M
//! non-zeros, most run in microseconds on an H200), so the bandwidth-bound regime comes from
//! generators:
//!
//! | set | matrices |
//! |---|---|
//! | `none` | — |
//! | `small` (CI, ~10⁴–10⁵ non-zeros) | 3-D 27-point stencil n = 12; Chung–Lu power law n = 4 000, mean 8; Kronecker expansion of the smallest corpus file to ~4·10⁴ |
//! | `default` (GPU, 10⁷–10⁸) | 3-D 27-point stencil n = 125 (~51 M); 2-D 5-point stencil n = 2 048 (~21 M); banded n = 2·10⁶, half-bandwidth 8 (~34 M); power law n = 10⁶, mean 16, γ = 2.5 (~16 M); Kronecker expansions of `G3_circuit` and `cage11` to ~3·10⁷ |
//!
//! **Kronecker expansions** are `A ⊗ J_k` with `J_k` the `k × k` all-ones pattern: every entry of
//! the real matrix `A` becomes a dense `k × k` block, so rows get `k` times longer and `k` times
//! more numerous while the sparsity structure of `A` is kept. `k = max(2, ⌊√(target / nnz(A))⌋)`
//! is chosen when the matrix is built, from `A`'s actual non-zeros; the record stores the
//! resolved [`GeneratorSpec`], so the matrix can be rebuilt with `sparsecast generate`. The
//! default set expands `G3_circuit` and `cage11` when the corpus holds them (a circuit matrix
//! with short rows, and a matrix with ~14 entries per row that becomes ~100); otherwise the
//! largest corpus files not yet used. Without a corpus there is no Kronecker matrix.
//!
//! Power-law generation costs about 125 ns per entry on one CPU core, so it is kept at ~1.6·10⁷.

use super::corpus::{CorpusEntry, MatrixSource};
use crate::matrix::generate::{kron, GeneratorSpec, KronPattern, Stencil};
use crate::{Csr, Result};
use std::path::PathBuf;

/// Which generated matrices to add to the corpus.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum GeneratedSet {
    /// No generated matrices.
    None,
    /// A few matrices of 10⁴–10⁵ non-zeros (for CI and the CPU backend).
    Small,
    /// Large matrices of 10⁷–10⁸ non-zeros (for a GPU).
    Default,
}

/// How to build a generated matrix.
#[derive(Clone, Debug, PartialEq)]
pub enum Recipe {
    /// A generator spec as it is.
    Spec(GeneratorSpec),
    /// `A ⊗ J_k` of the Matrix Market file `base`, with `k` chosen from `A`'s non-zeros so that
    /// the product has about `target_nnz` (see the module documentation).
    KronTo {
        /// The real matrix `A`.
        base: PathBuf,
        /// Wanted non-zeros of the product.
        target_nnz: u64,
        /// Seed recorded in the spec (the all-ones pattern does not draw).
        seed: u64,
    },
}

/// `k = max(2, ⌊√(target / base_nnz)⌋)`.
pub fn kron_factor(base_nnz: u64, target_nnz: u64) -> usize {
    let ratio = target_nnz as f64 / base_nnz.max(1) as f64;
    (ratio.sqrt().floor() as usize).max(2)
}

impl Recipe {
    /// Build the matrix, refusing (before allocating) one whose CSR would exceed `max_bytes`;
    /// returns it with the resolved spec that rebuilds it.
    pub fn build(&self, max_bytes: u64) -> Result<(Csr<f64>, GeneratorSpec)> {
        match self {
            Recipe::Spec(spec) => Ok((spec.generate_with_limit(max_bytes)?, spec.clone())),
            Recipe::KronTo {
                base,
                target_nnz,
                seed,
            } => {
                let a = crate::matrix::mm::read::<f64>(base)?;
                let pattern = KronPattern::Dense {
                    k: kron_factor(a.nnz() as u64, *target_nnz),
                };
                let m = kron(&a, &pattern.build(*seed)?, max_bytes)?;
                let spec = GeneratorSpec::Kronecker {
                    matrix: base.clone(),
                    pattern,
                    seed: *seed,
                };
                Ok((m, spec))
            }
        }
    }
}

/// `3e7`-style label of a count.
fn sci(n: u64) -> String {
    let s = format!("{n:e}");
    s.replace(".0e", "e")
}

fn spec_entry(spec: GeneratorSpec, est_nnz: u64) -> CorpusEntry {
    CorpusEntry {
        id: format!("gen/{}", spec.name()),
        source: MatrixSource::Generated(Recipe::Spec(spec)),
        est_nnz,
    }
}

fn kron_entry(base: &CorpusEntry, target_nnz: u64) -> Option<CorpusEntry> {
    let MatrixSource::File(path) = &base.source else {
        return None;
    };
    Some(CorpusEntry {
        id: format!("gen/kron-{}-to{}", base.short_name(), sci(target_nnz)),
        source: MatrixSource::Generated(Recipe::KronTo {
            base: path.clone(),
            target_nnz,
            seed: 1,
        }),
        est_nnz: target_nnz,
    })
}

fn file_bytes(e: &CorpusEntry) -> u64 {
    match &e.source {
        MatrixSource::File(p) => std::fs::metadata(p).map(|m| m.len()).unwrap_or(0),
        MatrixSource::Generated(_) => 0,
    }
}

/// The generated matrices of `set`; Kronecker bases are taken from `corpus` (files only).
pub fn generated_set(set: GeneratedSet, corpus: &[CorpusEntry]) -> Vec<CorpusEntry> {
    let files: Vec<&CorpusEntry> = corpus
        .iter()
        .filter(|e| matches!(e.source, MatrixSource::File(_)))
        .collect();
    let mut out = Vec::new();
    match set {
        GeneratedSet::None => {}
        GeneratedSet::Small => {
            out.push(spec_entry(
                GeneratorSpec::Stencil {
                    stencil: Stencil::D3P27,
                    n: 12,
                },
                37_000,
            ));
            out.push(spec_entry(
                GeneratorSpec::PowerLaw {
                    n: 4_000,
                    mean: 8.0,
                    exponent: 2.5,
                    seed: 1,
                },
                32_000,
            ));
            // The smallest file (ties: the first id).
            if let Some(base) = files.iter().min_by_key(|e| (file_bytes(e), e.id.clone())) {
                out.extend(kron_entry(base, 40_000));
            }
        }
        GeneratedSet::Default => {
            out.push(spec_entry(
                GeneratorSpec::Stencil {
                    stencil: Stencil::D3P27,
                    n: 125,
                },
                51_000_000,
            ));
            out.push(spec_entry(
                GeneratorSpec::Stencil {
                    stencil: Stencil::D2P5,
                    n: 2_048,
                },
                21_000_000,
            ));
            out.push(spec_entry(
                GeneratorSpec::Banded {
                    n: 2_000_000,
                    half_bandwidth: 8,
                    seed: 1,
                },
                34_000_000,
            ));
            out.push(spec_entry(
                GeneratorSpec::PowerLaw {
                    n: 1_000_000,
                    mean: 16.0,
                    exponent: 2.5,
                    seed: 1,
                },
                16_000_000,
            ));
            let mut used: Vec<&str> = Vec::new();
            for wanted in ["G3_circuit", "cage11"] {
                let base = files
                    .iter()
                    .find(|e| e.short_name() == wanted && !used.contains(&e.id.as_str()))
                    .or_else(|| {
                        files
                            .iter()
                            .filter(|e| !used.contains(&e.id.as_str()))
                            .max_by_key(|e| (file_bytes(e), std::cmp::Reverse(e.id.clone())))
                    });
                if let Some(base) = base {
                    used.push(&base.id);
                    out.extend(kron_entry(base, 30_000_000));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kron_factor_reaches_the_target() {
        assert_eq!(kron_factor(7_660_826, 30_000_000), 2); // floor(1.98) → at least 2
        assert_eq!(kron_factor(559_722, 30_000_000), 7);
        assert_eq!(kron_factor(5_075, 40_000), 2);
        assert_eq!(kron_factor(0, 10), 3);
        assert_eq!(sci(30_000_000), "3e7");
        assert_eq!(sci(40_000), "4e4");
    }

    #[test]
    fn sets_have_unique_ids_and_kron_bases_from_the_corpus() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("c");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("big.mtx"), vec![b'%'; 300]).unwrap();
        std::fs::write(dir.join("cage11.mtx"), vec![b'%'; 200]).unwrap();
        std::fs::write(dir.join("tiny.mtx"), vec![b'%'; 10]).unwrap();
        let corpus = super::super::corpus::discover(&[dir]).unwrap();
        assert!(generated_set(GeneratedSet::None, &corpus).is_empty());
        let small = generated_set(GeneratedSet::Small, &corpus);
        assert_eq!(small.len(), 3);
        assert_eq!(small[2].id, "gen/kron-tiny-to4e4");
        let def = generated_set(GeneratedSet::Default, &corpus);
        let ids: Vec<&str> = def.iter().map(|e| e.id.as_str()).collect();
        // G3_circuit is absent: the largest file stands in; cage11 is present.
        assert!(ids.contains(&"gen/kron-big-to3e7"), "{ids:?}");
        assert!(ids.contains(&"gen/kron-cage11-to3e7"), "{ids:?}");
        let mut sorted = ids.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len());
        // Without a corpus: no Kronecker matrix.
        assert_eq!(generated_set(GeneratedSet::Small, &[]).len(), 2);
    }
}
