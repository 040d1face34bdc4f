// COO SpMV, one thread per non-zero with a segmented reduction (Bell & Garland's COO kernel,
// written with warp shuffles instead of shared memory).
//
// Each warp takes an interval of `chunks` × 32 consecutive entries (entries are sorted by row;
// the launcher picks `chunks` so that the warps fill the GPU, at most 8) and
// walks it 32 entries at a time: every lane forms one product val·x[col], an inclusive segmented
// scan keyed by row (5 __shfl_up_sync steps) sums the products of each row within the chunk, and
// the last lane of each row's segment adds the sum to y[row] with atomicAdd. The segment that
// reaches the chunk's last lane is carried into the next chunk instead, so a row costs one atomic
// per warp interval it touches, not one per entry.
//
// y must be zero before the launch: the Rust launch sequence zeroes it (a memset in the same
// stream, counted in the timed run). Atomics make the order of additions, and so the rounding,
// depend on scheduling.
//
// `coo_dependent_*` is the same kernel launched as the programmatic dependent of the kernel
// before it (Hopper's programmatic dependent launch, sm_90): HYB's COO part after its ELL kernel
// (`ell_then_*`), which lets it start at once, so the COO kernel's blocks are launched while
// the ELL kernel runs, and each warp loads its first 32 entries and their x before
// `griddepcontrol.wait` holds it until the ELL kernel has finished and its stores are visible.
// Measured on the H200 (session 82, docs/PERFORMANCE.md): HYB 0.4–0.8 µs faster where it has a
// COO part. COO itself keeps the memset node: a zero kernel with this kernel as its dependent
// was 2–7 % faster under 5 µs but 2–6 % slower from 20 µs up.

template <typename T, bool DEPENDENT>
__device__ __forceinline__ void coo_interval(u32 nnz, u32 chunks, const u32* __restrict__ rows,
                                             const u32* __restrict__ cols,
                                             const T* __restrict__ val,
                                             const T* __restrict__ x, T* __restrict__ y) {
    const u64 warp = global_thread() / 32;
    const u32 lane = threadIdx.x % 32;
    const u64 begin = warp * (u64)chunks * 32;
    if (begin >= nnz) {
        return;  // warp-uniform
    }
    u64 end = begin + (u64)chunks * 32;
    if (end > nnz) {
        end = nnz;
    }
    u32 carry_row = SC_PAD;
    T carry_val = 0;
    for (u64 base = begin; base < end; base += 32) {
        const u64 k = base + lane;
        const bool valid = k < end;
        const u32 r = valid ? ld(rows + k) : SC_PAD;
        T v = valid ? ld(val + k) * ld(x + ld(cols + k)) : T(0);
        if (DEPENDENT && base == begin) {
            sc_wait_for_prerequisite();  // y holds the predecessor's output from here on
        }
        // The carried row continues only into the chunk's first segment.
        const u32 r_first = __shfl_sync(SC_FULL_MASK, r, 0);
        if (carry_row != SC_PAD) {
            if (r_first == carry_row) {
                if (lane == 0) {
                    v += carry_val;
                }
            } else if (lane == 0) {
                atomicAdd(y + carry_row, carry_val);
            }
        }
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const T vo = __shfl_up_sync(SC_FULL_MASK, v, d);
            const u32 ro = __shfl_up_sync(SC_FULL_MASK, r, d);
            if (lane >= d && ro == r) {
                v += vo;
            }
        }
        const u32 r_next = __shfl_down_sync(SC_FULL_MASK, r, 1);
        const bool tail = lane == 31 || r_next != r;
        if (tail && lane != 31 && r != SC_PAD) {
            atomicAdd(y + r, v);
        }
        carry_row = __shfl_sync(SC_FULL_MASK, r, 31);
        carry_val = __shfl_sync(SC_FULL_MASK, v, 31);
    }
    if (carry_row != SC_PAD && lane == 0) {
        atomicAdd(y + carry_row, carry_val);
    }
}

#define SC_COO(NAME, T, DEPENDENT)                                                            \
    extern "C" __global__ void SC_BOUNDS                                                       \
        NAME(u32 nnz, u32 chunks, const u32* __restrict__ rows, const u32* __restrict__ cols,  \
             const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y) {          \
        coo_interval<T, DEPENDENT>(nnz, chunks, rows, cols, val, x, y);                       \
    }

SC_COO(coo_f32, float, false)
SC_COO(coo_f64, double, false)
SC_COO(coo_dependent_f32, float, true)
SC_COO(coo_dependent_f64, double, true)
