//! SEG-TILE, column tiles of row segments: our format for blocks of long rows.
//!
//! The columns are cut into tiles of `W` consecutive columns. The entries are stored tile by
//! tile, and within a tile row by row: each row's *segment* of the tile (its entries whose column
//! lies in the tile, columns increasing), the column kept as a 16-bit offset from the tile's first
//! column. `seg_ptr[t · nrows + r]` is where row `r`'s segment of tile `t` starts.
//!
//! Why (docs/OPTIMIZER.md, session 37): a block of a few very long rows with scattered columns
//! spends its time gathering x, one L2 sector per entry, whatever the row mapping. The CUDA
//! kernel gives each thread block one tile and a group of rows, so its gathers stay within `W`
//! columns: staged in shared memory when the tile's values fit [`SHARED_BYTES`], else read
//! through the L1. Each warp sums one row's segment and adds it to y with one atomic (y is zeroed
//! first). Prototyped beside cuSPARSE on the H100 (`scripts/prototype/segtile.cu`): 200 rows of
//! 5·10³–4·10⁴ entries over 490,000 columns 11.8 µs (f32) and 26.5 µs (f64) against cuSPARSE's
//! 32.7 and 40.6 µs.
//!
//! Choices where the prototype is the only guide, written here:
//! * **Tile width** (`--segtile-width`, 0 = chosen): the shared-memory tile (32 KiB of values:
//!   8,192 columns in f32, 4,096 in f64) when the longest row's segment of it would hold at
//!   least [`LONG_SEGMENT`] entries were its columns spread over all of x (`max_row_len · W /
//!   ncols`: the longest rows carry the work, and a block of long rows cut by the optimizer
//!   holds a few short ones too); else 65,536 columns (the widest 16-bit offsets allow), read
//!   through the L1 — on rows of 256–1,000 entries over 5·10⁵ columns, the widest tile was the
//!   fastest of 4,096–65,536 in the prototype.
//! * **Admission**: refused where the segments average fewer than
//!   [`SegTileParams::DEFAULT_MIN_SEGMENT`] = 32 entries (`--segtile-min-segment`), one per lane
//!   of the warp that sums a segment: on random rows of 8 and 16 entries it ran 0.44–0.88× the best
//!   other kernel, on rows of 32–1,024 entries 0.87–1.04× (H100, session 37). This keeps the format
//!   to matrices and row blocks of long rows.

use super::refusal::{budget, offsets32, rows32};
use super::util::{csr_from_rows, row_cuts, split_at_cuts};
use super::{FormatKind, FormatParams, ParamError, Reason, Refusal, SparseFormat, Summary};
use crate::{Csr, Result, Scalar};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Bytes of x a thread block stages in shared memory (the CUDA kernel's static array).
pub const SHARED_BYTES: u64 = 32 * 1024;
/// Entries per segment of the longest row (were its columns spread over all of x) from which
/// the shared-memory tile is chosen.
pub const LONG_SEGMENT: u64 = 64;
/// Widest tile: column offsets are 16-bit.
pub const MAX_WIDTH: u64 = 1 << 16;

/// SEG-TILE's parameters.
#[derive(clap::Args, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SegTileParams {
    /// SEG-TILE's tile width in columns: a power of two up to 65536; 0 chooses it from the
    /// matrix (the shared-memory tile where rows are long, else 65536).
    #[arg(
        id = "segtile_width",
        long = "segtile-width",
        value_name = "COLUMNS",
        default_value_t = 0
    )]
    #[serde(rename = "segtile_width")]
    pub width: usize,
    /// SEG-TILE is refused when its row segments average fewer entries than this.
    #[arg(id = "segtile_min_segment", long = "segtile-min-segment", value_name = "ENTRIES", default_value_t = SegTileParams::DEFAULT_MIN_SEGMENT)]
    #[serde(rename = "segtile_min_segment")]
    pub min_segment: f64,
}

impl SegTileParams {
    /// Default of the fewest mean entries per segment.
    pub const DEFAULT_MIN_SEGMENT: f64 = 32.0;
}

impl Default for SegTileParams {
    fn default() -> Self {
        SegTileParams {
            width: 0,
            min_segment: Self::DEFAULT_MIN_SEGMENT,
        }
    }
}

/// Tiles of `width` columns over `ncols` columns.
fn tiles(ncols: u64, width: u64) -> u64 {
    ncols.div_ceil(width)
}

/// The tile width the matrix summarized by `s` is stored with: `params.segtile.width`, or the
/// rule of the module documentation when it is 0. `Err` for a width that is not a power of two
/// up to [`MAX_WIDTH`].
pub fn width(s: &Summary, params: &FormatParams, value_bytes: u64) -> Result<u64, Refusal> {
    let w = params.segtile.width as u64;
    if w != 0 {
        if !w.is_power_of_two() || w > MAX_WIDTH {
            return Err(Refusal::new(
                FormatKind::SegTile,
                Reason::Param(ParamError::SegTileWidth),
            ));
        }
        return Ok(w);
    }
    let shared = (SHARED_BYTES / value_bytes.max(1)).max(1);
    // The longest row's entries per segment, were its columns spread over all of x:
    // max_row_len · W / ncols. The longest rows carry the work where this format pays (a block
    // of long rows may also hold a few short ones, which would pull a mean down).
    let spread = (s.max_row_len as u128 * shared as u128) / (s.ncols as u128).max(1);
    Ok(if spread >= LONG_SEGMENT as u128 {
        shared
    } else {
        MAX_WIDTH
    })
}

/// Footprint of `segments` segment offsets (plus one) and `nnz` entries:
/// `(segments + 1) × 4 + nnz × (2 + value)`, saturating.
fn bytes_for(segments: u64, nnz: u64, value_bytes: u64) -> u64 {
    segments
        .saturating_add(1)
        .saturating_mul(4)
        .saturating_add(nnz.saturating_mul(2 + value_bytes))
}

/// Row segments of the matrix summarized by `s` at tile width `w`.
fn segments(s: &Summary, w: u64) -> u64 {
    s.nrows.saturating_mul(tiles(s.ncols, w))
}

/// The device footprint of the matrix summarized by `s` (see [`FormatKind::footprint`]).
pub fn footprint(s: &Summary, params: &FormatParams, value_bytes: u64) -> Result<u64, Refusal> {
    let w = width(s, params, value_bytes)?;
    Ok(bytes_for(segments(s, w), s.nnz, value_bytes))
}

/// A valid width; rows within 32-bit row indices; non-zeros and segments within 32-bit offsets;
/// at least `params.segtile.min_segment` entries per segment on average; footprint within `params.max_bytes`
/// (see [`FormatKind::admit`]). A matrix without rows is accepted.
pub fn admit(s: &Summary, params: &FormatParams, value_bytes: u64) -> Result<(), Refusal> {
    let kind = FormatKind::SegTile;
    let w = width(s, params, value_bytes)?;
    rows32(kind, s.nrows)?;
    offsets32(kind, "non-zeros", s.nnz as u128)?;
    let segs = segments(s, w);
    offsets32(kind, "row segments", segs as u128)?;
    let least = params.segtile.min_segment;
    if segs > 0 && (s.nnz as f64) < least * segs as f64 {
        return Err(Refusal::new(
            kind,
            Reason::ShortSegments {
                segments: segs,
                nnz: s.nnz,
                width: w,
                least,
            },
        ));
    }
    budget(kind, bytes_for(segs, s.nnz, value_bytes), params.max_bytes)
}

/// Column tiles of row segments.
#[derive(Clone, Debug, PartialEq)]
pub struct SegTile<T> {
    pub nrows: usize,
    pub ncols: usize,
    /// Columns per tile (a power of two ≤ 65,536).
    pub width: usize,
    /// `tiles × nrows + 1` offsets: row `r`'s segment of tile `t` is
    /// `seg_ptr[t·nrows + r] .. seg_ptr[t·nrows + r + 1]`.
    pub seg_ptr: Vec<u32>,
    /// Column of each entry less its tile's first column.
    pub col: Vec<u16>,
    pub values: Vec<T>,
}

impl<T: Scalar> SegTile<T> {
    /// Tiles of columns.
    pub fn tiles(&self) -> usize {
        self.ncols.div_ceil(self.width)
    }

    /// Convert from CSR (which must satisfy [`Csr::validate`]), each tile filled in parallel.
    /// Refused as [`admit`] says, before allocating.
    pub fn from_csr(csr: &Csr<T>, params: &FormatParams) -> Result<Self> {
        let vb = T::BYTES as u64;
        let s = Summary::of(csr, None);
        admit(&s, params, vb)?;
        let w = width(&s, params, vb)? as usize;
        let (nrows, ntiles) = (csr.nrows, csr.ncols.div_ceil(w));
        // Where each row's entries of tile t start: the first column ≥ t·w (columns increase).
        let start = |r: usize, t: usize| -> usize {
            let (a, b) = (csr.row_ptr[r], csr.row_ptr[r + 1]);
            a + csr.col_idx[a..b].partition_point(|&c| (c as usize) < t * w)
        };
        // Segment lengths, tile-major, then their prefix sums.
        let mut seg_ptr = vec![0u32; ntiles * nrows + 1];
        seg_ptr[1..]
            .par_chunks_mut(nrows.max(1))
            .enumerate()
            .for_each(|(t, lens)| {
                for (r, l) in lens.iter_mut().enumerate() {
                    *l = (start(r, t + 1) - start(r, t)) as u32;
                }
            });
        for i in 1..seg_ptr.len() {
            seg_ptr[i] += seg_ptr[i - 1];
        }
        let nnz = csr.nnz();
        let mut col = vec![0u16; nnz];
        let mut values = vec![T::zero(); nnz];
        let pos: Vec<usize> = (0..=ntiles).map(|t| seg_ptr[t * nrows] as usize).collect();
        split_at_cuts(&mut col, &pos)
            .into_par_iter()
            .zip(split_at_cuts(&mut values, &pos))
            .enumerate()
            .for_each(|(t, (c, v))| {
                let mut k = 0;
                for r in 0..nrows {
                    let (a, b) = (start(r, t), start(r, t + 1));
                    for i in a..b {
                        c[k] = (csr.col_idx[i] as usize - t * w) as u16;
                        v[k] = csr.values[i];
                        k += 1;
                    }
                }
            });
        Ok(SegTile {
            nrows,
            ncols: csr.ncols,
            width: w,
            seg_ptr,
            col,
            values,
        })
    }

    /// Row `r`'s segment of tile `t`, as a range of entries.
    fn segment(&self, t: usize, r: usize) -> std::ops::Range<usize> {
        let i = t * self.nrows + r;
        self.seg_ptr[i] as usize..self.seg_ptr[i + 1] as usize
    }

    /// Entries in the rows before `r` (`r ≤ nrows`): a tile's segments of rows `0..r` are
    /// consecutive, so one subtraction per tile, no pass over the rows.
    fn entries_before(&self, r: usize) -> usize {
        (0..self.tiles())
            .map(|t| (self.seg_ptr[t * self.nrows + r] - self.seg_ptr[t * self.nrows]) as usize)
            .sum()
    }

    /// Convert back to CSR; the exact inverse of [`SegTile::from_csr`].
    pub fn to_csr(&self) -> Csr<T> {
        let ntiles = self.tiles();
        let lens: Vec<usize> = (0..self.nrows)
            .into_par_iter()
            .map(|r| (0..ntiles).map(|t| self.segment(t, r).len()).sum())
            .collect();
        csr_from_rows(self.nrows, self.ncols, &lens, |r, c, v| {
            let mut k = 0;
            for t in 0..ntiles {
                for i in self.segment(t, r) {
                    c[k] = (t * self.width + self.col[i] as usize) as u32;
                    v[k] = self.values[i];
                    k += 1;
                }
            }
        })
    }
}

impl<T: Scalar> SparseFormat<T> for SegTile<T> {
    fn kind(&self) -> FormatKind {
        FormatKind::SegTile
    }
    fn nrows(&self) -> usize {
        self.nrows
    }
    fn ncols(&self) -> usize {
        self.ncols
    }
    fn nnz(&self) -> usize {
        self.values.len()
    }
    fn stored_entries(&self) -> usize {
        self.values.len()
    }
    fn footprint_bytes(&self) -> u64 {
        bytes_for(
            (self.seg_ptr.len() as u64).saturating_sub(1),
            self.values.len() as u64,
            T::BYTES as u64,
        )
    }
    /// Each row sums its segments tile by tile (its entries in column order, as CSR does).
    fn spmv(&self, x: &[T], y: &mut [T]) {
        assert_eq!(x.len(), self.ncols, "x has the wrong length");
        assert_eq!(y.len(), self.nrows, "y has the wrong length");
        let ntiles = self.tiles();
        let cuts = row_cuts(self.nrows, self.values.len(), |r| self.entries_before(r));
        split_at_cuts(y, &cuts)
            .into_par_iter()
            .zip(cuts.par_windows(2))
            .for_each(|(ys, w)| {
                for (r, out) in (w[0]..w[1]).zip(ys.iter_mut()) {
                    let mut s = T::zero();
                    for t in 0..ntiles {
                        let xt = &x[t * self.width..];
                        for i in self.segment(t, r) {
                            s += self.values[i] * xt[self.col[i] as usize];
                        }
                    }
                    *out = s;
                }
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// `rows` rows of 1..=`longest` random columns over `ncols` (some rows empty).
    fn long_rows(rows: usize, ncols: usize, longest: usize, seed: u64) -> Csr<f64> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let (mut r, mut c, mut v) = (vec![], vec![], vec![]);
        for i in 0..rows {
            let len = if i % 5 == 2 {
                0
            } else {
                rng.random_range(1..=longest)
            };
            for _ in 0..len {
                r.push(i as u32);
                c.push(rng.random_range(0..ncols) as u32);
                v.push(rng.random_range(-1.0..1.0));
            }
        }
        Csr::from_triplets(rows, ncols, &r, &c, &v).unwrap()
    }

    fn with(width: usize, min_segment: f64) -> FormatParams {
        FormatParams {
            segtile: SegTileParams { width, min_segment },
            ..FormatParams::default()
        }
    }

    #[test]
    fn layout_round_trip_and_spmv() {
        let m = long_rows(23, 20_000, 3_000, 1);
        for w in [0, 1024, 4096, 65536] {
            let f = SegTile::from_csr(&m, &with(w, 8.0)).unwrap();
            // The shared-memory tile (4,096 columns in f64) where segments average ≥ 128.
            assert_eq!(f.width, if w == 0 { 4096 } else { w });
            assert_eq!(f.seg_ptr.len(), f.tiles() * m.nrows + 1);
            assert_eq!(*f.seg_ptr.last().unwrap() as usize, m.nnz());
            // Every segment's columns lie in its tile and increase.
            for t in 0..f.tiles() {
                for r in 0..m.nrows {
                    let cols: Vec<usize> = f
                        .segment(t, r)
                        .map(|i| t * f.width + f.col[i] as usize)
                        .collect();
                    assert!(cols.windows(2).all(|p| p[0] < p[1]));
                    assert!(cols.iter().all(|&c| c / f.width == t && c < m.ncols));
                }
            }
            assert_eq!(f.to_csr(), m);
            let x: Vec<f64> = (0..m.ncols).map(|j| 1.0 - j as f64 * 1e-4).collect();
            let mut y = vec![f64::NAN; m.nrows];
            f.spmv(&x, &mut y);
            let reference = m.spmv_reference(&x);
            for (a, b) in y.iter().zip(&reference) {
                assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} vs {b}");
            }
            let s = Summary::of(&m, None);
            assert_eq!(
                FormatKind::SegTile.footprint(&s, &with(w, 8.0), 8),
                Ok(f.footprint_bytes())
            );
        }
    }

    #[test]
    fn the_chosen_width_follows_the_segments() {
        // 200 rows of ~22,500 entries over 490,000 columns (the optimizer's long-row block):
        // 8,192 columns in f32 (60 tiles, ~375 a segment), 4,096 in f64 (120 tiles, ~188).
        let long = Summary::constant(200, 490_000, 22_500);
        assert_eq!(width(&long, &FormatParams::default(), 4), Ok(8192));
        assert_eq!(width(&long, &FormatParams::default(), 8), Ok(4096));
        // 10,000 rows of 256: no shared tile holds 128 a segment; the widest tile.
        let medium = Summary::constant(10_000, 500_000, 256);
        assert_eq!(width(&medium, &FormatParams::default(), 4), Ok(65536));
        assert!(FormatKind::SegTile
            .admit(&medium, &FormatParams::default(), 4)
            .is_ok());
        // Rows of 64 in tiles of 65,536 columns over 10⁶: 4 a segment, refused (as 31 would be).
        let short = Summary::constant(100_000, 1_000_000, 64);
        assert!(FormatKind::SegTile
            .admit(&short, &FormatParams::default(), 4)
            .is_err());
        // A stencil: 5 entries a row, refused.
        let stencil = Summary::constant(1_000_000, 1_000_000, 5);
        let r = FormatKind::SegTile
            .admit(&stencil, &FormatParams::default(), 8)
            .unwrap_err();
        assert!(matches!(r.reason, Reason::ShortSegments { .. }), "{r}");
        assert!(r.to_string().contains("0.31 per segment"), "{r}");
        // Widths that are not powers of two, or too wide for 16-bit offsets.
        for w in [3, 4095, 131072] {
            let r = FormatKind::SegTile
                .admit(&long, &with(w, 8.0), 4)
                .unwrap_err();
            assert_eq!(r.reason, Reason::Param(ParamError::SegTileWidth), "{w}");
        }
    }

    #[test]
    fn degenerate_shapes() {
        for (nr, nc) in [(0, 10), (10, 0), (0, 0), (7, 3)] {
            let m = Csr::<f32>::zeros(nr, nc);
            let f = SegTile::from_csr(&m, &with(0, 0.0)).unwrap();
            assert_eq!(f.to_csr(), m);
            let mut y = vec![f32::NAN; nr];
            f.spmv(&vec![1.0; nc], &mut y);
            assert!(y.iter().all(|&v| v == 0.0));
        }
    }
}
