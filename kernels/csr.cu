// CSR SpMV with G consecutive threads per row, G ∈ {1, 2, 4, 8, 16, 32}: G = 1 is Bell & Garland's
// scalar kernel (one thread per row), G = 32 their vector kernel (one warp per row); the values in
// between are the sub-warp "thread mappings" of Lehnert et al. One template serves every G.
//
// Lane l of a row's group handles entries start+l, start+l+G, …; the group's partial sums are
// combined with __shfl_down_sync and lane 0 writes y. Every lane takes part in the shuffle (rows
// past the end contribute 0), so the full-warp mask is valid. The block size must be a multiple of
// 32 (so groups never straddle warps) — checked on the Rust side.
//
// To keep enough loads in flight, each lane fetches U column indices and U values (predicated on
// the row's end) before it uses any of them: U = 4 for G ≤ 8, 2 for longer groups, whose lanes
// see fewer entries of a row. The compiler does not hoist loads across iterations of a loop with
// a run-time trip count by itself. Requires nnz + 4·32 < 2^32 (checked on the Rust side).

template <typename T, int G>
__device__ __forceinline__ void csr_rows(u32 nrows, const u32* __restrict__ row_ptr,
                                         const u32* __restrict__ col, const T* __restrict__ val,
                                         const T* __restrict__ x, T* __restrict__ y) {
    constexpr int U = G >= 16 ? 2 : 4;
    const u64 row = global_thread() / G;
    const u32 lane = threadIdx.x % G;
    T sum = 0;
    if (row < nrows) {
        const u32 end = ld(row_ptr + row + 1);
        for (u32 k = ld(row_ptr + row) + lane; k < end; k += U * G) {
            u32 c[U];
            T v[U];
#pragma unroll
            for (int i = 0; i < U; ++i) {
                const u32 kk = k + i * G;
                c[i] = kk < end ? ld(col + kk) : 0u;
                v[i] = kk < end ? ld(val + kk) : T(0);
            }
#pragma unroll
            for (int i = 0; i < U; ++i) {
                if (k + i * G < end) {
                    sum += v[i] * ld(x + c[i]);
                }
            }
        }
    }
    sum = group_sum<G>(sum);
    if (lane == 0 && row < nrows) {
        y[row] = sum;
    }
}

#define SC_CSR(NAME, T, G)                                                                     \
    extern "C" __global__ void SC_BOUNDS                                         \
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
