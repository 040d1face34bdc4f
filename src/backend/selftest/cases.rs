//! What the self-test runs beyond every variant × block size × matrix with the default
//! parameters: the parameter sets whose kernels take other paths, and the random x.

use crate::backend::Variant;
use crate::formats::{EllBroParams, FormatParams, SellParams};
use crate::Scalar;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

/// Format parameters a variant is tested with, and their label (the command-line options that
/// select them; empty for the defaults). A case's label is appended to its matrix's name in the
/// report (`random [--sell-c 512 --sell-sigma 2048]`), so every failure names what to rerun.
#[derive(Clone, Debug)]
pub struct ParamSet {
    /// The options, e.g. `--sell-c 512 --sell-sigma 2048`; empty for the defaults.
    pub label: &'static str,
    /// The parameters (the byte limit is the self-test's own, set per case).
    pub params: FormatParams,
}

/// The parameter sets `variant` runs with: the defaults first, then
/// * SELL-C-σ (ours) with Lehnert et al.'s C = 512, σ = 2048 (002): slices taller than a 64- or
///   256-thread block, sorting windows longer than most test matrices; with C = 8 and C = 40,
///   unsorted: the split of wide slices over warps (`sell_split.rs`) with lane groups of 8 live
///   lanes, and of 32 and 8;
/// * ELL-BRO with slices of 32 rows (many slices, a partial last one on most matrices) and of
///   1000 rows (slices spanning several blocks, not a power of two);
/// * SEG-TILE admitting every matrix (`--segtile-min-segment 0`: short segments, runs of empty
///   ones), at the chosen tile width, with tiles of 1,024 columns (many tiles, x in shared
///   memory) and of 65,536 (x through the L1).
pub fn param_sets(variant: Variant) -> Vec<ParamSet> {
    let mut sets = vec![ParamSet {
        label: "",
        params: FormatParams::default(),
    }];
    let with = |label, f: &dyn Fn(&mut FormatParams)| {
        let mut params = FormatParams::default();
        f(&mut params);
        ParamSet { label, params }
    };
    match variant {
        Variant::Sell => {
            sets.push(with("--sell-c 512 --sell-sigma 2048", &|p| {
                p.sell = SellParams {
                    c: 512,
                    sigma: 2048,
                }
            }));
            sets.push(with("--sell-c 8 --sell-sigma 1", &|p| {
                p.sell = SellParams { c: 8, sigma: 1 }
            }));
            sets.push(with("--sell-c 40 --sell-sigma 1", &|p| {
                p.sell = SellParams { c: 40, sigma: 1 }
            }));
        }
        Variant::EllBro => {
            sets.push(with("--ell-bro-slice 32", &|p| {
                p.ell_bro = EllBroParams { slice: 32 }
            }));
            sets.push(with("--ell-bro-slice 1000", &|p| {
                p.ell_bro = EllBroParams { slice: 1000 }
            }));
        }
        Variant::SegTile => {
            // Admitting every matrix, however short its segments: the kernel then meets short
            // segments, empty ones and runs of them (the defaults refuse most test matrices,
            // whose rows are short).
            let every = |p: &mut FormatParams| p.segtile.min_segment = 0.0;
            sets.push(with("--segtile-min-segment 0", &every));
            sets.push(with("--segtile-width 1024 --segtile-min-segment 0", &|p| {
                every(p);
                p.segtile.width = 1024
            }));
            sets.push(with(
                "--segtile-width 65536 --segtile-min-segment 0",
                &|p| {
                    every(p);
                    p.segtile.width = 65536
                },
            ));
        }
        _ => {}
    }
    sets
}

/// A fresh random x of `n` values, uniform in [-1, 1): seeded from `rng`, filled in parallel in
/// chunks of their own seeds (so a matrix of 2^31 columns takes well under a second).
pub fn random_x<T: Scalar>(rng: &mut ChaCha8Rng, n: usize) -> Vec<T> {
    const CHUNK: usize = 1 << 16;
    let seed: u64 = rng.random();
    let mut x = vec![T::zero(); n];
    x.par_chunks_mut(CHUNK).enumerate().for_each(|(i, c)| {
        let mut r =
            ChaCha8Rng::seed_from_u64(seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        for v in c {
            *v = T::cast_f64(r.random_range(-1.0..1.0));
        }
    });
    x
}
