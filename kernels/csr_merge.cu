// Load-balanced CSR SpMV: merge-path decomposition (Merrill & Garland, "Merge-based parallel sparse
// matrix-vector multiplication", SC 2016).
//
// The work is the merge of the row-end offsets (row_ptr[1..=nrows]) with the non-zero indices
// 0..nnz: nrows + nnz items, each either "finish the current row" or "add one product". Every block
// takes a tile of blockDim·IPT consecutive items and every thread IPT of them, whatever the row
// lengths: empty rows and one huge row cost the same per item as any other matrix.
//
// Kernels:
//  * merge_partition (once, when the matrix is prepared): the merge-path row coordinate of every
//    tile boundary (binary search on the diagonal). It depends only on the matrix and the tile
//    size, so an iterative solver computes it once, like the format conversion.
//  * the tile kernel: per tile, the products val·x[col] of its non-zeros and its row ends are
//    staged in shared memory with coalesced loads; each thread finds its start on the path by a
//    binary search in shared memory and walks its IPT items. A row a thread finishes is written by
//    that thread, after adding the partial sums ("carries") of the earlier threads of the block
//    that worked on the same row (a segmented block scan: constant cost even when one row spans
//    the whole tile). The row still open at the end of the tile is the tile's carry.
//
// Rows that cross tile boundaries are finished in one of two ways (the launcher picks one):
//  * single pass, csr_merge_* (when all tiles fit on the GPU at once and no row is longer than a
//    tile, so a look-back takes at most two steps): each tile publishes its
//    carry and then a flag stamped with the launch's epoch (a counter the host bumps every launch,
//    so flags never need resetting), with release/acquire ordering. The thread that finishes a
//    row which began in an earlier tile looks back: it waits for the previous tile's flag, adds
//    its carry, and goes on to the tile before while that tile too began inside the row.
//    Publishing never waits, so a tile waits only for tiles dispatched before it (the in-order
//    dispatch every single-pass scan relies on, e.g. CUB's decoupled look-back). One launch, no
//    atomics, deterministic. A spin that outlasts SC_SPIN_LIMIT polls gives up and raises the
//    error word, which the host checks after each run, instead of hanging.
//  * two passes, csr_merge_tp_* then merge_fixup_* (many waves of tiles): the tiles publish
//    their carry and its row, and a second kernel adds every carry to its row with atomicAdd
//    (order-dependent within rounding for rows longer than a tile). With many waves, a look-back
//    would keep each block resident while it waits for its predecessor, and a row spanning many
//    tiles would be walked back one tile at a time; a second launch is cheaper.
//
// Dynamic shared memory per block (bytes): (tile + bs)·sizeof(T) + bs·4 + (tile + 1)·4 with
// tile = bs·IPT — computed by the Rust launcher (launch.rs), which also sets the opt-in limit when
// it exceeds 48 KiB.

__device__ __forceinline__ u32 ld_acquire(const u32* p) {
    u32 v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ __forceinline__ void st_release(u32* p, u32 v) {
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

#define SC_SPIN_LIMIT (1u << 24)

extern "C" __global__ void merge_partition(u32 nrows, u32 nnz, const u32* __restrict__ row_ptr,
                                           u32 tile_items, u32 ntiles, u32* __restrict__ tile_row) {
    const u64 t = global_thread();
    if (t > ntiles) {
        return;
    }
    const u64 total = (u64)nrows + (u64)nnz;
    u64 diag = t * (u64)tile_items;
    if (diag > total) {
        diag = total;
    }
    // Row ends A[i] = row_ptr[i + 1] (i < nrows) against non-zero indices B[j] = j (j < nnz);
    // a row end is consumed first when A[i] <= B[j].
    u64 lo = diag > nnz ? diag - nnz : 0;
    u64 hi = diag < nrows ? diag : nrows;
    while (lo < hi) {
        const u64 mid = (lo + hi) >> 1;
        if ((u64)ld(row_ptr + mid + 1) <= diag - mid - 1) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    tile_row[t] = (u32)lo;
}

template <typename T, int IPT, bool LOOKBACK>
__device__ __forceinline__ void merge_tile(u32 nrows, u32 nnz, const u32* __restrict__ row_ptr,
                                           const u32* __restrict__ col,
                                           const T* __restrict__ val, const T* __restrict__ x,
                                           T* __restrict__ y, const u32* __restrict__ tile_row,
                                           T* __restrict__ carry_val, u32* __restrict__ carry_row,
                                           u32* __restrict__ flags, u32 epoch,
                                           u32* __restrict__ error) {
    extern __shared__ __align__(16) unsigned char smem[];
    const u32 bs = blockDim.x;
    const u32 tile_items = bs * IPT;
    const u32 tid = threadIdx.x;
    T* s_prod = reinterpret_cast<T*>(smem);        // tile_items products
    T* s_cval = s_prod + tile_items;                // bs thread carries (value)
    u32* s_crow = reinterpret_cast<u32*>(s_cval + bs);  // bs thread carries (row)
    u32* s_rowend = s_crow + bs;                    // up to tile_items row ends

    const u32 tile = blockIdx.x;
    const u32 r0 = ld(tile_row + tile);
    const u32 r1 = ld(tile_row + tile + 1);
    const u64 total = (u64)nrows + (u64)nnz;
    const u64 d0 = (u64)tile * tile_items;
    const u64 d1 = d0 + tile_items < total ? d0 + tile_items : total;
    const u32 n0 = (u32)(d0 - r0);
    const u32 n1 = (u32)(d1 - r1);
    const u32 nnz_tile = n1 - n0;
    const u32 rows_tile = r1 - r0;
    // Whether row r0 began before this tile (loaded early, off the look-back's critical path).
    const bool began_inside = LOOKBACK && tile > 0 && n0 > ld(row_ptr + r0);

    // Stage the products: all loads of the tile issued before the first use.
    {
        u32 c[IPT];
        T v[IPT];
#pragma unroll
        for (int i = 0; i < IPT; ++i) {
            const u32 k = tid + i * bs;
            if (k < nnz_tile) {
                c[i] = ld(col + n0 + k);
                v[i] = ld(val + n0 + k);
            }
        }
#pragma unroll
        for (int i = 0; i < IPT; ++i) {
            const u32 k = tid + i * bs;
            if (k < nnz_tile) {
                s_prod[k] = v[i] * ld(x + c[i]);
            }
        }
    }
    for (u32 k = tid; k < rows_tile; k += bs) {
        s_rowend[k] = ld(row_ptr + r0 + k + 1);
    }
    __syncthreads();

    // This thread's start on the path, inside the tile.
    const u32 tile_len = (u32)(d1 - d0);
    const u32 dl = tid * IPT < tile_len ? tid * IPT : tile_len;
    const u32 dend = dl + IPT < tile_len ? dl + IPT : tile_len;
    u32 lo = dl > nnz_tile ? dl - nnz_tile : 0;
    u32 hi = dl < rows_tile ? dl : rows_tile;
    while (lo < hi) {
        const u32 mid = (lo + hi) >> 1;
        if (s_rowend[mid] <= n0 + (dl - mid - 1)) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    u32 xr = lo;       // rows finished so far (tile-local)
    u32 yn = dl - lo;  // non-zeros consumed so far (tile-local)

    T run = 0;
    bool first_done = false;
    T first_val = 0;
    const u32 first_row = r0 + xr;
#pragma unroll
    for (int i = 0; i < IPT; ++i) {
        if (dl + i < dend) {
            if (xr < rows_tile && (yn >= nnz_tile || s_rowend[xr] <= n0 + yn)) {
                if (!first_done) {
                    first_done = true;
                    first_val = run;
                } else {
                    y[r0 + xr] = run;
                }
                run = 0;
                ++xr;
            } else {
                run += s_prod[yn];
                ++yn;
            }
        }
    }
    // Carries: the partial sum of the row still open at the end of each thread's items. A
    // block-wide inclusive scan of the carries, segmented by row (keys never decrease), gives
    // each thread the sum over the run of consecutive threads ending at it with the same open row:
    // a warp-level shuffle scan, then a scan of the warps' tails by warp 0.
    __shared__ u32 s_wkey[32];
    __shared__ T s_wval[32];
    const u32 lane = tid & 31;
    const u32 wid = tid >> 5;
    const u32 key = r0 + xr;
    T v = run;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const T vo = __shfl_up_sync(SC_FULL_MASK, v, d);
        const u32 ko = __shfl_up_sync(SC_FULL_MASK, key, d);
        if (lane >= d && ko == key) {
            v += vo;
        }
    }
    if (lane == 31) {
        s_wkey[wid] = key;
        s_wval[wid] = v;
    }
    __syncthreads();
    if (wid == 0) {
        const u32 nwarps = bs >> 5;
        const u32 k = lane < nwarps ? s_wkey[lane] : SC_PAD;
        T a = lane < nwarps ? s_wval[lane] : T(0);
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const T ao = __shfl_up_sync(SC_FULL_MASK, a, d);
            const u32 ko = __shfl_up_sync(SC_FULL_MASK, k, d);
            if (lane >= d && ko == k) {
                a += ao;
            }
        }
        if (lane < nwarps) {
            s_wval[lane] = a;
        }
    }
    __syncthreads();
    // A run that reaches back into the previous warp covers all of this warp's lanes up to here.
    if (wid > 0 && key == s_wkey[wid - 1]) {
        v += s_wval[wid - 1];
    }
    s_crow[tid] = key;
    s_cval[tid] = v;
    __syncthreads();

    // The row open at the end of the tile: publish the scanned carry of the last thread.
    if (tid == bs - 1) {
        carry_val[tile] = v;
        if (LOOKBACK) {
            st_release(flags + tile, epoch);  // orders the carry before the flag
        } else {
            carry_row[tile] = s_crow[tid];  // (from shared memory: `key` need not stay live)
        }
    }
    // The first row this thread finished may have started in earlier threads of the block: add
    // the scanned carry of the thread just before (if its open row is that row) — and, in the
    // single-pass variant, if the row began before this tile, the carries of the earlier tiles.
    if (first_done) {
        if (tid > 0 && s_crow[tid - 1] == first_row) {
            first_val += s_cval[tid - 1];
        }
        if (LOOKBACK && began_inside && first_row == r0) {
            const u32 kstart = ld(row_ptr + r0);
            u32 t = tile;
            // Tile t began inside row r0 when its start coordinate is row r0 with some of r0's
            // non-zeros before it; then tile t - 1 holds a part of the row.
            do {
                --t;
                u32 spins = 0;
                while (ld_acquire(flags + t) != epoch) {
                    if (++spins > SC_SPIN_LIMIT) {
                        atomicExch(error, 1u);
                        break;
                    }
                    __nanosleep(64);
                }
                first_val += __ldcg(carry_val + t);
            } while (t > 0 && ld(tile_row + t) == r0 && (u64)t * tile_items - r0 > kstart);
        }
        y[first_row] = first_val;
    }
}

template <typename T>
__device__ __forceinline__ void merge_fixup(u32 nrows, u32 ntiles,
                                            const u32* __restrict__ carry_row,
                                            const T* __restrict__ carry_val, T* __restrict__ y) {
    const u64 t = global_thread();
    if (t < ntiles) {
        const u32 r = carry_row[t];
        if (r < nrows) {
            atomicAdd(y + r, carry_val[t]);
        }
    }
}

#define SC_MERGE_ARGS(T)                                                                       \
    u32 nrows, u32 nnz, const u32 *__restrict__ row_ptr, const u32 *__restrict__ col,          \
        const T *__restrict__ val, const T *__restrict__ x, T *__restrict__ y,                 \
        const u32 *__restrict__ tile_row, T *__restrict__ carry_val,                           \
        u32 *__restrict__ carry_row, u32 *__restrict__ flags, u32 epoch, u32 *__restrict__ error

// Single pass with look-back.
#define SC_MERGE(NAME, T, IPT)                                                                 \
    extern "C" __global__ void SC_BOUNDS NAME(SC_MERGE_ARGS(T)) {                              \
        merge_tile<T, IPT, true>(nrows, nnz, row_ptr, col, val, x, y, tile_row, carry_val,     \
                                 carry_row, flags, epoch, error);                              \
    }

// First of two passes (the carries go to merge_fixup_*).
#define SC_MERGE_TP(NAME, T, IPT)                                                              \
    extern "C" __global__ void SC_BOUNDS NAME(SC_MERGE_ARGS(T)) {                              \
        merge_tile<T, IPT, false>(nrows, nnz, row_ptr, col, val, x, y, tile_row, carry_val,    \
                                  carry_row, flags, epoch, error);                             \
    }

#define SC_FIXUP(NAME, T)                                                                      \
    extern "C" __global__ void SC_BOUNDS NAME(u32 nrows, u32 ntiles,                           \
                                              const u32* __restrict__ carry_row,               \
                                              const T* __restrict__ carry_val,                 \
                                              T* __restrict__ y) {                             \
        merge_fixup<T>(nrows, ntiles, carry_row, carry_val, y);                                \
    }

SC_MERGE(csr_merge_f32, float, 6)
SC_MERGE(csr_merge_f64, double, 6)
SC_MERGE_TP(csr_merge_tp_f32, float, 6)
SC_MERGE_TP(csr_merge_tp_f64, double, 6)
SC_FIXUP(merge_fixup_f32, float)
SC_FIXUP(merge_fixup_f64, double)
