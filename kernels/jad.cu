// JAD (jagged diagonal) SpMV: one thread per permuted row p. Jagged diagonal d holds entry d of the
// rows whose length exceeds d, in permuted order, so thread p reads position jd_ptr[d] + p of every
// diagonal long enough to hold it (consecutive threads, consecutive addresses). Diagonal lengths
// never increase, so the first diagonal too short for p ends the loop. The sum goes to the
// original row perm[p].

template <typename T>
__device__ __forceinline__ void jad_rows(u32 nrows, u32 ndiag, const u32* __restrict__ perm,
                                         const u32* __restrict__ jd_ptr,
                                         const u32* __restrict__ col, const T* __restrict__ val,
                                         const T* __restrict__ x, T* __restrict__ y) {
    const u64 p = global_thread();
    if (p >= nrows) {
        return;
    }
    T sum = 0;
    u32 start = ld(jd_ptr);
    for (u32 d = 0; d < ndiag; ++d) {
        const u32 next = ld(jd_ptr + d + 1);
        if (p >= (u64)(next - start)) {
            break;
        }
        const u64 k = (u64)start + p;
        sum += ld(val + k) * ld(x + ld(col + k));
        start = next;
    }
    y[ld(perm + p)] = sum;
}

#define SC_JAD(NAME, T)                                                                        \
    extern "C" __global__ void SC_BOUNDS                                         \
        NAME(u32 nrows, u32 ndiag, const u32* __restrict__ perm,                               \
             const u32* __restrict__ jd_ptr, const u32* __restrict__ col,                      \
             const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y) {          \
        jad_rows<T>(nrows, ndiag, perm, jd_ptr, col, val, x, y);                               \
    }

SC_JAD(jad_f32, float)
SC_JAD(jad_f64, double)
