// Session 39 experiment (nvcc -O3 -arch=sm_90 overlap_gridcap.cu): do two row blocks of one SpMV overlap when their kernels are confined
// to a share of the GPU (grid-capped, grid-stride loops)?  A = 1.5e6 rows of 3 random entries
// (ELL, one thread per row), L = 50 rows of 2e5 sorted entries (a block per row and tile of x in
// shared memory, one atomic per block: a stand-in for SEG-TILE that runs 59–66 µs where SEG-TILE
// takes 35–45). Both sets of y are checked against their known sums (x = 1, values 1).
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)
typedef unsigned long long u64;
__host__ __device__ inline u64 mix(u64 z){ z+=0x9E3779B97F4A7C15ull; z=(z^(z>>30))*0xBF58476D1CE4E5B9ull; z=(z^(z>>27))*0x94D049BB133111EBull; return z^(z>>31);}
template <typename T> __global__ void fill_ell(unsigned n, unsigned w, unsigned ncols, unsigned* col, T* val){
  for (u64 i = blockIdx.x*(u64)blockDim.x+threadIdx.x; i < (u64)n*w; i += (u64)gridDim.x*blockDim.x){ col[i] = mix(i) % ncols; val[i] = (T)1; } }
template <typename T> __global__ void fill_long(u64 nnz, unsigned ncols, unsigned* col, T* val){
  for (u64 i = blockIdx.x*(u64)blockDim.x+threadIdx.x; i < nnz; i += (u64)gridDim.x*blockDim.x){ col[i] = (unsigned)(((i % 200000ull) * 5) / 2); val[i] = (T)1; } }
template <typename T> __global__ void ell(unsigned n, unsigned w, const unsigned* __restrict__ col, const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y){
  for (u64 r = blockIdx.x*(u64)blockDim.x+threadIdx.x; r < n; r += (u64)gridDim.x*blockDim.x){
    T s = 0;
    for (unsigned k = 0; k < w; ++k){ u64 i = (u64)k*n + r; s += __ldg(val+i) * __ldg(x + __ldg(col+i)); }
    y[r] = s; } }
// rows of equal length len with sorted columns col_i = (5 i) / 2; one block per (row, tile of TW
// columns): x's tile staged in shared memory, the row's entries of the tile summed, one atomic.
#define TW 4096
template <typename T> __global__ void seg(unsigned nrows, unsigned len, const unsigned* __restrict__ col, const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y){
  const unsigned ntiles = (unsigned)(((u64)len * 5 / 2 + TW - 1) / TW); const u64 nb = (u64)nrows * ntiles;
  __shared__ T xs[TW]; __shared__ T part[32];
  for (u64 c = blockIdx.x; c < nb; c += gridDim.x){
    unsigned r = c / ntiles, t = c % ntiles;
    u64 a = ((u64)t * TW * 2 + 4) / 5, b = min((u64)len, ((u64)(t + 1) * TW * 2 + 4) / 5);   // first i with 5i/2 >= tile start
    for (unsigned k = threadIdx.x; k < TW; k += blockDim.x) xs[k] = __ldg(x + min((u64)t * TW + k, (u64)499999));
    __syncthreads();
    T sum = 0; const u64 base = (u64)r * len;
    for (u64 i = a + threadIdx.x; i < b; i += blockDim.x) sum += __ldg(val + base + i) * xs[__ldg(col + base + i) - t * TW];
    for (int o = 16; o; o >>= 1) sum += __shfl_down_sync(0xffffffffu, sum, o);
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = sum;
    __syncthreads();
    if (threadIdx.x < 32) { T v = threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : 0;
      for (int o = 16; o; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
      if (threadIdx.x == 0) atomicAdd(y + r, v); }
    __syncthreads(); } }
template <typename T> void run(const char* name){
  const unsigned NA = 1500000, W = 3, NC = 500000, NL = 50, LEN = 200000; const u64 NNZL = (u64)NL*LEN;
  unsigned *ca, *cl; T *va, *vl, *x, *y, *yl;
  CK(cudaMalloc(&ca, (u64)NA*W*4)); CK(cudaMalloc(&va, (u64)NA*W*sizeof(T))); CK(cudaMalloc(&cl, NNZL*4)); CK(cudaMalloc(&vl, NNZL*sizeof(T)));
  CK(cudaMalloc(&x, NC*sizeof(T))); CK(cudaMalloc(&y, (NA+NL)*sizeof(T))); yl = y + NA;
  fill_ell<T><<<1024,256>>>(NA, W, NC, ca, va); fill_long<T><<<1024,256>>>(NNZL, NC, cl, vl);
  std::vector<T> hx(NC, (T)1); CK(cudaMemcpy(x, hx.data(), NC*sizeof(T), cudaMemcpyHostToDevice)); CK(cudaDeviceSynchronize());
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  cudaStream_t s0, s1; CK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  cudaEvent_t fork, join, e0, e1; CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming)); CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming)); CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  const int BA = 128, BL = 512; const unsigned fullA = (NA + BA - 1) / BA; const unsigned fullL = (unsigned)(NL * (((u64)LEN * 5 / 2 + TW - 1) / TW));
  // mode 0: A only, 1: L only, 2: serial, 3: concurrent; gA/gL grid sizes
  auto bench = [&](int mode, unsigned gA, unsigned gL) {
    const int REP = 50; cudaGraph_t g; cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s0, cudaStreamCaptureModeGlobal));
    for (int it = 0; it < REP; ++it) {
      CK(cudaMemsetAsync(yl, 0, NL*sizeof(T), s0));
      if (mode == 3) { CK(cudaEventRecord(fork, s0)); CK(cudaStreamWaitEvent(s1, fork)); }
      if (mode != 1) ell<T><<<gA, BA, 0, s0>>>(NA, W, ca, va, x, y);
      if (mode != 0) seg<T><<<gL, BL, 0, mode == 3 ? s1 : s0>>>(NL, LEN, cl, vl, x, yl);
      if (mode == 3) { CK(cudaEventRecord(join, s1)); CK(cudaStreamWaitEvent(s0, join)); }
    }
    CK(cudaStreamEndCapture(s0, &g)); CK(cudaGraphInstantiate(&ge, g, 0));
    std::vector<float> t;
    for (int k = 0; k < 12; ++k) { CK(cudaEventRecord(e0, s0)); CK(cudaGraphLaunch(ge, s0)); CK(cudaEventRecord(e1, s0)); CK(cudaEventSynchronize(e1)); float ms; CK(cudaEventElapsedTime(&ms, e0, e1)); t.push_back(ms * 1000.f / REP); }
    std::sort(t.begin() + 2, t.end()); CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g));
    return t[2 + (t.size() - 2) / 2];
  };
  float a = bench(0, fullA, fullL), l = bench(1, fullA, fullL), se = bench(2, fullA, fullL), co = bench(3, fullA, fullL);
  printf("%s: A alone %.1f us, L alone %.1f us (sum %.1f), serial %.1f, concurrent full grids %.1f\n", name, a, l, a + l, se, co);
  // Check y of the long rows (x = 1, values 1: each row sums to LEN) and a few of A (= 3).
  std::vector<T> hy(NA + NL); CK(cudaMemcpy(hy.data(), y, (NA+NL)*sizeof(T), cudaMemcpyDeviceToHost));
  printf("  check: y[0]=%g (3), y[NA]=%g (%u)\n", (double)hy[0], (double)hy[NA], LEN);
  for (int pa : {3, 4, 6, 8}) for (int pl : {1, 2, 3}) {
    unsigned gA = pa * sms, gL = pl * sms;   // blocks per SM of A (128 thr) and of L (512 thr)
    float aa = bench(0, gA, gL), ll = bench(1, gA, gL), cc = bench(3, gA, gL);
    printf("  A %2d x128/SM, L %d x512/SM: A %.1f, L %.1f, concurrent %.1f (%.2fx of serial full, %.2fx of concurrent full)\n", pa, pl, aa, ll, cc, se / cc, co / cc);
  }
  cudaFree(ca); cudaFree(va); cudaFree(cl); cudaFree(vl); cudaFree(x); cudaFree(y);
}
int main(){ cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0)); printf("%s, %d SMs\n", p.name, p.multiProcessorCount); run<float>("f32"); run<double>("f64"); }
