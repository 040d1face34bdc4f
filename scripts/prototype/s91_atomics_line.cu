// Session 91 micro-benchmark (docs/PERFORMANCE.md): the cost of one atomicAdd per warp onto a few
// addresses of y, as COO's carries on long rows make: warp w's lane 0 adds to y[(w / per_row) * stride].
// Built and run on the device: nvcc -O3 -arch=sm_90 -o atom s91_atomics_line.cu && ./atom
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
__global__ void contend(float* y, int per_row, int stride, int nwarps) {
    int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (w >= nwarps) return;
    if ((threadIdx.x & 31) == 0) atomicAdd(y + (w / per_row) * stride, 1.0f);
}
__global__ void contend_d(double* y, int per_row, int stride, int nwarps) {
    int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    if (w >= nwarps) return;
    if ((threadIdx.x & 31) == 0) atomicAdd(y + (w / per_row) * stride, 1.0);
}
int main() {
    float* y; double* yd;
    cudaMalloc(&y, 1 << 26); cudaMalloc(&yd, 1 << 26);
    cudaMemset(y, 0, 1 << 26);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    // warm up 30 ms
    for (int i = 0; i < 3000; i++) contend<<<64, 256>>>(y, 1, 1, 512);
    cudaDeviceSynchronize();
    int rows_list[] = {1, 4, 12, 48, 2400};
    int per_list[] = {1, 50, 200, 700};
    int stride_list[] = {1, 32};
    printf("prec rows per_row stride warps median_us\n");
    for (int prec = 0; prec < 2; prec++)
    for (int K : rows_list) for (int per : per_list) for (int st : stride_list) {
        int nw = K * per;
        if (nw > 1000000) continue;
        int block = 256, grid = (nw * 32 + block - 1) / block;
        std::vector<float> t;
        for (int rep = 0; rep < 30; rep++) {
            cudaEventRecord(a);
            for (int i = 0; i < 20; i++) {
                if (prec == 0) contend<<<grid, block>>>(y, per, st, nw);
                else contend_d<<<grid, block>>>(yd, per, st, nw);
            }
            cudaEventRecord(b); cudaEventSynchronize(b);
            float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms * 1000 / 20);
        }
        std::sort(t.begin(), t.end());
        printf("%s %d %d %d %d %.3f\n", prec ? "f64" : "f32", K, per, st, nw, t[15]);
    }
    return 0;
}
