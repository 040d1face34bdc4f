//! JAD (jagged diagonals): rows permuted by decreasing length; jagged diagonal d holds entry d of
//! every row that has more than d entries, in permuted row order.

use super::refusal::{budget, offsets32, rows32};
use super::util::{csr_from_rows, row_cuts, row_lengths};
use super::{FormatKind, FormatParams, Refusal, SparseFormat, Summary};
use crate::{Csr, Result, Scalar};
use rayon::prelude::*;

/// Entries (conversion) or permuted rows (SpMV) handled by one parallel task.
const CHUNK: usize = 1 << 12;

/// Jagged diagonal format. Device footprint: `perm (nrows × 4) + jd_ptr ((ndiag+1) × 4) + nnz × (4 + sizeof T)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Jad<T> {
    pub nrows: usize,
    pub ncols: usize,
    /// `perm[k]` = original row index of the k-th longest row (stable for equal lengths).
    pub perm: Vec<u32>,
    /// Start of each jagged diagonal in `col_idx`/`values`; `ndiag + 1` entries. Diagonal d has
    /// `jd_ptr[d+1] - jd_ptr[d]` entries, belonging to permuted rows `0..that count`.
    pub jd_ptr: Vec<u32>,
    pub col_idx: Vec<u32>,
    pub values: Vec<T>,
}

/// Footprint: `nrows × 4 + (ndiag + 1) × 4 + nnz × (4 + value)`, saturating.
fn bytes_for(nrows: u64, ndiag: u64, nnz: u64, value_bytes: u64) -> u64 {
    nrows
        .saturating_mul(4)
        .saturating_add(ndiag.saturating_add(1).saturating_mul(4))
        .saturating_add(nnz.saturating_mul(4 + value_bytes))
}

/// The device footprint of the matrix summarized by `s` (its jagged diagonals are as many as
/// the longest row's entries; see [`FormatKind::footprint`]).
pub fn footprint(s: &Summary, _: &FormatParams, value_bytes: u64) -> Result<u64, Refusal> {
    Ok(bytes_for(s.nrows, s.max_row_len, s.nnz, value_bytes))
}

/// Rows within 32-bit row indices, non-zeros within 32-bit offsets, footprint within
/// `params.max_bytes` (see [`FormatKind::admit`]).
pub fn admit(s: &Summary, params: &FormatParams, value_bytes: u64) -> Result<(), Refusal> {
    let kind = FormatKind::Jad;
    rows32(kind, s.nrows)?;
    offsets32(kind, "non-zeros", s.nnz as u128)?;
    budget(kind, footprint(s, params, value_bytes)?, params.max_bytes)
}

/// The pieces of a jagged-diagonal array each chunk of permuted rows owns: element `j` holds, for
/// every diagonal `d` that reaches row `kcuts[j]` (a prefix of the diagonals, as they shorten),
/// the slice of diagonal `d` for permuted rows `kcuts[j]..min(kcuts[j+1], len(d))`. So entry `d`
/// of permuted row `k` is `pieces[j][d][k - kcuts[j]]`.
fn jagged_pieces<'a, U>(
    data: &'a mut [U],
    jd_ptr: &[u32],
    kcuts: &[usize],
) -> Vec<Vec<&'a mut [U]>> {
    let nchunks = kcuts.len().saturating_sub(1);
    let mut out: Vec<Vec<&'a mut [U]>> = (0..nchunks).map(|_| Vec::new()).collect();
    let mut rest = data;
    for w in jd_ptr.windows(2) {
        let len = (w[1] - w[0]) as usize;
        let (mut diag, tail) = std::mem::take(&mut rest).split_at_mut(len);
        rest = tail;
        for j in 0..nchunks {
            let (a, b) = (kcuts[j], kcuts[j + 1].min(len));
            if a >= len {
                break;
            }
            let (piece, t) = std::mem::take(&mut diag).split_at_mut(b - a);
            diag = t;
            out[j].push(piece);
        }
    }
    out
}

/// Where JAD puts every row ([`Jad::from_csr`] fills it on the host, the CUDA backend on the
/// device): sorted position k holds row `perm[k]`, its entry d at `jd_ptr[d] + k`.
pub(crate) struct JadPlan {
    /// Original row of each sorted position (by decreasing length, stably).
    pub perm: Vec<u32>,
    /// Offset of each jagged diagonal, `ndiag + 1` entries.
    pub jd_ptr: Vec<u32>,
    /// Rows of each length `0..=ndiag`.
    pub hist: Vec<usize>,
}

/// The layout of `csr`'s rows (which must fit 32-bit offsets: [`admit`]).
pub(crate) fn plan<T: Scalar>(csr: &Csr<T>) -> JadPlan {
    let lens = &row_lengths(csr);
    let nrows = lens.len();
    let ndiag = lens.par_iter().copied().max().unwrap_or(0);
    // Stable counting sort by decreasing length (O(nrows + ndiag)): bucket L starts after
    // every row longer than L; rows of one length keep their original order.
    let mut hist = vec![0usize; ndiag + 1];
    for &l in lens {
        hist[l] += 1;
    }
    let mut next = vec![0usize; ndiag + 1];
    let mut acc = 0usize;
    for l in (0..=ndiag).rev() {
        next[l] = acc;
        acc += hist[l];
    }
    let mut perm = vec![0u32; nrows];
    for (i, &l) in lens.iter().enumerate() {
        perm[next[l]] = i as u32;
        next[l] += 1;
    }
    // Diagonal d holds one entry per row longer than d.
    let mut jd_ptr = Vec::with_capacity(ndiag + 1);
    jd_ptr.push(0u32);
    let (mut longer, mut acc) = (nrows, 0usize);
    for &h in &hist[..ndiag] {
        longer -= h;
        acc += longer;
        jd_ptr.push(acc as u32);
    }
    JadPlan { perm, jd_ptr, hist }
}

impl<T: Scalar> Jad<T> {
    /// Convert from CSR (which must satisfy [`Csr::validate`]): a stable counting sort of the rows
    /// by decreasing length, then a parallel fill of the diagonals by chunks of permuted rows.
    ///
    /// Refused, before allocating, as [`admit`] says.
    pub fn from_csr(csr: &Csr<T>, params: &FormatParams) -> Result<Self> {
        let (nrows, nnz) = (csr.nrows, csr.nnz());
        admit(&Summary::of(csr, None), params, T::BYTES as u64)?;
        let JadPlan { perm, jd_ptr, hist } = plan(csr);
        let ndiag = hist.len() - 1;
        // Entries before each sorted position, to cut the permuted rows into balanced chunks.
        let mut sorted_start = Vec::with_capacity(nrows + 1);
        sorted_start.push(0usize);
        let mut acc = 0usize;
        for l in (0..=ndiag).rev() {
            for _ in 0..hist[l] {
                acc += l;
                sorted_start.push(acc);
            }
        }
        let kcuts = row_cuts(nrows, nnz, |k| sorted_start[k]);
        let mut col_idx = vec![0u32; nnz];
        let mut values = vec![T::zero(); nnz];
        let cp = jagged_pieces(&mut col_idx, &jd_ptr, &kcuts);
        let vp = jagged_pieces(&mut values, &jd_ptr, &kcuts);
        // Each chunk of permuted rows reads its rows contiguously and writes entry d of each row
        // into its own piece of diagonal d.
        cp.into_par_iter()
            .zip(vp)
            .zip(kcuts.par_windows(2))
            .for_each(|((mut cs, mut vs), w)| {
                for k in w[0]..w[1] {
                    let (c, v) = csr.row(perm[k] as usize);
                    for d in 0..c.len() {
                        cs[d][k - w[0]] = c[d];
                        vs[d][k - w[0]] = v[d];
                    }
                }
            });
        Ok(Jad {
            nrows,
            ncols: csr.ncols,
            perm,
            jd_ptr,
            col_idx,
            values,
        })
    }

    /// Number of jagged diagonals (the longest row's length).
    pub fn ndiag(&self) -> usize {
        self.jd_ptr.len().saturating_sub(1)
    }

    /// Entries of diagonal `d` (= permuted rows longer than `d`).
    fn diag_len(&self, d: usize) -> usize {
        (self.jd_ptr[d + 1] - self.jd_ptr[d]) as usize
    }

    /// Convert back to CSR; the exact inverse of [`Jad::from_csr`].
    pub fn to_csr(&self) -> Csr<T> {
        let nd = self.ndiag();
        // Permuted row k has as many entries as there are diagonals longer than k.
        let mut lens = vec![0usize; self.nrows];
        for (k, &r) in self.perm.iter().enumerate() {
            lens[r as usize] = (0..nd).take_while(|&d| self.diag_len(d) > k).count();
        }
        let mut rank = vec![0usize; self.nrows];
        for (k, &r) in self.perm.iter().enumerate() {
            rank[r as usize] = k;
        }
        csr_from_rows(self.nrows, self.ncols, &lens, |i, c, v| {
            let k = rank[i];
            for d in 0..c.len() {
                let p = self.jd_ptr[d] as usize + k;
                c[d] = self.col_idx[p];
                v[d] = self.values[p];
            }
        })
    }
}

impl<T: Scalar> SparseFormat<T> for Jad<T> {
    fn kind(&self) -> FormatKind {
        FormatKind::Jad
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
            self.nrows as u64,
            self.ndiag() as u64,
            self.values.len() as u64,
            T::BYTES as u64,
        )
    }
    /// Chunks of permuted rows accumulate diagonal by diagonal (contiguous reads) into a temporary
    /// in permuted order, in parallel; the result is then scattered to `y` through `perm`. The
    /// scatter is sequential: `perm` is a permutation, but proving the writes disjoint to the
    /// compiler would need `unsafe`, and it costs one pass over `nrows` against the kernel's
    /// pass over `nnz`.
    fn spmv(&self, x: &[T], y: &mut [T]) {
        assert_eq!(x.len(), self.ncols, "x has the wrong length");
        assert_eq!(y.len(), self.nrows, "y has the wrong length");
        let nd = self.ndiag();
        let mut yp = vec![T::zero(); self.nrows];
        yp.par_chunks_mut(CHUNK).enumerate().for_each(|(j, acc)| {
            let k0 = j * CHUNK;
            for d in 0..nd {
                let len = self.diag_len(d);
                if len <= k0 {
                    break;
                }
                let hi = len.min(k0 + acc.len());
                let base = self.jd_ptr[d] as usize;
                let cols = &self.col_idx[base + k0..base + hi];
                let vals = &self.values[base + k0..base + hi];
                for ((a, &c), &v) in acc.iter_mut().zip(cols).zip(vals) {
                    *a += v * x[c as usize];
                }
            }
        });
        for (&r, &v) in self.perm.iter().zip(&yp) {
            y[r as usize] = v;
        }
    }
}
