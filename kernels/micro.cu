// Device micro-benchmarks that are not SpMVs.
//
// l2_read: every thread reads 16-byte words of `buf` (n words) in a grid-stride loop, `passes`
// times over, through L2 only (__ldcg: cached in L2, not in L1), so that with a buffer well inside
// the L2 the loads after the first pass are L2 hits and one launch moves passes × n × 16 bytes —
// enough that its launch cost is negligible. The sum is written only if it equals a value no
// real run produces, so the compiler keeps the loads and nothing is written.

extern "C" __global__ void l2_read(const float4* __restrict__ buf, u64 n, u32 passes,
                                   float* __restrict__ sink) {
    const u64 stride = (u64)gridDim.x * (u64)blockDim.x;
    float acc = 0.0f;
    for (u32 p = 0; p < passes; ++p) {
        for (u64 i = global_thread(); i < n; i += stride) {
            const float4 v = __ldcg(buf + i);
            acc += (v.x + v.y) + (v.z + v.w);
        }
    }
    if (acc == -1.0f) {
        sink[0] = acc;
    }
}
