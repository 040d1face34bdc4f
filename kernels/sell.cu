// SELL-C-σ SpMV (Kreutzer et al.): one thread per row position of a slice. Thread g handles sorted
// position g = s·C + lane of slice s; entry k of that lane sits at slice_ptr[s] + k·C + lane, so a
// warp reads consecutive addresses. Padding (column SC_PAD) is skipped; positions past nrows (the
// last slice's padding lanes) do nothing. The sum goes to the original row perm[g].

template <typename T>
__device__ __forceinline__ void sell_rows(u32 nrows, u32 c_height,
                                          const u32* __restrict__ slice_ptr,
                                          const u32* __restrict__ slice_width,
                                          const u32* __restrict__ perm,
                                          const u32* __restrict__ col,
                                          const T* __restrict__ val, const T* __restrict__ x,
                                          T* __restrict__ y) {
    const u64 g = global_thread();
    if (g >= nrows) {
        return;
    }
    const u64 s = g / c_height;
    const u32 lane = (u32)(g - s * c_height);
    const u32 width = ld(slice_width + s);
    const u64 base = (u64)ld(slice_ptr + s) + lane;
    T sum = 0;
#pragma unroll 4
    for (u32 k = 0; k < width; ++k) {
        const u64 idx = base + (u64)k * c_height;
        const u32 c = ld(col + idx);
        if (c != SC_PAD) {
            sum += ld(val + idx) * ld(x + c);
        }
    }
    y[ld(perm + g)] = sum;
}

#define SC_SELL(NAME, T)                                                                       \
    extern "C" __global__ void SC_BOUNDS                                         \
        NAME(u32 nrows, u32 c_height, const u32* __restrict__ slice_ptr,                       \
             const u32* __restrict__ slice_width, const u32* __restrict__ perm,                \
             const u32* __restrict__ col, const T* __restrict__ val,                           \
             const T* __restrict__ x, T* __restrict__ y) {                                     \
        sell_rows<T>(nrows, c_height, slice_ptr, slice_width, perm, col, val, x, y);           \
    }

SC_SELL(sell_f32, float)
SC_SELL(sell_f64, double)
