// CSR SpMV with G consecutive threads per row, G ∈ {1, 2, 4, 8, 16, 32}: G = 1 is Bell & Garland's
// scalar kernel (one thread per row), G = 32 their vector kernel (one warp per row); the values in
// between are the sub-warp "thread mappings" of Lehnert et al. One template serves every G.
//
// Lane l of a row's group handles entries start+l, start+l+G, …; the group's partial sums are
// combined with __shfl_down_sync and lane 0 writes y. Every lane takes part in the shuffle (rows
// past the end contribute 0), so the full-warp mask is valid. The block size must be a multiple of
// 32 (so groups never straddle warps) — checked on the Rust side.
//
// To keep enough loads in flight, each lane fetches four column indices and four values before it
// uses any of them (the compiler does not hoist loads across iterations of a loop with a run-time
// trip count). Requires nnz + 4·32 < 2^32 (checked on the Rust side).

template <typename T, int G>
__device__ __forceinline__ void csr_rows(u32 nrows, const u32* __restrict__ row_ptr,
                                         const u32* __restrict__ col, const T* __restrict__ val,
                                         const T* __restrict__ x, T* __restrict__ y) {
    const u64 row = global_thread() / G;
    const u32 lane = threadIdx.x % G;
    T sum = 0;
    if (row < nrows) {
        const u32 end = ld(row_ptr + row + 1);
        u32 k = ld(row_ptr + row) + lane;
        for (; k + 3 * G < end; k += 4 * G) {
            const u32 c0 = ld(col + k), c1 = ld(col + k + G);
            const u32 c2 = ld(col + k + 2 * G), c3 = ld(col + k + 3 * G);
            const T v0 = ld(val + k), v1 = ld(val + k + G);
            const T v2 = ld(val + k + 2 * G), v3 = ld(val + k + 3 * G);
            sum += v0 * ld(x + c0);
            sum += v1 * ld(x + c1);
            sum += v2 * ld(x + c2);
            sum += v3 * ld(x + c3);
        }
        for (; k < end; k += G) {
            sum += ld(val + k) * ld(x + ld(col + k));
        }
    }
    sum = group_sum<G>(sum);
    if (lane == 0 && row < nrows) {
        y[row] = sum;
    }
}

#define SC_CSR(NAME, T, G)                                                                     \
    extern "C" __global__ void __launch_bounds__(1024, 1)                                         \
        NAME(u32 nrows, const u32* __restrict__ row_ptr, const u32* __restrict__ col,          \
             const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y) {          \
        csr_rows<T, G>(nrows, row_ptr, col, val, x, y);                                        \
    }

SC_CSR(csr_t1_f32, float, 1)
SC_CSR(csr_t2_f32, float, 2)
SC_CSR(csr_t4_f32, float, 4)
SC_CSR(csr_t8_f32, float, 8)
SC_CSR(csr_t16_f32, float, 16)
SC_CSR(csr_t32_f32, float, 32)
SC_CSR(csr_t1_f64, double, 1)
SC_CSR(csr_t2_f64, double, 2)
SC_CSR(csr_t4_f64, double, 4)
SC_CSR(csr_t8_f64, double, 8)
SC_CSR(csr_t16_f64, double, 16)
SC_CSR(csr_t32_f64, double, 32)
