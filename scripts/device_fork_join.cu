// Probe (session 49, docs/OPTIMIZER.md): what two independent kernels cost per SpMV as a chain
// (A->B, B->A), as the fork/join graph sparsecast built until session 48 (each part a child
// graph node, an empty join node after each SpMV: fjChAB / fjChBA), as the fork/join it builds
// now (the parts' own kernel nodes, every part depending on the previous SpMV's last nodes, no
// join node: fjStAB / fjStBA, here by a two-stream capture), and as one fused launch. DIA-like
// kernels and a kernel of long-row tiles stand in for a plan's blocks. On the device:
//   nvcc -O3 -arch=sm_90 -o /tmp/fj scripts/device_fork_join.cu && /tmp/fj
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d: %s\n", #x, __LINE__, cudaGetErrorString(e)); exit(1);} } while (0)

struct Dia { int n, nd; const int* off; const float* val; const float* x; float* y; };
struct Long { int tiles, tile; const int* row; const int* col; const float* val; const float* x; float* y; };

__device__ __forceinline__ void dia_body(const Dia& a, unsigned b) {
    unsigned i = b * blockDim.x + threadIdx.x;
    if (i >= (unsigned)a.n) return;
    float s = 0;
    for (int d = 0; d < a.nd; ++d) { long long j = (long long)i + a.off[d];
        if (j >= 0 && j < a.n) s += __ldg(a.val + (size_t)d * a.n + i) * __ldg(a.x + j); }
    a.y[i] = s;
}
__device__ __forceinline__ void long_body(const Long& a, unsigned b) {
    // one CTA per tile of `tile` entries of one row; block reduce; atomicAdd.
    __shared__ float red[32];
    size_t base = (size_t)b * a.tile;
    float s = 0;
    for (int k = threadIdx.x; k < a.tile; k += blockDim.x) s += __ldg(a.val + base + k) * __ldg(a.x + __ldg(a.col + base + k));
    for (int o = 16; o; o >>= 1) s += __shfl_down_sync(~0u, s, o);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x < 32) { s = threadIdx.x < blockDim.x / 32 ? red[threadIdx.x] : 0;
        for (int o = 16; o; o >>= 1) s += __shfl_down_sync(~0u, s, o);
        if (threadIdx.x == 0) atomicAdd(a.y + a.row[b], s); }
}
__global__ void dia_k(Dia a) { dia_body(a, blockIdx.x); }
__global__ void long_k(Long a) { long_body(a, blockIdx.x); }
__global__ void dia2_k(Dia a, Dia b, unsigned ga) { if (blockIdx.x < ga) dia_body(a, blockIdx.x); else dia_body(b, blockIdx.x - ga); }
__global__ void fused_k(Long l, Dia d, unsigned gl) { if (blockIdx.x < gl) long_body(l, blockIdx.x); else dia_body(d, blockIdx.x - gl); }
__global__ void zero_k(float* y, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 0; }

const int TB = 256;
std::vector<float> randv(size_t n) { std::vector<float> v(n); for (auto& f : v) f = (rand() % 2001 - 1000) / 1000.f; return v; }
template <class T> T* up(const std::vector<T>& v) { T* p; CK(cudaMalloc(&p, v.size() * sizeof(T))); CK(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice)); return p; }

Dia make_dia(int n, std::vector<int> offs) {
    Dia a; a.n = n; a.nd = offs.size(); a.off = up(offs); a.val = up(randv((size_t)n * offs.size())); a.x = up(randv(n));
    CK(cudaMalloc(&a.y, n * 4)); return a; }
Long make_long(int rows, int ncols, int tiles_per_row, int tile) {
    Long a; a.tiles = rows * tiles_per_row; a.tile = tile; std::vector<int> r(a.tiles), c((size_t)a.tiles * tile);
    for (int t = 0; t < a.tiles; ++t) r[t] = t / tiles_per_row; for (auto& x : c) x = ((unsigned)rand() * 2654435761u) % ncols;
    a.row = up(r); a.col = up(c); a.val = up(randv(c.size())); a.x = up(randv(ncols)); CK(cudaMalloc(&a.y, rows * 4)); return a; }

// One SpMV's parts as launches into stream s (kind: 0 = A only, 1 = B only).
typedef void (*Q)(cudaStream_t, void*, int);
struct Case { const char* name; Dia A; bool bIsLong; Dia Bd; Long Bl; };
void qA(const Case& c, cudaStream_t s) { dia_k<<<(c.A.n + TB - 1) / TB, TB, 0, s>>>(c.A); }
void qB(const Case& c, cudaStream_t s) { if (c.bIsLong) { zero_k<<<1, 256, 0, s>>>(c.Bl.y, 200); long_k<<<c.Bl.tiles, TB, 0, s>>>(c.Bl); } else dia_k<<<(c.Bd.n + TB - 1) / TB, TB, 0, s>>>(c.Bd); }
void qF(const Case& c, cudaStream_t s) {
    if (c.bIsLong) { zero_k<<<1, 256, 0, s>>>(c.Bl.y, 200); unsigned gl = c.Bl.tiles; fused_k<<<gl + (c.A.n + TB - 1) / TB, TB, 0, s>>>(c.Bl, c.A, gl); }
    else { unsigned ga = (c.A.n + TB - 1) / TB; dia2_k<<<ga + (c.Bd.n + TB - 1) / TB, TB, 0, s>>>(c.A, c.Bd, ga); } }

const int NREP = 20;
cudaGraph_t capture_chain(const Case& c, cudaStream_t s, int what) {
    cudaGraph_t g; CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int r = 0; r < NREP; ++r) { if (what == 0) qA(c, s); else if (what == 1) qB(c, s); else if (what == 2) { qA(c, s); qB(c, s); } else if (what == 3) { qB(c, s); qA(c, s); } else qF(c, s); }
    CK(cudaStreamEndCapture(s, &g)); return g; }
cudaGraph_t capture_one(const Case& c, cudaStream_t s, int what) {
    cudaGraph_t g; CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal)); if (what == 0) qA(c, s); else qB(c, s); CK(cudaStreamEndCapture(s, &g)); return g; }
// fork/join: child graphs + empty join (sparsecast's), order AB or BA
cudaGraph_t fj_child(const Case& c, cudaStream_t s, bool bfirst) {
    cudaGraph_t g; CK(cudaGraphCreate(&g, 0)); std::vector<cudaGraphNode_t> join;
    for (int r = 0; r < NREP; ++r) { std::vector<cudaGraphNode_t> leaves;
        for (int k = 0; k < 2; ++k) { int what = bfirst ? 1 - k : k; cudaGraph_t ch = capture_one(c, s, what); cudaGraphNode_t n;
            CK(cudaGraphAddChildGraphNode(&n, g, join.data(), join.size(), ch)); cudaGraphDestroy(ch); leaves.push_back(n); }
        cudaGraphNode_t j; CK(cudaGraphAddEmptyNode(&j, g, leaves.data(), leaves.size())); join = {j}; }
    return g; }
// fork/join with two streams in one capture: kernel nodes, all-to-all edges, no empty node
cudaGraph_t fj_streams(const Case& c, cudaStream_t s, cudaStream_t s2, bool bfirst) {
    cudaEvent_t e1, e2; CK(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming)); CK(cudaEventCreateWithFlags(&e2, cudaEventDisableTiming));
    cudaGraph_t g; CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int r = 0; r < NREP; ++r) { CK(cudaEventRecord(e1, s)); CK(cudaStreamWaitEvent(s2, e1, 0));
        if (bfirst) { qB(c, s2); qA(c, s); } else { qA(c, s); qB(c, s2); }
        CK(cudaEventRecord(e2, s2)); CK(cudaStreamWaitEvent(s, e2, 0)); }
    CK(cudaStreamEndCapture(s, &g)); return g; }

float time_graph(cudaGraph_t g, cudaStream_t s) {
    cudaGraphExec_t x; CK(cudaGraphInstantiate(&x, g, 0)); CK(cudaGraphUpload(x, s));
    cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
    for (int i = 0; i < 10; ++i) CK(cudaGraphLaunch(x, s)); CK(cudaStreamSynchronize(s));
    std::vector<float> t;
    for (int i = 0; i < 40; ++i) { CK(cudaEventRecord(a, s)); CK(cudaGraphLaunch(x, s)); CK(cudaEventRecord(b, s)); CK(cudaEventSynchronize(b)); float ms; CK(cudaEventElapsedTime(&ms, a, b)); t.push_back(ms * 1000 / NREP); }
    CK(cudaGetLastError()); std::sort(t.begin(), t.end()); cudaGraphExecDestroy(x); return t[t.size() / 2]; }

int main() {
    cudaStream_t s, s2; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    std::vector<Case> cs;
    { Case c{"stencil2d 1.1M + 200 long rows (4.5M gathers)"}; c.A = make_dia(1102500, {-1050, -1, 0, 1, 1050}); c.bIsLong = true; c.Bl = make_long(200, 1102500, 11, 2048); cs.push_back(c); }
    { Case c{"stencil3d27 125k + dia 500k x5"}; std::vector<int> o; for (int a = -1; a <= 1; ++a) for (int b = -1; b <= 1; ++b) for (int d = -1; d <= 1; ++d) o.push_back(a * 2500 + b * 50 + d);
      c.A = make_dia(125000, o); c.bIsLong = false; c.Bd = make_dia(500000, {-700, -1, 0, 1, 700}); cs.push_back(c); }
    { Case c{"dia 4M x5 + dia 500k x5"}; c.A = make_dia(4000000, {-2000, -1, 0, 1, 2000}); c.bIsLong = false; c.Bd = make_dia(500000, {-700, -1, 0, 1, 700}); cs.push_back(c); }
    { Case c{"tiny: dia 50k x5 + dia 50k x5"}; c.A = make_dia(50000, {-200, -1, 0, 1, 200}); c.bIsLong = false; c.Bd = make_dia(50000, {-200, -1, 0, 1, 200}); cs.push_back(c); }
    printf("%-46s %7s %7s %7s %7s %7s %7s %7s %7s %7s\n", "case (us per SpMV, median of 40 graphs of 20)", "A", "B", "A->B", "B->A", "fjChAB", "fjChBA", "fjStAB", "fjStBA", "fused");
    for (auto& c : cs) {
        float v[9]; v[0] = time_graph(capture_chain(c, s, 0), s); v[1] = time_graph(capture_chain(c, s, 1), s); v[2] = time_graph(capture_chain(c, s, 2), s); v[3] = time_graph(capture_chain(c, s, 3), s);
        v[4] = time_graph(fj_child(c, s, false), s); v[5] = time_graph(fj_child(c, s, true), s); v[6] = time_graph(fj_streams(c, s, s2, false), s); v[7] = time_graph(fj_streams(c, s, s2, true), s); v[8] = time_graph(capture_chain(c, s, 4), s);
        printf("%-46s", c.name); for (float f : v) printf(" %7.2f", f); printf("\n");
    }
    return 0;
}
