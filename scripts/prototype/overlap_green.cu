// Session 39 experiment (scripts/prototype; nvcc -O3 -arch=sm_90 -std=c++17 overlap_green.cu -lcuda): a plan's two blocks on disjoint green-context partitions of the H100.
// A = 1.5e6 rows x 3 random entries (ELL as kernels/ell.cu), L = 50 rows x 2e5 sorted entries
// (SEG-TILE, the product's kernels/segtile.cu, tiles of 32 KB of x, row groups as
// the launcher picks them but never more than one wave of the partition). x = 1 and values 1, so
// every y is checked against its known sum.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include "../../kernels/common.cuh"
#include "../../kernels/ell.cu"
#include "../../kernels/segtile.cu"
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)
#define DK(x) do { CUresult e = (x); if (e != CUDA_SUCCESS) { const char* s; cuGetErrorString(e, &s); printf("%s:%d %s\n", __FILE__, __LINE__, s); exit(1);} } while (0)
static u64 hmix(u64 z){ z+=0x9E3779B97F4A7C15ull; z=(z^(z>>30))*0xBF58476D1CE4E5B9ull; z=(z^(z>>27))*0x94D049BB133111EBull; return z^(z>>31);}
template <typename T> void run(const char* name, cudaStream_t* gs, int ngs, const char** gname, const int* lsms) {
  const u32 NA = 1500000, W = 3, NC = 500000, NL = 50, LEN = 200000;
  // A in ELL (column-major)
  std::vector<u32> ca((size_t)NA * W); std::vector<T> va((size_t)NA * W, (T)1);
  for (size_t i = 0; i < ca.size(); ++i) ca[i] = hmix(i) % NC;
  // L in SEG-TILE: row r's entries at columns 5i/2 (sorted), tiles of width columns
  const u32 width = 32768 / sizeof(T), ntiles = (NC + width - 1) / width;
  std::vector<u32> seg((size_t)ntiles * NL + 1); std::vector<unsigned short> cl; std::vector<T> vl;
  cl.reserve((size_t)NL * LEN); vl.reserve((size_t)NL * LEN);
  for (u32 t = 0; t < ntiles; ++t) for (u32 r = 0; r < NL; ++r) {
    seg[(size_t)t * NL + r] = cl.size();
    u64 a = ((u64)t * width * 2 + 4) / 5, b = std::min<u64>(LEN, ((u64)(t + 1) * width * 2 + 4) / 5);
    for (u64 i = a; i < b; ++i) { cl.push_back((unsigned short)(i * 5 / 2 - (u64)t * width)); vl.push_back((T)1); } }
  seg[(size_t)ntiles * NL] = cl.size();
  u32 *dca, *dseg; unsigned short* dcl; T *dva, *dvl, *x, *y, *yl;
  CK(cudaMalloc(&dca, ca.size() * 4)); CK(cudaMalloc(&dva, va.size() * sizeof(T))); CK(cudaMalloc(&dseg, seg.size() * 4));
  CK(cudaMalloc(&dcl, cl.size() * 2)); CK(cudaMalloc(&dvl, vl.size() * sizeof(T))); CK(cudaMalloc(&x, NC * sizeof(T))); CK(cudaMalloc(&y, (NA + NL) * sizeof(T))); yl = y + NA;
  CK(cudaMemcpy(dca, ca.data(), ca.size() * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(dva, va.data(), va.size() * sizeof(T), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dseg, seg.data(), seg.size() * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(dcl, cl.data(), cl.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dvl, vl.data(), vl.size() * sizeof(T), cudaMemcpyHostToDevice));
  std::vector<T> hx(NC, (T)1); CK(cudaMemcpy(x, hx.data(), NC * sizeof(T), cudaMemcpyHostToDevice));
  const u32 BA = 128, BL = 512; const u32 gA = (NA + BA - 1) / BA;
  cudaStream_t m0, m1; CK(cudaStreamCreateWithFlags(&m0, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&m1, cudaStreamNonBlocking));
  cudaEvent_t e0, e1, f, j0, j1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  CK(cudaEventCreateWithFlags(&f, cudaEventDisableTiming)); CK(cudaEventCreateWithFlags(&j0, cudaEventDisableTiming)); CK(cudaEventCreateWithFlags(&j1, cudaEventDisableTiming));
  // mode: 0 A only, 1 L only, 2 both; sa / sl: the streams of A and L (== m0: serial); smsL: SMs that L's groups are sized for
  auto bench = [&](int mode, cudaStream_t sa, cudaStream_t sl, int smsL) {
    u32 per_sm = 2048 / BL; if (per_sm > 4) per_sm = 4; u32 wave = smsL * per_sm;
    u32 groups = std::max<u32>(1, std::min<u32>(wave / ntiles, (NL + 15) / 16));  // one wave at most
    std::vector<float> t;
    for (int k = 0; k < 14; ++k) {
      const int REP = 40;
      CK(cudaEventRecord(e0, m0));
      for (int it = 0; it < REP; ++it) {
        CK(cudaEventRecord(f, m0));
        if (sa != m0) CK(cudaStreamWaitEvent(sa, f)); if (sl != m0 && sl != sa) CK(cudaStreamWaitEvent(sl, f));
        if (mode != 0) CK(cudaMemsetAsync(yl, 0, NL * sizeof(T), sl));
        if (mode != 1) { if constexpr (sizeof(T) == 4) ell_f32<<<gA, BA, 0, sa>>>(NA, W, dca, dva, x, y); else ell_f64<<<gA, BA, 0, sa>>>(NA, W, dca, dva, x, y); }
        if (mode != 0) { if constexpr (sizeof(T) == 4) segtile_smem_f32<<<groups * ntiles, BL, 0, sl>>>(NL, NC, width, groups, dseg, dcl, dvl, x, yl);
                         else segtile_smem_f64<<<groups * ntiles, BL, 0, sl>>>(NL, NC, width, groups, dseg, dcl, dvl, x, yl); }
        if (sa != m0) { CK(cudaEventRecord(j0, sa)); CK(cudaStreamWaitEvent(m0, j0)); }
        if (sl != m0 && sl != sa) { CK(cudaEventRecord(j1, sl)); CK(cudaStreamWaitEvent(m0, j1)); }
      }
      CK(cudaEventRecord(e1, m0)); CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); t.push_back(ms * 1000.f / REP);
    }
    std::sort(t.begin() + 2, t.end()); return t[2 + (t.size() - 2) / 2];
  };
  printf("%s (SEG-TILE width %u, %u tiles, %zu entries)\n", name, width, ntiles, cl.size());
  float a = bench(0, m0, m0, 132), l = bench(1, m0, m0, 132), se = bench(2, m0, m0, 132), co = bench(2, m0, m1, 132);
  std::vector<T> hy(NA + NL); CK(cudaMemcpy(hy.data(), y, (NA + NL) * sizeof(T), cudaMemcpyDeviceToHost));
  printf("  full GPU: A %.1f us, L %.1f us, serial %.1f, two streams %.1f   (check y[0]=%g want 3, y[NA]=%g want %u)\n", a, l, se, co, (double)hy[0], (double)hy[NA], LEN);
  for (int i = 0; i + 1 < ngs; i += 2) {
    CK(cudaMemset(y, 0, (NA + NL) * sizeof(T)));
    float aa = bench(0, gs[i], gs[i], 132), ll = bench(1, gs[i + 1], gs[i + 1], lsms[i / 2]), cc = bench(2, gs[i], gs[i + 1], lsms[i / 2]);
    float cc2 = bench(2, gs[i + 1], gs[i], 132 - lsms[i / 2]);
    CK(cudaMemcpy(hy.data(), y, (NA + NL) * sizeof(T), cudaMemcpyDeviceToHost));
    printf("  %s: A %.1f on its part, L %.1f on its part, both at once %.1f (%.2fx of serial, %.2fx of two streams); swapped parts %.1f  (check %g %g)\n", gname[i / 2], aa, ll, cc, se / cc, co / cc, cc2, (double)hy[0], (double)hy[NA]);
  }
  cudaFree(dca); cudaFree(dva); cudaFree(dseg); cudaFree(dcl); cudaFree(dvl); cudaFree(x); cudaFree(y);
}
int main() {
  CK(cudaFree(0)); DK(cuInit(0)); CUdevice dev; DK(cuDeviceGet(&dev, 0));
  CUdevResource sm; DK(cuDeviceGetDevResource(dev, &sm, CU_DEV_RESOURCE_TYPE_SM));
  printf("SMs %u\n", sm.sm.smCount);
  // splits: (64, 64), (72, 56), (80, 48)
  int sizes[4][2] = {{64, 56}, {56, 64}, {48, 72}, {40, 80}}; const char* names[4] = {"A on 64 SMs | L on 56", "A on 56 | L on 64", "A on 48 | L on 72", "A on 40 | L on 80"};
  std::vector<cudaStream_t> gs;
  CUdevResource g8[16], rest; unsigned n8 = 16; DK(cuDevSmResourceSplitByCount(g8, &n8, &sm, &rest, 0, 8));
  printf("%u groups of %u SMs (rest %u)\n", n8, g8[0].sm.smCount, rest.sm.smCount);
  for (auto& s : sizes) {
    int k1 = s[0] / 8, k2 = s[1] / 8;
    CUdevResource* parts[2] = {&g8[0], &g8[k1]}; int counts[2] = {k1, k2};
    for (int p = 0; p < 2; ++p) {
      CUdevResourceDesc d; DK(cuDevResourceGenerateDesc(&d, parts[p], counts[p])); CUgreenCtx g; DK(cuGreenCtxCreate(&g, d, dev, CU_GREEN_CTX_DEFAULT_STREAM));
      CUdevResource got; DK(cuGreenCtxGetDevResource(g, &got, CU_DEV_RESOURCE_TYPE_SM)); printf("  green context of %u SMs\n", got.sm.smCount);
      CUstream st; DK(cuGreenCtxStreamCreate(&st, g, CU_STREAM_NON_BLOCKING, 0)); gs.push_back((cudaStream_t)st);
    }
  }
  int lsms[4] = {56, 64, 72, 80}; run<float>("f32", gs.data(), gs.size(), names, lsms); run<double>("f64", gs.data(), gs.size(), names, lsms);
}
