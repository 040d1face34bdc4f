// SEG-TILE SpMV (src/formats/segtile.rs: column tiles of row segments, 16-bit column offsets).
//
// Thread block b takes tile t = b / groups and the rows g, g + groups, g + 2·groups, … of group
// g = b % groups (interleaved, so that a run of long rows among short ones is shared by every
// group). Warp w of the block sums the segments of the group's rows w, w + warps, … in tile t,
// its lanes striding over the segment, and lane 0 adds the sum to y[row] with one
// atomic: y must be zero before the launch (the Rust launch sequence zeroes it in the same
// stream, counted in the timed run). A block's gathers of x stay within the tile's `width`
// columns: `segtile_smem_*` stages them in shared memory first (width × sizeof(T) must fit
// SC_SEG_SHARED bytes, which the launcher checks), `segtile_l1_*` reads them through the L1.
// A block whose tile has no entry returns at once (a block of rows whose columns occupy part of
// x, as a stack's long rows, has many such tiles).
// Atomics make the order of additions across tiles, and so the rounding, depend on scheduling.
// The block size must be a multiple of 32 (the launcher checks it).

#define SC_SEG_SHARED 32768

template <typename T, bool SHARED>
__device__ __forceinline__ void segtile_rows(u32 nrows, u32 t, u32 g, u32 groups,
                                             const u32* __restrict__ seg,
                                             const unsigned short* __restrict__ col,
                                             const T* __restrict__ val, const T* xt,
                                             T* __restrict__ y) {
    const u32 lane = threadIdx.x % 32;
    const u64 warps = blockDim.x / 32;
    for (u64 r = g + (u64)(threadIdx.x / 32) * groups; r < nrows; r += warps * groups) {
        const u64 s0 = (u64)t * nrows + r;
        const u32 a = ld(seg + s0);
        const u32 b = ld(seg + s0 + 1);
        T sum = 0;
        // A signed 64-bit index: with u32 the compiler must allow for wrap-around and unrolled
        // this loop poorly (1.2-1.8x slower on the H100, session 37).
#pragma unroll 4
        for (long long i = (long long)a + lane; i < (long long)b; i += 32) {
            const u32 c = ld(col + i);
            sum += ld(val + i) * (SHARED ? xt[c] : ld(xt + c));
        }
        sum = group_sum<32>(sum);
        if (lane == 0 && b > a) {
            atomicAdd(y + r, sum);
        }
    }
}

#define SC_SEGTILE_SMEM(NAME, T)                                                               \
    extern "C" __global__ void SC_BOUNDS NAME(                                                 \
        u32 nrows, u32 ncols, u32 width, u32 groups, const u32* __restrict__ seg,              \
        const unsigned short* __restrict__ col, const T* __restrict__ val,                     \
        const T* __restrict__ x, T* __restrict__ y) {                                          \
        __shared__ __align__(16) unsigned char raw[SC_SEG_SHARED];                             \
        T* xs = (T*)raw;                                                                       \
        const u32 t = blockIdx.x / groups;                                                     \
        /* A tile's segments are consecutive: none in the tile, nothing to stage. */           \
        if (ld(seg + (u64)t * nrows) == ld(seg + (u64)(t + 1) * nrows)) {                      \
            return;                                                                            \
        }                                                                                      \
        const u64 base = (u64)t * width;                                                       \
        const u32 w = (u32)(base + width <= ncols ? width : ncols - base);                     \
        for (u32 c = threadIdx.x; c < w; c += blockDim.x) {                                    \
            xs[c] = ld(x + base + c);                                                          \
        }                                                                                      \
        __syncthreads();                                                                       \
        segtile_rows<T, true>(nrows, t, blockIdx.x % groups, groups, seg, col, val, xs, y);    \
    }

#define SC_SEGTILE_L1(NAME, T)                                                                 \
    extern "C" __global__ void SC_BOUNDS NAME(                                                 \
        u32 nrows, u32 ncols, u32 width, u32 groups, const u32* __restrict__ seg,              \
        const unsigned short* __restrict__ col, const T* __restrict__ val,                     \
        const T* __restrict__ x, T* __restrict__ y) {                                          \
        const u32 t = blockIdx.x / groups;                                                     \
        segtile_rows<T, false>(nrows, t, blockIdx.x % groups, groups, seg, col, val,           \
                               x + (u64)t * width, y);                                         \
    }

SC_SEGTILE_SMEM(segtile_smem_f32, float)
SC_SEGTILE_L1(segtile_l1_f32, float)
SC_SEGTILE_SMEM(segtile_smem_f64, double)
SC_SEGTILE_L1(segtile_l1_f64, double)
