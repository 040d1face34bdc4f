// The check of a kernel's result on the device (src/backend/cuda/prepared/check.rs): the largest
// error of y against the f64 reference, relative to each row's scale.
// `Reference::max_relative_error` (src/backend/measure.rs) is the contract, element for element:
// * a row whose reference is not finite (NaN or ±Inf in the row or x): 0 if y is of the same
//   class (both NaN, or equal), else +Inf;
// * y NaN (an element the kernel did not write over the poison): +Inf;
// * else |y − r| / scale, in double (y converted exactly from float).
// Errors are ≥ +0, so their bit patterns order as the values do: the maximum is an atomicMax on
// the bits (`out` zeroed first).

__device__ __forceinline__ bool ck_is_nan(double v) {
    return v != v;
}

__device__ __forceinline__ bool ck_is_finite(double v) {
    const u64 exp = 0x7ff0000000000000ull;
    return ((u64)__double_as_longlong(v) & exp) != exp;
}

template <typename T>
__device__ __forceinline__ void ck_max_error(u32 n, const T* __restrict__ y,
                                             const double* __restrict__ yref,
                                             const double* __restrict__ scale,
                                             unsigned long long* __restrict__ out) {
    const u64 inf = 0x7ff0000000000000ull;
    u64 worst = 0;
    for (u64 i = global_thread(); i < n; i += sc_grid_stride()) {
        const double yi = (double)y[i];
        const double r = yref[i];
        u64 e;
        if (!ck_is_finite(r)) {
            const bool same = (ck_is_nan(yi) && ck_is_nan(r)) || yi == r;
            e = same ? 0 : inf;
        } else if (ck_is_nan(yi)) {
            e = inf;
        } else {
            // |y − r| by clearing the sign bit (as fabs); the scale is > 0.
            const u64 d = (u64)__double_as_longlong(yi - r) & 0x7fffffffffffffffull;
            e = (u64)__double_as_longlong(__longlong_as_double((long long)d) / scale[i]);
        }
        worst = e > worst ? e : worst;
    }
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) {
        const u64 o = __shfl_down_sync(SC_FULL_MASK, worst, off);
        worst = o > worst ? o : worst;
    }
    if ((threadIdx.x & 31) == 0 && worst != 0) {
        atomicMax(out, (unsigned long long)worst);
    }
}

#define SC_CK(NAME, T)                                                                         \
    extern "C" __global__ void SC_BOUNDS NAME(u32 n, const T* y, const double* yref,           \
                                              const double* scale, unsigned long long* out) {  \
        ck_max_error<T>(n, y, yref, scale, out);                                               \
    }

SC_CK(ck_max_error_f32, float)
SC_CK(ck_max_error_f64, double)
