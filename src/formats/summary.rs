//! [`Summary`]: the few numbers of a matrix that every format's sizing rules ([`super::FormatKind::footprint`],
//! [`super::FormatKind::admit`]) and the analytical model read. Computed once — from a CSR matrix
//! ([`Summary::of`]), from a benchmark matrix's shape ([`Summary::constant`]), from the features
//! ([`Summary::from_features`]) or, for the optimizer's blocks, from per-strip row-length
//! histograms — never from a converted format.

use super::FormatKind;
use super::FormatParams;
use crate::features::Features;
use crate::Csr;

/// A matrix as the formats' rules and the models see it.
///
/// The counts that take a pass over the entries and depend on a format's parameters (DIA's
/// occupied diagonals, SELL-C-σ's stored slots, BSR's blocks, ELL-BRO's symbols) are in [`Counts`], filled only for
/// the formats asked for ([`Summary::with_counts`]); a rule that needs a count the summary lacks
/// answers [`super::Reason::Unknown`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Summary {
    /// Rows.
    pub nrows: u64,
    /// Columns.
    pub ncols: u64,
    /// Stored entries.
    pub nnz: u64,
    /// Most frequent row length; among equally frequent lengths, the shortest (as
    /// [`Features::mode_nnz`]). The papers' target `P_NZ` for CSR.
    pub mode_row_len: u64,
    /// Longest row (ELL's default width, JAD's diagonal count).
    pub max_row_len: u64,
    /// Width of HYB's ELL part.
    pub hyb_width: u64,
    /// Entries beyond `hyb_width` in their row (HYB's COO part).
    pub hyb_coo_nnz: u64,
    /// Counts of the formats that need a pass over the entries.
    pub counts: Counts,
}

/// Counts that need a pass over the entries, for the formats that need them (`None`: not counted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// DIA's occupied diagonals.
    pub dia: Option<super::dia::DiaCount>,
    /// SELL-C-σ's slices for one C and σ.
    pub sell: Option<super::sell::SellCount>,
    /// BSR's blocks for one block size.
    pub bsr: Option<super::bsr::BsrCount>,
    /// ELL-BRO's bit widths and symbols for one slice height.
    pub ell_bro: Option<super::ell_bro::EllBroCount>,
}

/// Row lengths as `(length, rows)` pairs, lengths increasing. Dense counting where the longest row
/// is short next to the row count, else a sort (memory stays proportional to the rows).
pub(crate) fn length_histogram(lens: &[usize]) -> Vec<(u64, u64)> {
    let longest = lens.iter().copied().max().unwrap_or(0);
    if longest <= lens.len().saturating_mul(4).saturating_add(1024) {
        let mut dense = vec![0u64; longest + 1];
        for &l in lens {
            dense[l] += 1;
        }
        dense
            .into_iter()
            .enumerate()
            .filter(|&(_, c)| c > 0)
            .map(|(l, c)| (l as u64, c))
            .collect()
    } else {
        let mut sorted = lens.to_vec();
        sorted.sort_unstable();
        let mut hist: Vec<(u64, u64)> = Vec::new();
        for l in sorted {
            match hist.last_mut() {
                Some((len, c)) if *len == l as u64 => *c += 1,
                _ => hist.push((l as u64, 1)),
            }
        }
        hist
    }
}

impl Summary {
    /// The summary of `csr` (one parallel pass over its row pointers), its HYB split at
    /// `hyb_width` (default: Bell & Garland's rule, [`super::hyb::auto_width`]). No [`Counts`].
    pub fn of<T: Sync>(csr: &Csr<T>, hyb_width: Option<usize>) -> Summary {
        Summary::from_row_lengths(csr.ncols as u64, &super::util::row_lengths(csr), hyb_width)
    }

    /// The summary of `csr` with what `kind`'s rules need under `params`: [`Summary::of`] at
    /// `params`' HYB width, plus the count of `kind` ([`Summary::with_counts`]).
    pub fn for_format<T: crate::Scalar>(
        csr: &Csr<T>,
        kind: FormatKind,
        params: &FormatParams,
    ) -> Summary {
        Summary::of(csr, params.hyb.width).with_counts(csr, kind, params)
    }

    /// Add the count `kind` needs under `params` (one pass over the entries for DIA, SELL-C-σ,
    /// BSR and ELL-BRO; nothing for the other formats). Parameters out of range are left uncounted: the rules
    /// refuse them before reading the count.
    pub fn with_counts<T: crate::Scalar>(
        mut self,
        csr: &Csr<T>,
        kind: FormatKind,
        params: &FormatParams,
    ) -> Summary {
        let rows_fit = self.nrows <= u32::MAX as u64;
        match kind {
            FormatKind::Dia if rows_fit => self.counts.dia = Some(super::dia::count(csr)),
            FormatKind::Sell if rows_fit && super::sell::check_params(&params.sell).is_ok() => {
                self.counts.sell = Some(super::sell::sorted_slices(csr, &params.sell).2)
            }
            FormatKind::Bsr if params.bsr.block > 0 => {
                self.counts.bsr = Some(super::bsr::count(csr, params.bsr.block).1)
            }
            FormatKind::EllBro if rows_fit && params.ell_bro.slice > 0 => {
                self.counts.ell_bro = Some(super::ell_bro::analyze(csr, params.ell_bro.slice).1)
            }
            _ => {}
        }
        self
    }

    /// The summary of a matrix with these features (no [`Counts`]).
    pub fn from_features(f: &Features) -> Summary {
        Summary {
            nrows: f.nrows as u64,
            ncols: f.ncols as u64,
            nnz: f.nnz as u64,
            mode_row_len: f.mode_nnz as u64,
            max_row_len: f.max_nnz as u64,
            hyb_width: f.hyb_width as u64,
            hyb_coo_nnz: f.hyb_coo_nnz as u64,
            counts: Counts::default(),
        }
    }

    /// The summary of a matrix with `ncols` columns and the given row lengths, its HYB split at
    /// `hyb_width` (default: Bell & Garland's rule, [`super::hyb::auto_width`]). No [`Counts`].
    pub fn from_row_lengths(ncols: u64, lens: &[usize], hyb_width: Option<usize>) -> Summary {
        let hist = length_histogram(lens);
        // Most rows; ties to the shorter length (the first in increasing order).
        let mode = hist
            .iter()
            .fold(
                (0u64, 0u64),
                |best, &(l, c)| if c > best.1 { (l, c) } else { best },
            )
            .0;
        let w = hyb_width.map_or_else(
            || super::hyb::auto_width_of(lens.len(), &hist),
            |w| w as u64,
        );
        Summary {
            nrows: lens.len() as u64,
            ncols,
            nnz: hist.iter().map(|&(l, c)| l * c).sum(),
            mode_row_len: mode,
            max_row_len: hist.last().map_or(0, |&(l, _)| l),
            hyb_width: w,
            hyb_coo_nnz: hist.iter().map(|&(l, c)| l.saturating_sub(w) * c).sum(),
            counts: Counts::default(),
        }
    }

    /// A matrix of `rows` rows of `pnz` entries each (a benchmark matrix). Bell & Garland's
    /// rule gives such a matrix a HYB width of `pnz` (every row is full) once it has 4096 rows,
    /// and 0 below.
    pub fn constant(rows: u64, cols: u64, pnz: u64) -> Summary {
        let w = if rows >= super::hyb::BREAKEVEN_ROWS {
            pnz
        } else {
            0
        };
        let pnz = if rows > 0 { pnz } else { 0 };
        Summary {
            nrows: rows,
            ncols: cols,
            nnz: rows.saturating_mul(pnz),
            mode_row_len: pnz,
            max_row_len: pnz,
            hyb_width: w.min(pnz),
            hyb_coo_nnz: rows.saturating_mul(pnz.saturating_sub(w)),
            counts: Counts::default(),
        }
    }

    /// The ELL width for `params`: the given width, or the longest row. A width shorter than the
    /// longest row is refused ([`super::ell::width`]).
    pub fn ell_width(&self, params: &FormatParams) -> crate::Result<u64> {
        Ok(super::ell::width(self, params)?)
    }

    /// The HYB split `(width, COO entries)` for `params` ([`super::hyb::split`]). A width other
    /// than the one this summary was built with cannot be derived from it.
    pub fn hyb_split(&self, params: &FormatParams) -> crate::Result<(u64, u64)> {
        Ok(super::hyb::split(self, params)?)
    }

    /// Bytes `x` and `y` take: `(ncols + nrows) × value_bytes`, saturating.
    pub fn vector_bytes(&self, value_bytes: u64) -> u64 {
        super::vector_bytes(self.nrows, self.ncols, value_bytes)
    }

    /// Bytes one SpMV with our `kind` kernel moves at least: the format's arrays less what the
    /// kernel may never read of the padding ([`FormatKind::skipped_bytes`]: ELL's and HYB's
    /// padding values, SELL-C-σ's padding slots, DIA's slots outside the columns), `y` once, and of `x` no more than the
    /// entries can touch — `min(columns, non-zeros)` values (a column no entry uses is never
    /// read). The numerator of the effective bandwidth and of the device's bandwidth ceiling
    /// ([`crate::model::DeviceBounds`]): the stored bytes held ELL on a stack of short rows
    /// under a few long ones to 2.4× its measured time, 002's SELL-C-σ (C = 512) under one row
    /// of 10⁶ entries to 6×, and every configuration of 28 rows of 8,031 entries over 1.5 × 10⁷
    /// columns to 2.7× (docs/ACCURACY.md, session 54).
    pub fn moved(
        &self,
        kind: FormatKind,
        params: &FormatParams,
        value_bytes: u64,
    ) -> Result<u64, super::Refusal> {
        let skipped = kind.skipped_bytes(self, params, value_bytes)?;
        let unused_x = self.ncols.saturating_sub(self.ncols.min(self.nnz));
        Ok(self
            .working_set(kind, params, value_bytes)?
            .saturating_sub(skipped)
            .saturating_sub(unused_x.saturating_mul(value_bytes)))
    }

    /// Bytes of the format's arrays as stored ([`FormatKind::footprint`]), `x` once and `y`
    /// once; saturating. What must fit in the device's memory.
    pub fn working_set(
        &self,
        kind: FormatKind,
        params: &FormatParams,
        value_bytes: u64,
    ) -> Result<u64, super::Refusal> {
        Ok(kind
            .footprint(self, params, value_bytes)?
            .saturating_add(self.vector_bytes(value_bytes)))
    }
}
