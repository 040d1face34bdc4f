//! On-device generation of the statistical models' benchmark matrices
//! ([`crate::instrument::rowdist`] is the contract): the kernels of `kernels/rowdist.cu` draw the
//! row lengths, scan them into CSR row pointers, and fill CSR, column-major ELL (padded to the
//! longest row) or JAD (rows sorted stably by decreasing length, as [`crate::formats::Jad`]
//! sorts them) straight into device memory. `CudaPrepared::new_distributed` (in `prepared`)
//! checks the shape and the memory between [`row_lengths`] and the fills and sets up the
//! launches as for an uploaded matrix. Every call only queues work, except [`row_lengths`],
//! which reads the sum and the maximum back.

use super::synthetic::{alloc, fill_config};
use super::{cuda, launch, CudaBackend, CudaScalar};
use crate::instrument::{RowDist, RowLengths};
use crate::{Error, Result};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

/// Values scanned per block by `rd_scan_tiles_k` (`RD_SCAN_TILE` in the kernel file).
pub const SCAN_TILE: u64 = 1024;
/// Threads of `rd_scan_tiles_k` (`RD_SCAN_THREADS`).
const SCAN_THREADS: u32 = 256;
/// Rows per block of JAD's counting sort (`RD_JAD_TILE`).
pub const JAD_TILE: u64 = 256;
/// Largest count table of JAD's sort, (longest row + 1) × tiles entries (4 bytes each); a
/// larger one (a spread far beyond the benchmarks') is [`Error::Unsupported`] and the caller
/// builds the matrix on the host.
pub const MAX_JAD_TABLE: u64 = 1 << 28;

/// The row lengths of a benchmark matrix on the device.
pub(super) struct Lengths {
    /// `rows + 1` entries: the lengths and a 0 until [`Lengths::scan`], then the CSR row
    /// pointers.
    pub row_ptr: CudaSlice<u32>,
    /// Sum of the lengths (the non-zeros).
    pub nnz: u64,
    /// Longest row.
    pub max: u64,
}

impl Lengths {
    /// Turn the lengths into row pointers (queued).
    pub fn scan(&mut self, be: &CudaBackend, rows: usize) -> Result<()> {
        scan(be, &mut self.row_ptr, rows as u64 + 1)
    }
}

/// Draw the length of every row of a `rows × cols` matrix with mean `mean` (the contract's
/// arithmetic, bit for bit) and read their sum and maximum back (synchronizes).
pub(super) fn row_lengths(
    be: &CudaBackend,
    rows: u32,
    cols: u32,
    mean: u64,
    lengths: &RowLengths,
) -> Result<Lengths> {
    let f = be.function("rd_lengths_k")?;
    let dist: u32 = match lengths.dist {
        RowDist::Normal => 0,
        RowDist::Uniform => 1,
        RowDist::Constant => 2,
    };
    let sigma = lengths.spread.sigma(mean);
    let w = match lengths.dist {
        RowDist::Uniform => lengths.half_width(mean),
        _ => 0,
    };
    let mut row_ptr = alloc::<u32>(be, rows as usize + 1, "allocating row lengths")?;
    let mut stats = alloc::<u64>(be, 2, "allocating row-length statistics")?;
    let cfg = fill_config(be, rows as u64)?;
    let mut b = be.stream.launch_builder(&f);
    b.arg(&rows)
        .arg(&dist)
        .arg(&mean)
        .arg(&sigma)
        .arg(&w)
        .arg(&cols);
    b.arg(&mut row_ptr).arg(&mut stats);
    // SAFETY: arguments match `rd_lengths_k`; row_ptr holds rows + 1 entries, stats two.
    unsafe { b.launch(cfg) }.map_err(cuda("launching the row-length kernel"))?;
    let s = be
        .stream
        .clone_dtoh(&stats)
        .map_err(cuda("reading the row-length statistics"))?;
    Ok(Lengths {
        row_ptr,
        nnz: s[0],
        max: s[1],
    })
}

/// One block per tile of `tile` items.
fn tiles_config(tiles: u64, block: u32) -> Result<LaunchConfig> {
    let grid = launch::blocks_for(tiles, 1)?;
    Ok(LaunchConfig {
        grid_dim: (grid.max(1), 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    })
}

/// Exclusive prefix scan of `data[..n]` in place (queued): each tile of [`SCAN_TILE`] values is
/// scanned by one block, the tiles' totals are scanned the same way, and added back.
pub(super) fn scan(be: &CudaBackend, data: &mut CudaSlice<u32>, n: u64) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    if n > data.len() as u64 || n > u32::MAX as u64 {
        return Err(Error::Invalid(format!(
            "internal: scanning {n} values of an array of {}",
            data.len()
        )));
    }
    let n32 = n as u32;
    let tiles = n.div_ceil(SCAN_TILE);
    let mut sums = alloc::<u32>(be, tiles as usize, "allocating scan totals")?;
    let f = be.function("rd_scan_tiles_k")?;
    let mut b = be.stream.launch_builder(&f);
    b.arg(&n32).arg(&mut *data).arg(&mut sums);
    // SAFETY: arguments match `rd_scan_tiles_k`; data holds n values, sums one per tile.
    unsafe { b.launch(tiles_config(tiles, SCAN_THREADS)?) }
        .map_err(cuda("launching the scan kernel"))?;
    if tiles > 1 {
        scan(be, &mut sums, tiles)?;
        let f = be.function("rd_scan_add_k")?;
        let mut b = be.stream.launch_builder(&f);
        b.arg(&n32).arg(&mut *data).arg(&sums);
        // SAFETY: arguments match `rd_scan_add_k`; sums holds one value per tile of data.
        unsafe { b.launch(fill_config(be, n)?) }.map_err(cuda("launching the scan-add kernel"))?;
    }
    Ok(())
}

fn entry<T: CudaScalar>(be: &CudaBackend, base: &str) -> Result<cudarc::driver::CudaFunction> {
    be.function(&format!("{base}_{}", T::PRECISION.name()))
}

/// The CSR columns and values of `nnz` entries (queued); `row_ptr` scanned.
pub(super) fn fill_csr<T: CudaScalar>(
    be: &CudaBackend,
    rows: u32,
    cols: u32,
    nnz: u64,
    row_ptr: &CudaSlice<u32>,
) -> Result<(CudaSlice<u32>, CudaSlice<T>)> {
    let f = entry::<T>(be, "rd_csr")?;
    let mut col = alloc::<u32>(be, nnz as usize, "allocating columns")?;
    let mut val = alloc::<T>(be, nnz as usize, "allocating values")?;
    // One warp per row.
    let cfg = fill_config(be, rows as u64 * launch::WARP as u64)?;
    let mut b = be.stream.launch_builder(&f);
    b.arg(&rows)
        .arg(&cols)
        .arg(row_ptr)
        .arg(&mut col)
        .arg(&mut val);
    // SAFETY: arguments match `rd_csr_*`; row_ptr holds rows + 1 offsets ending at nnz, col
    // and val nnz entries.
    unsafe { b.launch(cfg) }.map_err(cuda("launching the CSR fill kernel"))?;
    Ok((col, val))
}

/// Column-major ELL columns and values of `width` slots per row (queued); `row_ptr` scanned,
/// no row longer than `width`.
pub(super) fn fill_ell<T: CudaScalar>(
    be: &CudaBackend,
    rows: u32,
    cols: u32,
    width: u32,
    row_ptr: &CudaSlice<u32>,
) -> Result<(CudaSlice<u32>, CudaSlice<T>)> {
    let f = entry::<T>(be, "rd_ell")?;
    let slots = rows as u64 * width as u64;
    let mut col = alloc::<u32>(be, slots as usize, "allocating ELL columns")?;
    let mut val = alloc::<T>(be, slots as usize, "allocating ELL values")?;
    let cfg = fill_config(be, slots)?;
    let mut b = be.stream.launch_builder(&f);
    b.arg(&rows).arg(&cols).arg(&width).arg(row_ptr);
    b.arg(&mut col).arg(&mut val);
    // SAFETY: arguments match `rd_ell_*`; col and val hold rows × width slots.
    unsafe { b.launch(cfg) }.map_err(cuda("launching the ELL fill kernel"))?;
    Ok((col, val))
}

/// The JAD arrays.
pub(super) struct JadArrays<T> {
    /// Original row of each permuted row.
    pub perm: CudaSlice<u32>,
    /// `max + 1` jagged-diagonal offsets.
    pub jd_ptr: CudaSlice<u32>,
    /// Columns, diagonal by diagonal.
    pub col: CudaSlice<u32>,
    /// Values, diagonal by diagonal.
    pub val: CudaSlice<T>,
}

/// Entries of JAD's count table for `rows` rows whose longest has `max` entries.
pub fn jad_table_len(rows: u64, max: u64) -> u64 {
    max.saturating_add(1)
        .saturating_mul(rows.div_ceil(JAD_TILE))
}

/// Sort the rows stably by decreasing length and fill the jagged diagonals (queued); `row_ptr`
/// scanned, `max` the longest row, `nnz` the entries. Refuses a count table over
/// [`MAX_JAD_TABLE`].
pub(super) fn fill_jad<T: CudaScalar>(
    be: &CudaBackend,
    rows: u32,
    cols: u32,
    lens: &Lengths,
) -> Result<JadArrays<T>> {
    let table_len = jad_table_len(rows as u64, lens.max);
    if table_len > MAX_JAD_TABLE {
        return Err(Error::Unsupported(format!(
            "jad: generating on the device would need a count table of {table_len} entries \
             (longest row {})",
            lens.max
        )));
    }
    let tiles = (rows as u64).div_ceil(JAD_TILE);
    let (maxlen, tiles32) = (lens.max as u32, tiles as u32);
    let mut table = alloc::<u32>(be, table_len as usize, "allocating the JAD count table")?;
    let mut perm = alloc::<u32>(be, rows as usize, "allocating the JAD permutation")?;
    let s = &be.stream;
    let tile_cfg = tiles_config(tiles, JAD_TILE as u32)?;
    let f = be.function("rd_jad_count_k")?;
    let mut b = s.launch_builder(&f);
    b.arg(&rows).arg(&maxlen).arg(&lens.row_ptr).arg(&mut table);
    // SAFETY: arguments match `rd_jad_count_k`; table holds (max + 1) × tiles entries, one
    // block per tile.
    unsafe { b.launch(tile_cfg) }.map_err(cuda("launching the JAD count kernel"))?;
    scan(be, &mut table, table_len)?;
    let f = be.function("rd_jad_perm_k")?;
    let mut b = s.launch_builder(&f);
    b.arg(&rows)
        .arg(&maxlen)
        .arg(&lens.row_ptr)
        .arg(&table)
        .arg(&mut perm);
    // SAFETY: as above; perm holds rows entries.
    unsafe { b.launch(tile_cfg) }.map_err(cuda("launching the JAD permutation kernel"))?;
    let mut jd_ptr = alloc::<u32>(be, lens.max as usize + 1, "allocating jagged diagonals")?;
    let f = be.function("rd_jad_longer_k")?;
    let mut b = s.launch_builder(&f);
    b.arg(&maxlen).arg(&tiles32).arg(&table).arg(&mut jd_ptr);
    // SAFETY: arguments match `rd_jad_longer_k`; jd_ptr holds max + 1 entries.
    unsafe { b.launch(fill_config(be, lens.max + 1)?) }
        .map_err(cuda("launching the JAD diagonal kernel"))?;
    scan(be, &mut jd_ptr, lens.max + 1)?;
    drop(table);
    let f = entry::<T>(be, "rd_jad")?;
    let mut col = alloc::<u32>(be, lens.nnz as usize, "allocating JAD columns")?;
    let mut val = alloc::<T>(be, lens.nnz as usize, "allocating JAD values")?;
    let mut b = s.launch_builder(&f);
    b.arg(&rows)
        .arg(&cols)
        .arg(&lens.row_ptr)
        .arg(&perm)
        .arg(&jd_ptr);
    b.arg(&mut col).arg(&mut val);
    // SAFETY: arguments match `rd_jad_*`; col and val hold nnz entries, perm rows, jd_ptr
    // max + 1 offsets ending at nnz.
    unsafe { b.launch(fill_config(be, rows as u64)?) }
        .map_err(cuda("launching the JAD fill kernel"))?;
    Ok(JadArrays {
        perm,
        jd_ptr,
        col,
        val,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::{FormatParams, Jad};
    use crate::instrument::Spread;

    /// The kernels' scan on the host: tiles scanned, their totals scanned the same way, added.
    fn scan_mirror(data: &mut [u32]) {
        let tile = SCAN_TILE as usize;
        let mut sums: Vec<u32> = Vec::new();
        for t in data.chunks_mut(tile) {
            let mut run = 0;
            for v in t.iter_mut() {
                (*v, run) = (run, run + *v);
            }
            sums.push(run);
        }
        if sums.len() > 1 {
            scan_mirror(&mut sums);
            for (i, v) in data.iter_mut().enumerate() {
                *v += sums[i / tile];
            }
        }
    }

    /// The kernels' stable counting sort on the host: (perm, jd_ptr).
    fn jad_mirror(lens: &[u32]) -> (Vec<u32>, Vec<u32>) {
        let max = lens.iter().copied().max().unwrap_or(0);
        let tile = JAD_TILE as usize;
        let tiles = lens.len().div_ceil(tile);
        let mut table = vec![0u32; jad_table_len(lens.len() as u64, max as u64) as usize];
        let idx = |l: u32, b: usize| (max - l) as usize * tiles + b;
        for (b, t) in lens.chunks(tile).enumerate() {
            for &l in t {
                table[idx(l, b)] += 1;
            }
        }
        scan_mirror(&mut table);
        let mut perm = vec![0u32; lens.len()];
        for (b, t) in lens.chunks(tile).enumerate() {
            for (j, &l) in t.iter().enumerate() {
                let before = t[..j].iter().filter(|&&m| m == l).count() as u32;
                perm[(table[idx(l, b)] + before) as usize] = (b * tile + j) as u32;
            }
        }
        let mut jd: Vec<u32> = (0..=max)
            .map(|d| if d < max { table[idx(d, 0)] } else { 0 })
            .collect();
        scan_mirror(&mut jd);
        (perm, jd)
    }

    #[test]
    fn scan_of_several_levels_is_the_prefix_sum() {
        for n in [1usize, 5, 1024, 1025, 70_000, 1_100_003] {
            let data: Vec<u32> = (0..n as u64).map(|i| (i * 7919 % 13) as u32).collect();
            let mut got = data.clone();
            scan_mirror(&mut got);
            let mut run = 0;
            for (i, &v) in data.iter().enumerate() {
                assert_eq!(got[i], run, "n = {n}, i = {i}");
                run += v;
            }
        }
    }

    #[test]
    fn tiled_counting_sort_is_the_host_jad_order() {
        for (rows, pnz, cv) in [
            (1, 1, 1.0),
            (777, 1, 1.0),
            (1000, 4, 0.5),
            (10_007, 33, 1.0),
        ] {
            for dist in [RowDist::Normal, RowDist::Uniform, RowDist::Constant] {
                let rl = RowLengths {
                    dist,
                    spread: Spread::Relative { cv },
                };
                let csr = rl
                    .build_csr::<f64>(rows, rows.max(2 * pnz), pnz, u64::MAX)
                    .unwrap();
                let lens: Vec<u32> = csr.row_lengths().iter().map(|&l| l as u32).collect();
                let jad = Jad::from_csr(&csr, &FormatParams::default()).unwrap();
                let (perm, jd_ptr) = jad_mirror(&lens);
                assert_eq!(perm, jad.perm, "{dist:?} {rows} rows");
                assert_eq!(jd_ptr, jad.jd_ptr, "{dist:?} {rows} rows");
            }
        }
    }

    #[test]
    fn jad_table_counts_tiles_and_lengths() {
        assert_eq!(jad_table_len(1, 0), 1);
        assert_eq!(jad_table_len(256, 9), 10);
        assert_eq!(jad_table_len(257, 9), 20);
        assert_eq!(jad_table_len(u64::MAX, u64::MAX), u64::MAX);
    }
}
