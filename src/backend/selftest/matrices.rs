//! The self-test's matrices: random matrices of several row-length distributions and the edge
//! cases every kernel must survive (no rows, no entries, empty rows, one very long row, dense rows,
//! rectangular shapes, rows of warp-boundary lengths, a single column, block and band structure,
//! one row, wide column gaps). Values are uniform in [-1, 1); column positions are random and
//! distinct within a row.

use crate::formats::FormatKind;
use crate::Csr;
use rand::seq::index::sample;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A named test matrix.
#[derive(Clone, Debug)]
pub struct TestMatrix {
    /// Short name shown in the report.
    pub name: String,
    /// The matrix (f64; cast to the precision under test).
    pub csr: Csr<f64>,
    /// Run it only with this format's kernels (default parameters, first block size): a matrix
    /// whose cost only that format's coverage justifies. `None`: every kernel.
    pub only: Option<FormatKind>,
}

/// Build a matrix from per-row lengths, placing each row's entries at random distinct columns.
fn from_lengths(rng: &mut ChaCha8Rng, ncols: usize, lens: &[usize]) -> Csr<f64> {
    let mut row_ptr = Vec::with_capacity(lens.len() + 1);
    row_ptr.push(0usize);
    let mut col_idx = Vec::new();
    let mut values = Vec::new();
    for &len in lens {
        let len = len.min(ncols);
        let mut cols: Vec<u32> = sample(rng, ncols, len)
            .into_iter()
            .map(|c| c as u32)
            .collect();
        cols.sort_unstable();
        for c in cols {
            col_idx.push(c);
            values.push(rng.random_range(-1.0..1.0));
        }
        row_ptr.push(col_idx.len());
    }
    Csr::new(lens.len(), ncols, row_ptr, col_idx, values).expect("generated CSR is valid")
}

/// Build a matrix from explicit (row, column) positions with random values.
fn from_positions(
    rng: &mut ChaCha8Rng,
    nrows: usize,
    ncols: usize,
    pos: &[(u32, u32)],
) -> Csr<f64> {
    let rows: Vec<u32> = pos.iter().map(|p| p.0).collect();
    let cols: Vec<u32> = pos.iter().map(|p| p.1).collect();
    let vals: Vec<f64> = pos.iter().map(|_| rng.random_range(-1.0..1.0)).collect();
    Csr::from_triplets(nrows, ncols, &rows, &cols, &vals).expect("positions in range")
}

/// ELL-BRO's widest deltas, 32 bits: columns 0, 2^31 + 1 and 2^31 + 2^20 + 40, so x has
/// 2^31 + 2^20 + 41 values (8 or 16 GiB, hence a matrix for ELL-BRO only, on the GPU's scale).
/// Rows: 0 (all three), 1 (the last column alone: a first delta of 32 bits), 2 (empty), 3 (0 and
/// 2^31 + 1).
fn gaps_32_bit(rng: &mut ChaCha8Rng) -> Csr<f64> {
    let ncols = (1usize << 31) + (1 << 20) + 41;
    let far = [0u32, (1 << 31) + 1, ncols as u32 - 1];
    let pos = [
        (0, far[0]),
        (0, far[1]),
        (0, far[2]),
        (1, far[2]),
        (3, 0),
        (3, far[1]),
    ];
    from_positions(rng, 4, ncols, &pos)
}

/// The test matrices. `scale` multiplies the sizes (1 = small enough for a debug build on a CPU;
/// the GPU self-test uses 8 and adds one matrix of about 2 million entries).
pub fn test_matrices(seed: u64, scale: usize) -> Vec<TestMatrix> {
    let s = scale.max(1);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    let mut push_only = |name: &str, csr: Csr<f64>, only: Option<FormatKind>| {
        out.push(TestMatrix {
            name: name.to_string(),
            csr,
            only,
        })
    };
    let mut push = |name: &str, csr: Csr<f64>| push_only(name, csr, None);

    // Random row lengths 0..=40.
    let n = 500 * s;
    let lens: Vec<usize> = (0..n).map(|_| rng.random_range(0..=40)).collect();
    push("random", from_lengths(&mut rng, n, &lens));

    // Power-law row lengths: most rows short, a few very long.
    let n = 600 * s;
    let lens: Vec<usize> = (0..n)
        .map(|_| {
            let u: f64 = rng.random_range(0.0..1.0);
            ((1.0 / (1.0 - u).max(1e-9)).powf(1.2) as usize).min(n)
        })
        .collect();
    push("power-law", from_lengths(&mut rng, n, &lens));

    // 70 % empty rows.
    let n = 400 * s;
    let lens: Vec<usize> = (0..n)
        .map(|_| {
            if rng.random_range(0..10) < 7 {
                0
            } else {
                rng.random_range(1..=20)
            }
        })
        .collect();
    push("empty-rows", from_lengths(&mut rng, n, &lens));

    // One very long row among short ones.
    let n = 300 * s;
    let ncols = 1000 * s;
    let mut lens: Vec<usize> = (0..n).map(|_| rng.random_range(0..=4)).collect();
    lens[n / 3] = ncols - 7;
    push("one-long-row", from_lengths(&mut rng, ncols, &lens));

    // A few fully dense rows (each longer than a merge-path tile).
    let ncols = 1024 * s;
    let lens = vec![ncols; 8];
    push("dense-rows", from_lengths(&mut rng, ncols, &lens));

    // Rectangular, wide and tall.
    let lens: Vec<usize> = (0..40 * s).map(|_| rng.random_range(0..=150)).collect();
    push("wide", from_lengths(&mut rng, 2000 * s, &lens));
    let lens: Vec<usize> = (0..1500 * s).map(|_| rng.random_range(0..=6)).collect();
    push("tall", from_lengths(&mut rng, 37, &lens));

    // Single column.
    let lens: Vec<usize> = (0..700 * s).map(|_| rng.random_range(0..=1)).collect();
    push("one-column", from_lengths(&mut rng, 1, &lens));

    // Row lengths at warp boundaries.
    let pattern = [0usize, 1, 2, 31, 32, 33, 63, 64, 65, 127, 128, 129];
    let lens: Vec<usize> = (0..24 * s).map(|i| pattern[i % pattern.len()]).collect();
    push("warp-edges", from_lengths(&mut rng, 300 * s, &lens));

    // Entries only in the first half of the rows (trailing empty rows), and only in the second
    // half (leading empty rows).
    let n = 300 * s;
    let lens: Vec<usize> = (0..n)
        .map(|i| {
            if i < n / 2 {
                rng.random_range(1..=9)
            } else {
                0
            }
        })
        .collect();
    push("trailing-empty", from_lengths(&mut rng, n, &lens));
    let lens: Vec<usize> = (0..n)
        .map(|i| {
            if i >= n / 2 {
                rng.random_range(1..=9)
            } else {
                0
            }
        })
        .collect();
    push("leading-empty", from_lengths(&mut rng, n, &lens));

    // Banded: five central diagonals and two far ones (DIA-friendly); square and rectangular.
    let n = 500 * s;
    let mut pos = Vec::new();
    for i in 0..n as i64 {
        for off in [-2i64, -1, 0, 1, 2, -(n as i64) / 3, n as i64 / 2] {
            let j = i + off;
            if (0..n as i64 + 3).contains(&j) {
                pos.push((i as u32, j as u32));
            }
        }
    }
    push("band", from_positions(&mut rng, n, n + 3, &pos));

    // Dense 4×4 blocks at random block columns; rows and columns not multiples of 4.
    let nb = 120 * s;
    let (nrows, ncols) = (4 * nb - 2, 4 * nb + 3);
    let mut pos = Vec::new();
    for br in 0..nb {
        for bc in sample(&mut rng, nb + 1, 3) {
            for r in 0..4 {
                for c in 0..4 {
                    let (i, j) = (4 * br + r, 4 * bc + c);
                    if i < nrows && j < ncols {
                        pos.push((i as u32, j as u32));
                    }
                }
            }
        }
    }
    push("blocks", from_positions(&mut rng, nrows, ncols, &pos));

    // One row, spread over many columns.
    let lens = [700 * s];
    push("one-row", from_lengths(&mut rng, 3000 * s, &lens));

    // Wide column gaps (ELL-BRO's deltas of up to 17 + log2(scale) bits, in widths that straddle
    // its 64-bit symbols): 64·s + 5 rows over 2^17·s + 3 columns, every third row empty, others
    // with entries at both ends and a few in between.
    let (n, ncols) = (64 * s + 5, (1 << 17) * s + 3);
    let mut pos = Vec::new();
    for i in 0..n as u32 {
        if i % 3 == 1 {
            continue;
        }
        let mut cols = vec![i % 2, ncols as u32 - 1 - i % 5];
        cols.extend((0..i % 7).map(|_| rng.random_range(0..ncols as u32)));
        cols.sort_unstable();
        cols.dedup();
        pos.extend(cols.into_iter().map(|c| (i, c)));
    }
    push("wide-gaps", from_positions(&mut rng, n, ncols, &pos));

    // Long rows over several column tiles (SEG-TILE's matrix: its shared-memory tiles of 8,192
    // (f32) / 4,096 (f64) columns, a partial last tile), every seventh row empty.
    let ncols = 70_000 * s + 13;
    let lens: Vec<usize> = (0..40 * s)
        .map(|i| {
            if i % 7 == 3 {
                0
            } else {
                rng.random_range(1..=3000 * s)
            }
        })
        .collect();
    push("long-rows-wide", from_lengths(&mut rng, ncols, &lens));

    // Long rows between runs of 96 empty rows, over several column tiles: runs of empty
    // segments longer than a warp's 32 rows (a SEG-TILE kernel that cuts a tile's entries into
    // chunks, as session 40's trial did, must pass them; docs/OPTIMIZER.md).
    let ncols = 20_000 * s + 7;
    let lens: Vec<usize> = (0..3000 * s)
        .map(|i| match i % 97 {
            5 => rng.random_range(200..=2000 * s),
            _ => 0,
        })
        .collect();
    push("sparse-long-rows", from_lengths(&mut rng, ncols, &lens));

    // Degenerate shapes.
    push("no-entries", Csr::zeros(50 * s, 30 * s));
    push("no-rows", Csr::zeros(0, 10));
    push("no-columns", Csr::zeros(10, 0));
    push("1x1", from_positions(&mut rng, 1, 1, &[(0, 0)]));

    if scale >= 8 {
        // Large enough for many waves of blocks and merge-path tiles: ~2 M entries.
        let n = 200_000;
        let lens: Vec<usize> = (0..n).map(|_| rng.random_range(0..=20)).collect();
        push("random-large", from_lengths(&mut rng, n, &lens));
        // Many waves with rows longer than a merge-path tile: every 1000th row has 8 000
        // entries (~2.6 M entries in all).
        let n = 200_000;
        let lens: Vec<usize> = (0..n)
            .map(|i| {
                if i % 1000 == 999 {
                    8_000
                } else {
                    rng.random_range(0..=10)
                }
            })
            .collect();
        push("long-rows-large", from_lengths(&mut rng, n, &lens));
        push_only(
            "gaps-32-bit",
            gaps_32_bit(&mut rng),
            Some(FormatKind::EllBro),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrices_are_valid_deterministic_and_cover_edge_cases() {
        let a = test_matrices(7, 1);
        let b = test_matrices(7, 1);
        assert_eq!(a.len(), b.len());
        for (x, y) in a.iter().zip(&b) {
            x.csr.validate().unwrap();
            assert_eq!(x.csr, y.csr, "{} not deterministic", x.name);
        }
        let get = |n: &str| &a.iter().find(|m| m.name == n).unwrap().csr;
        assert_eq!(get("no-rows").nrows, 0);
        assert_eq!(get("no-entries").nnz(), 0);
        let long = get("one-long-row");
        assert_eq!(long.row_lengths().into_iter().max(), Some(long.ncols - 7));
        let e = get("empty-rows");
        assert!(e.row_lengths().iter().filter(|&&l| l == 0).count() > e.nrows / 2);
        assert!(get("wide").ncols > get("wide").nrows);
        assert!(get("tall").nrows > get("tall").ncols);
        assert!(get("warp-edges").row_lengths().contains(&33));
        // Every non-empty row of sparse-long-rows is 96 empty rows from the next one.
        let sparse = get("sparse-long-rows").row_lengths();
        let full: Vec<usize> = (0..sparse.len()).filter(|&i| sparse[i] > 0).collect();
        assert!(full.len() > 20 && full.windows(2).all(|w| w[1] - w[0] == 97));
        assert_ne!(test_matrices(8, 1)[0].csr, a[0].csr, "seed must matter");
        assert_eq!(get("one-row").nrows, 1);
        let gaps = get("wide-gaps");
        assert!(gaps.ncols > 1 << 17 && gaps.nrows % 32 != 0);
        assert!(a.iter().all(|m| m.only.is_none()));
        let g = gaps_32_bit(&mut ChaCha8Rng::seed_from_u64(1));
        g.validate().unwrap();
        // Deltas of 2^31 + 1 (row 3) and 2^31 + 2^20 + 41 (row 1's first, column + 1): 32 bits.
        assert_eq!(g.row(1).0, [g.ncols as u32 - 1]);
        assert!(g.row(3).0[1] >= 1 << 31 && g.row(2).0.is_empty());
    }
}
