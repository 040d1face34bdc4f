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

// `coo_merged_*` / `coo_dependent_merged_*` (session 92; HYB's COO part where the host's rule
// picks them, `formats::hyb::line_carries`): the same walk, but the warps of a block combine the
// segments they share before touching y. A warp's first and last segments (the rows it may share
// with the warps before and after it) go to shared memory instead of y; after a __syncthreads
// the block's first warp merges them with a segmented scan over the block's warps and adds one
// sum per row run with atomicAdd, so a row gets one atomic per block, not one per warp.
// Why: atomics onto *different* addresses of one cache line serialize in the L2 (measured on the
// H200, session 91: 12 rows of one line × 700 warps each 15.3 µs, the same 12 rows 32 floats apart
// 5.0 µs, one row 3.7 µs), which is where cuSPARSE's COO is 1.3-1.7× faster than ours (stacks of
// a few dense long rows). Measured (docs/PERFORMANCE.md, session 91): HYB, whose COO part is
// exactly the long rows' excess, 0.38-0.84× the time where the rule selects it, 0.99-1.24×
// elsewhere (the barrier, two more loads, more registers) — hence a host rule, not the default.
// Its walk repeats coo_interval's on purpose: folding both into one walk with an emit hook would
// change the shipped kernel's code, which every table's COO and HYB times measured.
template <typename T, bool DEPENDENT>
__device__ __forceinline__ void coo_interval_merged(u32 nnz, u32 chunks,
                                                    const u32* __restrict__ rows,
                                                    const u32* __restrict__ cols,
                                                    const T* __restrict__ val,
                                                    const T* __restrict__ x, T* __restrict__ y) {
    __shared__ u32 s_head_row[32], s_tail_row[32];
    __shared__ T s_head_val[32], s_tail_val[32];
    const u64 warp = global_thread() / 32;
    const u32 lane = threadIdx.x % 32;
    const u32 wib = threadIdx.x / 32;
    const u64 begin = warp * (u64)chunks * 32;
    u64 end = begin + (u64)chunks * 32;
    if (end > nnz) {
        end = nnz;
    }
    const bool active = begin < nnz;  // warp-uniform; an idle warp still reaches the barrier
    // Loaded before the walk (session 91 measured the alternative, taking them from the walk's
    // own loads: 2-4 more registers, 8 B of spills in f64 at the 32-register budget, slower).
    const u32 first_row = active ? ld(rows + begin) : SC_PAD;
    const u32 last_row = active ? ld(rows + end - 1) : SC_PAD;
    if (lane == 0) {
        s_head_row[wib] = first_row;
        s_tail_row[wib] = last_row;
        s_head_val[wib] = T(0);
        s_tail_val[wib] = T(0);
    }
    __syncwarp();
// A segment's sum: the warp's first or last row to shared memory, any other row to y.
#define COO_MERGE_EMIT(ROW, V)                   \
    do {                                         \
        if ((ROW) == first_row) {                \
            s_head_val[wib] = (V);               \
        } else if ((ROW) == last_row) {          \
            s_tail_val[wib] = (V);               \
        } else {                                 \
            atomicAdd(y + (ROW), (V));           \
        }                                        \
    } while (0)
    u32 carry_row = SC_PAD;
    T carry_val = 0;
    for (u64 base = begin; active && base < end; base += 32) {
        const u64 k = base + lane;
        const bool valid = k < end;
        const u32 r = valid ? ld(rows + k) : SC_PAD;
        T v = valid ? ld(val + k) * ld(x + ld(cols + k)) : T(0);
        if (DEPENDENT && base == begin) {
            sc_wait_for_prerequisite();
        }
        const u32 r_first = __shfl_sync(SC_FULL_MASK, r, 0);
        if (carry_row != SC_PAD) {
            if (r_first == carry_row) {
                if (lane == 0) {
                    v += carry_val;
                }
            } else if (lane == 0) {
                COO_MERGE_EMIT(carry_row, carry_val);
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
            COO_MERGE_EMIT(r, v);
        }
        carry_row = __shfl_sync(SC_FULL_MASK, r, 31);
        carry_val = __shfl_sync(SC_FULL_MASK, v, 31);
    }
    if (carry_row != SC_PAD && lane == 0) {
        COO_MERGE_EMIT(carry_row, carry_val);
    }
#undef COO_MERGE_EMIT
    __syncthreads();
    if (wib != 0) {
        return;
    }
    // Lane i holds warp i's head (hr, hv) and tail (tr, tv); a warp of one row has only a head.
    const u32 nwarps = blockDim.x / 32;
    u32 hr = SC_PAD, tr = SC_PAD;
    T hv = 0, tv = 0;
    if (lane < nwarps) {
        hr = s_head_row[lane];
        tr = s_tail_row[lane];
        hv = s_head_val[lane];
        tv = s_tail_val[lane];
    }
    const bool single = hr == tr;
    const u32 prev_tail = __shfl_up_sync(SC_FULL_MASK, tr, 1);
    // This warp's head continues the row run that the warp before it ends with.
    const bool joins = lane > 0 && hr != SC_PAD && hr == prev_tail;
    // Run sums over the lanes' last items: a one-row warp that joins extends the run.
    T s = single ? hv : tv;
    bool start = !(single && joins);
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const T so = __shfl_up_sync(SC_FULL_MASK, s, d);
        const bool fo = __shfl_up_sync(SC_FULL_MASK, (int)start, d) != 0;
        if (lane >= d && !start) {
            s += so;
            start = fo;
        }
    }
    const T prev_s = __shfl_up_sync(SC_FULL_MASK, s, 1);
    const bool next_joins = __shfl_down_sync(SC_FULL_MASK, (int)joins, 1) != 0 && lane < 31;
    if (!single && hr != SC_PAD) {
        atomicAdd(y + hr, joins ? hv + prev_s : hv);
    }
    if (tr != SC_PAD && !next_joins) {
        atomicAdd(y + tr, s);
    }
}

#define SC_COO(NAME, T, DEPENDENT)                                                            \
    extern "C" __global__ void SC_BOUNDS                                                       \
        NAME(u32 nnz, u32 chunks, const u32* __restrict__ rows, const u32* __restrict__ cols,  \
             const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y) {          \
        coo_interval<T, DEPENDENT>(nnz, chunks, rows, cols, val, x, y);                       \
    }

#define SC_COO_MERGED(NAME, T, DEPENDENT)                                                     \
    extern "C" __global__ void SC_BOUNDS                                                       \
        NAME(u32 nnz, u32 chunks, const u32* __restrict__ rows, const u32* __restrict__ cols,  \
             const T* __restrict__ val, const T* __restrict__ x, T* __restrict__ y) {          \
        coo_interval_merged<T, DEPENDENT>(nnz, chunks, rows, cols, val, x, y);                \
    }

SC_COO(coo_f32, float, false)
SC_COO(coo_f64, double, false)
SC_COO(coo_dependent_f32, float, true)
SC_COO(coo_dependent_f64, double, true)
SC_COO_MERGED(coo_merged_f32, float, false)
SC_COO_MERGED(coo_merged_f64, double, false)
SC_COO_MERGED(coo_dependent_merged_f32, float, true)
SC_COO_MERGED(coo_dependent_merged_f64, double, true)
