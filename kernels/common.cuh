// Shared prelude of every sparsecast kernel file. The Rust side (src/backend/cuda/sources.rs)
// prepends this text to each kernels/*.cu before NVRTC compiles it, so the .cu files need no
// #include and NVRTC needs no include path. NVRTC provides the CUDA built-ins (__ldg, shuffles,
// atomics) without any header.
//
// Conventions: values are float or double, indices and offsets are 32-bit unsigned; array
// positions that can exceed 2^32 (ELL/DIA: width × nrows) are computed in 64 bits. Padding slots
// hold the column index SC_PAD (u32::MAX on the Rust side) and the value 0.

typedef unsigned int u32;
typedef unsigned long long u64;

#define SC_PAD 0xffffffffu

// Every kernel accepts blocks of up to 1024 threads and asks the compiler to fit SC_MIN_BLOCKS
// such blocks per SM: with 2 (the default) that is 32 registers per thread, full occupancy on
// sm_90 (2048 threads per SM). The assembler report (`sparsecast device --kernels`) shows no
// spills at that budget. An experiment may override it with
// SPARSECAST_NVRTC_OPTIONS="-DSC_MIN_BLOCKS=1" (64 registers; a different module-cache key).
#ifndef SC_MIN_BLOCKS
#define SC_MIN_BLOCKS 2
#endif
#define SC_BOUNDS __launch_bounds__(1024, SC_MIN_BLOCKS)
#define SC_FULL_MASK 0xffffffffu

// Read-only loads through the non-coherent (texture) path.
template <typename T>
__device__ __forceinline__ T ld(const T* __restrict__ p) {
    return __ldg(p);
}

// Programmatic dependent launch (sm_90; no-ops before): a kernel launched with programmatic
// stream serialization (`Launch::queue_dependent`) may start once every block of the kernel
// before it has called sc_release_dependents() (or exited), and must call
// sc_wait_for_prerequisite() before it reads or writes what that kernel writes; the wait returns
// once the predecessor has finished and its stores are visible (at once when the kernel was
// launched without the attribute).
__device__ __forceinline__ void sc_wait_for_prerequisite() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void sc_release_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Index of this thread in the whole grid, 64-bit.
__device__ __forceinline__ u64 global_thread() {
    return (u64)blockIdx.x * (u64)blockDim.x + (u64)threadIdx.x;
}

// Sum over groups of G consecutive lanes (G a power of two ≤ 32); every lane of the warp must call
// it. The group's total ends up in the group's first lane.
template <int G, typename T>
__device__ __forceinline__ T group_sum(T v) {
#pragma unroll
    for (int off = G / 2; off > 0; off >>= 1) {
        v += __shfl_down_sync(SC_FULL_MASK, v, off, G);
    }
    return v;
}

// ---- The benchmark matrices' hashes (src/instrument/synthetic.rs is the contract), shared by the
// fill kernels of kernels/synthetic.cu and kernels/rowdist.cu.

#define SC_VALUE_SALT 0x5A175EED0F1A2B3Cull
#define SC_X_SALT 0x0C0FFEE0D15EA5E5ull

// splitmix64's finaliser.
__device__ __forceinline__ u64 sc_mix64(u64 z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// A value in [-1, 1) with 24 significant bits.
__device__ __forceinline__ double sc_unit_value(u64 i) {
    return (double)(sc_mix64(i) >> 40) * (1.0 / 8388608.0) - 1.0;
}

// Column of the entry with flat index i, which is entry k of its row.
__device__ __forceinline__ u32 sc_syn_col(u64 i, u32 k, u32 stride) {
    return k * stride + (u32)(sc_mix64(i) >> 32) % stride;
}

__device__ __forceinline__ u64 sc_grid_stride() {
    return (u64)gridDim.x * (u64)blockDim.x;
}
