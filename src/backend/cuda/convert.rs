//! Conversions on the device: the launches of `kernels/convert.cu`, which move the entries of a
//! CSR matrix already on the device into the layout the host computed (`formats::*::plan`).
//!
//! Why on the device: `collect` measures some thirty configurations of every matrix; converting
//! a 10⁷–10⁸-entry matrix into eight formats on the host and uploading each was 40 % of its time
//! on the largest matrices (docs/ACCURACY.md, session 22), where the device moves the same
//! entries in milliseconds. The host still decides where every entry goes (one owner per
//! layout, in `src/formats/`); the kernels only copy.
//!
//! Every function queues its kernel on the backend's stream (the caller synchronizes); the
//! output arrays must already hold their padding (columns [`crate::formats::PAD`], values 0).

use super::synthetic::fill_config;
use super::{cuda, CudaBackend, CudaScalar};
use crate::Result;
use cudarc::driver::{CudaFunction, CudaSlice, LaunchArgs, PushKernelArg};

/// A CSR matrix on the device: `nrows + 1` row offsets, columns and values.
pub(crate) struct CsrOnDevice<'a, T> {
    /// Rows.
    pub nrows: u32,
    /// Row offsets.
    pub row_ptr: &'a CudaSlice<u32>,
    /// Columns, increasing within a row.
    pub col: &'a CudaSlice<u32>,
    /// Values.
    pub val: &'a CudaSlice<T>,
}

fn entry<T: CudaScalar>(be: &CudaBackend, base: &str) -> Result<CudaFunction> {
    be.function(&format!("{base}_{}", T::PRECISION.name()))
}

/// Launch `f` with one warp per row of `csr` (grid-stride), the arguments after the CSR ones
/// pushed by `rest`.
///
/// # Safety
/// `rest` must push the arguments the kernel takes after `(nrows, row_ptr, col, val)` (or after
/// `nrows, row_ptr` when `with_entries` is false), each array as long as the kernel reads or
/// writes.
unsafe fn launch_rows<'a, T: CudaScalar>(
    be: &'a CudaBackend,
    f: &'a CudaFunction,
    csr: &'a CsrOnDevice<'a, T>,
    with_entries: bool,
    what: &str,
    rest: impl FnOnce(&mut LaunchArgs<'a>),
) -> Result<()> {
    if csr.nrows == 0 {
        return Ok(());
    }
    let cfg = fill_config(be, csr.nrows as u64 * 32)?;
    let mut b = be.stream.launch_builder(f);
    b.arg(&csr.nrows).arg(csr.row_ptr);
    if with_entries {
        b.arg(csr.col).arg(csr.val);
    }
    rest(&mut b);
    // SAFETY: the caller's contract.
    unsafe { b.launch(cfg) }.map_err(cuda(format!("launching {what}")))?;
    Ok(())
}

/// COO's row index of every entry (`rows` holds the entries).
pub(crate) fn coo_rows<T: CudaScalar>(
    be: &CudaBackend,
    csr: &CsrOnDevice<'_, T>,
    rows: &mut CudaSlice<u32>,
) -> Result<()> {
    let f = be.function("cv_coo_rows")?;
    // SAFETY: cv_coo_rows(nrows, row_ptr, rows); rows holds every entry.
    unsafe {
        launch_rows(be, &f, csr, false, "the COO row fill", |b| {
            b.arg(rows);
        })
    }
}

/// Entry k < `limit` of row r to slot `base(r) + k × stride`, `base(r)` = r without `base`, else
/// `base[r]` (ELL and HYB's ELL part: stride nrows; SELL-C-σ: stride C).
pub(crate) fn scatter<T: CudaScalar>(
    be: &CudaBackend,
    csr: &CsrOnDevice<'_, T>,
    base: Option<&CudaSlice<u32>>,
    stride: u64,
    limit: u32,
    col: &mut CudaSlice<u32>,
    val: &mut CudaSlice<T>,
) -> Result<()> {
    let f = entry::<T>(be, "cv_scatter")?;
    let has_base = base.is_some() as u32;
    // Without a base the kernel never reads it: any device array stands in.
    let base = base.unwrap_or(csr.row_ptr);
    // SAFETY: cv_scatter(…, has_base, base, stride, limit, out_col, out_val); the caller sized
    // col and val for every slot base(r) + k × stride it addresses.
    unsafe {
        launch_rows(be, &f, csr, true, "the scatter fill", |b| {
            b.arg(&has_base)
                .arg(base)
                .arg(&stride)
                .arg(&limit)
                .arg(col)
                .arg(val);
        })
    }
}

/// HYB's COO part: entries k ≥ `width` of row r at `start[r] + k − width`.
pub(crate) fn rest<T: CudaScalar>(
    be: &CudaBackend,
    csr: &CsrOnDevice<'_, T>,
    width: u32,
    start: &CudaSlice<u32>,
    out: (&mut CudaSlice<u32>, &mut CudaSlice<u32>, &mut CudaSlice<T>),
) -> Result<()> {
    let f = entry::<T>(be, "cv_rest")?;
    let (rows, cols, vals) = out;
    // SAFETY: cv_rest(…, width, start, rows, cols, vals); start holds nrows entries, the
    // outputs every remainder entry.
    unsafe {
        launch_rows(be, &f, csr, true, "the HYB remainder fill", |b| {
            b.arg(&width).arg(start).arg(rows).arg(cols).arg(vals);
        })
    }
}

/// The inverse of the permutation `perm` of `0..n`: `pos[perm[k]] = k`.
pub(crate) fn inverse(
    be: &CudaBackend,
    n: u32,
    perm: &CudaSlice<u32>,
    pos: &mut CudaSlice<u32>,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    let f = be.function("cv_inverse")?;
    let cfg = fill_config(be, n as u64)?;
    let mut l = be.stream.launch_builder(&f);
    l.arg(&n).arg(perm).arg(pos);
    // SAFETY: cv_inverse(n, perm, pos); perm holds a permutation of 0..n, pos n entries.
    unsafe { l.launch(cfg) }.map_err(cuda("launching the permutation inverse"))?;
    Ok(())
}

/// JAD: entry d of row r at `jd_ptr[d] + pos[r]`.
pub(crate) fn jad<T: CudaScalar>(
    be: &CudaBackend,
    csr: &CsrOnDevice<'_, T>,
    pos: &CudaSlice<u32>,
    jd_ptr: &CudaSlice<u32>,
    col: &mut CudaSlice<u32>,
    val: &mut CudaSlice<T>,
) -> Result<()> {
    let f = entry::<T>(be, "cv_jad")?;
    // SAFETY: cv_jad(…, pos, jd_ptr, out_col, out_val); pos holds nrows entries, jd_ptr one per
    // diagonal, the outputs every entry.
    unsafe {
        launch_rows(be, &f, csr, true, "the JAD fill", |b| {
            b.arg(pos).arg(jd_ptr).arg(col).arg(val);
        })
    }
}

/// DIA: entry (r, c) at `val[d × nrows + r]`, d the position of `c − r` among `offsets`.
pub(crate) fn dia<T: CudaScalar>(
    be: &CudaBackend,
    csr: &CsrOnDevice<'_, T>,
    ndiag: u32,
    offsets: &CudaSlice<i32>,
    val: &mut CudaSlice<T>,
) -> Result<()> {
    let f = entry::<T>(be, "cv_dia")?;
    // SAFETY: cv_dia(…, ndiag, offsets, out); offsets holds ndiag entries (every entry's
    // diagonal among them), out ndiag × nrows values.
    unsafe {
        launch_rows(be, &f, csr, true, "the DIA fill", |b| {
            b.arg(&ndiag).arg(offsets).arg(val);
        })
    }
}

/// BSR with `b × b` blocks: entry (r, c) at `val[q × b² + (r mod b) × b + c mod b]`, q its block
/// (block column `c / b` among `bcol[brow_ptr[r / b]..brow_ptr[r / b + 1]]`).
pub(crate) fn bsr<T: CudaScalar>(
    be: &CudaBackend,
    csr: &CsrOnDevice<'_, T>,
    b: u32,
    brow_ptr: &CudaSlice<u32>,
    bcol: &CudaSlice<u32>,
    val: &mut CudaSlice<T>,
) -> Result<()> {
    let f = entry::<T>(be, "cv_bsr")?;
    if csr.nrows == 0 {
        return Ok(());
    }
    let cfg = fill_config(be, csr.nrows as u64 * 32)?;
    let mut l = be.stream.launch_builder(&f);
    l.arg(&csr.nrows)
        .arg(&b)
        .arg(csr.row_ptr)
        .arg(csr.col)
        .arg(csr.val)
        .arg(brow_ptr)
        .arg(bcol)
        .arg(val);
    // SAFETY: cv_bsr(nrows, b, row_ptr, col, val, brow_ptr, bcol, out); brow_ptr holds the
    // block rows + 1 offsets, bcol every block, out every block's b² values.
    unsafe { l.launch(cfg) }.map_err(cuda("launching the BSR fill"))?;
    Ok(())
}

/// ELL-BRO with slices of `h` rows: row r's deltas packed into its symbols and its values written
/// where `col_ptr`, `sym_ptr` and `bits` (the host's `formats::ell_bro::plan`) put them.
pub(crate) fn ell_bro<T: CudaScalar>(
    be: &CudaBackend,
    csr: &CsrOnDevice<'_, T>,
    h: u32,
    layout: (&CudaSlice<u32>, &CudaSlice<u32>, &CudaSlice<u8>),
    symbols: &mut CudaSlice<u64>,
    val: &mut CudaSlice<T>,
) -> Result<()> {
    let f = entry::<T>(be, "cv_ell_bro")?;
    if csr.nrows == 0 {
        return Ok(());
    }
    let (col_ptr, sym_ptr, bits) = layout;
    let cfg = fill_config(be, csr.nrows as u64)?;
    let mut l = be.stream.launch_builder(&f);
    l.arg(&csr.nrows)
        .arg(csr.row_ptr)
        .arg(csr.col)
        .arg(csr.val)
        .arg(&h)
        .arg(col_ptr)
        .arg(sym_ptr)
        .arg(bits)
        .arg(symbols)
        .arg(val);
    // SAFETY: cv_ell_bro(nrows, row_ptr, col, val, h, col_ptr, sym_ptr, bits, symbols, out);
    // col_ptr and sym_ptr hold a slice's offsets + 1, bits every slice column, symbols and out
    // every slot the layout addresses.
    unsafe { l.launch(cfg) }.map_err(cuda("launching the ELL-BRO fill"))?;
    Ok(())
}
