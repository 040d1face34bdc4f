// BSR SpMV: one warp per block row, square b×b blocks stored row-major, b ≤ 32 (checked on the
// Rust side). The warp's lanes form G = ⌊32/b⌋ groups of b lanes; lane j·b + r handles row r of
// the block row in blocks j, j+G, j+2G, …; the G partial sums of each row are added through
// shared memory. Columns past ncols (the zero-filled edge of the last block column) are skipped,
// as are rows past nrows.

template <typename T>
__device__ __forceinline__ void bsr_rows(u32 nbrows, u32 nrows, u32 ncols, u32 b,
                                         const u32* __restrict__ row_ptr,
                                         const u32* __restrict__ bcol,
                                         const T* __restrict__ val, const T* __restrict__ x,
                                         T* __restrict__ y) {
    __shared__ T part[1024];
    const u64 br = global_thread() / 32;
    const u32 lane = threadIdx.x % 32;
    if (br >= nbrows) {
        return;  // warp-uniform
    }
    T* mine = part + (threadIdx.x / 32) * 32;
    const u32 groups = 32 / b;
    const u32 r = lane % b;
    const u32 j0 = lane / b;
    const u64 row = br * b + r;
    T sum = 0;
    if (j0 < groups && row < nrows) {
        const u32 end = ld(row_ptr + br + 1);
        for (u32 k = ld(row_ptr + br) + j0; k < end; k += groups) {
            const u64 c0 = (u64)ld(bcol + k) * b;
            const T* blk = val + (u64)k * b * b + (u64)r * b;
            for (u32 c = 0; c < b; ++c) {
                if (c0 + c < ncols) {
                    sum += ld(blk + c) * ld(x + c0 + c);
                }
            }
        }
    }
    mine[lane] = sum;
    __syncwarp();
    if (lane < b && br * b + lane < nrows) {
        T s = 0;
        for (u32 j = 0; j < groups; ++j) {
            s += mine[j * b + lane];
        }
        y[br * b + lane] = s;
    }
}

#define SC_BSR(NAME, T)                                                                        \
    extern "C" __global__ void SC_BOUNDS                                         \
        NAME(u32 nbrows, u32 nrows, u32 ncols, u32 b, const u32* __restrict__ row_ptr,         \
             const u32* __restrict__ bcol, const T* __restrict__ val,                          \
             const T* __restrict__ x, T* __restrict__ y) {                                     \
        bsr_rows<T>(nbrows, nrows, ncols, b, row_ptr, bcol, val, x, y);                        \
    }

SC_BSR(bsr_f32, float)
SC_BSR(bsr_f64, double)
