//! DIA: one dense array of length `nrows` per occupied diagonal. Refused when the stored slots
//! exceed `FormatParams::dia_max_fill` times the non-zeros (most of it would be padding).

use super::util::{
    check_bytes, check_rows, check_u32, column_major_pieces, csr_from_rows, row_cuts,
    split_at_cuts, uniform_cuts,
};
use super::{FormatKind, FormatParams, SparseFormat};
use crate::{Csr, Error, Result, Scalar};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU64, Ordering};

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

/// Footprint: `ndiag × 4 + ndiag × nrows × sizeof T`.
fn bytes_for(ndiag: usize, nrows: usize, value_bytes: usize) -> u128 {
    ndiag as u128 * 4 + ndiag as u128 * nrows as u128 * value_bytes as u128
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

    /// Offsets (column − row) of the occupied diagonals, increasing.
    fn offsets(&self) -> Vec<i64> {
        let mut out = Vec::with_capacity(self.count());
        for (k, &w) in self.words.iter().enumerate() {
            let mut w = w;
            while w != 0 {
                let b = k * 64 + w.trailing_zeros() as usize;
                out.push(b as i64 - self.shift);
                w &= w - 1;
            }
        }
        out
    }
}

impl<T: Scalar> Dia<T> {
    /// Convert from CSR (which must satisfy [`Csr::validate`]).
    ///
    /// The occupied diagonals are counted first (one parallel pass, a bitset of
    /// `nrows + ncols` bits); then, before any value array is allocated, the conversion is refused
    /// when `ndiag × nrows > params.dia_max_fill × nnz`, when `ndiag × nrows` exceeds 32-bit
    /// offsets, when an offset does not fit `i32`, or when the footprint exceeds
    /// `params.max_bytes`. A matrix without entries has 0 diagonals and is accepted.
    pub fn from_csr(csr: &Csr<T>, params: &FormatParams) -> Result<Self> {
        let (nrows, nnz) = (csr.nrows, csr.nnz());
        check_rows("dia", nrows)?;
        let occ = Occupancy::of(csr);
        let ndiag = occ.count();
        let slots = ndiag as u128 * nrows as u128;
        if slots as f64 > params.dia_max_fill * nnz as f64 {
            return Err(Error::refused(
                "dia",
                format!(
                    "{ndiag} occupied diagonals × {nrows} rows = {slots} stored slots for {nnz} \
                     non-zeros: fill {:.2} exceeds the limit dia_max_fill = {}",
                    slots as f64 / nnz as f64,
                    params.dia_max_fill
                ),
            ));
        }
        check_u32("dia", "stored slots (diagonals × rows)", slots)?;
        let offsets = occ.offsets();
        for &o in [offsets.first(), offsets.last()].iter().flatten() {
            if i32::try_from(*o).is_err() {
                return Err(Error::refused(
                    "dia",
                    format!("diagonal offset {o} does not fit 32-bit signed offsets"),
                ));
            }
        }
        check_bytes("dia", bytes_for(ndiag, nrows, T::BYTES), params.max_bytes)?;
        let mut values = vec![T::zero(); slots as usize];
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
        bytes_for(self.offsets.len(), self.nrows, T::BYTES) as u64
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
