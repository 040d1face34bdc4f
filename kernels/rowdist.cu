// Generation of the statistical models' benchmark matrices on the device (src/instrument/rowdist.rs
// is the contract; src/backend/cuda/rowdist.rs drives these kernels):
//
//   1. rd_lengths: the length of every row, a pure function of the row index (mix64 hashes,
//      Irwin–Hall normal, uniform or constant, clamped to [0, cols]), with their sum and maximum;
//   2. rd_scan_tiles + rd_scan_add: an exclusive prefix scan (tiles of RD_SCAN_TILE values, the
//      tiles' totals scanned by the same kernels, then added back) — the CSR row pointers;
//   3. the fill kernels of CSR, column-major ELL (padded to the longest row) and JAD, whose
//      entries are pure functions of the flat CSR index i = row_ptr[r] + k:
//      column k·s + (mix64(i) >> 32) mod s with s = cols / len(r), value of i ^ VALUE_SALT;
//   4. for JAD, a stable counting sort of the rows by decreasing length: rd_jad_count counts the
//      rows of each length in each tile of RD_JAD_TILE rows into a table ordered (length
//      decreasing, tile increasing), whose exclusive scan is where each (length, tile) group
//      starts; rd_jad_perm places each row after the earlier rows of its tile with its length
//      (the host's order: longer rows first, equal lengths in row order); rd_jad_longer writes
//      the number of rows longer than d, whose exclusive scan is the jagged-diagonal offsets.
//
// Bit-identical to the host: the normal length's sum of 12 24-bit uniforms is exact in double,
// and mean + σ·z is computed with __dmul_rn and __dadd_rn, which are never fused into an FMA
// (the host's Rust does not fuse either); round() rounds halves away from zero as Rust's does.
// The Rust side guarantees rows + 1, cols and the number of entries (ELL: slots) below 2³².

#define RD_LEN_SALT 0x1E570F2011DE5EEDull
#define RD_NORMAL 0u
#define RD_UNIFORM 1u
#define RD_SCAN_THREADS 256
#define RD_SCAN_ITEMS 4
#define RD_SCAN_TILE (RD_SCAN_THREADS * RD_SCAN_ITEMS)
#define RD_JAD_TILE 256

// A 24-bit uniform in [0, 1).
__device__ __forceinline__ double rd_unit(u64 i) {
    return __dmul_rn((double)(sc_mix64(i ^ RD_LEN_SALT) >> 40), 1.0 / 16777216.0);
}

// The length of row r (dist: RD_NORMAL, RD_UNIFORM, else constant).
__device__ __forceinline__ u64 rd_len(u64 r, u32 dist, u64 mean, double sigma, u64 w, u64 cols) {
    u64 l = mean;
    if (dist == RD_NORMAL) {
        double z = 0.0;
        for (u64 j = 0; j < 12; ++j) {
            z = __dadd_rn(z, rd_unit(r * 16 + j));
        }
        z = __dadd_rn(z, -6.0);
        const double v = round(__dadd_rn((double)mean, __dmul_rn(sigma, z)));
        l = v > 0.0 ? (u64)v : 0;
    } else if (dist == RD_UNIFORM) {
        l = mean - w + sc_mix64(r ^ RD_LEN_SALT) % (2 * w + 1);
    }
    return l < cols ? l : cols;
}

// len[r] for r < rows; stats[0] += their sum, stats[1] = max(stats[1], their maximum).
__device__ __forceinline__ void rd_lengths(u32 rows, u32 dist, u64 mean, double sigma, u64 w,
                                           u32 cols, u32* __restrict__ len, u64* stats) {
    u64 sum = 0, max = 0;
    for (u64 r = global_thread(); r < rows; r += sc_grid_stride()) {
        const u64 l = rd_len(r, dist, mean, sigma, w, cols);
        len[r] = (u32)l;
        sum += l;
        max = l > max ? l : max;
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        sum += __shfl_down_sync(SC_FULL_MASK, sum, off);
        const u64 m = __shfl_down_sync(SC_FULL_MASK, max, off);
        max = m > max ? m : max;
    }
    if ((threadIdx.x & 31) == 0) {
        atomicAdd(stats, sum);
        atomicMax(stats + 1, max);
    }
}

// Exclusive scan of the block's tile of data[0..n) in place; the tile's total to sums[block].
__device__ __forceinline__ void rd_scan_tiles(u32 n, u32* __restrict__ data,
                                              u32* __restrict__ sums) {
    __shared__ u32 s[RD_SCAN_TILE];
    __shared__ u32 warp_total[RD_SCAN_THREADS / 32];
    const u64 base = (u64)blockIdx.x * RD_SCAN_TILE;
    const u32 t = threadIdx.x, lane = t & 31, warp = t >> 5;
    for (u32 k = 0; k < RD_SCAN_ITEMS; ++k) {
        const u32 j = t + k * RD_SCAN_THREADS;
        s[j] = base + j < n ? data[base + j] : 0;
    }
    __syncthreads();
    u32 v[RD_SCAN_ITEMS];
    u32 own = 0;
    for (u32 k = 0; k < RD_SCAN_ITEMS; ++k) {
        v[k] = s[t * RD_SCAN_ITEMS + k];
        own += v[k];
    }
    u32 inc = own;
    for (u32 off = 1; off < 32; off <<= 1) {
        const u32 o = __shfl_up_sync(SC_FULL_MASK, inc, off);
        inc += lane >= off ? o : 0;
    }
    if (lane == 31) {
        warp_total[warp] = inc;
    }
    __syncthreads();
    if (warp == 0) {
        u32 wt = lane < RD_SCAN_THREADS / 32 ? warp_total[lane] : 0;
        for (u32 off = 1; off < 32; off <<= 1) {
            const u32 o = __shfl_up_sync(SC_FULL_MASK, wt, off);
            wt += lane >= off ? o : 0;
        }
        if (lane < RD_SCAN_THREADS / 32) {
            warp_total[lane] = wt;
        }
    }
    __syncthreads();
    u32 run = inc - own + (warp > 0 ? warp_total[warp - 1] : 0);
    for (u32 k = 0; k < RD_SCAN_ITEMS; ++k) {
        s[t * RD_SCAN_ITEMS + k] = run;
        run += v[k];
    }
    __syncthreads();
    for (u32 k = 0; k < RD_SCAN_ITEMS; ++k) {
        const u32 j = t + k * RD_SCAN_THREADS;
        if (base + j < n) {
            data[base + j] = s[j];
        }
    }
    if (t == RD_SCAN_THREADS - 1) {
        sums[blockIdx.x] = run;
    }
}

// data[i] += offsets[i / RD_SCAN_TILE] (the scanned totals of the tiles).
__device__ __forceinline__ void rd_scan_add(u32 n, u32* __restrict__ data,
                                            const u32* __restrict__ offsets) {
    for (u64 i = global_thread(); i < n; i += sc_grid_stride()) {
        data[i] += offsets[i / RD_SCAN_TILE];
    }
}

// Column of the entry with flat index i, entry k of a row of length len (> 0).
__device__ __forceinline__ u32 rd_col(u64 i, u32 k, u32 len, u32 cols) {
    return sc_syn_col(i, k, cols / len);
}

// CSR: one warp per row, the lanes over its entries.
template <typename T>
__device__ __forceinline__ void rd_csr(u32 rows, u32 cols, const u32* __restrict__ row_ptr,
                                       u32* __restrict__ col, T* __restrict__ val) {
    const u64 warps = sc_grid_stride() / 32;
    const u32 lane = threadIdx.x & 31;
    for (u64 r = global_thread() / 32; r < rows; r += warps) {
        const u32 start = row_ptr[r];
        const u32 len = row_ptr[r + 1] - start;
        for (u32 k = lane; k < len; k += 32) {
            const u64 i = (u64)start + k;
            col[i] = rd_col(i, k, len, cols);
            val[i] = (T)sc_unit_value(i ^ SC_VALUE_SALT);
        }
    }
}

// Column-major ELL of `width` slots per row: slot k·rows + r holds entry k of row r, or the
// padding (SC_PAD, 0) beyond the row's length.
template <typename T>
__device__ __forceinline__ void rd_ell(u32 rows, u32 cols, u32 width,
                                       const u32* __restrict__ row_ptr, u32* __restrict__ col,
                                       T* __restrict__ val) {
    const u64 slots = (u64)rows * width;
    for (u64 s = global_thread(); s < slots; s += sc_grid_stride()) {
        const u32 k = (u32)(s / rows);
        const u32 r = (u32)(s - (u64)k * rows);
        const u32 start = row_ptr[r];
        const u32 len = row_ptr[r + 1] - start;
        if (k < len) {
            const u64 i = (u64)start + k;
            col[s] = rd_col(i, k, len, cols);
            val[s] = (T)sc_unit_value(i ^ SC_VALUE_SALT);
        } else {
            col[s] = SC_PAD;
            val[s] = (T)0;
        }
    }
}

// The length of this thread's row of the block's tile (SC_PAD beyond the rows), how many rows
// of the tile before it have its length, and how many in all.
__device__ __forceinline__ u32 rd_jad_rank(u32 rows, const u32* __restrict__ row_ptr, u32* before,
                                           u32* same) {
    __shared__ u32 s[RD_JAD_TILE];
    const u32 t = threadIdx.x;
    const u64 r = (u64)blockIdx.x * RD_JAD_TILE + t;
    const u32 len = r < rows ? row_ptr[r + 1] - row_ptr[r] : SC_PAD;
    s[t] = len;
    __syncthreads();
    u32 b = 0, n = 0;
    for (u32 j = 0; j < RD_JAD_TILE; ++j) {
        const u32 eq = s[j] == len;
        n += eq;
        b += eq && j < t;
    }
    *before = b;
    *same = n;
    return len;
}

// table[(maxlen − len)·tiles + tile] = rows of the tile with length len (written by the first).
__device__ __forceinline__ void rd_jad_count(u32 rows, u32 maxlen,
                                             const u32* __restrict__ row_ptr,
                                             u32* __restrict__ table) {
    u32 before, same;
    const u32 len = rd_jad_rank(rows, row_ptr, &before, &same);
    if (len != SC_PAD && before == 0) {
        table[(u64)(maxlen - len) * gridDim.x + blockIdx.x] = same;
    }
}

// perm[start of the row's (length, tile) group + rows before it in the group] = row.
__device__ __forceinline__ void rd_jad_perm(u32 rows, u32 maxlen, const u32* __restrict__ row_ptr,
                                            const u32* __restrict__ starts,
                                            u32* __restrict__ perm) {
    u32 before, same;
    const u32 len = rd_jad_rank(rows, row_ptr, &before, &same);
    if (len != SC_PAD) {
        const u32 p = starts[(u64)(maxlen - len) * gridDim.x + blockIdx.x] + before;
        perm[p] = blockIdx.x * RD_JAD_TILE + threadIdx.x;
    }
}

// longer[d] = rows longer than d (the start of length d's group in tile 0) for d < maxlen, and
// longer[maxlen] = 0: its exclusive scan is the jagged-diagonal offsets.
__device__ __forceinline__ void rd_jad_longer(u32 maxlen, u32 tiles,
                                              const u32* __restrict__ starts,
                                              u32* __restrict__ longer) {
    for (u64 d = global_thread(); d <= maxlen; d += sc_grid_stride()) {
        longer[d] = d < maxlen ? starts[(u64)(maxlen - d) * tiles] : 0;
    }
}

// JAD: one thread per permuted row p; entry d of row perm[p] goes to jd_ptr[d] + p.
template <typename T>
__device__ __forceinline__ void rd_jad(u32 rows, u32 cols, const u32* __restrict__ row_ptr,
                                       const u32* __restrict__ perm,
                                       const u32* __restrict__ jd_ptr, u32* __restrict__ col,
                                       T* __restrict__ val) {
    for (u64 p = global_thread(); p < rows; p += sc_grid_stride()) {
        const u32 r = perm[p];
        const u32 start = row_ptr[r];
        const u32 len = row_ptr[r + 1] - start;
        for (u32 d = 0; d < len; ++d) {
            const u64 i = (u64)start + d;
            const u64 at = (u64)jd_ptr[d] + p;
            col[at] = rd_col(i, d, len, cols);
            val[at] = (T)sc_unit_value(i ^ SC_VALUE_SALT);
        }
    }
}

#define SC_RD_LENGTHS(NAME)                                                                    \
    extern "C" __global__ void SC_BOUNDS NAME(u32 rows, u32 dist, u64 mean, double sigma,      \
                                              u64 w, u32 cols, u32* len, u64* stats) {         \
        rd_lengths(rows, dist, mean, sigma, w, cols, len, stats);                              \
    }
#define SC_RD_SCAN_TILES(NAME)                                                                 \
    extern "C" __global__ void __launch_bounds__(RD_SCAN_THREADS)                              \
        NAME(u32 n, u32* data, u32* sums) {                                                    \
        rd_scan_tiles(n, data, sums);                                                          \
    }
#define SC_RD_SCAN_ADD(NAME)                                                                   \
    extern "C" __global__ void SC_BOUNDS NAME(u32 n, u32* data, const u32* offsets) {          \
        rd_scan_add(n, data, offsets);                                                         \
    }
#define SC_RD_JAD_COUNT(NAME)                                                                  \
    extern "C" __global__ void __launch_bounds__(RD_JAD_TILE)                                  \
        NAME(u32 rows, u32 maxlen, const u32* row_ptr, u32* table) {                           \
        rd_jad_count(rows, maxlen, row_ptr, table);                                            \
    }
#define SC_RD_JAD_PERM(NAME)                                                                   \
    extern "C" __global__ void __launch_bounds__(RD_JAD_TILE)                                  \
        NAME(u32 rows, u32 maxlen, const u32* row_ptr, const u32* starts, u32* perm) {         \
        rd_jad_perm(rows, maxlen, row_ptr, starts, perm);                                      \
    }
#define SC_RD_JAD_LONGER(NAME)                                                                 \
    extern "C" __global__ void SC_BOUNDS NAME(u32 maxlen, u32 tiles, const u32* starts,        \
                                              u32* longer) {                                   \
        rd_jad_longer(maxlen, tiles, starts, longer);                                          \
    }
#define SC_RD_CSR(NAME, T)                                                                     \
    extern "C" __global__ void SC_BOUNDS NAME(u32 rows, u32 cols, const u32* row_ptr,          \
                                              u32* col, T* val) {                              \
        rd_csr<T>(rows, cols, row_ptr, col, val);                                              \
    }
#define SC_RD_ELL(NAME, T)                                                                     \
    extern "C" __global__ void SC_BOUNDS NAME(u32 rows, u32 cols, u32 width,                   \
                                              const u32* row_ptr, u32* col, T* val) {          \
        rd_ell<T>(rows, cols, width, row_ptr, col, val);                                       \
    }
#define SC_RD_JAD(NAME, T)                                                                     \
    extern "C" __global__ void SC_BOUNDS NAME(u32 rows, u32 cols, const u32* row_ptr,          \
                                              const u32* perm, const u32* jd_ptr, u32* col,    \
                                              T* val) {                                        \
        rd_jad<T>(rows, cols, row_ptr, perm, jd_ptr, col, val);                                \
    }

SC_RD_LENGTHS(rd_lengths_k)
SC_RD_SCAN_TILES(rd_scan_tiles_k)
SC_RD_SCAN_ADD(rd_scan_add_k)
SC_RD_JAD_COUNT(rd_jad_count_k)
SC_RD_JAD_PERM(rd_jad_perm_k)
SC_RD_JAD_LONGER(rd_jad_longer_k)
SC_RD_CSR(rd_csr_f32, float)
SC_RD_CSR(rd_csr_f64, double)
SC_RD_ELL(rd_ell_f32, float)
SC_RD_ELL(rd_ell_f64, double)
SC_RD_JAD(rd_jad_f32, float)
SC_RD_JAD(rd_jad_f64, double)
