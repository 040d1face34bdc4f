//! `sparsecast generate`: write a generated matrix to a Matrix Market file.

use crate::matrix::generate::{GeneratorSpec, KronPattern, RowLength, Stencil};
use anyhow::Context;
use std::path::PathBuf;
use std::time::Instant;

const LONG_ABOUT: &str = "\
Generate a matrix deterministically from a seed and write it as a Matrix Market file.

The same family, parameters and seed always give the same matrix, whatever the number of
threads. Matrices whose CSR form would need more than half the physical memory are refused
before anything is allocated.

Examples:
  # Benchmark matrix of Guo et al.: 40 960 rows, every row 64 random non-zeros
  sparsecast generate random --rows 40960 --per-row 64 --out bench.mtx
  # Row lengths normal (mean 64, std 16), 10^6 columns
  sparsecast generate random --rows 40960 --cols 1000000 --normal 64:16 --seed 7 --out normal.mtx
  # Row lengths uniform on 8..=120
  sparsecast generate random --rows 40960 --uniform 8:120 --out uniform.mtx
  # 3-D 27-point Laplacian on a 160³ grid (about 1.1 × 10^8 non-zeros)
  sparsecast generate stencil --points 27 --n 160 --out lap27.mtx
  # Band, dense diagonal blocks, power law
  sparsecast generate banded --n 100000 --half-bandwidth 8 --out band.mtx
  sparsecast generate block-diag --blocks 10000 --block-size 6 --out blocks.mtx
  sparsecast generate power-law --n 1000000 --mean 12 --exponent 2.3 --out graph.mtx
  # Grow a real matrix: every entry becomes a dense 4×4 block
  sparsecast generate kron --matrix cage11.mtx.gz --pattern dense:4 --out cage11x4.mtx
  # Any generator from its JSON description
  sparsecast generate spec '{\"family\":\"stencil\",\"stencil\":\"3d7\",\"n\":64}' --out s.mtx

Without --out the matrix is generated and summarized but not written (useful for timing).";

/// Generate a matrix (benchmark, stencil, banded, block-diagonal, power-law, Kronecker).
#[derive(clap::Args, Debug)]
#[command(long_about = LONG_ABOUT)]
pub struct Args {
    #[command(subcommand)]
    family: Family,
    /// Output Matrix Market file (written atomically as `coordinate real general`; `-` is
    /// standard output). `-o` and `--output` are other names of it.
    #[arg(
        long = "out",
        short = 'o',
        visible_alias = "output",
        global = true,
        value_name = "FILE"
    )]
    output: Option<PathBuf>,
    /// Random seed (families with random columns or values).
    #[arg(long, global = true, default_value_t = 1)]
    seed: u64,
}

#[derive(clap::Subcommand, Debug)]
enum Family {
    /// Benchmark matrix of the papers: R × C, row lengths constant, uniform or normal, random
    /// distinct columns, values uniform in [-1, 1).
    Random {
        /// Rows R.
        #[arg(long)]
        rows: usize,
        /// Columns C (default: R, a square matrix).
        #[arg(long)]
        cols: Option<usize>,
        #[command(flatten)]
        dist: DistArgs,
    },
    /// Finite-difference Laplacian: 5-point on an n×n grid, 7- or 27-point on an n×n×n grid.
    Stencil {
        /// Stencil points: 5 (2-D), 7 or 27 (3-D).
        #[arg(long, value_parser = ["5", "7", "27"])]
        points: String,
        /// Grid points per side.
        #[arg(long)]
        n: usize,
    },
    /// n×n band: every entry within the half-bandwidth of the diagonal, random values.
    Banded {
        /// Order.
        #[arg(long)]
        n: usize,
        /// Entries on each side of the diagonal (0 = diagonal only).
        #[arg(long)]
        half_bandwidth: usize,
    },
    /// Dense square blocks on the diagonal, random values.
    BlockDiag {
        /// Number of blocks.
        #[arg(long)]
        blocks: usize,
        /// Order of each block.
        #[arg(long)]
        block_size: usize,
    },
    /// Chung–Lu power-law matrix (n×n), rows and columns in decreasing expected degree.
    PowerLaw {
        /// Order.
        #[arg(long)]
        n: usize,
        /// Mean row length.
        #[arg(long)]
        mean: f64,
        /// Degree exponent γ (> 1; real networks 2–3).
        #[arg(long, default_value_t = 2.5)]
        exponent: f64,
    },
    /// Kronecker product A ⊗ P of a Matrix Market matrix A and a small pattern P.
    Kron {
        /// Matrix Market file holding A (plain or gzip).
        #[arg(long)]
        matrix: PathBuf,
        /// Pattern P: `dense:K`, `identity:K` or `random:K:DENSITY`.
        #[arg(long, value_parser = parse_pattern)]
        pattern: KronPattern,
    },
    /// Any generator from its JSON description (a JSON object, or @FILE to read one).
    Spec {
        /// JSON text, or @FILE.
        json: String,
    },
}

/// Row-length distribution of `generate random` (exactly one).
#[derive(clap::Args, Debug)]
#[group(required = true, multiple = false)]
struct DistArgs {
    /// Every row holds exactly K non-zeros.
    #[arg(long, value_name = "K")]
    per_row: Option<usize>,
    /// Row lengths uniform on MIN..=MAX.
    #[arg(long, value_name = "MIN:MAX", value_parser = parse_pair::<usize>)]
    uniform: Option<(usize, usize)>,
    /// Row lengths normal with MEAN and STD (rounded, clamped to [0, C]).
    #[arg(long, value_name = "MEAN:STD", value_parser = parse_pair::<f64>)]
    normal: Option<(f64, f64)>,
}

impl DistArgs {
    fn row_length(&self) -> RowLength {
        match (self.per_row, self.uniform, self.normal) {
            (Some(nnz), _, _) => RowLength::Constant { nnz },
            (_, Some((min, max)), _) => RowLength::Uniform { min, max },
            (_, _, Some((mean, std))) => RowLength::Normal { mean, std },
            // clap's group guarantees exactly one.
            _ => RowLength::Constant { nnz: 0 },
        }
    }
}

fn parse_pair<T: std::str::FromStr>(s: &str) -> Result<(T, T), String> {
    let (a, b) = s
        .split_once(':')
        .ok_or_else(|| format!("expected two numbers A:B, got `{s}`"))?;
    let p = |x: &str| {
        x.trim()
            .parse::<T>()
            .map_err(|_| format!("`{x}` is not a valid number"))
    };
    Ok((p(a)?, p(b)?))
}

fn parse_pattern(s: &str) -> Result<KronPattern, String> {
    let parts: Vec<&str> = s.split(':').collect();
    let k = |x: &str| {
        x.parse::<usize>()
            .map_err(|_| format!("pattern order `{x}` is not a whole number"))
    };
    match parts.as_slice() {
        ["dense", n] => Ok(KronPattern::Dense { k: k(n)? }),
        ["identity", n] | ["eye", n] => Ok(KronPattern::Identity { k: k(n)? }),
        ["random", n, d] => Ok(KronPattern::Random {
            k: k(n)?,
            density: d
                .parse()
                .map_err(|_| format!("density `{d}` is not a number"))?,
        }),
        _ => Err(format!(
            "expected dense:K, identity:K or random:K:DENSITY, got `{s}`"
        )),
    }
}

impl Args {
    /// The generator this command line describes.
    fn spec(&self) -> anyhow::Result<GeneratorSpec> {
        let seed = self.seed;
        Ok(match &self.family {
            Family::Random { rows, cols, dist } => GeneratorSpec::Random {
                rows: *rows,
                cols: cols.unwrap_or(*rows),
                row_len: dist.row_length(),
                seed,
            },
            Family::Stencil { points, n } => GeneratorSpec::Stencil {
                stencil: match points.as_str() {
                    "5" => Stencil::D2P5,
                    "7" => Stencil::D3P7,
                    _ => Stencil::D3P27,
                },
                n: *n,
            },
            Family::Banded { n, half_bandwidth } => GeneratorSpec::Banded {
                n: *n,
                half_bandwidth: *half_bandwidth,
                seed,
            },
            Family::BlockDiag { blocks, block_size } => GeneratorSpec::BlockDiagonal {
                blocks: *blocks,
                block_size: *block_size,
                seed,
            },
            Family::PowerLaw { n, mean, exponent } => GeneratorSpec::PowerLaw {
                n: *n,
                mean: *mean,
                exponent: *exponent,
                seed,
            },
            Family::Kron { matrix, pattern } => GeneratorSpec::Kronecker {
                matrix: matrix.clone(),
                pattern: *pattern,
                seed,
            },
            Family::Spec { json } => {
                let text = match json.strip_prefix('@') {
                    Some(path) => std::fs::read_to_string(path)
                        .with_context(|| format!("reading generator spec {path}"))?,
                    None => json.clone(),
                };
                serde_json::from_str(&text).context("parsing the generator spec (JSON)")?
            }
        })
    }
}

/// Run `sparsecast generate`.
pub fn run(a: Args) -> anyhow::Result<()> {
    let spec = a.spec()?;
    if let Some(out) = &a.output {
        // Before generating (which can take minutes), not after.
        crate::util::check_writable(out)?;
    }
    let t0 = Instant::now();
    let pb = super::common::spinner(&format!("generating {}", spec.name()));
    let m = spec.generate();
    pb.finish_and_clear();
    let m = m?;
    let gen_s = t0.elapsed().as_secs_f64();
    let mut line = format!(
        "{}: {} rows × {} cols, {} non-zeros, generated in {gen_s:.2} s",
        spec.name(),
        m.nrows,
        m.ncols,
        m.nnz()
    );
    match &a.output {
        Some(out) => {
            let t1 = Instant::now();
            let pb = super::common::progress(m.nnz() as u64, &format!("writing {}", out.display()));
            pb.set_message("entries");
            let written = crate::matrix::mm::write_csr_with_progress(out, &m, &|done, _| {
                pb.set_position(done)
            });
            pb.finish_and_clear();
            written?;
            line += &format!(
                ", written to {} in {:.2} s",
                out.display(),
                t1.elapsed().as_secs_f64()
            );
        }
        None => line += " (not written: no --out given)",
    }
    // With `--out -` the matrix is on standard output: the summary goes to stderr.
    if a.output.as_deref() == Some(std::path::Path::new("-")) {
        eprintln!("{line}");
    } else {
        println!("{line}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_and_pair_parsing() {
        assert_eq!(parse_pattern("dense:4"), Ok(KronPattern::Dense { k: 4 }));
        assert_eq!(
            parse_pattern("random:3:0.5"),
            Ok(KronPattern::Random { k: 3, density: 0.5 })
        );
        assert!(parse_pattern("dense").is_err());
        assert!(parse_pattern("dense:x").is_err());
        assert_eq!(parse_pair::<usize>("3:9"), Ok((3, 9)));
        assert!(parse_pair::<usize>("3").is_err());
        assert_eq!(parse_pair::<f64>("64:16.5"), Ok((64.0, 16.5)));
    }
}
