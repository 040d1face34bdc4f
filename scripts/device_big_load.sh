#!/usr/bin/env bash
# Load matrices with more than 2^31 non-zeros (issue 2: host-side sizes are 64-bit) and run
# SpMV on one of them on the GPU, checked against the f64 CPU reference.
#
# N = 46341 gives N^2 = 2,147,488,281 > 2^31 non-zeros. Needs about 60 GB of RAM and 18 GB of
# disk, so it runs on the device machine (128 GiB), not on a 24 GiB workstation:
#
#   gcc -O2 -static -o .dev/gen_dense scripts/gen_dense.c
#   strip -o .dev/sparsecast target/release/sparsecast
#   (device) bash scripts/device_big_load.sh        # results under $OUT
#
# Steps, each timed (wall s, peak RSS of the step) into $OUT/big_load.jsonl:
#   1. a dense N x N lower triangle as `coordinate pattern symmetric` (N(N+1)/2 lines, 12.9 GB);
#   2. the same matrix as `array real general` (N^2 lines "1", 4.3 GB);
#   3. `sparsecast features --json` on both (f64);
#   4. `sparsecast bench --backend $BACKEND` on the coordinate file with CSR kernels and cuSPARSE
#      (whose 32-bit-index API must refuse it with a clear error, not fail at load).
set -euo pipefail
BIN=${BIN:-.dev/sparsecast}
GEN=${GEN:-.dev/gen_dense}
N=${N:-46341}
DIR=${DIR:-/tmp/sparsecast-big}
OUT=${OUT:-$DIR/out}
BACKEND=${BACKEND:-cuda}
FORMATS=${FORMATS:-csr-t8,csr-vector,csr-merge,cusparse-csr-alg2}
mkdir -p "$DIR" "$OUT"
LOG=$OUT/big_load.jsonl
: > "$LOG"
{ nproc; free -g; df -h "$DIR"; } | tee "$OUT/machine.txt"

# step NAME OUTFILE CMD...: run CMD with stdout to OUTFILE; append wall time, peak RSS, status.
step() {
    local name=$1 out=$2
    shift 2
    python3 - "$name" "$out" "$@" <<'PY' | tee -a "$LOG"
import json, resource, subprocess, sys, time
name, out, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
t = time.time()
with open(out, "wb") as f:
    rc = subprocess.run(cmd, stdout=f).returncode
wall = time.time() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss  # KiB, largest child so far
print(json.dumps({"step": name, "rc": rc, "wall_s": round(wall, 2), "max_rss_gib_so_far": round(rss / 2**20, 2), "cmd": " ".join(cmd)}))
PY
}

step gen-coordinate "$DIR/dense_sym.mtx" "$GEN" sym "$N"
step gen-array "$DIR/dense_array.mtx" "$GEN" array "$N"
ls -l "$DIR"/*.mtx | tee -a "$OUT/machine.txt"
step features-coordinate "$OUT/features_coordinate.json" "$BIN" features "$DIR/dense_sym.mtx" --json
step features-array "$OUT/features_array.json" "$BIN" features "$DIR/dense_array.mtx" --json
step bench-coordinate "$OUT/bench_coordinate.json" "$BIN" bench "$DIR/dense_sym.mtx" \
    --backend "$BACKEND" --formats "$FORMATS" --runs 10 --warmup 2 --json
python3 - "$OUT" "$N" <<'PY'
import json, sys
out, n = sys.argv[1], int(sys.argv[2])
for kind in ("coordinate", "array"):
    f = json.load(open(f"{out}/features_{kind}.json"))["features"]
    # Every row of the dense matrix holds n entries: mirrors and duplicates were handled.
    ok = f["nnz"] == n * n and f["nrows"] == n and f["min_nnz"] == n and f["max_nnz"] == n
    print(kind, "nnz", f["nnz"], "expected", n * n, "> 2^31:", f["nnz"] > 2**31, "OK" if ok else "WRONG")
b = json.load(open(f"{out}/bench_coordinate.json"))
for r in b["results"]:
    print("bench", r["kernel"], r["status"], r.get("median_s"), r.get("effective_gbs"), r.get("max_rel_error"), r.get("reason", ""))
PY
