// Fill kernels of the instrumenting phase's benchmark matrices (src/instrument/synthetic.rs is
// the contract): `rows` rows of exactly `pnz` entries; entry k of row r has the flat index
// i = r·pnz + k, the column k·stride + (mix64(i) >> 32) mod stride (stride = cols / pnz) and the
// value (mix64(i ^ VALUE_SALT) >> 40)·2⁻²³ − 1; x[j] is that value with i = j ^ X_SALT.
//
// The Rust side guarantees rows·pnz < 2³² (the kernels' 32-bit indices), so every flat index fits
// in a u32 and the per-entry divisions are 32-bit. Loops are grid-stride with 64-bit counters
// (so `i + stride` cannot wrap). Values are computed in double and rounded to T: they have 24
// significant bits, so float holds them exactly and both precisions get the same numbers.

// The salts, sc_mix64, sc_unit_value, sc_syn_col and sc_grid_stride are in the prelude
// (kernels/common.cuh), shared with kernels/rowdist.cu.

// CSR: row_ptr[r] = r·pnz for r ≤ rows, then columns and values in row order.
template <typename T>
__device__ __forceinline__ void syn_csr(u32 rows, u32 pnz, u32 stride, u32* __restrict__ row_ptr,
                                        u32* __restrict__ col, T* __restrict__ val) {
    const u64 nnz = (u64)rows * pnz;
    const u64 n = nnz > (u64)rows + 1 ? nnz : (u64)rows + 1;
    for (u64 t = global_thread(); t < n; t += sc_grid_stride()) {
        if (t <= rows) {
            row_ptr[t] = (u32)(t * pnz);
        }
        if (t < nnz) {
            const u32 i = (u32)t;
            const u32 k = i % pnz;
            col[i] = sc_syn_col(i, k, stride);
            val[i] = (T)sc_unit_value((u64)i ^ SC_VALUE_SALT);
        }
    }
}

// ELL of width pnz, column-major: slot s = k·rows + r holds entry k of row r (no padding).
template <typename T>
__device__ __forceinline__ void syn_ell(u32 rows, u32 pnz, u32 stride, u32* __restrict__ col,
                                        T* __restrict__ val) {
    const u64 slots = (u64)rows * pnz;
    for (u64 t = global_thread(); t < slots; t += sc_grid_stride()) {
        const u32 s = (u32)t;
        const u32 k = s / rows;
        const u32 r = s - k * rows;
        const u64 i = (u64)r * pnz + k;
        col[s] = sc_syn_col(i, k, stride);
        val[s] = (T)sc_unit_value(i ^ SC_VALUE_SALT);
    }
}

// COO sorted by row (the CSR order), with the row of every entry.
template <typename T>
__device__ __forceinline__ void syn_coo(u32 rows, u32 pnz, u32 stride, u32* __restrict__ row_idx,
                                        u32* __restrict__ col, T* __restrict__ val) {
    const u64 nnz = (u64)rows * pnz;
    for (u64 t = global_thread(); t < nnz; t += sc_grid_stride()) {
        const u32 i = (u32)t;
        const u32 r = i / pnz;
        const u32 k = i - r * pnz;
        row_idx[i] = r;
        col[i] = sc_syn_col(i, k, stride);
        val[i] = (T)sc_unit_value((u64)i ^ SC_VALUE_SALT);
    }
}

// The input vector x[j], j < n.
template <typename T>
__device__ __forceinline__ void syn_x(u32 n, T* __restrict__ x) {
    for (u64 j = global_thread(); j < n; j += sc_grid_stride()) {
        x[j] = (T)sc_unit_value(j ^ SC_X_SALT);
    }
}

#define SC_SYN_CSR(NAME, T)                                                                    \
    extern "C" __global__ void SC_BOUNDS                                                       \
        NAME(u32 rows, u32 pnz, u32 stride, u32* row_ptr, u32* col, T* val) {                  \
        syn_csr<T>(rows, pnz, stride, row_ptr, col, val);                                      \
    }
#define SC_SYN_ELL(NAME, T)                                                                    \
    extern "C" __global__ void SC_BOUNDS                                                       \
        NAME(u32 rows, u32 pnz, u32 stride, u32* col, T* val) {                                \
        syn_ell<T>(rows, pnz, stride, col, val);                                               \
    }
#define SC_SYN_COO(NAME, T)                                                                    \
    extern "C" __global__ void SC_BOUNDS                                                       \
        NAME(u32 rows, u32 pnz, u32 stride, u32* row_idx, u32* col, T* val) {                  \
        syn_coo<T>(rows, pnz, stride, row_idx, col, val);                                      \
    }
#define SC_SYN_X(NAME, T)                                                                      \
    extern "C" __global__ void SC_BOUNDS                                                       \
        NAME(u32 n, T* x) {                                                                    \
        syn_x<T>(n, x);                                                                        \
    }

SC_SYN_CSR(syn_csr_f32, float)
SC_SYN_CSR(syn_csr_f64, double)
SC_SYN_ELL(syn_ell_f32, float)
SC_SYN_ELL(syn_ell_f64, double)
SC_SYN_COO(syn_coo_f32, float)
SC_SYN_COO(syn_coo_f64, double)
SC_SYN_X(syn_x_f32, float)
SC_SYN_X(syn_x_f64, double)
