// SELL-C-σ SpMV (Kreutzer et al.), with wide slices split over warps (session 41).
//
// Narrow slices (width ≤ split_above): one thread per row position of a slice. Thread g handles
// sorted position g = s·C + lane of slice s; entry k of that lane sits at slice_ptr[s] + k·C +
// lane, so a warp reads consecutive addresses. Padding (column SC_PAD) is skipped; positions
// past nrows (the last slice's padding lanes) do nothing. The sum goes to the original row
// perm[g].
//
// Wide slices (width > split_above, src/backend/cuda/sell_split.rs plans them): a warp walking a
// slice's whole width alone made a slice of 2·10⁴ entries per row take milliseconds (session 40,
// scripts/prototype/sell_split.cu). Their width is cut into chunks, a warp per (32 lanes of the
// slice, chunk): a "unit". group[4·q..4·q+4] = (slice, first lane, first unit, chunks) of lane
// group q; unit u belongs to group unit_group[u]. A unit adds its 32 lane sums into the group's
// accumulators acc[32·q + lane] (atomics: the order of additions varies from run to run), then
// counts itself in arrivals[q]; the unit that arrives last takes the sums (leaving zeros), stores
// y and sets arrivals[q] back to 0 for the next launch. One launch, no zeroing of y. (Session 41's
// first version kept each unit's sums apart and had the last unit add them in order: the same
// sum every run, but that last warp's serial walk over thousands of chunks cost a 10⁵-entry row
// 100-250 µs on the H200.)
//
// Blocks [0, unit_blocks) run the units (the long work starts first), the rest the row positions.

template <typename T>
__device__ __forceinline__ T sell_lane_sum(u64 base, u32 c_height, u32 k0, u32 k1,
                                           const u32* __restrict__ col,
                                           const T* __restrict__ val,
                                           const T* __restrict__ x) {
    T sum = 0;
#pragma unroll 4
    for (u32 k = k0; k < k1; ++k) {
        const u64 idx = base + (u64)k * c_height;
        const u32 c = ld(col + idx);
        if (c != SC_PAD) {
            sum += ld(val + idx) * ld(x + c);
        }
    }
    return sum;
}

template <typename T>
__device__ __forceinline__ void sell_rows(u64 g, u32 nrows, u32 c_height, u32 split_above,
                                          const u32* __restrict__ slice_ptr,
                                          const u32* __restrict__ slice_width,
                                          const u32* __restrict__ perm,
                                          const u32* __restrict__ col,
                                          const T* __restrict__ val, const T* __restrict__ x,
                                          T* __restrict__ y) {
    if (g >= nrows) {
        return;
    }
    const u64 s = g / c_height;
    const u32 lane = (u32)(g - s * c_height);
    const u32 width = ld(slice_width + s);
    if (width > split_above) {
        return;  // a unit's
    }
    const u64 base = (u64)ld(slice_ptr + s) + lane;
    y[ld(perm + g)] = sell_lane_sum<T>(base, c_height, 0, width, col, val, x);
}

// Swap the accumulator's value for 0 (device scope), returning it.
__device__ __forceinline__ float sell_take(float* a) {
    return atomicExch(a, 0.0f);
}
__device__ __forceinline__ double sell_take(double* a) {
    return __longlong_as_double(
        (long long)atomicExch((unsigned long long*)a, 0ull));
}

template <typename T>
__device__ __forceinline__ void sell_unit(u32 u, u32 nrows, u32 c_height,
                                          const u32* __restrict__ slice_ptr,
                                          const u32* __restrict__ slice_width,
                                          const u32* __restrict__ perm,
                                          const u32* __restrict__ col,
                                          const T* __restrict__ val,
                                          const u32* __restrict__ unit_group,
                                          const u32* __restrict__ group, u32* arrivals, T* acc,
                                          const T* __restrict__ x, T* __restrict__ y) {
    const u32 lane = threadIdx.x & 31u;
    const u32 q = ld(unit_group + u);
    const u32 s = ld(group + 4 * (u64)q), lane0 = ld(group + 4 * (u64)q + 1);
    const u32 first = ld(group + 4 * (u64)q + 2), chunks = ld(group + 4 * (u64)q + 3);
    const u32 width = ld(slice_width + s);
    const u32 len = (width + chunks - 1) / chunks;
    const u32 k0 = min(width, (u - first) * len), k1 = min(width, k0 + len);
    const u32 l = lane0 + lane;
    const u64 pos = (u64)s * c_height + l;
    const bool live = l < c_height && pos < nrows;
    if (live) {
        const T sum =
            sell_lane_sum<T>((u64)ld(slice_ptr + s) + l, c_height, k0, k1, col, val, x);
        atomicAdd(acc + 32 * (u64)q + lane, sum);
    }
    __threadfence();  // this unit's additions done before it counts itself
    u32 before = 0;
    if (lane == 0) {
        before = atomicAdd(arrivals + q, 1u);
    }
    before = __shfl_sync(SC_FULL_MASK, before, 0);
    if (before != chunks - 1) {
        return;
    }
    __threadfence();
    if (live) {
        y[ld(perm + pos)] = sell_take(acc + 32 * (u64)q + lane);
    }
    if (lane == 0) {
        arrivals[q] = 0;
    }
}

#define SC_SELL(NAME, T)                                                                       \
    extern "C" __global__ void SC_BOUNDS NAME(                                                 \
        u32 nrows, u32 c_height, u32 split_above, u32 nunits, u32 unit_blocks,                 \
        const u32* __restrict__ slice_ptr, const u32* __restrict__ slice_width,                \
        const u32* __restrict__ perm, const u32* __restrict__ col, const T* __restrict__ val,  \
        const u32* __restrict__ unit_group, const u32* __restrict__ group, u32* arrivals,      \
        T* acc, const T* __restrict__ x, T* __restrict__ y) {                                  \
        if (blockIdx.x < unit_blocks) {                                                        \
            const u64 u = ((u64)blockIdx.x * blockDim.x + threadIdx.x) / 32;                   \
            if (u < nunits) {                                                                  \
                sell_unit<T>((u32)u, nrows, c_height, slice_ptr, slice_width, perm, col, val,  \
                             unit_group, group, arrivals, acc, x, y);                  \
            }                                                                                  \
            return;                                                                            \
        }                                                                                      \
        const u64 g = (u64)(blockIdx.x - unit_blocks) * blockDim.x + threadIdx.x;              \
        sell_rows<T>(g, nrows, c_height, split_above, slice_ptr, slice_width, perm, col, val,  \
                     x, y);                                                                    \
    }

SC_SELL(sell_f32, float)
SC_SELL(sell_f64, double)
