// Prototype (docs/OPTIMIZER.md, session 37): the shipped SEG-TILE kernel (kernels/segtile.cu,
// included as NVRTC compiles it, with kernels/common.cuh) beside the first prototype's
// shared-memory kernel (scripts/prototype/segtile.cu), at the same launch geometry: 256 / 512 /
// 1,024 threads and 1-16 groups of rows per tile. It found that a u32 index in the kernel's
// inner loop made it 1.2-1.8x slower than the prototype (fixed: the loop counts in signed 64
// bits), and it is the measurement behind the launcher's group rule (src/backend/cuda/prepared/
// own.rs). Each y checked against an f64 host reference; median of 7 x 50 launches, the memset
// of y included. (The recorded output, docs/h100/optimizer/session37/groups-h100.txt, predates
// the shipped kernel's interleaved row groups: a group then held consecutive rows, as the
// prototype's still does.)
// On the device machine, from this directory:
//   nvcc -O3 -arch=sm_90 -o sg segtile_groups.cu -lcusparse && ./sg
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <random>
#include <cmath>
#include <cuda_runtime.h>
#include <cusparse.h>
#include "../../kernels/common.cuh"
#include "../../kernels/segtile.cu"
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s line %d\n", cudaGetErrorString(e), __LINE__); exit(1);} } while (0)
#define CS(x) do { cusparseStatus_t e = (x); if (e != CUSPARSE_STATUS_SUCCESS) { printf("cuSPARSE %d line %d\n", (int)e, __LINE__); exit(1);} } while (0)

#include "segtile_proto.cuh"

template <typename T> struct Dt;
template <> struct Dt<float> { static constexpr cudaDataType t = CUDA_R_32F; };
template <> struct Dt<double> { static constexpr cudaDataType t = CUDA_R_64F; };


template <typename T>
void run(const char* name, int nrows, int ncols, int lmin, int lmax, unsigned seed, int W) {
    std::mt19937_64 g(seed);
    std::vector<long long> rp(nrows + 1, 0); std::vector<int> ci; std::vector<T> v;
    for (int r = 0; r < nrows; r++) {
        int len = lmin + (int)(g() % (unsigned)(lmax - lmin + 1));
        std::vector<int> c(len);
        for (auto& q : c) q = (int)(g() % (unsigned)ncols);
        std::sort(c.begin(), c.end()); c.erase(std::unique(c.begin(), c.end()), c.end());
        for (int q : c) { ci.push_back(q); v.push_back((T)((g() % 1000) / 500.0 - 1.0)); }
        rp[r + 1] = (long long)ci.size();
    }
    long long nnz = ci.size();
    std::vector<T> x(ncols); for (auto& q : x) q = (T)((g() % 1000) / 500.0 - 1.0);
    std::vector<double> ref(nrows, 0);
    for (int r = 0; r < nrows; r++) for (long long k = rp[r]; k < rp[r + 1]; k++) ref[r] += (double)v[k] * x[ci[k]];
    int nt = (ncols + W - 1) / W;
    std::vector<long long> seg((long long)nt * nrows + 1, 0);
    for (int r = 0; r < nrows; r++) for (long long k = rp[r]; k < rp[r + 1]; k++) seg[(long long)(ci[k] / W) * nrows + r + 1]++;
    for (size_t i = 1; i < seg.size(); i++) seg[i] += seg[i - 1];
    std::vector<long long> pos(seg.begin(), seg.end() - 1);
    std::vector<T> tv(nnz); std::vector<unsigned short> tc(nnz);
    for (int r = 0; r < nrows; r++) for (long long k = rp[r]; k < rp[r + 1]; k++) {
        long long p = pos[(long long)(ci[k] / W) * nrows + r]++; tv[p] = v[k]; tc[p] = (unsigned short)(ci[k] % W); }
    std::vector<unsigned> seg32(seg.begin(), seg.end());
    T *dx, *dy, *dtv; long long* dseg; unsigned* dseg32; unsigned short* dtc;
    CK(cudaMalloc(&dx, ncols * sizeof(T))); CK(cudaMalloc(&dy, nrows * sizeof(T)));
    CK(cudaMalloc(&dseg, seg.size() * 8)); CK(cudaMalloc(&dseg32, seg.size() * 4));
    CK(cudaMalloc(&dtv, nnz * sizeof(T))); CK(cudaMalloc(&dtc, nnz * 2));
    CK(cudaMemcpy(dx, x.data(), ncols * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dseg, seg.data(), seg.size() * 8, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dseg32, seg32.data(), seg.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dtv, tv.data(), nnz * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dtc, tc.data(), nnz * 2, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    std::vector<T> hy(nrows);
    auto check = [&]() {
        CK(cudaMemcpy(hy.data(), dy, nrows * sizeof(T), cudaMemcpyDeviceToHost));
        double num = 0, den = 0;
        for (int r = 0; r < nrows; r++) { num += (hy[r] - ref[r]) * (hy[r] - ref[r]); den += ref[r] * ref[r]; }
        return sqrt(num / den) < (sizeof(T) == 4 ? 1e-4 : 1e-10);
    };
    auto timeit = [&](auto&& f) {
        for (int i = 0; i < 20; i++) f();
        CK(cudaDeviceSynchronize());
        std::vector<float> ts;
        for (int rep = 0; rep < 7; rep++) {
            CK(cudaEventRecord(e0)); for (int i = 0; i < 50; i++) f();
            CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
            float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); ts.push_back(ms * 1000 / 50);
        }
        std::sort(ts.begin(), ts.end()); return ts[3];
    };
    printf("== %s %s W=%d (%d tiles) nnz %lld\n", name, sizeof(T) == 4 ? "f32" : "f64", W, nt, nnz);
    size_t sm = (size_t)W * sizeof(T);
    CK(cudaFuncSetAttribute(segtile_smem<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm));
    for (int th : {256, 512, 1024}) for (int groups : {1, 2, 4, 8, 16}) {
        int rpg = (nrows + groups - 1) / groups; int gr = (nrows + rpg - 1) / rpg;
        unsigned grid = gr * nt;
        auto fi = [&]() { cudaMemsetAsync(dy, 0, nrows * sizeof(T));
            if (sizeof(T) == 4) segtile_smem_f32<<<grid, th>>>(nrows, ncols, W, gr, dseg32, dtc, (const float*)dtv, (const float*)dx, (float*)dy);
            else segtile_smem_f64<<<grid, th>>>(nrows, ncols, W, gr, dseg32, dtc, (const double*)dtv, (const double*)dx, (double*)dy); };
        CK(cudaMemset(dy, 0xff, nrows * sizeof(T))); fi(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
        bool ok1 = check(); float t1 = timeit(fi);
        dim3 g2(gr, nt);
        auto fp = [&]() { cudaMemsetAsync(dy, 0, nrows * sizeof(T)); segtile_smem<T><<<g2, th, sm>>>(nrows, ncols, rpg, W, dseg, dtv, dtc, dx, dy); };
        CK(cudaMemset(dy, 0xff, nrows * sizeof(T))); fp(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
        bool ok2 = check(); float t2 = timeit(fp);
        printf("  th %4d groups %2d (rpg %4d, %5u CTAs): integrated %7.2f us%s | prototype %7.2f us%s\n", th, gr, rpg, grid, t1, ok1 ? "" : " WRONG", t2, ok2 ? "" : " WRONG");
    }
    cudaFree(dx); cudaFree(dy); cudaFree(dseg); cudaFree(dseg32); cudaFree(dtv); cudaFree(dtc);
}
int main() {
    run<float>("200 rows 5e3-4e4 / 490000", 200, 490000, 5000, 40000, 42, 8192);
    run<double>("200 rows 5e3-4e4 / 490000", 200, 490000, 5000, 40000, 42, 4096);
    run<float>("50 rows 2e5 / 500000", 50, 500000, 200000, 200000, 44, 8192);
    run<double>("50 rows 2e5 / 500000", 50, 500000, 200000, 200000, 44, 4096);
    return 0;
}
