// The first SEG-TILE prototype's kernels (session 37), shared by segtile.cu and
// segtile_groups.cu: `segtile` (x through the L1), `segtile_smem` (x's tile staged in shared
// memory) and `split` (fixed chunks of CSR order, no tiles).
#pragma once

template <typename T>
__device__ T warp_sum(T s) {
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    return s;
}

// Tile t = blockIdx.y, rows [blockIdx.x * R, ...): warp w takes rows w, w + warps, ...
template <typename T>
__global__ void segtile(int nrows, int R, int W, const long long* __restrict__ seg,
                        const T* __restrict__ val, const unsigned short* __restrict__ col,
                        const T* __restrict__ x, T* __restrict__ y) {
    int t = blockIdx.y, lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const T* xt = x + (long long)t * W;
    int r0 = blockIdx.x * R, r1 = min(nrows, r0 + R);
    for (int r = r0 + warp; r < r1; r += warps) {
        long long a = seg[(long long)t * nrows + r], b = seg[(long long)t * nrows + r + 1];
        T s = 0;
#pragma unroll 4
        for (long long i = a + lane; i < b; i += 32) s += val[i] * __ldg(&xt[col[i]]);
        s = warp_sum(s);
        if (lane == 0 && b > a) atomicAdd(&y[r], s);
    }
}

// The same, x's tile staged in shared memory first.
template <typename T>
__global__ void segtile_smem(int nrows, int ncols, int R, int W, const long long* __restrict__ seg,
                             const T* __restrict__ val, const unsigned short* __restrict__ col,
                             const T* __restrict__ x, T* __restrict__ y) {
    extern __shared__ unsigned char smem[];
    T* xs = (T*)smem;
    int t = blockIdx.y, lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    long long base = (long long)t * W;
    int w = (int)min((long long)W, ncols - base);
    for (int c = threadIdx.x; c < w; c += blockDim.x) xs[c] = x[base + c];
    __syncthreads();
    int r0 = blockIdx.x * R, r1 = min(nrows, r0 + R);
    for (int r = r0 + warp; r < r1; r += warps) {
        long long a = seg[(long long)t * nrows + r], b = seg[(long long)t * nrows + r + 1];
        T s = 0;
#pragma unroll 4
        for (long long i = a + lane; i < b; i += 32) s += val[i] * xs[col[i]];
        s = warp_sum(s);
        if (lane == 0 && b > a) atomicAdd(&y[r], s);
    }
}

// Chunks of CSR order: warp k sums entries [k*S, (k+1)*S) clipped to row boundaries, one atomic
// per row piece.
template <typename T>
__global__ void split(int nchunks, const int* __restrict__ crow, const long long* __restrict__ cbeg,
                      const long long* __restrict__ cend, const T* __restrict__ val,
                      const int* __restrict__ col, const T* __restrict__ x, T* __restrict__ y) {
    int k = (blockIdx.x * blockDim.x + threadIdx.x) >> 5, lane = threadIdx.x & 31;
    if (k >= nchunks) return;
    T s = 0;
#pragma unroll 4
    for (long long i = cbeg[k] + lane; i < cend[k]; i += 32) s += val[i] * __ldg(&x[col[i]]);
    s = warp_sum(s);
    if (lane == 0) atomicAdd(&y[crow[k]], s);
}

