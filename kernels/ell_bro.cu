// ELL-BRO SpMV (Tang et al., bit-representation-optimized ELL): one thread per row g of slice
// s = g / h, lane r = g − s·h; the slice has lanes = min(h, nrows − s·h) rows. The layout is
// src/formats/ell_bro.rs's:
//   width   = col_ptr[s+1] − col_ptr[s]; bit width of column k: bits[col_ptr[s] + k] (≤ 32)
//   value k = val[h·col_ptr[s] + k·lanes + r]
//   symbol j (64 bits) = sym[h·sym_ptr[s] + j·lanes + r]
// The row's deltas (first column + 1, then differences; 0 = padding, which ends the row) are
// packed least significant bit first, and one may straddle two symbols. The thread keeps the
// current symbol's unread bits in `cur` (its low `avail` bits; the rest are 0) and loads the
// next symbol only when a delta reaches into it, so it never reads past its row's symbols.
// Every shift is by 0 to 32 bits (widths ≤ 32, avail < width when a symbol is loaded). All
// positions are computed in 64 bits.

template <typename T>
__device__ __forceinline__ void ell_bro_rows(u32 nrows, u32 h, const u32* __restrict__ col_ptr,
                                             const u32* __restrict__ sym_ptr,
                                             const unsigned char* __restrict__ bits,
                                             const u64* __restrict__ sym,
                                             const T* __restrict__ val, const T* __restrict__ x,
                                             T* __restrict__ y) {
    const u64 g = global_thread();
    if (g >= nrows) {
        return;
    }
    const u64 s = g / h;
    const u64 first = s * h;
    const u64 r = g - first;
    const u64 left = (u64)nrows - first;
    const u64 lanes = left < (u64)h ? left : (u64)h;
    const u32 c0 = ld(col_ptr + s);
    const u32 width = ld(col_ptr + s + 1) - c0;
    const unsigned char* __restrict__ b = bits + c0;
    const T* __restrict__ v = val + ((u64)h * c0 + r);
    const u64* __restrict__ next = sym + ((u64)h * ld(sym_ptr + s) + r);
    u64 cur = 0;
    u32 avail = 0;
    u32 pos = 0;  // column + 1 of the last entry
    T sum = 0;
    for (u32 k = 0; k < width; ++k) {
        const u32 nb = ld(b + k);
        const u64 mask = (1ull << nb) - 1ull;
        u64 d;
        if (nb <= avail) {
            d = cur & mask;
            cur >>= nb;
            avail -= nb;
        } else {
            const u64 w = ld(next);
            next += lanes;
            d = (cur | (w << avail)) & mask;
            cur = w >> (nb - avail);
            avail = 64u - (nb - avail);
        }
        if (d == 0) {
            break;  // padding: the rest of the row is padding too
        }
        pos += (u32)d;
        sum += ld(v + (u64)k * lanes) * ld(x + (pos - 1u));
    }
    y[g] = sum;
}

#define SC_ELL_BRO(NAME, T)                                                                    \
    extern "C" __global__ void SC_BOUNDS                                         \
        NAME(u32 nrows, u32 h, const u32* __restrict__ col_ptr,                                \
             const u32* __restrict__ sym_ptr, const unsigned char* __restrict__ bits,          \
             const u64* __restrict__ sym, const T* __restrict__ val,                           \
             const T* __restrict__ x, T* __restrict__ y) {                                     \
        ell_bro_rows<T>(nrows, h, col_ptr, sym_ptr, bits, sym, val, x, y);                     \
    }

SC_ELL_BRO(ell_bro_f32, float)
SC_ELL_BRO(ell_bro_f64, double)
