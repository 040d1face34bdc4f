// Session 40: why cuSPARSE's SELL runs 1.7-2.3x faster than our SELL-C-sigma at the median of seed
// 14 (docs/ACCURACY.md, session 40) although `cusparse-sell` is given our own slices (C = 32,
// sigma = 1, padding column -1). Times, on the same arrays (C = 32, sigma = 1): the shipped
// kernel (kernels/sell.cu, #included: one thread per row, a warp per slice walking its width),
// cuSPARSE's SELL ALG1, and a split variant: a slice's width cut into chunks of K steps, a warp per
// (slice, chunk), lane sums added to y with atomics (y zeroed in the timed run), with the padding
// test as a branch or as a select (padding value 0, column 0). y checked against an f64 host sum.
//   nvcc -O3 -arch=sm_90 -std=c++17 sell_split.cu -lcusparse -o sell_split && ./sell_split
// It #includes the shipped kernel of its time: build it at commit af4abdb (session 40). Session 41
// shipped the split (kernels/sell.cu), which changed sell_f32/sell_f64's arguments.
#include <cuda_runtime.h>
#include <cusparse.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include "../../kernels/common.cuh"
#include "../../kernels/sell.cu"
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1); } } while (0)
#define CS(x) do { cusparseStatus_t e = (x); if (e != CUSPARSE_STATUS_SUCCESS) { printf("%s:%d cusparse %d\n", __FILE__, __LINE__, (int)e); exit(1); } } while (0)

template <typename T, bool SELECT>
__global__ void __launch_bounds__(1024, 2) sell_split(u32 nunits, const u32* __restrict__ unit, u32 K, u32 nrows,
    const u32* __restrict__ slice_ptr, const u32* __restrict__ slice_width, const u32* __restrict__ col,
    const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y) {
    const u64 wid = global_thread() / 32;
    const u32 lane = threadIdx.x % 32;
    if (wid >= nunits) return;
    const u32 s = ld(unit + 2 * wid), k0 = ld(unit + 2 * wid + 1);
    const u32 w = ld(slice_width + s);
    const u32 k1 = min(w, k0 + K);
    const u64 base = (u64)ld(slice_ptr + s) + lane;
    T sum = 0;
#pragma unroll 4
    for (u32 k = k0; k < k1; ++k) {
        const u64 idx = base + (u64)k * 32;
        const u32 c = ld(col + idx);
        if (SELECT) {
            sum += ld(val + idx) * ld(x + (c == SC_PAD ? 0 : c));
        } else if (c != SC_PAD) {
            sum += ld(val + idx) * ld(x + c);
        }
    }
    const u64 row = (u64)s * 32 + lane;
    if (row < nrows) atomicAdd(y + row, sum);
}

struct Csr { u32 n, m; std::vector<u32> ptr, col; };

static Csr from_lengths(u32 m, const std::vector<u32>& len, std::mt19937_64& g) {
    Csr a; a.n = len.size(); a.m = m; a.ptr.push_back(0);
    for (u32 r = 0; r < a.n; ++r) {
        std::vector<u32> c(len[r]);
        for (auto& v : c) v = g() % m;
        std::sort(c.begin(), c.end()); c.erase(std::unique(c.begin(), c.end()), c.end());
        a.col.insert(a.col.end(), c.begin(), c.end()); a.ptr.push_back(a.col.size());
    }
    return a;
}

template <typename T> void run(const char* name, const Csr& a) {
    const u32 C = 32, ns = (a.n + C - 1) / C;
    std::vector<u32> sptr(ns + 1, 0), sw(ns, 0);
    for (u32 s = 0; s < ns; ++s) { u32 w = 0; for (u32 r = s * C; r < std::min(a.n, (s + 1) * C); ++r) w = std::max(w, a.ptr[r + 1] - a.ptr[r]); sw[s] = w; sptr[s + 1] = sptr[s] + w * C; }
    const u64 stored = sptr[ns];
    std::vector<u32> col(stored, SC_PAD); std::vector<T> val(stored, 0), x(a.m); std::vector<u32> perm(a.n);
    for (u32 j = 0; j < a.m; ++j) x[j] = (T)(1 + (j % 7) / 8.0);
    std::vector<double> ref(a.n, 0.0);
    for (u32 r = 0; r < a.n; ++r) { perm[r] = r; u32 s = r / C, l = r % C;
        for (u32 i = a.ptr[r], k = 0; i < a.ptr[r + 1]; ++i, ++k) { u64 idx = sptr[s] + (u64)k * C + l; T v = (T)(1 + (i % 5) / 4.0); col[idx] = a.col[i]; val[idx] = v; ref[r] += (double)v * x[a.col[i]]; } }
    u32 *dptr, *dw, *dperm, *dcol; T *dval, *dx, *dy;
    CK(cudaMalloc(&dptr, (ns + 1) * 4)); CK(cudaMalloc(&dw, ns * 4)); CK(cudaMalloc(&dperm, a.n * 4)); CK(cudaMalloc(&dcol, stored * 4));
    CK(cudaMalloc(&dval, stored * sizeof(T))); CK(cudaMalloc(&dx, a.m * sizeof(T))); CK(cudaMalloc(&dy, a.n * sizeof(T)));
    CK(cudaMemcpy(dptr, sptr.data(), (ns + 1) * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(dw, sw.data(), ns * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dperm, perm.data(), a.n * 4, cudaMemcpyHostToDevice)); CK(cudaMemcpy(dcol, col.data(), stored * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dval, val.data(), stored * sizeof(T), cudaMemcpyHostToDevice)); CK(cudaMemcpy(dx, x.data(), a.m * sizeof(T), cudaMemcpyHostToDevice));
    cudaStream_t st; CK(cudaStreamCreate(&st)); cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    auto check = [&]() { std::vector<T> hy(a.n); CK(cudaMemcpy(hy.data(), dy, a.n * sizeof(T), cudaMemcpyDeviceToHost)); double err = 0;
        for (u32 r = 0; r < a.n; ++r) err = std::max(err, std::abs((double)hy[r] - ref[r]) / std::max(1.0, std::abs(ref[r]))); return err; };
    auto bench = [&](auto launch) { const int REP = 20; cudaGraph_t g; cudaGraphExec_t ge;
        CK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal)); for (int i = 0; i < REP; ++i) launch(); CK(cudaStreamEndCapture(st, &g));
        CK(cudaGraphInstantiate(&ge, g, 0)); std::vector<float> t;
        for (int k = 0; k < 12; ++k) { CK(cudaEventRecord(e0, st)); CK(cudaGraphLaunch(ge, st)); CK(cudaEventRecord(e1, st)); CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); t.push_back(ms * 1000.f / REP); }
        std::sort(t.begin() + 2, t.end()); CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g)); return (double)t[2 + (t.size() - 2) / 2]; };
    const u32 block = 256;
    double ts = bench([&] { if constexpr (sizeof(T) == 4) sell_f32<<<(a.n + block - 1) / block, block, 0, st>>>(a.n, C, dptr, dw, dperm, dcol, dval, dx, dy);
                            else sell_f64<<<(a.n + block - 1) / block, block, 0, st>>>(a.n, C, dptr, dw, dperm, dcol, dval, dx, dy); });
    double es = check();
    // cuSPARSE SELL ALG1 on the same arrays.
    cusparseHandle_t h; CS(cusparseCreate(&h)); CS(cusparseSetStream(h, st));
    cusparseConstSpMatDescr_t A; cusparseConstDnVecDescr_t X; cusparseDnVecDescr_t Y; cudaDataType dt = sizeof(T) == 4 ? CUDA_R_32F : CUDA_R_64F;
    CS(cusparseCreateConstSlicedEll(&A, a.n, a.m, a.col.size(), stored, C, dptr, dcol, dval, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, dt));
    CS(cusparseCreateConstDnVec(&X, a.m, dx, dt)); CS(cusparseCreateDnVec(&Y, a.n, dy, dt));
    T one = 1, zero = 0; size_t bs = 0; void* buf = nullptr;
    CS(cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &zero, Y, dt, CUSPARSE_SPMV_SELL_ALG1, &bs)); CK(cudaMalloc(&buf, bs + 16));
    double tc = bench([&] { CS(cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, A, X, &zero, Y, dt, CUSPARSE_SPMV_SELL_ALG1, buf)); });
    double ec = check();
    u32 wmax = *std::max_element(sw.begin(), sw.end());
    printf("%s %s: %u rows, %zu nnz, %llu stored, widest slice %u; shipped sell %.1f us (err %.0e); cusparse-sell %.1f us (err %.0e): %.2fx\n",
           name, sizeof(T) == 4 ? "f32" : "f64", a.n, a.col.size(), (unsigned long long)stored, wmax, ts, es, tc, ec, ts / tc);
    for (u32 K : {32u, 128u, 512u, 1u << 30}) {
        std::vector<u32> unit; for (u32 s = 0; s < ns; ++s) for (u32 k0 = 0; k0 < std::max(1u, sw[s]); k0 += K) { unit.push_back(s); unit.push_back(k0); }
        u32 nu = unit.size() / 2, *du; CK(cudaMalloc(&du, unit.size() * 4)); CK(cudaMemcpy(du, unit.data(), unit.size() * 4, cudaMemcpyHostToDevice));
        u32 grid = (u32)(((u64)nu * 32 + block - 1) / block);
        for (int sel = 0; sel < 2; ++sel) {
            double t = bench([&] { CK(cudaMemsetAsync(dy, 0, a.n * sizeof(T), st));
                if (sel) sell_split<T, true><<<grid, block, 0, st>>>(nu, du, K, a.n, dptr, dw, dcol, dval, dx, dy);
                else sell_split<T, false><<<grid, block, 0, st>>>(nu, du, K, a.n, dptr, dw, dcol, dval, dx, dy); });
            double e = check();
            printf("    split K=%-10u %s: %u warps, %.1f us (err %.0e): %.2fx the shipped, %.2fx cuSPARSE\n", K, sel ? "select" : "branch", nu, t, e, ts / t, tc / t);
        }
        cudaFree(du);
    }
    cusparseDestroySpMat(A); cusparseDestroyDnVec(X); cusparseDestroyDnVec(Y); cusparseDestroy(h); cudaFree(buf);
    cudaFree(dptr); cudaFree(dw); cudaFree(dperm); cudaFree(dcol); cudaFree(dval); cudaFree(dx); cudaFree(dy);
}

int main() {
    cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0)); printf("%s\n", p.name);
    std::mt19937_64 g(40);
    std::vector<Csr> ms; std::vector<const char*> names;
    { std::vector<u32> len(64166); for (auto& l : len) l = 102 + g() % 227; ms.push_back(from_lengths(64166, len, g)); names.push_back("random 102-328"); }
    { std::vector<u32> len(400000, 5); for (u32 i = 0; i < 100; ++i) len.push_back(20000); ms.push_back(from_lengths(400000, len, g)); names.push_back("stack 4e5x5 + 100x2e4"); }
    { std::vector<u32> len(200000); std::uniform_real_distribution<double> u(1e-9, 1.0);
      for (auto& l : len) l = std::min(20000u, (u32)(2.0 / std::pow(u(g), 1.0 / 1.1))); ms.push_back(from_lengths(200000, len, g)); names.push_back("power law 2e5"); }
    { std::vector<u32> len(1000000, 5); ms.push_back(from_lengths(1000000, len, g)); names.push_back("random 1e6x5"); }
    for (size_t i = 0; i < ms.size(); ++i) { run<float>(names[i], ms[i]); run<double>(names[i], ms[i]); }
}
