// Prototype (docs/OPTIMIZER.md, session 37): a block of long rows stored as *column tiles of row
// segments*. The block's entries are ordered by (column tile, row, column); a thread block takes
// one tile and a group of rows, each warp sums one row's segment of that tile and adds it to y
// with one atomic. A thread block's gathers of x stay inside one tile of W columns, so they can
// hit the SM's L1 (or shared memory, variant `smem`) instead of the L2. Compared with cuSPARSE CSR
// (alg1, alg2) and with `split` (the same warps and atomics on fixed chunks of CSR order, no
// tiles: separates the tiles' locality from mere parallelism). Each y is checked against an f64
// host reference; times are the median of 7 × 50 launches (the memset of y included where the
// kernel needs it).
// On the device machine: nvcc -O3 -arch=sm_90 -o st segtile.cu -lcusparse && ./st
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <random>
#include <cmath>
#include <cuda_runtime.h>
#include <cusparse.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s line %d\n", cudaGetErrorString(e), __LINE__); exit(1);} } while (0)
#define CS(x) do { cusparseStatus_t e = (x); if (e != CUSPARSE_STATUS_SUCCESS) { printf("cuSPARSE %d line %d\n", (int)e, __LINE__); exit(1);} } while (0)

#include "segtile_proto.cuh"

template <typename T> struct Dt;
template <> struct Dt<float> { static constexpr cudaDataType t = CUDA_R_32F; };
template <> struct Dt<double> { static constexpr cudaDataType t = CUDA_R_64F; };

template <typename T>
void run(const char* name, int nrows, int ncols, int lmin, int lmax, unsigned seed) {
    std::mt19937_64 g(seed);
    std::vector<long long> rp(nrows + 1, 0);
    std::vector<int> ci;
    std::vector<T> v;
    for (int r = 0; r < nrows; r++) {
        int len = lmin + (int)(g() % (unsigned)(lmax - lmin + 1));
        std::vector<int> c(len);
        for (auto& q : c) q = (int)(g() % (unsigned)ncols);
        std::sort(c.begin(), c.end());
        c.erase(std::unique(c.begin(), c.end()), c.end());
        for (int q : c) { ci.push_back(q); v.push_back((T)((g() % 1000) / 500.0 - 1.0)); }
        rp[r + 1] = (long long)ci.size();
    }
    long long nnz = (long long)ci.size();
    std::vector<int> rp32(rp.begin(), rp.end());
    std::vector<T> x(ncols);
    for (auto& q : x) q = (T)((g() % 1000) / 500.0 - 1.0);
    std::vector<double> ref(nrows, 0);
    for (int r = 0; r < nrows; r++) for (long long k = rp[r]; k < rp[r + 1]; k++) ref[r] += (double)v[k] * x[ci[k]];
    T *dv, *dx, *dy; int *drp, *dci;
    CK(cudaMalloc(&dv, nnz * sizeof(T))); CK(cudaMalloc(&dx, ncols * sizeof(T))); CK(cudaMalloc(&dy, nrows * sizeof(T)));
    CK(cudaMalloc(&drp, (nrows + 1) * 4)); CK(cudaMalloc(&dci, nnz * 4));
    CK(cudaMemcpy(dv, v.data(), nnz * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dx, x.data(), ncols * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(drp, rp32.data(), (nrows + 1) * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dci, ci.data(), nnz * 4, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    std::vector<T> hy(nrows);
    auto check = [&](const char* what) {
        CK(cudaMemcpy(hy.data(), dy, nrows * sizeof(T), cudaMemcpyDeviceToHost));
        double num = 0, den = 0;
        for (int r = 0; r < nrows; r++) { num += (hy[r] - ref[r]) * (hy[r] - ref[r]); den += ref[r] * ref[r]; }
        double rel = sqrt(num / den);
        if (!(rel < (sizeof(T) == 4 ? 1e-4 : 1e-10))) { printf("  %s WRONG rel %g\n", what, rel); return false; }
        return true;
    };
    auto timeit = [&](auto&& f) {
        for (int i = 0; i < 20; i++) f();
        CK(cudaDeviceSynchronize());
        std::vector<float> ts;
        for (int rep = 0; rep < 7; rep++) {
            CK(cudaEventRecord(e0));
            for (int i = 0; i < 50; i++) f();
            CK(cudaEventRecord(e1)); CK(cudaEventSynchronize(e1));
            float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); ts.push_back(ms * 1000 / 50);
        }
        std::sort(ts.begin(), ts.end());
        return ts[3];
    };
    double csr_mb = (nnz * (4.0 + sizeof(T)) + ncols * sizeof(T) + nrows * sizeof(T)) / 1e6;
    printf("== %s %s: %d rows, %d cols, %lld nnz; CSR bytes %.1f MB\n", name, sizeof(T) == 4 ? "f32" : "f64", nrows,
           ncols, nnz, csr_mb);
    cusparseHandle_t h; CS(cusparseCreate(&h));
    cusparseSpMatDescr_t A; cusparseDnVecDescr_t X, Y;
    CS(cusparseCreateCsr(&A, nrows, ncols, nnz, drp, dci, dv, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, Dt<T>::t));
    CS(cusparseCreateDnVec(&X, ncols, dx, Dt<T>::t)); CS(cusparseCreateDnVec(&Y, nrows, dy, Dt<T>::t));
    T one = 1, zero = 0;
    float best_cus = 1e30f;
    for (auto alg : {CUSPARSE_SPMV_CSR_ALG1, CUSPARSE_SPMV_CSR_ALG2}) {
        size_t ws = 0; void* dws = nullptr;
        CS(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &zero, Y, Dt<T>::t, alg, &ws));
        if (ws) CK(cudaMalloc(&dws, ws));
        auto f = [&]() { cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &zero, Y, Dt<T>::t, alg, dws); };
        CK(cudaMemset(dy, 0xff, nrows * sizeof(T)));
        f(); CK(cudaDeviceSynchronize()); check("cusparse");
        float t = timeit(f); best_cus = std::min(best_cus, t);
        printf("  cusparse-csr-alg%d %8.2f us  %6.0f GB/s\n", alg == CUSPARSE_SPMV_CSR_ALG1 ? 1 : 2, t, csr_mb * 1e3 / t);
    }
    // split: chunks of S entries in CSR order.
    float best_split = 1e30f; int best_S = 0;
    for (int S : {256, 1024, 4096}) {
        std::vector<int> crow; std::vector<long long> cb, ce;
        for (int r = 0; r < nrows; r++)
            for (long long a = rp[r]; a < rp[r + 1]; a += S) { crow.push_back(r); cb.push_back(a); ce.push_back(std::min(rp[r + 1], a + S)); }
        int nc = (int)crow.size();
        int* dcr; long long *dcb, *dce;
        CK(cudaMalloc(&dcr, nc * 4)); CK(cudaMalloc(&dcb, nc * 8)); CK(cudaMalloc(&dce, nc * 8));
        CK(cudaMemcpy(dcr, crow.data(), nc * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dcb, cb.data(), nc * 8, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dce, ce.data(), nc * 8, cudaMemcpyHostToDevice));
        int grid = (nc * 32 + 255) / 256;
        auto f = [&]() { cudaMemsetAsync(dy, 0, nrows * sizeof(T)); split<T><<<grid, 256>>>(nc, dcr, dcb, dce, dv, dci, dx, dy); };
        CK(cudaMemset(dy, 0xff, nrows * sizeof(T)));
        f(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
        if (check("split")) { float t = timeit(f); if (t < best_split) { best_split = t; best_S = S; } }
        cudaFree(dcr); cudaFree(dcb); cudaFree(dce);
    }
    printf("  split (best S=%d)  %8.2f us  %6.0f GB/s\n", best_S, best_split, csr_mb * 1e3 / best_split);
    // Tiles.
    for (int W : {4096, 8192, 16384, 32768, 65536}) {
        int nt = (ncols + W - 1) / W;
        std::vector<long long> seg((long long)nt * nrows + 1, 0);
        for (int r = 0; r < nrows; r++) for (long long k = rp[r]; k < rp[r + 1]; k++) seg[(long long)(ci[k] / W) * nrows + r + 1]++;
        for (size_t i = 1; i < seg.size(); i++) seg[i] += seg[i - 1];
        std::vector<long long> pos(seg.begin(), seg.end() - 1);
        std::vector<T> tv(nnz); std::vector<unsigned short> tc(nnz);
        for (int r = 0; r < nrows; r++) for (long long k = rp[r]; k < rp[r + 1]; k++) {
            long long p = pos[(long long)(ci[k] / W) * nrows + r]++;
            tv[p] = v[k]; tc[p] = (unsigned short)(ci[k] % W);
        }
        long long* dseg; T* dtv; unsigned short* dtc;
        CK(cudaMalloc(&dseg, seg.size() * 8)); CK(cudaMalloc(&dtv, nnz * sizeof(T))); CK(cudaMalloc(&dtc, nnz * 2));
        CK(cudaMemcpy(dseg, seg.data(), seg.size() * 8, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dtv, tv.data(), nnz * sizeof(T), cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dtc, tc.data(), nnz * 2, cudaMemcpyHostToDevice));
        double tile_mb = (nnz * (2.0 + sizeof(T)) + seg.size() * 8.0 + ncols * sizeof(T) + nrows * sizeof(T)) / 1e6;
        float best = 1e30f; int bR = 0, bth = 0; float best_s = 1e30f; int sR = 0;
        for (int th : {256, 512}) for (int R : {4, 16, 64, 256}) {
            if (R > 4 * nrows) continue;
            dim3 grid((nrows + R - 1) / R, nt);
            auto f = [&]() { cudaMemsetAsync(dy, 0, nrows * sizeof(T)); segtile<T><<<grid, th>>>(nrows, R, W, dseg, dtv, dtc, dx, dy); };
            CK(cudaMemset(dy, 0xff, nrows * sizeof(T)));
            f(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
            if (!check("segtile")) continue;
            float t = timeit(f);
            if (t < best) { best = t; bR = R; bth = th; }
        }
        size_t sm = (size_t)W * sizeof(T);
        if (sm <= 200 * 1024) {
            CK(cudaFuncSetAttribute(segtile_smem<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm));
            for (int R : {16, 64, 256, 1024}) {
                if (R > 4 * nrows) continue;
                dim3 grid((nrows + R - 1) / R, nt);
                auto f = [&]() { cudaMemsetAsync(dy, 0, nrows * sizeof(T)); segtile_smem<T><<<grid, 1024, sm>>>(nrows, ncols, R, W, dseg, dtv, dtc, dx, dy); };
                CK(cudaMemset(dy, 0xff, nrows * sizeof(T)));
                f(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
                if (!check("segtile_smem")) continue;
                float t = timeit(f);
                if (t < best_s) { best_s = t; sR = R; }
            }
        }
        printf("  segtile W=%5d (%d tiles, %.1f MB): L1 %8.2f us (R=%d, %d thr) %6.0f GB/s %.2fx cus | smem %8.2f us (R=%d) %.2fx cus\n",
               W, nt, tile_mb, best, bR, bth, tile_mb * 1e3 / best, best_cus / best, best_s, sR, best_cus / best_s);
        cudaFree(dseg); cudaFree(dtv); cudaFree(dtc);
    }
    printf("  memset alone %8.2f us\n", timeit([&]() { cudaMemsetAsync(dy, 0, nrows * sizeof(T)); }));
    cusparseDestroy(h);
    cudaFree(dv); cudaFree(dx); cudaFree(dy); cudaFree(drp); cudaFree(dci);
}

int main() {
    run<float>("200 rows 5e3-4e4 / 490000", 200, 490000, 5000, 40000, 42);
    run<double>("200 rows 5e3-4e4 / 490000", 200, 490000, 5000, 40000, 42);
    run<float>("50 rows 2e5 / 500000", 50, 500000, 200000, 200000, 44);
    run<double>("50 rows 2e5 / 500000", 50, 500000, 200000, 200000, 44);
    run<float>("10000 rows 256 / 500000", 10000, 500000, 256, 256, 46);
    run<double>("10000 rows 256 / 500000", 10000, 500000, 256, 256, 46);
    run<float>("5000 rows 200-800 / 500000", 5000, 500000, 200, 800, 52);
    run<double>("5000 rows 200-800 / 500000", 5000, 500000, 200, 800, 52);
    run<float>("20000 rows 1000 / 2000000", 20000, 2000000, 1000, 1000, 7);
    run<double>("20000 rows 1000 / 2000000", 20000, 2000000, 1000, 1000, 7);
    return 0;
}
