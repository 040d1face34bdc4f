// Load-balanced CSR SpMV: merge-path decomposition (Merrill & Garland, "Merge-based parallel sparse
// matrix-vector multiplication", SC 2016).
//
// The work is the merge of the row-end offsets (row_ptr[1..=nrows]) with the non-zero indices
// 0..nnz: nrows + nnz items, each either "finish the current row" or "add one product". Every block
// takes a tile of blockDim·IPT consecutive items and every thread IPT of them, whatever the row
// lengths: empty rows and one huge row cost the same per item as any other matrix.
//
// Three kernels:
//  * merge_partition (once, when the matrix is prepared): the merge-path row coordinate of every
//    tile boundary (binary search on the diagonal). It depends only on the matrix and the tile
//    size, so an iterative solver computes it once, like the format conversion.
//  * csr_merge_*: per tile, the products val·x[col] of its non-zeros and its row ends are staged in
//    shared memory with coalesced loads; each thread finds its start on the path by a binary
//    search in shared memory and walks its IPT items. A row a thread finishes is written by that
//    thread, after adding the partial sums ("carries") of the earlier threads of the block that
//    worked on the same row. The row still open at the end of the tile becomes the tile's carry.
//  * merge_fixup_*: adds every tile carry to its row with atomicAdd (several tiles may carry into
//    one long row). It runs after csr_merge_* in the same stream, so the row's final store has
//    happened; results within a long row are therefore order-dependent within rounding.
//
// Dynamic shared memory per block (bytes): (tile + bs)·sizeof(T) + bs·4 + (tile + 1)·4 with
// tile = bs·IPT — computed by the Rust launcher (launch.rs), which also sets the opt-in limit when
// it exceeds 48 KiB.

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

template <typename T, int IPT>
__device__ __forceinline__ void merge_tile(u32 nrows, u32 nnz, const u32* __restrict__ row_ptr,
                                           const u32* __restrict__ col,
                                           const T* __restrict__ val, const T* __restrict__ x,
                                           T* __restrict__ y, const u32* __restrict__ tile_row,
                                           u32* __restrict__ carry_row,
                                           T* __restrict__ carry_val) {
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
    s_crow[tid] = r0 + xr;
    s_cval[tid] = run;
    __syncthreads();

    // The first row this thread finished may have started in earlier threads of the block: add
    // their carries (consecutive threads just before this one with the same open row).
    if (first_done) {
        for (int u = (int)tid - 1; u >= 0 && s_crow[u] == first_row; --u) {
            first_val += s_cval[u];
        }
        y[first_row] = first_val;
    }
    // The row open at the end of the tile: the sum of the trailing threads' carries.
    if (tid == bs - 1) {
        const u32 k = s_crow[tid];
        T s = 0;
        for (int u = (int)tid; u >= 0 && s_crow[u] == k; --u) {
            s += s_cval[u];
        }
        carry_row[tile] = k;
        carry_val[tile] = s;
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

#define SC_MERGE(NAME, FIXUP, T, IPT)                                                          \
    extern "C" __global__ void SC_BOUNDS                                         \
        NAME(u32 nrows, u32 nnz, const u32* __restrict__ row_ptr, const u32* __restrict__ col, \
             const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y,            \
             const u32* __restrict__ tile_row, u32* __restrict__ carry_row,                    \
             T* __restrict__ carry_val) {                                                      \
        merge_tile<T, IPT>(nrows, nnz, row_ptr, col, val, x, y, tile_row, carry_row,           \
                           carry_val);                                                         \
    }                                                                                          \
    extern "C" __global__ void SC_BOUNDS                                         \
        FIXUP(u32 nrows, u32 ntiles, const u32* __restrict__ carry_row,                        \
              const T* __restrict__ carry_val, T* __restrict__ y) {                            \
        merge_fixup<T>(nrows, ntiles, carry_row, carry_val, y);                                \
    }

SC_MERGE(csr_merge_f32, merge_fixup_f32, float, 7)
SC_MERGE(csr_merge_f64, merge_fixup_f64, double, 7)
