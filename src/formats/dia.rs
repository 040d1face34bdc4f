//! DIA: one dense array of length `nrows` per occupied diagonal. Refused when the stored slots
//! exceed `DiaParams::max_fill` times the non-zeros (most of it would be padding).

use super::refusal::{budget, offsets32, rows32};
use super::util::{column_major_pieces, csr_from_rows, row_cuts, split_at_cuts, uniform_cuts};
use super::{FormatKind, FormatParams, Missing, Reason, Refusal, SparseFormat, Summary};
use crate::{Csr, Result, Scalar};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering};

/// DIA's parameter.
#[derive(clap::Args, Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DiaParams {
    /// DIA is refused when its stored slots exceed this many times the non-zeros.
    #[arg(id = "dia_max_fill", long = "dia-max-fill", value_name = "RATIO", default_value_t = DiaParams::DEFAULT_MAX_FILL)]
    #[serde(rename = "dia_max_fill")]
    pub max_fill: f64,
}

impl DiaParams {
    /// Default fill limit.
    pub const DEFAULT_MAX_FILL: f64 = 10.0;
}

impl Default for DiaParams {
    fn default() -> Self {
        DiaParams {
            max_fill: Self::DEFAULT_MAX_FILL,
        }
    }
}

/// What DIA's rules need beyond the matrix's size: its occupied diagonals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiaCount {
    /// Occupied diagonals.
    pub diagonals: u64,
    /// Smallest and largest occupied offset (column − row); `(0, 0)` without entries.
    pub offsets: (i64, i64),
    /// Stored slots whose column lies outside the matrix (the first `−offset` rows of a
    /// diagonal below the main one, the rows past `ncols − offset` of one above it): DIA stores
    /// them and our kernel never reads them (`kernels/dia.cu` tests the column first), which on
    /// a stack of a band over a few far-off rows is most of the slots ([`outside_slots`]).
    /// Counted where the slots are at most [`OUTSIDE_COUNTED_FILL`] times the non-zeros (DIA
    /// is refused long before that: [`outside_counted`]); `None` otherwise and in tables
    /// written before session 56 (`sparsecast refeature` adds it), where none is subtracted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outside: Option<u64>,
}

/// [`DiaCount::outside`] is counted up to this fill (stored slots per non-zero): beyond it the
/// count would walk every occupied diagonal of a matrix DIA refuses, per block the optimizer
/// composes.
pub const OUTSIDE_COUNTED_FILL: u64 = 64;

/// Whether [`DiaCount::outside`] is counted for `diagonals` over `nrows` rows and `nnz` entries.
pub fn outside_counted(diagonals: u64, nrows: u64, nnz: u64) -> bool {
    diagonals as u128 * nrows as u128 <= OUTSIDE_COUNTED_FILL as u128 * nnz as u128
}

/// Stored slots of the diagonal at `offset` (column − row) of an `nrows × ncols` matrix whose
/// column lies outside `[0, ncols)`: rows `i` with `i + offset < 0` or `i + offset ≥ ncols`.
pub fn outside_slots(nrows: u64, ncols: u64, offset: i64) -> u64 {
    let end = (ncols as i128 - offset as i128).min(nrows as i128);
    let start = (-(offset as i128)).max(0);
    nrows - (end - start).clamp(0, nrows as i128) as u64
}

/// [`DiaCount::outside`] of an `nrows × ncols` matrix of `nnz` entries (`shape`) whose
/// `diagonals` occupied diagonals are at `offsets`: `None` where not [`outside_counted`] (the
/// offsets are then not walked).
pub(crate) fn outside_of(
    shape: (u64, u64, u64),
    diagonals: u64,
    offsets: impl Iterator<Item = i64>,
) -> Option<u64> {
    let (nrows, ncols, nnz) = shape;
    outside_counted(diagonals, nrows, nnz)
        .then(|| offsets.map(|o| outside_slots(nrows, ncols, o)).sum())
}

/// The offsets (column − row) of the diagonals set in a bitset over `column − row + shift`
/// whose words are `words` from word `first` on, increasing.
pub(crate) fn offsets_of(
    first: usize,
    words: &[u64],
    shift: i64,
) -> impl Iterator<Item = i64> + '_ {
    words.iter().enumerate().flat_map(move |(k, &w)| {
        let lowest = |w: u64| (w != 0).then_some(w);
        std::iter::successors(lowest(w), move |&w| lowest(w & (w - 1)))
            .map(move |w| ((first + k) * 64 + w.trailing_zeros() as usize) as i64 - shift)
    })
}

/// The occupied diagonals of `csr` (one parallel pass over its entries).
pub(crate) fn count<T: Scalar>(csr: &Csr<T>) -> DiaCount {
    Occupancy::of(csr).summary()
}

/// Stored slots a DIA kernel skips, `value_bytes` each ([`DiaCount::outside`]); 0 where the
/// summary lacks the count. See [`crate::formats::FormatKind::skipped_bytes`].
pub fn skipped_bytes(s: &Summary, value_bytes: u64) -> u64 {
    s.counts
        .dia
        .and_then(|d| d.outside)
        .map_or(0, |n| n.saturating_mul(value_bytes))
}

/// Footprint: `ndiag × 4 + ndiag × nrows × value`, saturating.
fn bytes_for(ndiag: u64, nrows: u64, value_bytes: u64) -> u64 {
    ndiag
        .saturating_mul(4)
        .saturating_add(ndiag.saturating_mul(nrows).saturating_mul(value_bytes))
}

/// The summary's diagonal count.
fn diagonals(s: &Summary) -> Result<DiaCount, Refusal> {
    s.counts.dia.ok_or(Refusal::new(
        FormatKind::Dia,
        Reason::Unknown(Missing::Diagonals),
    ))
}

/// The device footprint of the matrix summarized by `s`, which must hold its diagonals (see
/// [`FormatKind::footprint`]).
pub fn footprint(s: &Summary, _: &FormatParams, value_bytes: u64) -> Result<u64, Refusal> {
    Ok(bytes_for(diagonals(s)?.diagonals, s.nrows, value_bytes))
}

/// Rows within 32-bit row indices; stored slots `diagonals × rows` within
/// `params.dia.max_fill × nnz` and within 32-bit offsets; offsets within `i32`; footprint within
/// `params.max_bytes` (see [`FormatKind::admit`]). A matrix without entries has no diagonals and
/// is accepted.
pub fn admit(s: &Summary, params: &FormatParams, value_bytes: u64) -> Result<(), Refusal> {
    let kind = FormatKind::Dia;
    rows32(kind, s.nrows)?;
    let d = diagonals(s)?;
    let slots = d.diagonals as u128 * s.nrows as u128;
    let limit = params.dia.max_fill;
    if slots as f64 > limit * s.nnz as f64 {
        return Err(Refusal::new(
            kind,
            Reason::Fill {
                diagonals: d.diagonals,
                rows: s.nrows,
                nnz: s.nnz,
                limit,
            },
        ));
    }
    offsets32(kind, "stored slots (diagonals × rows)", slots)?;
    for o in [d.offsets.0, d.offsets.1] {
        if i32::try_from(o).is_err() {
            return Err(Refusal::new(kind, Reason::DiagonalOffset(o)));
        }
    }
    budget(kind, footprint(s, params, value_bytes)?, params.max_bytes)
}

/// Diagonal format. Device footprint: `ndiag × 4 (offsets) + ndiag × nrows × sizeof T`.
#[derive(Clone, Debug, PartialEq)]
pub struct Dia<T> {
    pub nrows: usize,
    pub ncols: usize,
    /// Real (non-padding) entries.
    pub nnz: usize,
    /// Diagonal offsets (column − row), increasing.
    pub offsets: Vec<i32>,
    /// Diagonal-major: `values[d * nrows + i] = A[i, i + offsets[d]]` (0 where absent or outside).
    pub values: Vec<T>,
}

/// The occupied diagonals of a matrix as a bitset over `column − row + nrows − 1`
/// (`0 ..= nrows + ncols − 2`), with a rank index so that the position of a diagonal among the
/// occupied ones is found in O(1).
struct Occupancy {
    words: Vec<u64>,
    /// Occupied diagonals in the words before each word.
    before: Vec<usize>,
    /// `nrows − 1`: subtract from a bit index to get the offset `column − row`.
    shift: i64,
    /// The matrix's rows, columns and entries ([`DiaCount::outside`]).
    shape: (u64, u64, u64),
}

impl Occupancy {
    /// Mark every entry's diagonal, in parallel over chunks of rows. A word is only written when
    /// its bit is not set yet, so banded matrices (all threads hitting the same few words) only
    /// read shared cache lines.
    fn of<T: Scalar>(csr: &Csr<T>) -> Self {
        let (nrows, ncols) = (csr.nrows, csr.ncols);
        let nbits = if nrows == 0 || ncols == 0 || csr.nnz() == 0 {
            0
        } else {
            nrows + ncols - 1
        };
        let atomic: Vec<AtomicU64> = (0..nbits.div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
        let cuts = row_cuts(nrows, csr.nnz(), |i| csr.row_ptr[i]);
        cuts.par_windows(2).for_each(|w| {
            for i in w[0]..w[1] {
                for &c in csr.row(i).0 {
                    let b = c as usize + (nrows - 1) - i;
                    let (word, bit) = (&atomic[b / 64], 1u64 << (b % 64));
                    if word.load(Ordering::Relaxed) & bit == 0 {
                        word.fetch_or(bit, Ordering::Relaxed);
                    }
                }
            }
        });
        let words: Vec<u64> = atomic.into_iter().map(AtomicU64::into_inner).collect();
        let mut before = Vec::with_capacity(words.len());
        let mut acc = 0usize;
        for w in &words {
            before.push(acc);
            acc += w.count_ones() as usize;
        }
        Occupancy {
            words,
            before,
            shift: nrows as i64 - 1,
            shape: (nrows as u64, ncols as u64, csr.nnz() as u64),
        }
    }

    /// Number of occupied diagonals.
    fn count(&self) -> usize {
        self.before.last().copied().unwrap_or(0)
            + self.words.last().map_or(0, |w| w.count_ones() as usize)
    }

    /// Position among the occupied diagonals of the (occupied) diagonal with bit index `b`.
    #[inline]
    fn rank(&self, b: usize) -> usize {
        let mask = (1u64 << (b % 64)) - 1;
        self.before[b / 64] + (self.words[b / 64] & mask).count_ones() as usize
    }

    /// The count DIA's rules read.
    fn summary(&self) -> DiaCount {
        let first = self.words.iter().position(|&w| w != 0);
        let last = self.words.iter().rposition(|&w| w != 0);
        let offsets = match (first, last) {
            (Some(a), Some(b)) => (
                (a * 64 + self.words[a].trailing_zeros() as usize) as i64 - self.shift,
                (b * 64 + 63 - self.words[b].leading_zeros() as usize) as i64 - self.shift,
            ),
            _ => (0, 0),
        };
        let diagonals = self.count() as u64;
        let outside = outside_of(
            self.shape,
            diagonals,
            offsets_of(0, &self.words, self.shift),
        );
        DiaCount {
            diagonals,
            offsets,
            outside,
        }
    }

    /// Offsets (column − row) of the occupied diagonals, increasing.
    fn offsets(&self) -> Vec<i64> {
        let mut out = Vec::with_capacity(self.count());
        out.extend(offsets_of(0, &self.words, self.shift));
        out
    }
}

/// The occupied diagonals of `csr` (summarized by `s`), refused as [`admit`] says before
/// anything the size of the slots is allocated.
fn admitted<T: Scalar>(
    csr: &Csr<T>,
    s: &Summary,
    params: &FormatParams,
    value_bytes: u64,
) -> Result<Occupancy> {
    rows32(FormatKind::Dia, csr.nrows as u64)?;
    let occ = Occupancy::of(csr);
    let mut s = s.clone();
    s.counts.dia = Some(occ.summary());
    admit(&s, params, value_bytes)?;
    Ok(occ)
}

/// Where DIA puts every entry ([`Dia::from_csr`] fills it on the host, the CUDA backend on the
/// device): the occupied diagonals' offsets (column − row, increasing); entry (i, j) goes to
/// `values[d × nrows + i]`, d the position of `j − i` among them; every other slot is 0.
pub(crate) fn plan<T: Scalar>(
    csr: &Csr<T>,
    s: &Summary,
    params: &FormatParams,
    value_bytes: u64,
) -> Result<Vec<i32>> {
    let occ = admitted(csr, s, params, value_bytes)?;
    Ok(occ.offsets().into_iter().map(|o| o as i32).collect())
}

impl<T: Scalar> Dia<T> {
    /// Convert from CSR (which must satisfy [`Csr::validate`]).
    ///
    /// The occupied diagonals are counted first (one parallel pass, a bitset of
    /// `nrows + ncols` bits); then, before any value array is allocated, the conversion is refused
    /// as [`admit`] says (fill beyond `params.dia.max_fill`, 32-bit offsets, the memory budget).
    pub fn from_csr(csr: &Csr<T>, params: &FormatParams) -> Result<Self> {
        let (nrows, nnz) = (csr.nrows, csr.nnz());
        let occ = admitted(csr, &Summary::of(csr, None), params, T::BYTES as u64)?;
        let ndiag = occ.count();
        let slots = ndiag * nrows;
        let offsets = occ.offsets();
        let mut values = vec![T::zero(); slots];
        let cuts = row_cuts(nrows, nnz, |i| csr.row_ptr[i]);
        column_major_pieces(&mut values, nrows, ndiag, &cuts)
            .into_par_iter()
            .zip(cuts.par_windows(2))
            .for_each(|(mut pieces, w)| {
                for i in w[0]..w[1] {
                    let (c, v) = csr.row(i);
                    for (&c, &v) in c.iter().zip(v) {
                        let d = occ.rank(c as usize + (nrows - 1) - i);
                        pieces[d][i - w[0]] = v;
                    }
                }
            });
        Ok(Dia {
            nrows,
            ncols: csr.ncols,
            nnz,
            offsets: offsets.into_iter().map(|o| o as i32).collect(),
            values,
        })
    }

    /// Rows `i` of diagonal `d` whose column `i + offsets[d]` lies in `0..ncols`.
    fn valid_rows(&self, d: usize) -> std::ops::Range<usize> {
        let off = self.offsets[d] as i64;
        let lo = (-off).max(0) as usize;
        let hi = (self.ncols as i64 - off).clamp(0, self.nrows as i64) as usize;
        lo.min(hi)..hi
    }

    /// Convert back to CSR. DIA cannot tell an explicit zero from padding: zero values are
    /// dropped, so this is the inverse of [`Dia::from_csr`] for matrices without explicit zeros.
    pub fn to_csr(&self) -> Csr<T> {
        let n = self.nrows;
        let ndiag = self.offsets.len();
        let entry = |i: usize, d: usize| -> Option<(u32, T)> {
            let v = self.values[d * n + i];
            (v != T::zero() && self.valid_rows(d).contains(&i))
                .then(|| ((i as i64 + self.offsets[d] as i64) as u32, v))
        };
        let lens: Vec<usize> = (0..n)
            .into_par_iter()
            .map(|i| (0..ndiag).filter(|&d| entry(i, d).is_some()).count())
            .collect();
        csr_from_rows(n, self.ncols, &lens, |i, c, v| {
            for (t, (col, val)) in (0..ndiag).filter_map(|d| entry(i, d)).enumerate() {
                c[t] = col;
                v[t] = val;
            }
        })
    }
}

impl<T: Scalar> SparseFormat<T> for Dia<T> {
    fn kind(&self) -> FormatKind {
        FormatKind::Dia
    }
    fn nrows(&self) -> usize {
        self.nrows
    }
    fn ncols(&self) -> usize {
        self.ncols
    }
    fn nnz(&self) -> usize {
        self.nnz
    }
    fn stored_entries(&self) -> usize {
        self.offsets.len() * self.nrows
    }
    fn footprint_bytes(&self) -> u64 {
        bytes_for(
            self.offsets.len() as u64,
            self.nrows as u64,
            T::BYTES as u64,
        )
    }
    /// Each chunk of rows accumulates diagonal by diagonal over the rows where the diagonal lies
    /// inside the matrix (contiguous reads of values and x).
    fn spmv(&self, x: &[T], y: &mut [T]) {
        assert_eq!(x.len(), self.ncols, "x has the wrong length");
        assert_eq!(y.len(), self.nrows, "y has the wrong length");
        let n = self.nrows;
        let cuts = uniform_cuts(n, self.offsets.len());
        split_at_cuts(y, &cuts)
            .into_par_iter()
            .zip(cuts.par_windows(2))
            .for_each(|(ys, w)| {
                ys.fill(T::zero());
                for d in 0..self.offsets.len() {
                    let valid = self.valid_rows(d);
                    let (lo, hi) = (valid.start.max(w[0]), valid.end.min(w[1]));
                    if lo >= hi {
                        continue;
                    }
                    let xs = (lo as i64 + self.offsets[d] as i64) as usize;
                    let vals = &self.values[d * n + lo..d * n + hi];
                    let xs = &x[xs..xs + (hi - lo)];
                    for ((yi, &v), &xv) in ys[lo - w[0]..hi - w[0]].iter_mut().zip(vals).zip(xs) {
                        *yi += v * xv;
                    }
                }
            });
    }
}
