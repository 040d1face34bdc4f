#!/usr/bin/env bash
# One batched GPU session: environment, device description, kernel compilation and cache, the
# selftest, the GPU tests and the 27-point-stencil benchmark. Runs on the device machine from the
# repository root with the stripped release binaries in .dev/ (sparsecast and the test binary `it`,
# all integration tests in one crate, run here by module: cuda_backend::, cuda_cache::,
# cuda_stencil::); writes its logs to $OUT (or .dev/out). SPARSECAST_REQUIRE_GPU=1 makes a test
# that would skip for want of a GPU fail instead.
#
#   cargo build --release && cargo test --release --no-run --test it
#   (strip target/release/sparsecast and target/release/deps/it-* into .dev/ as sparsecast and it,
#   copy this script there), then on the GPU machine:
#   bash .dev/device_check.sh
set -u
OUT=${OUT:-$PWD/.dev/out}
mkdir -p "$OUT"
cd .dev || exit 1
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export SPARSECAST_CACHE=/tmp/sparsecast-cache
export RUST_BACKTRACE=1
export SPARSECAST_REQUIRE_GPU=1
{
    nvidia-smi
    echo "--- cuda libs"; ls /usr/local/cuda*/lib64 2>/dev/null | grep -E 'nvrtc|cusparse'
    echo "--- ldconfig"; ldconfig -p | grep -E 'cuda|nvrtc|cusparse'
    echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
} > "$OUT/env.log" 2>&1
step() { local name=$1; shift; local t0=$SECONDS; "$@"; echo "[$name: rc=$? in $((SECONDS - t0)) s]"; }
{
    step device-compile ./sparsecast device --kernels --json "$OUT/device.json"
    step device-cached ./sparsecast device --kernels
} > "$OUT/device.log" 2>&1
step selftest ./sparsecast selftest --backend cuda --json "$OUT/selftest.json" > "$OUT/selftest.log" 2>&1
{
    step cuda_backend ./it cuda_backend:: --nocapture --test-threads 1
    step cuda_cache ./it cuda_cache:: --nocapture
} > "$OUT/tests.log" 2>&1
{
    step stencil ./it cuda_stencil:: --ignored --nocapture
    # A/B (set SPARSECAST_AB=1): the kernels compiled for 64 registers per thread.
    [ -n "${SPARSECAST_AB:-}" ] && step stencil-64regs env SPARSECAST_NVRTC_OPTIONS=-DSC_MIN_BLOCKS=1 ./it cuda_stencil:: --ignored --nocapture
    # The same through the CLI, as documented in docs/PERFORMANCE.md.
    step generate ./sparsecast generate stencil --points 27 --n 130 --out /tmp/lap27.mtx
    step bench-stencil ./sparsecast bench /tmp/lap27.mtx --backend cuda --block-size 128
} > "$OUT/stencil.log" 2>&1
# The reply shows the end of the output: keep it short.
grep -E "^\[|name|copy bandwidth|compute" "$OUT/device.log" | head -20
grep -E "FAIL|cases:|^\[" "$OUT/selftest.log" | tail -25
grep -E "test result|panicked|^\[" "$OUT/tests.log"
grep -vE "^running|^$|^test result" "$OUT/stencil.log" | tail -60
