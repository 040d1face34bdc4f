//! Launch-configuration math: block-size validation and grid sizes of every kernel. Pure
//! functions, tested without a GPU.

use crate::{Error, Result};

/// Threads per warp on every NVIDIA GPU so far (the kernels assume it; the backend checks the
/// device's warp size against it).
pub const WARP: u32 = 32;

/// Most chunks of 32 entries one warp of the COO kernel walks (its interval is `32 × chunks`
/// entries; a row costs one atomic per interval it touches).
pub const COO_MAX_CHUNKS: u32 = 8;

/// Largest grid x-dimension CUDA allows.
pub const MAX_GRID_X: u64 = (1 << 31) - 1;

/// Headroom the kernels need above the largest index (`csr.cu` looks up to 3 × 32 entries ahead
/// of a valid position; the rest is margin).
pub const INDEX_HEADROOM: u64 = 4096;

/// Shared memory a block may use without opting in.
pub const DEFAULT_SHARED_LIMIT: u32 = 48 * 1024;

/// Check a block size: a multiple of the warp size, at most the device's (and the kernel's)
/// limit, and at least `threads_per_row` (so a row's thread group fits in one block).
pub fn check_block_size(
    block: u32,
    max_threads_per_block: u32,
    threads_per_row: u32,
) -> Result<()> {
    if block == 0 || block % WARP != 0 {
        return Err(Error::Invalid(format!(
            "block size {block} must be a positive multiple of {WARP}"
        )));
    }
    if block > max_threads_per_block {
        return Err(Error::Invalid(format!(
            "block size {block} exceeds this kernel's limit of {max_threads_per_block} threads per block on this device"
        )));
    }
    if block < threads_per_row {
        return Err(Error::Invalid(format!(
            "block size {block} is smaller than the {threads_per_row} threads per row"
        )));
    }
    Ok(())
}

/// Check that 32-bit device indices can address a matrix with these dimensions.
pub fn check_index_range(nrows: usize, ncols: usize, stored: usize) -> Result<()> {
    let limit = u32::MAX as u64 - INDEX_HEADROOM;
    for (what, n) in [
        ("rows", nrows),
        ("columns", ncols),
        ("stored entries", stored),
    ] {
        if n as u64 > limit {
            return Err(Error::Unsupported(format!(
                "{n} {what} exceed the CUDA kernels' 32-bit indices (at most {limit})"
            )));
        }
    }
    Ok(())
}

/// Blocks of `block` threads needed for `threads` threads (0 for none).
pub fn blocks_for(threads: u64, block: u32) -> Result<u32> {
    let blocks = threads.div_ceil(block as u64);
    if blocks > MAX_GRID_X {
        return Err(Error::Unsupported(format!(
            "{threads} threads need {blocks} blocks of {block}, more than CUDA's grid limit {MAX_GRID_X}"
        )));
    }
    Ok(blocks as u32)
}

/// Grid of the CSR kernel with `threads_per_row` threads per row.
pub fn csr_grid(nrows: usize, threads_per_row: u32, block: u32) -> Result<u32> {
    blocks_for(nrows as u64 * threads_per_row as u64, block)
}

/// Grid of the one-thread-per-row kernels (ELL, JAD, DIA) and of SELL's row part (one thread per
/// sorted row position; its split slices' units add their own blocks, `sell_split.rs`).
pub fn row_grid(nrows: usize, block: u32) -> Result<u32> {
    blocks_for(nrows as u64, block)
}

/// Chunks per warp of the COO kernel: as many as keep at least `resident_warps` warps busy
/// (so a small matrix is not walked by a few warps in long serial chains of dependent loads),
/// between 1 and [`COO_MAX_CHUNKS`].
pub fn coo_chunks(nnz: usize, resident_warps: u32) -> u32 {
    let per_warp = (nnz as u64).div_ceil(WARP as u64 * resident_warps.max(1) as u64);
    per_warp.clamp(1, COO_MAX_CHUNKS as u64) as u32
}

/// The carries of HYB's COO part above which its launcher picks the block-merged walk
/// (`coo_merged_*`, kernels/coo.cu): the most that rows spanning ≥ 2 of the walk's warps send
/// onto one 128-byte line of y ([`line_carries`]). Measured on the H200 (session 91,
/// docs/PERFORMANCE.md, 30 seed-41 matrices × 2 precisions): at ≥ 1,401 the merged HYB took
/// 0.38–0.84× the shipped one's time (28 of 28), at ≤ 1,064 0.99–1.24× (32 of 32); the cut sits
/// between. COO itself keeps its walk: the same number does not separate its gains (the merged
/// walk's cost scales with the whole matrix there). [`MERGE_FROM_VAR`] overrides it.
pub const MERGE_FROM: u64 = 1200;

/// `SPARSECAST_MERGE_FROM=N` moves [`MERGE_FROM`] for this process (0: every COO part of HYB
/// merged, as the self-test's coverage of the merged walk asks); only under
/// [`HybLaunch::ProgrammaticMerged`].
pub const MERGE_FROM_VAR: &str = "SPARSECAST_MERGE_FROM";

/// [`MERGE_FROM`], or the number [`MERGE_FROM_VAR`] holds.
pub fn merge_from() -> u64 {
    std::env::var(MERGE_FROM_VAR)
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(MERGE_FROM)
}

/// The most carries (one `atomicAdd` per warp a row's run of entries touches) that rows spanning
/// ≥ 2 warps send onto one 128-byte line of y (`rows_per_line` rows of it), when the COO walk
/// gives each warp `warp_entries` consecutive entries: `rows` lists, in row order, each row and
/// its entries (consecutive in the walk; rows without entries may be left out or given 0).
/// Atomics onto different addresses of one line serialize in the L2 (session 91: 12 rows of one
/// line × 700 warps 15.3 µs, 128 bytes apart 5.0 µs), so this, not the carries in all, is what
/// costs the per-warp walk; rows within one warp add once and are left out, as are rows on lines
/// of their own count too (a row of 60,000 entries alone on its line still gains merged).
pub fn line_carries(
    rows: impl IntoIterator<Item = (usize, usize)>,
    warp_entries: usize,
    rows_per_line: usize,
) -> u64 {
    let (w, per_line) = (warp_entries.max(1) as u64, rows_per_line.max(1));
    let (mut at, mut line, mut on_line, mut most) = (0u64, usize::MAX, 0u64, 0u64);
    for (row, len) in rows {
        if len == 0 {
            continue;
        }
        let warps = (at + len as u64 - 1) / w - at / w + 1;
        at += len as u64;
        if warps < 2 {
            continue;
        }
        if row / per_line != line {
            most = most.max(on_line);
            (line, on_line) = (row / per_line, 0);
        }
        on_line += warps;
    }
    most.max(on_line)
}

/// [`line_carries`] of a COO walk over `nnz` entries (`rows` as it reads them) for values of
/// `value_bytes` on a GPU of `resident_warps`: with the chunks [`coo_chunks`] sets and the rows
/// of y one 128-byte line holds. HYB's COO part runs merged where this reaches [`merge_from`]
/// under [`HybLaunch::ProgrammaticMerged`].
pub fn coo_line_carries(
    rows: impl IntoIterator<Item = (usize, usize)>,
    nnz: usize,
    value_bytes: usize,
    resident_warps: u32,
) -> u64 {
    let chunks = coo_chunks(nnz, resident_warps) as usize;
    line_carries(
        rows,
        WARP as usize * chunks,
        128 / value_bytes.clamp(1, 128),
    )
}

/// Grid of the COO kernel: one warp per interval of `32 × chunks` entries.
pub fn coo_grid(nnz: usize, chunks: u32, block: u32) -> Result<u32> {
    let warps = (nnz as u64).div_ceil(WARP as u64 * chunks.max(1) as u64);
    blocks_for(warps * WARP as u64, block)
}

/// Grid of the BSR kernel: one warp per block row.
pub fn bsr_grid(nblock_rows: usize, block: u32) -> Result<u32> {
    blocks_for(nblock_rows as u64 * WARP as u64, block)
}

/// Tiling of the merge-path kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MergeTiling {
    /// Path items (row ends + non-zeros) per tile = block × items per thread.
    pub tile_items: u32,
    /// Tiles (= blocks of the main kernel).
    pub ntiles: u32,
    /// Dynamic shared memory per block, bytes.
    pub shared_bytes: u32,
}

/// The merge-path tiling for a matrix, a block size, items per thread and value size; see
/// `kernels/csr_merge.cu` for the shared-memory layout.
pub fn merge_tiling(
    nrows: usize,
    nnz: usize,
    block: u32,
    items_per_thread: u32,
    value_bytes: u32,
) -> Result<MergeTiling> {
    let tile_items = block * items_per_thread;
    let total = nrows as u64 + nnz as u64;
    let ntiles = total.div_ceil(tile_items as u64);
    if ntiles + 1 > MAX_GRID_X {
        return Err(Error::Unsupported(format!(
            "{total} merge-path items need too many tiles"
        )));
    }
    let shared_bytes = (tile_items + block) * value_bytes + block * 4 + (tile_items + 1) * 4;
    Ok(MergeTiling {
        tile_items,
        ntiles: ntiles as u32,
        shared_bytes,
    })
}

/// Blocks of `block` threads, each with `shared_bytes` of dynamic shared memory, that the device
/// holds at once (threads, blocks and shared memory per SM; registers are not limiting at the
/// kernels' 32-register budget).
pub fn resident_blocks(
    sm_count: u32,
    max_threads_per_sm: u32,
    max_blocks_per_sm: u32,
    shared_per_sm: u64,
    block: u32,
    shared_bytes: u32,
) -> u64 {
    let by_threads = (max_threads_per_sm / block.max(1)) as u64;
    // The driver reserves 1 KiB of shared memory per resident block.
    let by_shared = shared_per_sm / (shared_bytes as u64 + 1024);
    sm_count as u64 * by_threads.min(max_blocks_per_sm as u64).min(by_shared)
}

/// Whether the merge-path kernel should run as a single pass with look-back rather than two
/// passes: all tiles resident at once (with many waves, blocks waiting on their predecessors would
/// hold their slots) and no row longer than a tile (the look-back walks back one tile per step,
/// serially, so a row spanning many tiles would make its finishing thread wait for each in turn;
/// the two-pass fix-up adds those carries in parallel).
pub fn merge_single_pass(
    ntiles: u32,
    resident_blocks: u64,
    max_row_len: usize,
    tile_items: u32,
) -> bool {
    (ntiles as u64) <= resident_blocks && max_row_len <= tile_items as usize
}

/// The variable that chooses HYB's launch sequence: `SPARSECAST_PDL=1` makes HYB's COO kernel
/// the programmatic dependent of its ELL kernel on compute capability 9.0 and later
/// (`prepared/own.rs`), `SPARSECAST_PDL=merge` does that and runs the block-merged COO walk where
/// [`merges_carries`] says ([`HybLaunch::ProgrammaticMerged`]),
/// `SPARSECAST_PDL=0` queues it plainly after the ELL kernel; unset (or any
/// other value), the sequence is the one the profile in use models ([`HybLaunch`]). Measured in
/// session 82 (docs/PERFORMANCE.md): the dependent runs HYB 0.4–0.8 µs faster where HYB has a
/// COO part (H200, seed 14: 0.84–0.86× between 3 and 5 µs), and the same from 20 µs on.
pub const PDL_VAR: &str = "SPARSECAST_PDL";

/// The kernel revision ([`crate::corpus::table::ConfigTime::kernel`]) a table stores with HYB
/// times measured with the programmatic dependent ([`HybLaunch::Programmatic`]); plain times
/// carry none.
pub const HYB_PDL_REVISION: &str = "hyb-pdl";

/// The kernel revision of HYB times measured with [`HybLaunch::ProgrammaticMerged`].
pub const HYB_PDL_MERGE_REVISION: &str = "hyb-pdl-merge";

/// HYB's launch sequence where it has a COO part: what a table's time measured and what a model
/// predicts (the `sparsecast` model stores it), so that the backend runs what the model
/// predicts. Without a COO part HYB is one kernel either way.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum HybLaunch {
    /// The COO kernel queued after the ELL kernel (every profile before session 83).
    #[default]
    Plain,
    /// The COO kernel launched as the ELL kernel's programmatic dependent (sm_90 and later;
    /// earlier devices run the plain sequence).
    Programmatic,
    /// [`HybLaunch::Programmatic`], and the COO kernel the block-merged walk where the carries
    /// of its long rows onto one line of y reach [`MERGE_FROM`] (session 92; before sm_90 the
    /// plain sequence, unmerged: only the H200 has measured it). Where they do not it is the programmatic sequence's
    /// kernel exactly, so a table's programmatic times below the cut stay valid under it.
    ProgrammaticMerged,
}

impl HybLaunch {
    /// The sequence a table's time of HYB was measured with, from its kernel revision.
    pub fn of_revision(kernel: Option<&str>) -> HybLaunch {
        match kernel {
            Some(HYB_PDL_REVISION) => HybLaunch::Programmatic,
            Some(HYB_PDL_MERGE_REVISION) => HybLaunch::ProgrammaticMerged,
            _ => HybLaunch::Plain,
        }
    }

    /// The kernel revision a table stores with a time measured with this sequence.
    pub fn revision(self) -> Option<&'static str> {
        match self {
            HybLaunch::Plain => None,
            HybLaunch::Programmatic => Some(HYB_PDL_REVISION),
            HybLaunch::ProgrammaticMerged => Some(HYB_PDL_MERGE_REVISION),
        }
    }

    /// Whether HYB's COO kernel is the programmatic dependent of its ELL kernel (sm_90+).
    pub fn is_programmatic(self) -> bool {
        self != HybLaunch::Plain
    }

    /// Whether HYB's COO part may run the block-merged walk ([`coo_line_carries`]).
    pub fn merges(self) -> bool {
        self == HybLaunch::ProgrammaticMerged
    }

    /// The sequence's number in an atomic ([`HybLaunch::from_code`]).
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The sequence of [`HybLaunch::code`]'s number (plain for any other).
    pub fn from_code(code: u8) -> HybLaunch {
        match code {
            1 => HybLaunch::Programmatic,
            2 => HybLaunch::ProgrammaticMerged,
            _ => HybLaunch::Plain,
        }
    }

    /// Whether this is the plain sequence (serde's test: a model of it stores no field).
    pub fn is_plain(&self) -> bool {
        *self == HybLaunch::Plain
    }
}

/// The sequence [`PDL_VAR`]'s value asks for: exactly `1` the programmatic dependent, exactly `0`
/// the plain sequence, anything else (or unset) nothing (the profile's).
pub fn pdl_asked(value: Option<&std::ffi::OsStr>) -> Option<HybLaunch> {
    match value.and_then(|v| v.to_str()) {
        Some("1") => Some(HybLaunch::Programmatic),
        Some("0") => Some(HybLaunch::Plain),
        Some("merge") => Some(HybLaunch::ProgrammaticMerged),
        _ => None,
    }
}

/// The sequence this process's environment asks for ([`PDL_VAR`]), if any.
pub fn pdl_from_env() -> Option<HybLaunch> {
    pdl_asked(std::env::var_os(PDL_VAR).as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_size_rules() {
        assert!(check_block_size(256, 1024, 32).is_ok());
        assert!(check_block_size(32, 1024, 32).is_ok());
        assert!(check_block_size(1024, 1024, 1).is_ok());
        assert!(check_block_size(0, 1024, 1).is_err());
        assert!(check_block_size(100, 1024, 1).is_err());
        assert!(check_block_size(2048, 1024, 1).is_err());
        assert!(check_block_size(512, 256, 1).is_err());
        // Messages name the problem.
        let e = check_block_size(96, 64, 1).unwrap_err().to_string();
        assert!(e.contains("96") && e.contains("64"), "{e}");
    }

    #[test]
    fn grids_cover_every_row_exactly() {
        for nrows in [0usize, 1, 31, 32, 33, 1000, 123_457] {
            for tpr in [1u32, 2, 4, 8, 16, 32] {
                for block in [32u32, 64, 256, 1024] {
                    let g = csr_grid(nrows, tpr, block).unwrap() as u64;
                    let rows_per_block = (block / tpr) as u64;
                    assert!(g * rows_per_block >= nrows as u64);
                    assert!(g == 0 || (g - 1) * rows_per_block < nrows as u64);
                }
            }
            let g = row_grid(nrows, 128).unwrap() as u64;
            assert!(g * 128 >= nrows as u64 && (g == 0 || (g - 1) * 128 < nrows as u64));
            let g = bsr_grid(nrows, 256).unwrap() as u64;
            assert!(g * 8 >= nrows as u64);
        }
        assert_eq!(csr_grid(0, 32, 256).unwrap(), 0);
        assert_eq!(csr_grid(8, 32, 256).unwrap(), 1);
        assert_eq!(csr_grid(9, 32, 256).unwrap(), 2);
    }

    #[test]
    fn coo_grid_covers_entries() {
        for chunks in [1u32, 3, COO_MAX_CHUNKS] {
            let per_warp = (WARP * chunks) as u64;
            for nnz in [0usize, 1, 255, 256, 257, 1 << 20] {
                for block in [32u32, 256, 1024] {
                    let g = coo_grid(nnz, chunks, block).unwrap() as u64;
                    let warps = g * (block / WARP) as u64;
                    assert!(warps * per_warp >= nnz as u64);
                    assert!(g == 0 || (g - 1) * (block / WARP) as u64 * per_warp < nnz as u64);
                }
            }
        }
    }

    #[test]
    fn line_carries_count_rows_spanning_warps_per_line() {
        // Warps of 32 entries, 2 rows a line: rows 0 and 1 span 2 warps each (line 0: 4), row 2
        // stays in one warp (left out), row 3 spans 4 (line 1: 4), row 5 spans 7 (line 2).
        let rows = [(0, 64), (1, 33), (2, 10), (3, 100), (4, 0), (5, 200)];
        assert_eq!(line_carries(rows, 32, 2), 7);
        assert_eq!(line_carries(rows[..4].iter().copied(), 32, 2), 4);
        // One line of all of them: 2 + 2 + 4 + 7.
        assert_eq!(line_carries(rows, 32, 32), 15);
        // Nothing spans two warps of 1,024 entries but row 5 (207..407 lies in warp 0).
        assert_eq!(line_carries(rows, 1024, 2), 0);
        assert_eq!(line_carries(std::iter::empty(), 32, 32), 0);
    }

    #[test]
    fn coo_line_carries_use_the_walks_chunks_and_lines() {
        // 16 rows of 3,200 entries: one chunk (few entries), 100 warps a row (101 where a row
        // starts mid-warp: never here, 3,200 is a multiple of 32).
        let rows: Vec<_> = (0..16).map(|i| (i, 3200)).collect();
        let r = 132 * 64;
        assert_eq!(coo_line_carries(rows.iter().copied(), 51_200, 4, r), 1600);
        assert_eq!(coo_line_carries(rows.iter().copied(), 51_200, 8, r), 1600);
        // Rows 16 apart: one a line in f64 (16 rows), two in f32 (32 rows).
        let apart: Vec<_> = (0..4).map(|i| (16 * i, 3200)).collect();
        assert_eq!(coo_line_carries(apart.iter().copied(), 12_800, 8, r), 100);
        assert_eq!(coo_line_carries(apart.iter().copied(), 12_800, 4, r), 200);
        // Enough entries for 2 chunks a warp: half the warps.
        assert_eq!(
            coo_line_carries([(0, 32 * r as usize + 32)], 32 * r as usize + 32, 4, r),
            (32 * r as u64 + 32) / 64 + 1
        );
        const { assert!(MERGE_FROM > 1064 && MERGE_FROM < 1401) };
    }

    #[test]
    fn the_merged_sequence_has_its_revision_code_and_variable_value() {
        for l in [
            HybLaunch::Plain,
            HybLaunch::Programmatic,
            HybLaunch::ProgrammaticMerged,
        ] {
            assert_eq!(HybLaunch::of_revision(l.revision()), l);
            assert_eq!(HybLaunch::from_code(l.code()), l);
        }
        assert_eq!(
            pdl_asked(Some(std::ffi::OsStr::new("merge"))),
            Some(HybLaunch::ProgrammaticMerged)
        );
        assert!(HybLaunch::ProgrammaticMerged.is_programmatic());
        assert!(HybLaunch::ProgrammaticMerged.merges());
        assert!(!HybLaunch::Programmatic.merges() && !HybLaunch::Plain.is_programmatic());
        assert_eq!(
            serde_json::to_string(&HybLaunch::ProgrammaticMerged).unwrap(),
            "\"programmatic-merged\""
        );
    }

    #[test]
    fn coo_chunks_fill_the_gpu() {
        let resident = 132 * 64;
        assert_eq!(coo_chunks(0, resident), 1);
        assert_eq!(coo_chunks(5_000, resident), 1);
        // Just over one entry per resident lane: two chunks.
        assert_eq!(coo_chunks(32 * resident as usize + 1, resident), 2);
        assert_eq!(coo_chunks(60_000_000, resident), COO_MAX_CHUNKS);
        // A zero warp count is treated as one warp: 100 entries = 4 chunks.
        assert_eq!(coo_chunks(100, 0), 4);
    }

    #[test]
    fn grid_limit_is_an_error() {
        assert!(blocks_for(MAX_GRID_X * 32, 32).is_ok());
        assert!(blocks_for(MAX_GRID_X * 32 + 1, 32).is_err());
    }

    #[test]
    fn merge_tiling_math() {
        let t = merge_tiling(100, 1000, 256, 7, 8).unwrap();
        assert_eq!(t.tile_items, 1792);
        assert_eq!(t.ntiles, 1);
        assert_eq!(t.shared_bytes, (1792 + 256) * 8 + 256 * 4 + 1793 * 4);
        let t = merge_tiling(1000, 1000, 64, 7, 4).unwrap();
        assert_eq!(t.tile_items, 448);
        assert_eq!(t.ntiles, 5); // 2000 / 448 = 4.46
        assert_eq!(merge_tiling(0, 0, 256, 7, 8).unwrap().ntiles, 0);
        // 256 threads, f64: fits the default 48 KiB; 1024 threads does not.
        assert!(merge_tiling(1, 1, 256, 7, 8).unwrap().shared_bytes <= DEFAULT_SHARED_LIMIT);
        assert!(merge_tiling(1, 1, 1024, 7, 8).unwrap().shared_bytes > DEFAULT_SHARED_LIMIT);
    }

    #[test]
    fn residency_and_merge_mode() {
        // H200: 132 SMs, 2048 threads, 32 blocks, 228 KiB shared per SM.
        let r = |block, shared| resident_blocks(132, 2048, 32, 233_472, block, shared);
        assert_eq!(r(256, 0), 132 * 8);
        assert_eq!(r(64, 0), 132 * 32);
        // 256 threads, f64, 6 items per thread: ~20 KiB each, 10 fit by shared memory, 8 by threads.
        let t = merge_tiling(1, 1, 256, 6, 8).unwrap();
        assert_eq!(r(256, t.shared_bytes), 132 * 8);
        // 1024 threads, f64: ~80 KiB each, 2 by shared memory and by threads.
        let t = merge_tiling(1, 1, 1024, 6, 8).unwrap();
        assert_eq!(r(1024, t.shared_bytes), 132 * 2);
        assert!(merge_single_pass(1000, r(256, 0), 100, 1536));
        assert!(!merge_single_pass(39_000, r(256, 0), 100, 1536));
        assert!(!merge_single_pass(1000, r(256, 0), 1537, 1536));
        assert!(merge_single_pass(0, 0, 0, 1536));
    }

    #[test]
    fn index_range() {
        assert!(check_index_range(10, 10, 100).is_ok());
        assert!(check_index_range(u32::MAX as usize, 1, 1).is_err());
        assert!(check_index_range(1, 1, u32::MAX as usize - 10).is_err());
    }

    #[test]
    fn programmatic_launch_is_asked_for_by_exactly_one() {
        use std::ffi::OsStr;
        assert_eq!(
            pdl_asked(Some(OsStr::new("1"))),
            Some(HybLaunch::Programmatic)
        );
        assert_eq!(pdl_asked(Some(OsStr::new("0"))), Some(HybLaunch::Plain));
        for v in ["", "true", "yes", " 1", "11", "00"] {
            assert_eq!(pdl_asked(Some(OsStr::new(v))), None, "{v:?}");
        }
        assert_eq!(pdl_asked(None), None);
        for l in [HybLaunch::Plain, HybLaunch::Programmatic] {
            assert_eq!(HybLaunch::of_revision(l.revision()), l);
        }
        assert_eq!(HybLaunch::of_revision(Some("split-wide")), HybLaunch::Plain);
    }
}
