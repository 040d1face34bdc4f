// Conversions of a CSR matrix already on the device into our other formats
// (src/backend/cuda/convert.rs launches them). The host computes each format's layout from the
// row lengths — where every row's entries go, src/formats/*.rs `plan` — and these kernels only
// move the entries there. Padding is written before they run (columns SC_PAD, values 0), so
// they write real entries only.
//
// One warp per row, grid-stride over the rows; the lanes stride the row's entries, so reading a
// row is coalesced (a row of 10^5 entries is not one thread's serial loop). Slot positions are
// 64-bit (ELL, DIA: width × nrows may pass 2^32 before the admission refuses it).

__device__ __forceinline__ u64 cv_first_warp() {
    return global_thread() >> 5;
}
__device__ __forceinline__ u64 cv_warps() {
    return ((u64)gridDim.x * (u64)blockDim.x) >> 5;
}
__device__ __forceinline__ u32 cv_lane() {
    return threadIdx.x & 31;
}

// COO's row index of every entry (its columns and values are CSR's).
__device__ __forceinline__ void cv_rows_of(u32 nrows, const u32* __restrict__ row_ptr,
                                           u32* __restrict__ rows) {
    for (u64 r = cv_first_warp(); r < nrows; r += cv_warps()) {
        const u32 end = row_ptr[r + 1];
        for (u32 j = row_ptr[r] + cv_lane(); j < end; j += 32) {
            rows[j] = (u32)r;
        }
    }
}

// Entry k < limit of row r to slot base(r) + k·stride, base(r) = r when has_base is 0, else
// base[r]: ELL and HYB's ELL part (stride nrows), SELL-C-σ (stride C, base the row's lane in
// its slice).
template <typename T>
__device__ __forceinline__ void cv_scatter(u32 nrows, const u32* __restrict__ row_ptr,
                                           const u32* __restrict__ col, const T* __restrict__ val,
                                           u32 has_base, const u32* __restrict__ base, u64 stride,
                                           u32 limit, u32* __restrict__ out_col,
                                           T* __restrict__ out_val) {
    for (u64 r = cv_first_warp(); r < nrows; r += cv_warps()) {
        const u32 a = row_ptr[r];
        u32 n = row_ptr[r + 1] - a;
        n = n < limit ? n : limit;
        const u64 b0 = has_base ? (u64)base[r] : r;
        for (u32 k = cv_lane(); k < n; k += 32) {
            const u64 s = b0 + (u64)k * stride;
            out_col[s] = col[a + k];
            out_val[s] = val[a + k];
        }
    }
}

// HYB's COO part: entries k ≥ width of row r at start[r] + k − width.
template <typename T>
__device__ __forceinline__ void cv_rest(u32 nrows, const u32* __restrict__ row_ptr,
                                        const u32* __restrict__ col, const T* __restrict__ val,
                                        u32 width, const u32* __restrict__ start,
                                        u32* __restrict__ rows, u32* __restrict__ cols,
                                        T* __restrict__ vals) {
    for (u64 r = cv_first_warp(); r < nrows; r += cv_warps()) {
        const u32 a = row_ptr[r];
        const u32 n = row_ptr[r + 1] - a;
        const u32 q0 = start[r];
        for (u32 k = width + cv_lane(); k < n; k += 32) {
            const u32 q = q0 + (k - width);
            rows[q] = (u32)r;
            cols[q] = col[a + k];
            vals[q] = val[a + k];
        }
    }
}

// JAD: entry d of row r (at sorted position pos[r]) at jd_ptr[d] + pos[r].
template <typename T>
__device__ __forceinline__ void cv_jad(u32 nrows, const u32* __restrict__ row_ptr,
                                       const u32* __restrict__ col, const T* __restrict__ val,
                                       const u32* __restrict__ pos, const u32* __restrict__ jd_ptr,
                                       u32* __restrict__ out_col, T* __restrict__ out_val) {
    for (u64 r = cv_first_warp(); r < nrows; r += cv_warps()) {
        const u32 a = row_ptr[r];
        const u32 n = row_ptr[r + 1] - a;
        const u32 p = pos[r];
        for (u32 d = cv_lane(); d < n; d += 32) {
            const u32 s = jd_ptr[d] + p;
            out_col[s] = col[a + d];
            out_val[s] = val[a + d];
        }
    }
}

// DIA: entry (r, c) at values[d·nrows + r], d the position of c − r among the ndiag increasing
// offsets (binary search; every entry's diagonal is among them).
template <typename T>
__device__ __forceinline__ void cv_dia(u32 nrows, const u32* __restrict__ row_ptr,
                                       const u32* __restrict__ col, const T* __restrict__ val,
                                       u32 ndiag, const int* __restrict__ offsets,
                                       T* __restrict__ out) {
    for (u64 r = cv_first_warp(); r < nrows; r += cv_warps()) {
        const u32 a = row_ptr[r];
        const u32 n = row_ptr[r + 1] - a;
        for (u32 k = cv_lane(); k < n; k += 32) {
            const long long off = (long long)col[a + k] - (long long)r;
            u32 lo = 0, hi = ndiag;
            while (lo < hi) {
                const u32 mid = (lo + hi) >> 1;
                if ((long long)offsets[mid] < off) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            out[(u64)lo * nrows + r] = val[a + k];
        }
    }
}

// BSR with b × b blocks: entry (r, c) at values[q·b² + (r mod b)·b + c mod b], q the block of
// block column c / b among block row r / b's (binary search in bcol, increasing).
template <typename T>
__device__ __forceinline__ void cv_bsr(u32 nrows, u32 b, const u32* __restrict__ row_ptr,
                                       const u32* __restrict__ col, const T* __restrict__ val,
                                       const u32* __restrict__ brow_ptr,
                                       const u32* __restrict__ bcol, T* __restrict__ out) {
    for (u64 r = cv_first_warp(); r < nrows; r += cv_warps()) {
        const u32 a = row_ptr[r];
        const u32 n = row_ptr[r + 1] - a;
        const u32 br = (u32)r / b;
        const u32 first = brow_ptr[br], last = brow_ptr[br + 1];
        const u32 in_block = ((u32)r - br * b) * b;
        for (u32 k = cv_lane(); k < n; k += 32) {
            const u32 c = col[a + k];
            const u32 bc = c / b;
            u32 lo = first, hi = last;
            while (lo < hi) {
                const u32 mid = lo + ((hi - lo) >> 1);
                if (bcol[mid] < bc) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            out[(u64)lo * b * b + in_block + (c - bc * b)] = val[a + k];
        }
    }
}

// ELL-BRO with slices of h rows: one thread per row (the lanes of a warp are consecutive rows of
// one slice, so the interleaved symbols and values are written coalesced). Row i = s·h + r packs
// its deltas (first column + 1, then differences) in the slice columns' bit widths into 64-bit
// symbols, least significant bit first (src/formats/ell_bro/codec.rs `pack`), symbol j at
// h·sym_ptr[s] + j·lanes + r, and writes value k at h·col_ptr[s] + k·lanes + r. Padding
// (deltas 0, values 0) is already in place, so the row stops after its last entry.
template <typename T>
__device__ __forceinline__ void cv_ell_bro(u32 nrows, const u32* __restrict__ row_ptr,
                                           const u32* __restrict__ col, const T* __restrict__ val,
                                           u32 h, const u32* __restrict__ col_ptr,
                                           const u32* __restrict__ sym_ptr,
                                           const unsigned char* __restrict__ bits,
                                           u64* __restrict__ symbols, T* __restrict__ out_val) {
    const u64 step = (u64)gridDim.x * (u64)blockDim.x;
    for (u64 i = global_thread(); i < nrows; i += step) {
        const u32 s = (u32)(i / h);
        const u32 r = (u32)(i - (u64)s * h);
        const u32 rest = nrows - s * h;
        const u64 lanes = rest < h ? rest : h;
        const u64 vbase = (u64)h * col_ptr[s] + r;
        const u64 sbase = (u64)h * sym_ptr[s] + r;
        const unsigned char* w = bits + col_ptr[s];
        const u32 a = row_ptr[i];
        const u32 n = row_ptr[i + 1] - a;
        u64 cur = 0, j = 0;
        u32 used = 0, prev = 0;
        for (u32 k = 0; k < n; ++k) {
            const u32 c = col[a + k];
            const u64 d = k == 0 ? (u64)c + 1 : (u64)(c - prev);
            prev = c;
            const u32 b = w[k];
            cur |= d << used;
            used += b;
            if (used >= 64) {
                symbols[sbase + j * lanes] = cur;
                ++j;
                used -= 64;
                cur = used == 0 ? 0 : d >> (b - used);
            }
            out_val[vbase + (u64)k * lanes] = val[a + k];
        }
        if (used > 0) {
            symbols[sbase + j * lanes] = cur;
        }
    }
}

// The inverse of a permutation of n: pos[perm[k]] = k (JAD's sorted position of every row).
__device__ __forceinline__ void cv_inverse_of(u32 n, const u32* __restrict__ perm,
                                              u32* __restrict__ pos) {
    const u64 step = (u64)gridDim.x * (u64)blockDim.x;
    for (u64 k = global_thread(); k < n; k += step) {
        pos[perm[k]] = (u32)k;
    }
}

#define SC_CV_INVERSE(NAME)                                                                    \
    extern "C" __global__ void SC_BOUNDS NAME(u32 n, const u32* perm, u32* pos) {              \
        cv_inverse_of(n, perm, pos);                                                           \
    }
#define SC_CV_COO_ROWS(NAME)                                                                   \
    extern "C" __global__ void SC_BOUNDS NAME(u32 nrows, const u32* row_ptr, u32* rows) {      \
        cv_rows_of(nrows, row_ptr, rows);                                                      \
    }
#define SC_CV_SCATTER(NAME, T)                                                                 \
    extern "C" __global__ void SC_BOUNDS NAME(u32 nrows, const u32* row_ptr, const u32* col,   \
                                              const T* val, u32 has_base, const u32* base,     \
                                              u64 stride, u32 limit, u32* out_col,             \
                                              T* out_val) {                                    \
        cv_scatter<T>(nrows, row_ptr, col, val, has_base, base, stride, limit, out_col,        \
                      out_val);                                                                \
    }
#define SC_CV_REST(NAME, T)                                                                    \
    extern "C" __global__ void SC_BOUNDS NAME(u32 nrows, const u32* row_ptr, const u32* col,   \
                                              const T* val, u32 width, const u32* start,       \
                                              u32* rows, u32* cols, T* vals) {                 \
        cv_rest<T>(nrows, row_ptr, col, val, width, start, rows, cols, vals);                  \
    }
#define SC_CV_JAD(NAME, T)                                                                     \
    extern "C" __global__ void SC_BOUNDS NAME(u32 nrows, const u32* row_ptr, const u32* col,   \
                                              const T* val, const u32* pos,                    \
                                              const u32* jd_ptr, u32* out_col, T* out_val) {   \
        cv_jad<T>(nrows, row_ptr, col, val, pos, jd_ptr, out_col, out_val);                    \
    }
#define SC_CV_DIA(NAME, T)                                                                     \
    extern "C" __global__ void SC_BOUNDS NAME(u32 nrows, const u32* row_ptr, const u32* col,   \
                                              const T* val, u32 ndiag, const int* offsets,     \
                                              T* out) {                                        \
        cv_dia<T>(nrows, row_ptr, col, val, ndiag, offsets, out);                              \
    }
#define SC_CV_BSR(NAME, T)                                                                     \
    extern "C" __global__ void SC_BOUNDS NAME(u32 nrows, u32 b, const u32* row_ptr,            \
                                              const u32* col, const T* val,                    \
                                              const u32* brow_ptr, const u32* bcol, T* out) {  \
        cv_bsr<T>(nrows, b, row_ptr, col, val, brow_ptr, bcol, out);                           \
    }
#define SC_CV_ELL_BRO(NAME, T)                                                                 \
    extern "C" __global__ void SC_BOUNDS NAME(u32 nrows, const u32* row_ptr, const u32* col,   \
                                              const T* val, u32 h, const u32* col_ptr,         \
                                              const u32* sym_ptr, const unsigned char* bits,   \
                                              u64* symbols, T* out_val) {                      \
        cv_ell_bro<T>(nrows, row_ptr, col, val, h, col_ptr, sym_ptr, bits, symbols, out_val);  \
    }

SC_CV_COO_ROWS(cv_coo_rows)
SC_CV_INVERSE(cv_inverse)
SC_CV_SCATTER(cv_scatter_f32, float)
SC_CV_SCATTER(cv_scatter_f64, double)
SC_CV_REST(cv_rest_f32, float)
SC_CV_REST(cv_rest_f64, double)
SC_CV_JAD(cv_jad_f32, float)
SC_CV_JAD(cv_jad_f64, double)
SC_CV_DIA(cv_dia_f32, float)
SC_CV_DIA(cv_dia_f64, double)
SC_CV_BSR(cv_bsr_f32, float)
SC_CV_BSR(cv_bsr_f64, double)
SC_CV_ELL_BRO(cv_ell_bro_f32, float)
SC_CV_ELL_BRO(cv_ell_bro_f64, double)
