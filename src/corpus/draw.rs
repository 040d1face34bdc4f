//! The matrices of a training corpus: the real files, Kronecker expansions of them, and generated
//! matrices whose families and parameters are drawn from one seed.
//!
//! Sizes are **stratified in log(nnz)**: the `n` generated matrices take one target each from `n`
//! equal slices of `[log min_nnz, log max_nnz]` (a uniform draw inside each slice), so that any
//! corpus size covers the range evenly; families are drawn uniformly for each. The order of the
//! list is shuffled (files first), so that a collection cut short by a time limit still holds
//! an even spread of sizes and families; `collect` resumes where it stopped.
//!
//! | family | parameters drawn |
//! |---|---|
//! | `random-constant` | row length log-uniform in 1…512 (the papers' benchmark matrices) |
//! | `random-normal` | mean log-uniform in 2…256, standard deviation 0.1…1.0 × mean |
//! | `random-uniform` | mean log-uniform in 2…256, min 0…0.9 × mean, max = 2·mean − min |
//! | `stencil` | 2-D 5-point, 3-D 7-point or 27-point, grid from the target |
//! | `banded` | half-bandwidth log-uniform in 1…128 |
//! | `block-diagonal` | block order log-uniform in 2…64 |
//! | `power-law` | mean log-uniform in 2…32, exponent γ uniform in 2.0…3.0 (≤ 2·10⁷ non-zeros: its generator runs on one core) |
//! | `stack` (`--mixtures`) | 2 parts (3 with probability 0.4) stacked by rows ([`draw_mixture`]): a bulk part of any family above holding 50–95 % of the target, and parts that are either another family or a few long rows |
//!
//! Random matrices are square with uniformly random columns (no locality); the structure of real
//! matrices at large sizes comes from the Kronecker expansions `A ⊗ P` of each file, with `P`
//! dense (rows `k`× longer, contiguous runs), identity (rows as long, `k`× more, interleaved) or
//! random of density 0.3…0.9, `k` chosen for a target log-uniform in
//! `[max(4·nnz(A), 10⁵), max_kron_nnz]`.

use crate::evaluate::corpus::{self, MatrixSource};
use crate::matrix::generate::{GeneratorSpec, KronPattern, RowLength, Stencil};
use crate::{Csr, Error, Result};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::PathBuf;

/// How many matrices of what size.
#[derive(Clone, Debug)]
pub struct DrawOptions {
    /// Directories searched for Matrix Market files.
    pub corpus: Vec<PathBuf>,
    /// Kronecker expansions per file.
    pub kron_per_file: usize,
    /// Largest target of an expansion.
    pub max_kron_nnz: u64,
    /// Generated matrices.
    pub generated: usize,
    /// Size range of the generated matrices.
    pub min_nnz: u64,
    /// Size range of the generated matrices (and of the mixtures).
    pub max_nnz: u64,
    /// Heterogeneous matrices ([`draw_mixture`]), drawn after the generated ones, stratified in
    /// log(nnz) over the same range.
    pub mixtures: usize,
    /// Blocks of long rows ([`draw_long_block`]), drawn after the mixtures (so a seed's other
    /// matrices are unchanged), stratified in log(nnz) over the same range.
    pub long_blocks: usize,
    /// Seed of every draw.
    pub seed: u64,
}

/// How to build one matrix of the corpus.
#[derive(Clone, Debug, PartialEq)]
pub enum Build {
    /// A Matrix Market file.
    File(PathBuf),
    /// A generator spec.
    Spec(GeneratorSpec),
    /// `A ⊗ P` of the file `base`, `P`'s order resolved from `A`'s non-zeros when built.
    Kron {
        /// The real matrix.
        base: PathBuf,
        /// Wanted non-zeros.
        target_nnz: u64,
        /// The pattern's kind, its order to be resolved.
        pattern: KronKind,
        /// Seed of a random pattern.
        seed: u64,
    },
}

/// The kind of a Kronecker pattern.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KronKind {
    /// All ones.
    Dense,
    /// Identity.
    Identity,
    /// Random of this density.
    Random(f64),
}

impl KronKind {
    /// The pattern of this kind whose product with a matrix of `base_nnz` entries has about
    /// `target` entries (order ≥ 2; an identity at most 4096, the largest pattern allowed).
    pub fn pattern(self, base_nnz: u64, target: u64) -> KronPattern {
        let ratio = target as f64 / base_nnz.max(1) as f64;
        let k = |x: f64| (x.floor() as usize).clamp(2, 4096);
        match self {
            // The rule of `evaluate`'s generated set, capped as the others.
            KronKind::Dense => KronPattern::Dense {
                k: crate::evaluate::generated::kron_factor(base_nnz, target).min(4096),
            },
            KronKind::Identity => KronPattern::Identity { k: k(ratio) },
            KronKind::Random(d) => KronPattern::Random {
                k: k((ratio / d).sqrt()),
                density: d,
            },
        }
    }
}

impl Build {
    /// Build the matrix (refusing one over `max_bytes` before allocating) and the spec that
    /// rebuilds it (`None` for a file).
    pub fn build(&self, max_bytes: u64) -> Result<(Csr<f64>, Option<GeneratorSpec>)> {
        match self {
            Build::File(p) => Ok((crate::matrix::mm::read::<f64>(p)?, None)),
            Build::Spec(s) => Ok((s.generate_with_limit(max_bytes)?, Some(s.clone()))),
            Build::Kron {
                base,
                target_nnz,
                pattern,
                seed,
            } => {
                let a = crate::matrix::mm::read::<f64>(base)?;
                let pattern = pattern.pattern(a.nnz() as u64, *target_nnz);
                let m = crate::matrix::generate::kron(&a, &pattern.build(*seed)?, max_bytes)?;
                let spec = GeneratorSpec::Kronecker {
                    matrix: base.clone(),
                    pattern,
                    seed: *seed,
                };
                Ok((m, Some(spec)))
            }
        }
    }
}

/// One matrix of the corpus.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    /// Stable id (resuming keys on it).
    pub id: String,
    /// Cross-validation family (see [`super::table::TableRow::family`]).
    pub family: String,
    /// How to build it.
    pub build: Build,
    /// Rough non-zeros (progress weights).
    pub est_nnz: u64,
}

/// Log-uniform in `[lo, hi]`.
fn log_uniform(rng: &mut ChaCha8Rng, lo: f64, hi: f64) -> f64 {
    (rng.random_range(lo.ln()..=hi.ln())).exp()
}

/// A generator spec of a family drawn at random, of about `target` non-zeros.
pub fn draw_spec(rng: &mut ChaCha8Rng, target: u64) -> GeneratorSpec {
    let t = target.max(16) as f64;
    let seed = rng.random::<u32>() as u64;
    let square = |len: f64| ((t / len).round() as usize).max(1);
    match rng.random_range(0..7) {
        0 => {
            let nnz = log_uniform(rng, 1.0, 512.0).round().max(1.0);
            let nnz = nnz.min((t / 32.0).max(1.0)) as usize;
            let n = square(nnz as f64).max(nnz);
            GeneratorSpec::Random {
                rows: n,
                cols: n,
                row_len: RowLength::Constant { nnz },
                seed,
            }
        }
        1 => {
            let mean = log_uniform(rng, 2.0, 256.0).min((t / 32.0).max(2.0));
            let std = mean * rng.random_range(0.1..=1.0);
            let n = square(mean).max((mean + 4.0 * std) as usize + 1);
            GeneratorSpec::Random {
                rows: n,
                cols: n,
                row_len: RowLength::Normal { mean, std },
                seed,
            }
        }
        2 => {
            let mean = log_uniform(rng, 2.0, 256.0).min((t / 32.0).max(2.0));
            let min = (mean * rng.random_range(0.0..=0.9)).floor() as usize;
            let max = (2.0 * mean).round() as usize - min;
            let n = square(mean).max(max + 1);
            GeneratorSpec::Random {
                rows: n,
                cols: n,
                row_len: RowLength::Uniform { min, max },
                seed,
            }
        }
        3 => {
            let (stencil, root) = match rng.random_range(0..3) {
                0 => (Stencil::D2P5, (t / 5.0).sqrt()),
                1 => (Stencil::D3P7, (t / 7.0).cbrt()),
                _ => (Stencil::D3P27, (t / 27.0).cbrt()),
            };
            GeneratorSpec::Stencil {
                stencil,
                n: (root.round() as usize).max(2),
            }
        }
        4 => {
            let hb = log_uniform(rng, 1.0, 128.0).round() as usize;
            GeneratorSpec::Banded {
                n: square(2.0 * hb as f64 + 1.0).max(2 * hb + 2),
                half_bandwidth: hb,
                seed,
            }
        }
        5 => {
            let b = log_uniform(rng, 2.0, 64.0).round() as usize;
            GeneratorSpec::BlockDiagonal {
                blocks: square((b * b) as f64),
                block_size: b,
                seed,
            }
        }
        _ => {
            let mean = log_uniform(rng, 2.0, 32.0);
            let n = square(mean.min(t / 64.0).max(1.0)).clamp(64, (2e7 / mean) as usize);
            GeneratorSpec::PowerLaw {
                n,
                mean: (mean * 100.0).round() / 100.0,
                exponent: (rng.random_range(2.0..=3.0f64) * 100.0).round() / 100.0,
                seed,
            }
        }
    }
}

/// A [`draw_spec`] whose size is within 3× of `target` (small targets with wide row-length
/// distributions can overshoot, since a matrix holds at least its longest row's columns): up to
/// eight draws, else the last.
fn near(rng: &mut ChaCha8Rng, target: f64) -> GeneratorSpec {
    let mut spec = draw_spec(rng, target as u64);
    for _ in 0..7 {
        if spec
            .est_nnz()
            .is_some_and(|n| n <= 3.0 * target && n >= target / 3.0)
        {
            break;
        }
        spec = draw_spec(rng, target as u64);
    }
    spec
}

/// A heterogeneous matrix of about `target` non-zeros: generated parts stacked by rows.
///
/// The bulk part (any family of [`draw_spec`], redrawn while it misses its share by more than
/// 3×) takes a share of the target uniform in 50–95 %;
/// the rest is split evenly between one other part (two with probability 0.4). Each other part
/// is, with even odds, either a matrix of a family drawn by [`draw_spec`] or a block of a few
/// long rows — a number of rows log-uniform in 1…2000, row lengths uniform in `[L/2, L]` at
/// random columns of the bulk's width (the long rows of circuit and optimisation matrices). The
/// parts are stacked in a random order. Choices the issue leaves open: the shares and the two
/// kinds of minor parts are ours.
pub fn draw_mixture(rng: &mut ChaCha8Rng, target: u64) -> GeneratorSpec {
    let t = target.max(64) as f64;
    let bulk_share = rng.random_range(0.5..=0.95);
    let bulk = near(rng, t * bulk_share);
    let width = bulk.dims().map_or(1, |d| d.1).max(1);
    let minors = if rng.random_bool(0.4) { 2 } else { 1 };
    let share = t * (1.0 - bulk_share) / minors as f64;
    let mut parts = vec![bulk];
    for _ in 0..minors {
        if rng.random_bool(0.5) {
            parts.push(near(rng, share.max(16.0)));
        } else {
            let rows = log_uniform(rng, 1.0, 2000.0).round().max(1.0);
            // At least 32 entries a row, at most the bulk's width (distinct columns).
            let rows = rows.min((share / 32.0).max(1.0)) as usize;
            let max = ((share / rows as f64) as usize).clamp(2, width.max(2));
            parts.push(GeneratorSpec::Random {
                rows,
                cols: width.max(max),
                row_len: RowLength::Uniform { min: max / 2, max },
                seed: rng.random::<u32>() as u64,
            });
        }
    }
    parts.shuffle(rng);
    GeneratorSpec::Stack { parts }
}

/// A block of long rows of about `target` non-zeros, the shape of the row blocks the optimizer
/// predicts for the long rows of a heterogeneous matrix (session 38: on 200 rows of 5·10³–4·10⁴
/// entries over 490,000 columns our model, trained on whole matrices only, predicted SEG-TILE at
/// 27 µs where it ran 17 µs on the H200): a number of rows log-uniform in 1…5,000 (within
/// `target / 10⁶ … target / 32`: rows of 32–10⁶ entries), their mean length `L` what the target leaves,
/// columns `L` × a factor log-uniform in 1.5…4,000 (the width of the matrix the block came from;
/// at most 3·10⁷), and lengths constant `L` or uniform in `[L/4, 7L/4]` with even odds, at random
/// columns. Choices of ours: the ranges cover the heterogeneous set's long parts (10⁴ rows of
/// 256 over 5·10⁵ columns … 50 rows of 2·10⁵ over 5·10⁵) and the mixtures' long-row parts.
pub fn draw_long_block(rng: &mut ChaCha8Rng, target: u64) -> GeneratorSpec {
    let t = target.max(64) as f64;
    // Rows of at most 10⁶ entries, at least 32.
    let rows = log_uniform(rng, 1.0, 5000.0)
        .round()
        .max((t / 1e6).ceil())
        .min((t / 32.0).max(1.0)) as usize;
    let len = (t / rows as f64).max(32.0);
    let cols = (len * log_uniform(rng, 1.5, 4000.0))
        .min(3e7)
        .max(len * 1.75 + 1.0) as usize;
    let len = len.round() as usize;
    let row_len = if rng.random_bool(0.5) {
        RowLength::Constant { nnz: len }
    } else {
        RowLength::Uniform {
            min: len / 4,
            max: (len * 7 / 4).min(cols),
        }
    };
    GeneratorSpec::Random {
        rows,
        cols,
        row_len,
        seed: rng.random::<u32>() as u64,
    }
}

/// The corpus's matrices: files (in discovery order), then everything generated, shuffled.
pub fn draw(opts: &DrawOptions) -> Result<Vec<Item>> {
    if opts.min_nnz == 0 || opts.min_nnz > opts.max_nnz {
        return Err(Error::Invalid(format!(
            "the size range {}…{} non-zeros is empty",
            opts.min_nnz, opts.max_nnz
        )));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    // Seed 1 keeps the ids of the committed tables; another seed's matrices are different ones,
    // so their ids (and the generated families) carry the seed: a second table adds to the
    // first without a clash of names.
    let tag = if opts.seed == 1 {
        String::new()
    } else {
        format!("s{}-", opts.seed)
    };
    let files = corpus::discover(&opts.corpus)?;
    let mut items = Vec::new();
    let mut drawn = Vec::new();
    for e in &files {
        let MatrixSource::File(path) = &e.source else {
            continue;
        };
        let family = e.short_name();
        items.push(Item {
            id: e.id.clone(),
            family: family.clone(),
            build: Build::File(path.clone()),
            est_nnz: e.est_nnz,
        });
        for j in 0..opts.kron_per_file {
            let lo = (e.est_nnz.saturating_mul(4)).max(100_000) as f64;
            let hi = (opts.max_kron_nnz as f64).max(lo);
            let target = log_uniform(&mut rng, lo, hi) as u64;
            let pattern = match rng.random_range(0..3) {
                0 => KronKind::Dense,
                1 => KronKind::Identity,
                _ => KronKind::Random((rng.random_range(0.3..=0.9f64) * 10.0).round() / 10.0),
            };
            let seed = rng.random::<u32>() as u64;
            drawn.push(Item {
                id: format!("kron/{family}-{tag}{j}"),
                family: family.clone(),
                build: Build::Kron {
                    base: path.clone(),
                    target_nnz: target,
                    pattern,
                    seed,
                },
                est_nnz: target,
            });
        }
    }
    let (lo, hi) = ((opts.min_nnz as f64).ln(), (opts.max_nnz as f64).ln());
    // `n` matrices of `draw`, one target from each of `n` equal slices of [lo, hi] in log(nnz).
    let mut stratified =
        |n: usize, prefix: &str, draw: fn(&mut ChaCha8Rng, u64) -> GeneratorSpec| {
            for i in 0..n {
                let slice = (hi - lo) / n as f64;
                let target = (lo + slice * (i as f64 + rng.random_range(0.0..1.0))).exp() as u64;
                let spec = draw(&mut rng, target);
                drawn.push(Item {
                    id: format!("gen/{tag}{prefix}{i:05}-{}", spec.name()),
                    family: format!("gen/{tag}{prefix}{i:05}"),
                    build: Build::Spec(spec),
                    est_nnz: target,
                });
            }
        };
    stratified(opts.generated, "", draw_spec);
    stratified(opts.mixtures, "m", draw_mixture);
    stratified(opts.long_blocks, "l", draw_long_block);
    drawn.shuffle(&mut rng);
    items.extend(drawn);
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_specs_hit_their_targets_and_build() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut families = std::collections::HashSet::new();
        for i in 0..60 {
            let target = [2_000u64, 20_000, 200_000][i % 3];
            let spec = draw_spec(&mut rng, target);
            families.insert(std::mem::discriminant(&spec));
            let m = spec.generate().unwrap();
            // The estimate from the parameters alone is close to what the generator makes.
            let e = spec.est_nnz().unwrap() / m.nnz() as f64;
            assert!(
                (0.5..2.0).contains(&e),
                "{spec:?}: estimate {e}× the real size"
            );
            let r = m.nnz() as f64 / target as f64;
            // Power law and tiny stencils are approximate; every family lands within 4×.
            assert!(
                (0.25..4.0).contains(&r),
                "{spec:?}: {} for {target}",
                m.nnz()
            );
        }
        assert!(families.len() >= 5, "{families:?}");
    }

    #[test]
    fn a_draw_is_reproducible_and_stratified() {
        let opts = DrawOptions {
            corpus: vec![],
            kron_per_file: 1,
            max_kron_nnz: 1_000_000,
            generated: 40,
            min_nnz: 1_000,
            max_nnz: 10_000_000,
            mixtures: 0,
            long_blocks: 0,
            seed: 9,
        };
        let a = draw(&opts).unwrap();
        assert_eq!(a, draw(&opts).unwrap());
        let mut sizes: Vec<f64> = a.iter().map(|i| (i.est_nnz as f64).log10()).collect();
        sizes.sort_by(f64::total_cmp);
        // One target in each of 40 slices of [3, 7] in log10.
        for (k, s) in sizes.iter().enumerate() {
            let slice = 3.0 + 4.0 * k as f64 / 40.0;
            assert!((slice..slice + 0.1 + 1e-9).contains(s), "{k}: {s}");
        }
        let ids: std::collections::HashSet<_> = a.iter().map(|i| &i.id).collect();
        assert_eq!(ids.len(), 40);
        // Another seed than 1 names its matrices and families apart; seed 1 keeps the names.
        assert!(a
            .iter()
            .all(|i| i.id.starts_with("gen/s9-") && i.family.starts_with("gen/s9-")));
        let one = draw(&DrawOptions { seed: 1, ..opts }).unwrap();
        assert!(
            one.iter().all(|i| i.id.starts_with("gen/0")),
            "{:?}",
            one[0].id
        );
    }

    #[test]
    fn mixtures_are_heterogeneous_stacks_near_their_targets() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let mut long_rows = 0;
        for i in 0..40 {
            let target = [5_000u64, 50_000, 400_000][i % 3];
            let spec = draw_mixture(&mut rng, target);
            let GeneratorSpec::Stack { parts } = &spec else {
                panic!("{spec:?}")
            };
            assert!((2..=3).contains(&parts.len()), "{spec:?}");
            let m = spec.generate().unwrap();
            assert_eq!(Some((m.nrows, m.ncols)), spec.dims(), "{spec:?}");
            let r = m.nnz() as f64 / target as f64;
            assert!(
                (0.2..5.0).contains(&r),
                "{spec:?}: {} for {target}",
                m.nnz()
            );
            let lens = m.row_lengths();
            let mean = m.nnz() as f64 / m.nrows as f64;
            if lens.iter().any(|&l| l as f64 > 8.0 * mean) {
                long_rows += 1;
            }
        }
        // The long-row parts make some rows far longer than the mean in a good share of them.
        assert!(long_rows >= 8, "{long_rows} of 40");
        // Mixtures come after the generated ones, named and familied apart, reproducibly.
        let opts = DrawOptions {
            corpus: vec![],
            kron_per_file: 0,
            max_kron_nnz: 1_000_000,
            generated: 3,
            min_nnz: 1_000,
            max_nnz: 100_000,
            mixtures: 4,
            long_blocks: 0,
            seed: 3,
        };
        let a = draw(&opts).unwrap();
        assert_eq!(a, draw(&opts).unwrap());
        let mixed: Vec<_> = a.iter().filter(|i| i.id.starts_with("gen/s3-m")).collect();
        assert_eq!(mixed.len(), 4);
        assert!(mixed.iter().all(|i| i.family.starts_with("gen/s3-m")));
        // Mixtures are drawn last: the other matrices are those of the same draw without them
        // (so the committed tables' draws are unchanged).
        let plain = draw(&DrawOptions {
            mixtures: 0,
            long_blocks: 0,
            ..opts.clone()
        })
        .unwrap();
        let mut rest: Vec<_> = a.iter().filter(|i| !i.id.starts_with("gen/s3-m")).collect();
        let mut want: Vec<_> = plain.iter().collect();
        rest.sort_by(|x, y| x.id.cmp(&y.id));
        want.sort_by(|x, y| x.id.cmp(&y.id));
        assert_eq!(rest, want);
    }

    #[test]
    fn long_blocks_are_few_long_rows_drawn_last() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for target in [3_000u64, 40_000, 400_000, 4_000_000, 30_000_000] {
            for _ in 0..10 {
                let spec = draw_long_block(&mut rng, target);
                let GeneratorSpec::Random { rows, cols, .. } = spec else {
                    panic!("{spec:?}")
                };
                assert!((1..=5000).contains(&rows), "{spec:?}");
                let m = spec.generate().unwrap();
                let mean = m.nnz() as f64 / rows as f64;
                assert!(mean >= 8.0 && (cols as f64) > mean, "{spec:?}: mean {mean}");
                let r = m.nnz() as f64 / target as f64;
                assert!(
                    (0.3..3.0).contains(&r),
                    "{spec:?}: {} for {target}",
                    m.nnz()
                );
            }
        }
        let opts = DrawOptions {
            corpus: vec![],
            kron_per_file: 0,
            max_kron_nnz: 1_000_000,
            generated: 3,
            min_nnz: 1_000,
            max_nnz: 100_000,
            mixtures: 2,
            long_blocks: 5,
            seed: 4,
        };
        let a = draw(&opts).unwrap();
        let blocks: Vec<_> = a.iter().filter(|i| i.id.starts_with("gen/s4-l")).collect();
        assert_eq!(blocks.len(), 5);
        let mut rest: Vec<_> = a.iter().filter(|i| !i.id.starts_with("gen/s4-l")).collect();
        let plain = draw(&DrawOptions {
            long_blocks: 0,
            ..opts.clone()
        })
        .unwrap();
        let mut want: Vec<_> = plain.iter().collect();
        rest.sort_by(|x, y| x.id.cmp(&y.id));
        want.sort_by(|x, y| x.id.cmp(&y.id));
        assert_eq!(rest, want);
    }

    #[test]
    fn kron_patterns_aim_at_the_target() {
        assert_eq!(
            KronKind::Dense.pattern(1_000, 100_000),
            KronPattern::Dense { k: 10 }
        );
        assert_eq!(
            KronKind::Identity.pattern(1_000, 100_000),
            KronPattern::Identity { k: 100 }
        );
        assert_eq!(
            KronKind::Identity.pattern(1, 1 << 40),
            KronPattern::Identity { k: 4096 }
        );
    }
}
