// Session 39 (scripts/prototype; nvcc -O3 -arch=sm_90 -std=c++17 segtile_variants.cu): the shipped
// SEG-TILE kernel (kernels/segtile.cu) against two variants: vector loads (4 entries per lane per
// step) and flat chunks (a tile's entries split evenly over its warps, each warp finding its first
// row by a 32-ary search). y is checked against an f64 host sum. (After the session-39 run the two
// variants' kernels were folded into one template, segtile_smem_variant; nothing else changed.)
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include "../../kernels/common.cuh"
#include "../../kernels/segtile.cu"
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

template <typename T> struct V4;
template <> struct V4<float> { static __device__ __forceinline__ void load(const float* p, float (&v)[4]) { float4 q = __ldg((const float4*)p); v[0] = q.x; v[1] = q.y; v[2] = q.z; v[3] = q.w; } };
template <> struct V4<double> { static __device__ __forceinline__ void load(const double* p, double (&v)[4]) { double2 q = __ldg((const double2*)p), r = __ldg((const double2*)p + 1); v[0] = q.x; v[1] = q.y; v[2] = r.x; v[3] = r.y; } };

template <typename T, bool SHARED>
__device__ __forceinline__ void segtile_rows_v(u32 nrows, u32 t, u32 g, u32 groups, const u32* __restrict__ seg,
    const unsigned short* __restrict__ col, const T* __restrict__ val, const T* xt, T* __restrict__ y) {
    const u32 lane = threadIdx.x % 32;
    const u64 warps = blockDim.x / 32;
    for (u64 r = g + (u64)(threadIdx.x / 32) * groups; r < nrows; r += warps * groups) {
        const u64 s0 = (u64)t * nrows + r;
        const long long a = ld(seg + s0), b = ld(seg + s0 + 1);
        T sum = 0;
        const long long a4 = min(b, (a + 3) & ~3ll), b4 = max(a4, b & ~3ll);
        // head and tail, one entry per lane
        for (long long i = a + lane; i < a4; i += 32) sum += ld(val + i) * (SHARED ? xt[ld(col + i)] : ld(xt + ld(col + i)));
        for (long long i = b4 + lane; i < b; i += 32) sum += ld(val + i) * (SHARED ? xt[ld(col + i)] : ld(xt + ld(col + i)));
#pragma unroll 2
        for (long long i = a4 + 4 * lane; i < b4; i += 128) {
            const ushort4 c = __ldg((const ushort4*)(col + i));
            T v[4]; V4<T>::load(val + i, v);
            if (SHARED) sum += v[0] * xt[c.x] + v[1] * xt[c.y] + v[2] * xt[c.z] + v[3] * xt[c.w];
            else sum += v[0] * ld(xt + c.x) + v[1] * ld(xt + c.y) + v[2] * ld(xt + c.z) + v[3] * ld(xt + c.w);
        }
        sum = group_sum<32>(sum);
        if (lane == 0 && b > a) atomicAdd(y + r, sum);
    }
}
// Flat chunks: the tile's entries (contiguous, rows in order) split evenly over the tile's
// groups × warps; each warp finds its first row by a 32-ary search of the tile's offsets.
template <typename T>
__device__ __forceinline__ void segtile_flat_rows(u32 nrows, u32 t, u32 g, u32 groups, const u32* __restrict__ seg,
    const unsigned short* __restrict__ col, const T* __restrict__ val, const T* xt, T* __restrict__ y) {
    const u32 lane = threadIdx.x % 32, warps = blockDim.x / 32, w = threadIdx.x / 32;
    const u64 base = (u64)t * nrows;
    const long long T0 = ld(seg + base), T1 = ld(seg + base + nrows);
    const long long parts = (long long)groups * warps, k = (long long)g * warps + w, E = T1 - T0;
    const long long c0 = T0 + E * k / parts, c1 = T0 + E * (k + 1) / parts;
    if (c0 >= c1) return;
    // the last row r with seg[base + r] <= c0
    u32 lo = 0, hi = nrows;
    while (hi - lo > 1) {
        const u32 step = (hi - lo + 31) / 32;
        const u32 p = lo + (lane + 1) * step;
        const bool le = p < hi && (long long)ld(seg + base + p) <= c0;
        const u32 n = __popc(__ballot_sync(SC_FULL_MASK, le));
        lo = lo + n * step;
        hi = min(hi, lo + step);
    }
    u32 r = lo;
    long long i0 = c0;
    while (i0 < c1) {
        const long long e = min(c1, (long long)ld(seg + base + r + 1));
        T sum = 0;
#pragma unroll 4
        for (long long i = i0 + lane; i < e; i += 32) sum += ld(val + i) * xt[ld(col + i)];
        sum = group_sum<32>(sum);
        if (lane == 0 && e > i0) atomicAdd(y + r, sum);
        i0 = max(i0, e);
        ++r;
    }
}
// Both variants behind the shipped kernel's staging of x's tile (V = 1: vector loads, 2: flat).
template <typename T, int V> __global__ void SC_BOUNDS segtile_smem_variant(u32 nrows, u32 ncols, u32 width, u32 groups, const u32* __restrict__ seg,
    const unsigned short* __restrict__ col, const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y) {
    __shared__ __align__(16) unsigned char raw[SC_SEG_SHARED];
    T* xs = (T*)raw;
    const u32 t = blockIdx.x / groups;
    if (ld(seg + (u64)t * nrows) == ld(seg + (u64)(t + 1) * nrows)) return;
    const u64 base = (u64)t * width;
    const u32 w = (u32)(base + width <= ncols ? width : ncols - base);
    for (u32 c = threadIdx.x; c < w; c += blockDim.x) xs[c] = ld(x + base + c);
    __syncthreads();
    if constexpr (V == 1) segtile_rows_v<T, true>(nrows, t, blockIdx.x % groups, groups, seg, col, val, xs, y);
    else segtile_flat_rows<T>(nrows, t, blockIdx.x % groups, groups, seg, col, val, xs, y);
}
template <typename T> void run(const char* name, u32 NL, u32 LEN, u32 NC, u32 NUM, u32 DEN, u32 BL) {
  // row r: LEN entries at columns (NUM*i)/DEN + (r % 3) (sorted), values 1 + (i % 7) / 8, x_j = 1 + (j % 5) / 4
  const u32 width = 32768 / sizeof(T), ntiles = (NC + width - 1) / width;
  std::vector<std::vector<u32>> rc(NL); for (u32 r = 0; r < NL; ++r) { for (u64 i = 0; i < LEN; ++i) { u64 c = (u64)NUM * i / DEN + (r % 3); if (c < NC) rc[r].push_back((u32)c); } }
  std::vector<u32> seg((size_t)ntiles * NL + 1); std::vector<unsigned short> cl; std::vector<T> vl; std::vector<double> ref(NL, 0.0);
  for (u32 t = 0; t < ntiles; ++t) for (u32 r = 0; r < NL; ++r) {
    seg[(size_t)t * NL + r] = cl.size();
    auto lo = std::lower_bound(rc[r].begin(), rc[r].end(), t * width), hi = std::lower_bound(rc[r].begin(), rc[r].end(), (u64)(t + 1) * width);
    for (auto it = lo; it != hi; ++it) { size_t i = it - rc[r].begin(); T v = (T)(1 + (i % 7) / 8.0); cl.push_back((unsigned short)(*it - t * width)); vl.push_back(v); ref[r] += (double)v * (1 + (*it % 5) / 4.0); } }
  seg[(size_t)ntiles * NL] = cl.size();
  std::vector<T> hx(NC); for (u32 j = 0; j < NC; ++j) hx[j] = (T)(1 + (j % 5) / 4.0);
  u32* dseg; unsigned short* dcl; T *dvl, *x, *y;
  CK(cudaMalloc(&dseg, seg.size() * 4)); CK(cudaMalloc(&dcl, cl.size() * 2 + 64)); CK(cudaMalloc(&dvl, vl.size() * sizeof(T) + 64)); CK(cudaMalloc(&x, NC * sizeof(T))); CK(cudaMalloc(&y, NL * sizeof(T)));
  CK(cudaMemcpy(dseg, seg.data(), seg.size() * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(dcl, cl.data(), cl.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dvl, vl.data(), vl.size() * sizeof(T), cudaMemcpyHostToDevice)); CK(cudaMemcpy(x, hx.data(), NC * sizeof(T), cudaMemcpyHostToDevice));
  u32 per_sm = std::min<u32>(4, 2048 / BL), wave = 132 * per_sm, row_groups = (NL + BL / 32 - 1) / (BL / 32);
  u32 groups = std::max<u32>(1, std::min<u32>((wave + ntiles / 2) / ntiles, row_groups));
  cudaStream_t s; CK(cudaStreamCreate(&s)); cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  auto bench = [&](int which, u32 gr) {
    const int REP = 50; cudaGraph_t g; cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int it = 0; it < REP; ++it) { CK(cudaMemsetAsync(y, 0, NL * sizeof(T), s));
      if (which == 0) { if constexpr (sizeof(T) == 4) segtile_smem_f32<<<gr * ntiles, BL, 0, s>>>(NL, NC, width, gr, dseg, dcl, dvl, x, y); else segtile_smem_f64<<<gr * ntiles, BL, 0, s>>>(NL, NC, width, gr, dseg, dcl, dvl, x, y); }
      else if (which == 1) segtile_smem_variant<T, 1><<<gr * ntiles, BL, 0, s>>>(NL, NC, width, gr, dseg, dcl, dvl, x, y);
      else segtile_smem_variant<T, 2><<<gr * ntiles, BL, 0, s>>>(NL, NC, width, gr, dseg, dcl, dvl, x, y); }
    CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&ge, g, 0));
    std::vector<float> t; for (int k = 0; k < 14; ++k) { CK(cudaEventRecord(e0, s)); CK(cudaGraphLaunch(ge, s)); CK(cudaEventRecord(e1, s)); CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); t.push_back(ms * 1000.f / REP); }
    std::sort(t.begin() + 2, t.end()); CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g));
    std::vector<T> hy(NL); CK(cudaMemcpy(hy.data(), y, NL * sizeof(T), cudaMemcpyDeviceToHost));
    double err = 0; for (u32 r = 0; r < NL; ++r) err = std::max(err, std::abs((double)hy[r] - ref[r]) / std::max(1.0, std::abs(ref[r])));
    return std::make_pair(t[2 + (t.size() - 2) / 2], err);
  };
  auto o = bench(0, groups);
  double bytes = cl.size() * (2.0 + sizeof(T));
  u32 gn = std::max<u32>(1, (wave + ntiles / 2) / ntiles), gf = std::max<u32>(1, wave / ntiles);
  printf("%s %u rows x %u (%zu entries, %u tiles, %u thr): shipped (%u groups) %.1f us (%.0f GB/s, err %.1e)\n", name, NL, LEN, cl.size(), ntiles, BL, groups, o.first, bytes / o.first / 1e3, o.second);
  { auto v = bench(1, groups); printf("    vector loads, %u groups: %.1f us (%.0f GB/s, err %.1e): %.2fx\n", groups, v.first, bytes / v.first / 1e3, v.second, o.first / v.first); }
  for (u32 gr : {groups, gf, gn, 2 * gn}) { auto f = bench(2, gr); printf("    flat, %u groups: %.1f us (%.0f GB/s, err %.1e): %.2fx\n", gr, f.first, bytes / f.first / 1e3, f.second, o.first / f.first); }
  cudaFree(dseg); cudaFree(dcl); cudaFree(dvl); cudaFree(x); cudaFree(y);
}
int main() {
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0)); printf("%s\n", p.name);
  for (u32 bl : {256u, 512u}) {
    run<float>("f32", 50, 200000, 500000, 5, 2, bl); run<double>("f64", 50, 200000, 500000, 5, 2, bl);
    run<float>("f32", 200, 20000, 490000, 49, 2, bl); run<double>("f64", 200, 20000, 490000, 49, 2, bl);
    run<float>("f32", 2000, 2000, 490000, 245, 1, bl); run<double>("f64", 2000, 2000, 490000, 245, 1, bl);
  }
}
