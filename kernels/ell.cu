// ELL SpMV (Bell & Garland): one thread per row; the format is column-major (entry k of row i at
// k·nrows + i), so consecutive threads read consecutive addresses. Padding slots (column SC_PAD)
// are skipped. Every row of y is written, which is what lets HYB run its COO part with atomics
// on top of this kernel's output. Positions k·nrows + i are computed in 64 bits.

template <typename T>
__device__ __forceinline__ void ell_rows(u32 nrows, u32 width, const u32* __restrict__ col,
                                         const T* __restrict__ val, const T* __restrict__ x,
                                         T* __restrict__ y) {
    const u64 row = global_thread();
    if (row >= nrows) {
        return;
    }
    T sum = 0;
#pragma unroll 4
    for (u32 k = 0; k < width; ++k) {
        const u64 idx = (u64)k * nrows + row;
        const u32 c = ld(col + idx);
        if (c != SC_PAD) {
            sum += ld(val + idx) * ld(x + c);
        }
    }
    y[row] = sum;
}

// `ell_then_*` (HYB's ELL part) lets its programmatic dependent, HYB's COO kernel, start at once
// (kernels/coo.cu `coo_dependent_*`, which waits for this kernel before it adds).
#define SC_ELL(NAME, T, RELEASE)                                                               \
    extern "C" __global__ void SC_BOUNDS                                                       \
        NAME(u32 nrows, u32 width, const u32* __restrict__ col, const T* __restrict__ val,     \
             const T* __restrict__ x, T* __restrict__ y) {                                     \
        if (RELEASE) {                                                                         \
            sc_release_dependents();                                                           \
        }                                                                                      \
        ell_rows<T>(nrows, width, col, val, x, y);                                             \
    }

SC_ELL(ell_f32, float, false)
SC_ELL(ell_f64, double, false)
SC_ELL(ell_then_f32, float, true)
SC_ELL(ell_then_f64, double, true)
