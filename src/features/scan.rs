//! The one parallel pass over the entries of a row range, and how the features of a range of
//! consecutive scanned pieces follow from their scans.
//!
//! [`Scan::of`] reads the rows `[r0, r1)` of a matrix once, in groups of [`GROUP_ROWS`] rows
//! counted from `r0` (a warp of the thread-per-row kernels): column gaps, the extreme offsets
//! `column − row` (global rows), non-finite values, the occupied diagonals and columns (bitsets),
//! every group's warp steps (summed, and as a histogram of the warps by their steps),
//! lane-alignment steps ([`Access::align_steps`]) and `x` sectors, every row's sectors and BSR's
//! block columns per block row of [`BsrParams::DEFAULT_BLOCK`] rows. [`compose`] turns the scans of consecutive pieces
//! into the [`Features`] of their union — sums, minima/maxima, unions of the bitsets, the
//! bandwidth from the extreme offsets shifted to the union's first row — plus what only needs the
//! row lengths (their statistics, the HYB split, SELL-C-σ's slots).
//!
//! [`Features::compute`] is [`compose`] of one scan of the whole matrix, so the features of a row
//! block composed from the scans of its strips are those of the block computed alone, **exactly**,
//! provided every piece starts at a multiple of [`GROUP_ROWS`] rows after the block's first row
//! (groups, block rows and the offsets then line up): [`StripScans`] checks it. The optimizer
//! scans its few strips once ([`StripScans::new`], one pass over the matrix) and composes every
//! candidate block from them in `O(rows of the block + bitset words)`, instead of one pass over
//! the block's entries each (`docs/OPTIMIZER.md`, "Speed").

use super::access::{
    group_warps, sell_params_counted, warp_align_steps, warp_bucket, Access, RowLenSectors,
    WarpHist, GROUP_ROWS, THREADS_PER_ROW, WARP_HIST_BUCKETS,
};
use super::rows::RowStats;
use super::Features;
use crate::formats::{self, bsr::BsrCount, dia::DiaCount, BsrParams};
use crate::matrix::Csr;
use crate::scalar::Scalar;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

/// BSR's block rows must line up with the groups of a scan.
const BSR_B: usize = BsrParams::DEFAULT_BLOCK;
const _: () = assert!(GROUP_ROWS % BSR_B == 0);

/// A bitset trimmed to its non-zero words: bit `b` is bit `b % 64` of `words[b / 64 − first]`.
#[derive(Clone, Debug, Default)]
pub struct Bits {
    first: usize,
    words: Vec<u64>,
}

impl Bits {
    fn from_atomic(a: Vec<AtomicU64>) -> Bits {
        let w: Vec<u64> = a.into_iter().map(AtomicU64::into_inner).collect();
        let Some(lo) = w.iter().position(|&x| x != 0) else {
            return Bits::default();
        };
        let hi = w.iter().rposition(|&x| x != 0).unwrap_or(lo);
        Bits {
            first: lo,
            words: w[lo..=hi].to_vec(),
        }
    }

    /// Bits set in the union of `sets`.
    fn union_count(sets: &[&Bits]) -> u64 {
        Bits::union_with(sets, |_, w| w.iter().map(|w| w.count_ones() as u64).sum())
    }

    /// `f(first word, words)` of the union of `sets` (the one set itself where only one has
    /// bits: no copy).
    fn union_with<R>(sets: &[&Bits], f: impl FnOnce(usize, &[u64]) -> R) -> R {
        let live: Vec<&&Bits> = sets.iter().filter(|b| !b.words.is_empty()).collect();
        match live.as_slice() {
            [] => f(0, &[]),
            [one] => f(one.first, &one.words),
            _ => {
                let lo = live.iter().map(|b| b.first).min().unwrap_or(0);
                let hi = live
                    .iter()
                    .map(|b| b.first + b.words.len())
                    .max()
                    .unwrap_or(0);
                let mut u = vec![0u64; hi - lo];
                for b in live {
                    for (k, &w) in b.words.iter().enumerate() {
                        u[b.first - lo + k] |= w;
                    }
                }
                f(lo, &u)
            }
        }
    }
}

/// DIA's count of the union of the scans' diagonal sets ([`DiaCount`]): the occupied
/// diagonals and the stored slots whose column lies outside the `nrows × ncols` block
/// (`shape`, with its entries) whose first row is the matrix's row `r0`
/// ([`formats::dia::outside_of`]). A set's bit `b` is the global offset `b − shift`, the
/// block's offset that plus `r0`.
fn dia_count(sets: &[&Bits], shift: i64, r0: i64, shape: (u64, u64, u64)) -> (u64, Option<u64>) {
    Bits::union_with(sets, |first, words| {
        let n: u64 = words.iter().map(|w| w.count_ones() as u64).sum();
        let offsets = formats::dia::offsets_of(first, words, shift - r0);
        (n, formats::dia::outside_of(shape, n, offsets))
    })
}

/// What one pass over the rows `rows` finds (see the module documentation).
#[derive(Clone, Debug)]
pub struct Scan {
    rows: Range<usize>,
    nnz: usize,
    /// Smallest and largest gap between consecutive columns of a row.
    gaps: Option<(usize, usize)>,
    /// Smallest and largest `column − row` (global row index).
    offsets: Option<(i64, i64)>,
    nonfinite: usize,
    /// Occupied diagonals, bit `column + (matrix rows − 1) − row`.
    diagonals: Bits,
    /// `matrix rows − 1`, the shift of [`Scan::diagonals`]' bits.
    diag_shift: usize,
    /// Columns with an entry.
    columns: Bits,
    warp_steps: [u64; 6],
    /// The warps and their steps per bucket of every mapping ([`Hist`]).
    warp_hist: Hist,
    /// [`Access::align_steps`] of the scan's warps.
    align_steps: [u64; 2],
    x_sectors: [u64; 2],
    row_sectors_f64: u64,
    /// [`Access::row_len_sectors`], flat ([`LenSectors`]).
    len_sectors: LenSectors,
    bsr: BsrCount,
}

/// Per row-length bucket ([`warp_bucket`] of the length): entries, 4-byte and 8-byte sectors
/// ([`RowLenSectors`]), flat, allocated on the first row with an entry.
#[derive(Clone, Debug, Default)]
struct LenSectors(Vec<u64>);

impl LenSectors {
    fn add(&mut self, len: usize, f32_sectors: u64, f64_sectors: u64) {
        if self.0.is_empty() {
            self.0 = vec![0; WARP_HIST_BUCKETS * 3];
        }
        let i = warp_bucket(len as u64) * 3;
        self.0[i] += len as u64;
        self.0[i + 1] += f32_sectors;
        self.0[i + 2] += f64_sectors;
    }

    fn merge(self, o: &LenSectors) -> LenSectors {
        LenSectors(merge_flat(self.0, &o.0))
    }
}

/// The element-wise sum of two flat count vectors, either of which may be unallocated (empty).
fn merge_flat(mut a: Vec<u64>, b: &[u64]) -> Vec<u64> {
    if a.is_empty() {
        return b.to_vec();
    }
    for (x, y) in a.iter_mut().zip(b) {
        *x += y;
    }
    a
}

/// Per thread mapping and [`warp_bucket`]: warps and steps ([`WarpHist`] of each mapping),
/// flat, allocated on the first warp.
#[derive(Clone, Debug, Default)]
struct Hist(Vec<u64>);

impl Hist {
    fn add(&mut self, mapping: usize, steps: u64) {
        if self.0.is_empty() {
            self.0 = vec![0; THREADS_PER_ROW.len() * WARP_HIST_BUCKETS * 2];
        }
        let i = (mapping * WARP_HIST_BUCKETS + warp_bucket(steps)) * 2;
        self.0[i] += 1;
        self.0[i + 1] += steps;
    }

    fn merge(self, o: &Hist) -> Hist {
        Hist(merge_flat(self.0, &o.0))
    }

    /// One [`WarpHist`] per mapping (none for a scan without rows).
    fn per_mapping(&self) -> Vec<WarpHist> {
        self.0
            .chunks(WARP_HIST_BUCKETS * 2)
            .map(|c| {
                let warps: Vec<u64> = c.iter().step_by(2).copied().collect();
                let steps: Vec<u64> = c.iter().skip(1).step_by(2).copied().collect();
                WarpHist::trimmed(&warps, &steps)
            })
            .collect()
    }
}

/// Partial sums of one range of groups.
#[derive(Default)]
struct Acc {
    gaps: Option<(usize, usize)>,
    offsets: Option<(i64, i64)>,
    nonfinite: usize,
    steps: [u64; 6],
    hist: Hist,
    align: [u64; 2],
    sectors: [u64; 2],
    row64: u64,
    len_sectors: LenSectors,
    bsr: Option<BsrCount>,
}

fn min_max<U: Ord + Copy>(a: Option<(U, U)>, b: Option<(U, U)>) -> Option<(U, U)> {
    match (a, b) {
        (Some(x), Some(y)) => Some((x.0.min(y.0), x.1.max(y.1))),
        (x, None) => x,
        (None, y) => y,
    }
}

impl Acc {
    fn merge(mut self, o: Acc) -> Acc {
        self.gaps = min_max(self.gaps, o.gaps);
        self.offsets = min_max(self.offsets, o.offsets);
        self.nonfinite += o.nonfinite;
        for (a, b) in self.steps.iter_mut().zip(o.steps) {
            *a += b;
        }
        self.hist = self.hist.merge(&o.hist);
        for (a, b) in self.align.iter_mut().zip(o.align) {
            *a += b;
        }
        self.sectors[0] += o.sectors[0];
        self.sectors[1] += o.sectors[1];
        self.row64 += o.row64;
        self.len_sectors = self.len_sectors.merge(&o.len_sectors);
        self.bsr = match (self.bsr, o.bsr) {
            (Some(a), Some(b)) => Some(a.merge(b)),
            (a, b) => a.or(b),
        };
        self
    }
}

/// Distinct values of `v >> shift` in the sorted slice `v`.
fn distinct_shifted(v: &[u32], shift: u32) -> u64 {
    let mut n = 0u64;
    let mut last = u64::MAX;
    for &c in v {
        let s = (c >> shift) as u64;
        if s != last {
            n += 1;
            last = s;
        }
    }
    n
}

/// Set bit `bit`, reading first: a bit already set costs a shared load, not a contended write.
#[inline]
fn set(bits: &[AtomicU64], bit: usize) {
    let (w, mask) = (&bits[bit / 64], 1u64 << (bit % 64));
    if w.load(Ordering::Relaxed) & mask == 0 {
        w.fetch_or(mask, Ordering::Relaxed);
    }
}

fn atomic_bits(n: usize) -> Vec<AtomicU64> {
    (0..n.div_ceil(64)).map(|_| AtomicU64::new(0)).collect()
}

impl Scan {
    /// Scan the rows `rows` of `m` (in parallel over groups of [`GROUP_ROWS`] rows from
    /// `rows.start`).
    pub fn of<T: Scalar>(m: &Csr<T>, rows: Range<usize>) -> Scan {
        assert!(rows.start <= rows.end && rows.end <= m.nrows, "row range");
        let diag = atomic_bits((m.nrows + m.ncols).saturating_sub(1));
        let cols = atomic_bits(m.ncols);
        let shift = m.nrows.saturating_sub(1);
        let start = rows.start;
        let ngroups = rows.len().div_ceil(GROUP_ROWS);
        let acc = (0..ngroups)
            .into_par_iter()
            .fold(
                || (Acc::default(), Vec::<u32>::new(), Vec::<u32>::new()),
                |(mut a, mut buf, mut scratch), g| {
                    let r0 = start + g * GROUP_ROWS;
                    let group = r0..(r0 + GROUP_ROWS).min(rows.end);
                    let lens: Vec<usize> = group.clone().map(|r| m.row_len(r)).collect();
                    group_warps(&lens, |k, s| {
                        a.steps[k] += s;
                        a.hist.add(k, s);
                    });
                    let al = warp_align_steps(&m.row_ptr[group.start..=group.end]);
                    a.align[0] += al[0];
                    a.align[1] += al[1];
                    buf.clear();
                    for i in group.clone() {
                        let (c, v) = m.row(i);
                        let Some((&first, &last)) = c.first().zip(c.last()) else {
                            continue;
                        };
                        let o = (first as i64 - i as i64, last as i64 - i as i64);
                        a.offsets = min_max(a.offsets, Some(o));
                        for w in c.windows(2) {
                            let g = (w[1] - w[0]) as usize;
                            a.gaps = min_max(a.gaps, Some((g, g)));
                        }
                        for &j in c {
                            set(&diag, j as usize + shift - i);
                            set(&cols, j as usize);
                        }
                        a.nonfinite += v.iter().filter(|x| !x.is_finite()).count();
                        let (s32, s64) = (distinct_shifted(c, 3), distinct_shifted(c, 2));
                        a.row64 += s64;
                        a.len_sectors.add(c.len(), s32, s64);
                        buf.extend_from_slice(c);
                    }
                    buf.sort_unstable();
                    a.sectors[0] += distinct_shifted(&buf, 3);
                    a.sectors[1] += distinct_shifted(&buf, 2);
                    let mut row_blocks = [0usize; GROUP_ROWS / BSR_B];
                    for (k, b0) in group.clone().step_by(BSR_B).enumerate() {
                        let br = b0..(b0 + BSR_B).min(group.end);
                        formats::bsr::block_columns_of(m, br, BSR_B, &mut scratch);
                        row_blocks[k] = scratch.len();
                    }
                    let n = group.len().div_ceil(BSR_B);
                    let c = BsrCount::from_row_blocks(BSR_B, row_blocks[..n].iter().copied());
                    a.bsr = Some(a.bsr.map_or(c, |b| b.merge(c)));
                    (a, buf, scratch)
                },
            )
            .map(|(a, _, _)| a)
            .reduce(Acc::default, Acc::merge);
        Scan {
            nnz: m.row_ptr[rows.end] - m.row_ptr[rows.start],
            rows,
            gaps: acc.gaps,
            offsets: acc.offsets,
            nonfinite: acc.nonfinite,
            diagonals: Bits::from_atomic(diag),
            diag_shift: shift,
            columns: Bits::from_atomic(cols),
            warp_steps: acc.steps,
            warp_hist: acc.hist,
            align_steps: acc.align,
            x_sectors: acc.sectors,
            row_sectors_f64: acc.row64,
            len_sectors: acc.len_sectors,
            bsr: acc.bsr.unwrap_or(BsrCount::from_row_blocks(BSR_B, [])),
        }
    }
}

/// The features of the rows covered by `scans` (consecutive, each starting a multiple of
/// [`GROUP_ROWS`] rows after the first's start) of a matrix with `ncols` columns, whose row
/// lengths are `lens` (one per row of the union).
pub fn compose(ncols: usize, lens: &[usize], scans: &[&Scan]) -> Features {
    let nrows = lens.len();
    let r0 = scans.first().map_or(0, |s| s.rows.start);
    let rs = RowStats::compute(lens);
    let hyb_width = formats::hyb::auto_width(lens);
    let hyb_coo: usize = lens.par_iter().map(|&l| l.saturating_sub(hyb_width)).sum();
    let nnz: usize = scans.iter().map(|s| s.nnz).sum();
    let gaps = scans.iter().fold(None, |g, s| min_max(g, s.gaps));
    // Offsets relative to the union's first row.
    let offsets = scans
        .iter()
        .fold(None, |o, s| min_max(o, s.offsets))
        .map(|(lo, hi)| (lo + r0 as i64, hi + r0 as i64));
    let bandwidth = offsets.map_or(0, |(lo, hi)| lo.unsigned_abs().max(hi.unsigned_abs()));
    let (diagonals, outside) = dia_count(
        &scans.iter().map(|s| &s.diagonals).collect::<Vec<_>>(),
        scans.first().map_or(0, |s| s.diag_shift as i64),
        r0 as i64,
        (nrows as u64, ncols as u64, nnz as u64),
    );
    let ratio = |num: f64, den: usize, empty: f64| {
        if den == 0 {
            empty
        } else {
            num / den as f64
        }
    };
    let sum = |f: &dyn Fn(&Scan) -> u64| scans.iter().map(|s| f(s)).sum::<u64>();
    let rows_fit = nrows <= u32::MAX as usize;
    let access = Access {
        warp_steps: std::array::from_fn(|k| sum(&|s| s.warp_steps[k])),
        x_sectors_f32: sum(&|s| s.x_sectors[0]),
        x_sectors_f64: sum(&|s| s.x_sectors[1]),
        row_sectors_f64: sum(&|s| s.row_sectors_f64),
        cols_used: Bits::union_count(&scans.iter().map(|s| &s.columns).collect::<Vec<_>>()),
        dia: rows_fit.then_some(DiaCount {
            diagonals,
            offsets: offsets.unwrap_or((0, 0)),
            outside,
        }),
        sell: sell_params_counted()
            .iter()
            .filter_map(|p| formats::sell::count_lengths(lens, p))
            .collect(),
        bsr: Some(
            scans
                .iter()
                .fold(BsrCount::from_row_blocks(BSR_B, []), |c, s| c.merge(s.bsr)),
        ),
        warp_hist: scans
            .iter()
            .fold(Hist::default(), |h, s| h.merge(&s.warp_hist))
            .per_mapping(),
        align_steps: std::array::from_fn(|e| sum(&|s| s.align_steps[e])),
        row_len_sectors: RowLenSectors::trimmed(
            &scans
                .iter()
                .fold(LenSectors::default(), |h, s| h.merge(&s.len_sectors))
                .0,
        ),
        hyb_line_carries: Some(super::access::hyb_line_carries(lens, hyb_width)),
    };
    Features {
        nrows,
        ncols,
        nnz,
        min_nnz: rs.min,
        max_nnz: rs.max,
        mode_nnz: rs.mode,
        median_nnz: rs.median,
        mean_nnz: ratio(nnz as f64, nrows, 0.0),
        std_nnz: rs.std,
        min_dist: gaps.map(|g| g.0),
        max_dist: gaps.map(|g| g.1),
        bandwidth: bandwidth as usize,
        density: if nrows == 0 || ncols == 0 {
            0.0
        } else {
            nnz as f64 / (nrows as f64 * ncols as f64)
        },
        empty_rows: rs.empty,
        ell_padding_ratio: ratio(rs.max as f64 * nrows as f64, nnz, 1.0),
        hyb_width,
        hyb_coo_nnz: hyb_coo,
        hyb_coo_share: ratio(hyb_coo as f64, nnz, 0.0),
        diagonals: diagonals as usize,
        row_len_log2_hist: rs.log2_hist,
        nonfinite: scans.iter().map(|s| s.nonfinite).sum(),
        access: Some(access),
    }
}

/// A matrix scanned once in strips, whose row blocks' features are composed from the scans
/// ([`StripScans::block`]).
pub struct StripScans {
    cuts: Vec<usize>,
    ncols: usize,
    lens: Vec<usize>,
    scans: Vec<Scan>,
}

impl StripScans {
    /// Scan `m` in the strips `[cuts[k], cuts[k+1])`. `cuts` must run from 0 to `m.nrows`,
    /// increasing, with every inner cut a multiple of [`GROUP_ROWS`].
    pub fn new<T: Scalar>(m: &Csr<T>, cuts: &[usize]) -> crate::Result<StripScans> {
        let ok = cuts.len() >= 2
            && cuts.first() == Some(&0)
            && cuts.last() == Some(&m.nrows)
            && cuts.windows(2).all(|w| w[0] < w[1] || m.nrows == 0)
            && cuts[1..cuts.len() - 1].iter().all(|c| c % GROUP_ROWS == 0);
        if !ok {
            return Err(crate::Error::Invalid(format!(
                "strip cuts {cuts:?} must increase from 0 to {} rows, inner cuts on multiples \
                 of {GROUP_ROWS}",
                m.nrows
            )));
        }
        Ok(StripScans {
            cuts: cuts.to_vec(),
            ncols: m.ncols,
            lens: m.row_lengths(),
            scans: cuts.windows(2).map(|w| Scan::of(m, w[0]..w[1])).collect(),
        })
    }

    /// Strips.
    pub fn len(&self) -> usize {
        self.scans.len()
    }

    /// Whether there are no strips.
    pub fn is_empty(&self) -> bool {
        self.scans.is_empty()
    }

    /// The features of strips `i..=j`, equal to [`Features::compute`] of those rows.
    pub fn block(&self, i: usize, j: usize) -> Features {
        let parts: Vec<&Scan> = self.scans[i..=j].iter().collect();
        compose(
            self.ncols,
            &self.lens[self.cuts[i]..self.cuts[j + 1]],
            &parts,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_composed_from_strips_equal_the_features_of_their_rows() {
        // 300 rows of lengths 0..=40 in a pattern that changes every few rows, a long row, and
        // strips cut on multiples of 32 rows (the last strip partial).
        let (mut r, mut c) = (Vec::new(), Vec::new());
        for i in 0..300u32 {
            let len = if i == 77 { 150 } else { (i * 7 + i / 13) % 41 };
            for k in 0..len {
                r.push(i);
                c.push((i * 3 + k * (1 + i % 5)) % 200);
            }
        }
        let mut rc: Vec<(u32, u32)> = r.into_iter().zip(c).collect();
        rc.sort_unstable();
        rc.dedup();
        let (r, c): (Vec<u32>, Vec<u32>) = rc.into_iter().unzip();
        let m = Csr::<f64>::from_triplets(300, 200, &r, &c, &vec![1.0; r.len()]).unwrap();
        let cuts = [0, 64, 96, 224, 300];
        let s = StripScans::new(&m, &cuts).unwrap();
        for i in 0..s.len() {
            for j in i..s.len() {
                let alone = Features::compute(&m.slice_rows(cuts[i], cuts[j + 1]));
                assert_eq!(s.block(i, j), alone, "strips {i}..={j}");
            }
        }
        // DIA's slots outside the columns are counted per block (the block's own offsets).
        let outside = |f: Features| f.access.and_then(|a| a.dia).and_then(|d| d.outside);
        assert!(outside(s.block(0, 0)).unwrap() > 0);
        assert_ne!(outside(s.block(0, 0)), outside(s.block(1, 1)));
        assert!(StripScans::new(&m, &[0, 50, 300]).is_err());
    }
}
