// Prototype (docs/OPTIMIZER.md, session 21): a block of a few very long rows — cuSPARSE CSR
// against a column-ordered kernel that reads x in order and accumulates its rows in shared
// memory. On the device machine: nvcc -O3 -arch=sm_90 -o lr longrows.cu -lcusparse && ./lr
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

// The block's row accumulators in shared memory, zeroed.
template <typename T>
__device__ T* zeroed(int nrows) {
    extern __shared__ unsigned char smem[];
    T* acc = (T*)smem;
    for (int r = threadIdx.x; r < nrows; r += blockDim.x) acc[r] = 0;
    __syncthreads();
    return acc;
}

// Add the block's accumulators to y (one atomic per non-zero row).
template <typename T>
__device__ void flush(const T* acc, int nrows, T* y) {
    __syncthreads();
    for (int r = threadIdx.x; r < nrows; r += blockDim.x) {
        T v = acc[r];
        if (v != 0) atomicAdd(&y[r], v);
    }
}

template <typename T>
__global__ void csc_chunk(int nnz, int nrows, int per_cta, const T* __restrict__ val,
                          const unsigned* __restrict__ col, const unsigned short* __restrict__ row,
                          const T* __restrict__ x, T* __restrict__ y) {
    T* acc = zeroed<T>(nrows);
    int a = blockIdx.x * per_cta, b = min(nnz, a + per_cta);
    for (int i = a + threadIdx.x; i < b; i += blockDim.x) {
        atomicAdd(&acc[row[i]], val[i] * __ldg(&x[col[i]]));
    }
    flush(acc, nrows, y);
}

// Packed: (row << 16 | col - base[cta]) in one u32; base per CTA.
template <typename T>
__global__ void csc_packed(int nnz, int nrows, int per_cta, const T* __restrict__ val,
                           const unsigned* __restrict__ rc, const unsigned* __restrict__ base,
                           const T* __restrict__ x, T* __restrict__ y) {
    T* acc = zeroed<T>(nrows);
    int a = blockIdx.x * per_cta, b = min(nnz, a + per_cta);
    const T* xb = x + base[blockIdx.x];
    for (int i = a + threadIdx.x; i < b; i += blockDim.x) {
        unsigned p = rc[i];
        atomicAdd(&acc[p >> 16], val[i] * __ldg(&xb[p & 0xffff]));
    }
    flush(acc, nrows, y);
}

template <typename T>
struct Dt;
template <> struct Dt<float> { static constexpr cudaDataType t = CUDA_R_32F; };
template <> struct Dt<double> { static constexpr cudaDataType t = CUDA_R_64F; };

template <typename T>
void run(const char* name, int nrows, int ncols, int lmin, int lmax, unsigned seed) {
    std::mt19937_64 g(seed);
    std::vector<int> rp(nrows + 1, 0);
    std::vector<int> ci;
    std::vector<T> v;
    for (int r = 0; r < nrows; r++) {
        int len = lmin + (int)(g() % (unsigned)(lmax - lmin + 1));
        std::vector<int> c(len);
        for (auto& q : c) q = (int)(g() % (unsigned)ncols);
        std::sort(c.begin(), c.end());
        c.erase(std::unique(c.begin(), c.end()), c.end());
        for (int q : c) { ci.push_back(q); v.push_back((T)((g() % 1000) / 500.0 - 1.0)); }
        rp[r + 1] = (int)ci.size();
    }
    int nnz = (int)ci.size();
    std::vector<T> x(ncols);
    for (auto& q : x) q = (T)((g() % 1000) / 500.0 - 1.0);
    std::vector<double> ref(nrows, 0);
    for (int r = 0; r < nrows; r++) for (int k = rp[r]; k < rp[r + 1]; k++) ref[r] += (double)v[k] * x[ci[k]];
    // Column-sorted copy.
    std::vector<int> ord(nnz), rowof(nnz);
    for (int r = 0; r < nrows; r++) for (int k = rp[r]; k < rp[r + 1]; k++) rowof[k] = r;
    for (int i = 0; i < nnz; i++) ord[i] = i;
    std::sort(ord.begin(), ord.end(), [&](int a, int b) { return ci[a] != ci[b] ? ci[a] < ci[b] : rowof[a] < rowof[b]; });
    std::vector<T> sv(nnz); std::vector<unsigned> sc(nnz); std::vector<unsigned short> sr(nnz);
    for (int i = 0; i < nnz; i++) { sv[i] = v[ord[i]]; sc[i] = ci[ord[i]]; sr[i] = rowof[ord[i]]; }
    // Device.
    T *dv, *dx, *dy, *dsv; int *drp, *dci; unsigned *dsc; unsigned short* dsr;
    CK(cudaMalloc(&dv, nnz * sizeof(T))); CK(cudaMalloc(&dsv, nnz * sizeof(T)));
    CK(cudaMalloc(&dx, ncols * sizeof(T))); CK(cudaMalloc(&dy, nrows * sizeof(T)));
    CK(cudaMalloc(&drp, (nrows + 1) * 4)); CK(cudaMalloc(&dci, nnz * 4));
    CK(cudaMalloc(&dsc, nnz * 4)); CK(cudaMalloc(&dsr, nnz * 2));
    CK(cudaMemcpy(dv, v.data(), nnz * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dsv, sv.data(), nnz * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dx, x.data(), ncols * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(drp, rp.data(), (nrows + 1) * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dci, ci.data(), nnz * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dsc, sc.data(), nnz * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dsr, sr.data(), nnz * 2, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    std::vector<T> hy(nrows);
    auto check = [&](const char* what) {
        CK(cudaMemcpy(hy.data(), dy, nrows * sizeof(T), cudaMemcpyDeviceToHost));
        double num = 0, den = 0;
        for (int r = 0; r < nrows; r++) { num += (hy[r] - ref[r]) * (hy[r] - ref[r]); den += ref[r] * ref[r]; }
        double rel = sqrt(num / den);
        if (!(rel < (sizeof(T) == 4 ? 1e-4 : 1e-10))) printf("  %s WRONG rel %g\n", what, rel);
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
    // cuSPARSE CSR.
    cusparseHandle_t h; CS(cusparseCreate(&h));
    cusparseSpMatDescr_t A; cusparseDnVecDescr_t X, Y;
    CS(cusparseCreateCsr(&A, nrows, ncols, nnz, drp, dci, dv, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, Dt<T>::t));
    CS(cusparseCreateDnVec(&X, ncols, dx, Dt<T>::t)); CS(cusparseCreateDnVec(&Y, nrows, dy, Dt<T>::t));
    T one = 1, zero = 0;
    printf("%s %s: %d rows, %d cols, %d nnz; CSR bytes %.1f MB\n", name, sizeof(T) == 4 ? "f32" : "f64", nrows, ncols, nnz,
           (nnz * (4.0 + sizeof(T)) + ncols * sizeof(T)) / 1e6);
    for (auto alg : {CUSPARSE_SPMV_CSR_ALG1, CUSPARSE_SPMV_CSR_ALG2}) {
        size_t ws = 0; void* dws = nullptr;
        CS(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &zero, Y, Dt<T>::t, alg, &ws));
        if (ws) CK(cudaMalloc(&dws, ws));
        auto f = [&]() { cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &zero, Y, Dt<T>::t, alg, dws); };
        CK(cudaMemset(dy, 0xff, nrows * sizeof(T)));
        f(); CK(cudaDeviceSynchronize()); check("cusparse");
        printf("  cusparse-csr-alg%d %8.2f us\n", alg == CUSPARSE_SPMV_CSR_ALG1 ? 1 : 2, timeit(f));
    }
    int smem = nrows * sizeof(T);
    for (int threads : {256, 512, 1024}) for (int per : {4096, 8192, 16384, 32768}) {
        int grid = (nnz + per - 1) / per;
        auto f = [&]() {
            cudaMemsetAsync(dy, 0, nrows * sizeof(T));
            csc_chunk<T><<<grid, threads, smem>>>(nnz, nrows, per, dsv, dsc, dsr, dx, dy);
        };
        CK(cudaMemset(dy, 0xff, nrows * sizeof(T)));
        f(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize()); check("csc");
        printf("  csc-chunk t%d per%d grid %d  %8.2f us\n", threads, per, grid, timeit(f));
    }
    // Packed variant (only where every CTA's column span < 65536 and nrows < 65536).
    for (int per : {8192, 16384}) {
        int grid = (nnz + per - 1) / per;
        std::vector<unsigned> base(grid), rc(nnz);
        bool ok = true;
        for (int c = 0; c < grid; c++) {
            int a = c * per, b = std::min(nnz, a + per);
            base[c] = sc[a];
            if (sc[b - 1] - sc[a] > 65535) ok = false;
            for (int i = a; i < b; i++) rc[i] = ((unsigned)sr[i] << 16) | (sc[i] - sc[a]);
        }
        if (!ok) { printf("  packed per%d: span too wide\n", per); continue; }
        unsigned *drc, *db; CK(cudaMalloc(&drc, nnz * 4)); CK(cudaMalloc(&db, grid * 4));
        CK(cudaMemcpy(drc, rc.data(), nnz * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(db, base.data(), grid * 4, cudaMemcpyHostToDevice));
        auto f = [&]() {
            cudaMemsetAsync(dy, 0, nrows * sizeof(T));
            csc_packed<T><<<grid, 512, smem>>>(nnz, nrows, per, dsv, drc, db, dx, dy);
        };
        CK(cudaMemset(dy, 0xff, nrows * sizeof(T)));
        f(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize()); check("packed");
        printf("  csc-packed t512 per%d  %8.2f us (index bytes %.1f MB)\n", per, timeit(f), (nnz * 4.0 + grid * 4) / 1e6);
        cudaFree(drc); cudaFree(db);
    }
    // memset alone
    printf("  memset alone %8.2f us\n", timeit([&]() { cudaMemsetAsync(dy, 0, nrows * sizeof(T)); }));
    cusparseDestroy(h);
    cudaFree(dv); cudaFree(dsv); cudaFree(dx); cudaFree(dy); cudaFree(drp); cudaFree(dci); cudaFree(dsc); cudaFree(dsr);
}

int main() {
    run<float>("200 rows 5e3-4e4 / 490000", 200, 490000, 5000, 40000, 42);
    run<double>("200 rows 5e3-4e4 / 490000", 200, 490000, 5000, 40000, 42);
    run<float>("50 rows 2.5e5 / 500000", 50, 500000, 250000, 250000, 44);
    run<double>("50 rows 2.5e5 / 500000", 50, 500000, 250000, 250000, 44);
    run<float>("10000 rows 256 / 500000", 10000, 500000, 256, 256, 46);
    run<double>("10000 rows 256 / 500000", 10000, 500000, 256, 256, 46);
    run<float>("5000 rows 200-800 / 500000", 5000, 500000, 200, 800, 52);
    return 0;
}
