// Host stand-ins for the CUDA built-ins the kernels use, so that a host C++ compiler can parse
// and type-check every kernels/*.cu on a machine without CUDA (the test of
// src/backend/cuda/host_parse.rs, run by CI). Only the declarations matter: nothing here is
// run, and the shuffles do not shuffle. NVRTC never sees this file. A kernel that starts using
// another built-in adds its stand-in here.
#include <math.h>
#define __device__
#define __host__
#define __global__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __shared__
#define __constant__
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
struct uint2 { unsigned x, y; };
struct uint4 { unsigned x, y, z, w; };
struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
struct double2 { double x, y; };
struct Dim3 { unsigned x, y, z; };
static Dim3 threadIdx, blockIdx, blockDim, gridDim;
inline void __syncthreads() {}
inline void __syncwarp(unsigned = 0xffffffffu) {}
inline void __threadfence() {}
template <typename T> T __ldg(const T* p) { return *p; }
template <typename T> T __ldcg(const T* p) { return *p; }
template <typename T> T __ldcs(const T* p) { return *p; }
template <typename T> T __ldlu(const T* p) { return *p; }
template <typename T> void __stcs(T* p, T v) { *p = v; }
template <typename T> void __stcg(T* p, T v) { *p = v; }
template <typename T> T __shfl_sync(unsigned, T v, int, int = 32) { return v; }
template <typename T> T __shfl_up_sync(unsigned, T v, unsigned, int = 32) { return v; }
template <typename T> T __shfl_down_sync(unsigned, T v, unsigned, int = 32) { return v; }
template <typename T> T __shfl_xor_sync(unsigned, T v, int, int = 32) { return v; }
inline unsigned __ballot_sync(unsigned, int) { return 0; }
inline unsigned __activemask() { return 0xffffffffu; }
inline int __popc(unsigned) { return 0; }
inline int __popcll(unsigned long long) { return 0; }
inline int __ffs(int) { return 0; }
inline int __clz(int) { return 0; }
inline long long __double_as_longlong(double) { return 0; }
inline double __longlong_as_double(long long) { return 0; }
inline unsigned long long clock64() { return 0; }
inline void __nanosleep(unsigned) {}
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __fma_rn(double a, double b, double c) { return a * b + c; }
// The atomics take the value by conversion, as CUDA's overloads do: only the pointer decides T.
template <typename T> struct sc_host_same { using type = T; };
template <typename T> T atomicAdd(T* p, typename sc_host_same<T>::type) { return *p; }
template <typename T> T atomicMax(T* p, typename sc_host_same<T>::type) { return *p; }
template <typename T> T atomicMin(T* p, typename sc_host_same<T>::type) { return *p; }
template <typename T> T atomicExch(T* p, typename sc_host_same<T>::type) { return *p; }
template <typename T>
T atomicCAS(T* p, typename sc_host_same<T>::type, typename sc_host_same<T>::type) { return *p; }
// CUDA's min and max have overloads for mixed integer and floating types.
template <typename A, typename B> auto min(A a, B b) -> decltype(a < b ? a : b) { return b < a ? b : a; }
template <typename A, typename B> auto max(A a, B b) -> decltype(a < b ? a : b) { return a < b ? b : a; }
