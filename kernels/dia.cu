// DIA SpMV: one thread per row i; diagonal d contributes values[d·nrows + i] · x[i + offsets[d]]
// where that column exists. Consecutive threads read consecutive values of each diagonal.

template <typename T>
__device__ __forceinline__ void dia_rows(u32 nrows, u32 ncols, u32 ndiag,
                                         const int* __restrict__ offsets,
                                         const T* __restrict__ val, const T* __restrict__ x,
                                         T* __restrict__ y) {
    const u64 i = global_thread();
    if (i >= nrows) {
        return;
    }
    T sum = 0;
#pragma unroll 4
    for (u32 d = 0; d < ndiag; ++d) {
        const long long j = (long long)i + (long long)ld(offsets + d);
        if (j >= 0 && j < (long long)ncols) {
            sum += ld(val + (u64)d * nrows + i) * ld(x + j);
        }
    }
    y[i] = sum;
}

#define SC_DIA(NAME, T)                                                                        \
    extern "C" __global__ void SC_BOUNDS                                         \
        NAME(u32 nrows, u32 ncols, u32 ndiag, const int* __restrict__ offsets,                 \
             const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y) {          \
        dia_rows<T>(nrows, ncols, ndiag, offsets, val, x, y);                                  \
    }

SC_DIA(dia_f32, float)
SC_DIA(dia_f64, double)
