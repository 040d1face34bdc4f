#!/usr/bin/env bash
# Serial vs concurrent execution of the same plans on one GPU (issue 16, docs/OPTIMIZER.md
# "Execution modes"), in ONE device call of ≤ 5 minutes. For each matrix `optimize --measure
# --overlap-splits 2,4,8` times, each both serially and concurrently (the blocks as a chain /
# as the branches of a fork/join CUDA graph), y checked against the f64 CPU reference after a
# poisoned y in each mode:
#   * the DP's plan (where it has ≥ 2 blocks) — the heterogeneous stacks are run twice, the DP
#     costing plans with the serial rule and with the concurrent rule (`--overlap`);
#   * the best single configuration of ours cut into 2, 4 and 8 blocks of equal non-zeros, so
#     that the overlap gain shows where the optimizer would pick one block;
# beside the best single configuration measured and both rules' predictions.
# Runs from the repository root with the binary gzip-compressed in .dev/sparsecast.gz (or
# stripped in .dev/bin/sparsecast) and the SuiteSparse files in .dev/mats/ (carry [".dev"]).
#
#   bash scripts/device_concurrent.sh                          # on the H100 or the H200, ≈ 4–5 min
#   BACKEND=cpu SCALE=tiny bash scripts/device_concurrent.sh   # dry run on the CPU (no overlap)
#   PROFILE=.dev/p100/h100.json.gz BIN=… bash scripts/device_concurrent.sh   # a binary built
#                                   # without profiles (SPARSECAST_NO_EMBED=1), its profile given
#   STEP=1 MATS=<dir> …              # every SuiteSparse file of MATS (default: every 6th)
#
# Writes $OUT/concurrent-$GPU.tar.gz (conc-<set>-<rule>-<precision>.json, the log,
# concurrent-$GPU.md: the table) and prints the table last. Budgets (seconds, stop taking new
# inputs): BHETC (het, concurrent rule), BHETS (het, serial rule), BREAL, BLARGE.
set -u
OUT=${OUT:-$PWD/.dev/out}
MATS=${MATS:-$PWD/.dev/mats}
BACKEND=${BACKEND:-cuda}
SCALE=${SCALE:-full}
SPLITS=${SPLITS:-2,4,8}
mkdir -p "$OUT"
BIN=${BIN:-$PWD/.dev/bin/sparsecast}
if [ ! -x "$BIN" ]; then
    BIN=/tmp/sparsecast-bin/sparsecast
    mkdir -p /tmp/sparsecast-bin && gzip -dc .dev/sparsecast.gz > "$BIN" && chmod +x "$BIN"
fi
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
case "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" in
    *H200*) GPU=h200 ;;
    *H100*) GPU=h100 ;;
    *) GPU=${GPU:-cpu} ;;
esac
export SPARSECAST_CACHE=${SPARSECAST_CACHE:-/tmp/scc}
W=${WORK:-/tmp/concurrent-$GPU}
rm -rf "$W"; mkdir -p "$W"
LOG="$W/log-$GPU.txt"
: > "$LOG"
say() { echo "$@" | tee -a "$LOG"; }

# SuiteSparse: every STEP-th file by name (default 6; conf5 is complex).
mapfile -t ALLM < <(ls "$MATS"/*.mtx.gz 2>/dev/null | grep -v conf5 | sort)
REAL=(); for i in "${!ALLM[@]}"; do [ $((i % ${STEP:-6})) -eq 0 ] && REAL+=("${ALLM[$i]}"); done
# The first that exists (not `ls A B | head -1`: ls sorts its operands, which made both 4elt
# before session 20).
first() { for f in "$@"; do [ -f "$f" ] && { echo "$f"; return; }; done; }
KM=$(first "$MATS"/rajat19.mtx.gz "${ALLM[@]}")   # an irregular circuit
KM2=$(first "$MATS"/hep-th.mtx.gz "${ALLM[@]}")   # a power-law graph

# The heterogeneous and large matrices of scripts/device_optimizer.sh (its multi-block plans).
if [ "$SCALE" = tiny ]; then N1=2000; N2=40; N3=20; N4=40; LONG=300; K=2; else
    N1=${N1:-500000}; N2=700; N3=100; N4=2000; LONG=40000; K=4; fi
cat > "$W/het.json" <<JSON
[{"stack":[{"family":"power-law","n":$N1,"mean":12.0,"exponent":2.1,"seed":41},{"family":"stencil","stencil":"2d5","n":$N2}]},
 {"stack":[{"family":"stencil","stencil":"2d5","n":$((N2 * 3 / 2))},{"family":"random","rows":200,"cols":$((N2 * N2)),"row_len":{"dist":"uniform","min":$((LONG / 8)),"max":$LONG},"seed":42}]},
 {"stack":[{"family":"random","rows":$((N1 * 3)),"cols":$N1,"row_len":{"dist":"constant","nnz":3},"seed":43},{"family":"random","rows":50,"cols":$N1,"row_len":{"dist":"constant","nnz":$((LONG * 5))},"seed":44}]},
 {"stack":[{"family":"random","rows":$((N1 * 3)),"cols":$N1,"row_len":{"dist":"constant","nnz":4},"seed":45},{"family":"random","rows":$((N1 / 50)),"cols":$N1,"row_len":{"dist":"constant","nnz":256},"seed":46}]},
 {"stack":[{"family":"banded","n":$N1,"half_bandwidth":16,"seed":47},{"family":"power-law","n":$N1,"mean":8.0,"exponent":1.9,"seed":48},{"family":"stencil","stencil":"3d7","n":$N3}]},
 {"stack":[{"family":"random","rows":$N1,"cols":$N1,"row_len":{"dist":"normal","mean":32.0,"std":4.0},"seed":51},{"family":"random","rows":$((N1 / 100)),"cols":$N1,"row_len":{"dist":"uniform","min":200,"max":800},"seed":52}]},
 {"stack":[{"family":"kronecker","matrix":"$KM","pattern":{"kind":"dense","k":$K},"seed":53},{"family":"stencil","stencil":"2d5","n":$N2}]}]
JSON
cat > "$W/large.json" <<JSON
[{"family":"stencil","stencil":"2d5","n":$N4},
 {"family":"stencil","stencil":"3d27","n":$N3},
 {"family":"random","rows":$N1,"cols":$N1,"row_len":{"dist":"uniform","min":1,"max":64},"seed":32},
 {"family":"power-law","n":$((N1 * 2)),"mean":8.0,"exponent":2.1,"seed":36}]
JSON

run() { # set rule precision budget-seconds inputs…
    local set=$1 rule=$2 p=$3 b=$4; shift 4
    say "== $set, $rule rule, $p ($# inputs, budget ${b} s)"
    local t0=$SECONDS
    "$BIN" optimize "$@" --precision "$p" --measure --backend "$BACKEND" --overlap "$rule" ${PROFILE:+--profile "$PROFILE"} \
        --overlap-splits "$SPLITS" ${ANY:+--any-backend} ${RUNS:+--runs $RUNS --warmup 1} \
        --budget-s "$b" --summary-only --json-out "$W/conc-$set-$rule-$p.json" \
        > "$W/out-$set-$rule-$p.txt" 2>&1
    local rc=$?
    grep -v '^\s*$' "$W/out-$set-$rule-$p.txt" | grep -iv '^skipped' | tail -4 | tee -a "$LOG"
    grep -i 'error\|differs\|skipped' "$W/out-$set-$rule-$p.txt" | head -5 | tee -a "$LOG"
    say "   [rc=$rc in $((SECONDS - t0)) s]"
}
[ "$BACKEND" = cpu ] && ANY=1
say "serial vs concurrent on $GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || echo "$BACKEND backend")"
say "$("$BIN" --version 2>/dev/null); ${#REAL[@]} SuiteSparse files; splits $SPLITS"
t0=$SECONDS
run het concurrent f64 "${BHETC:-70}" "$W/het.json"
run het serial f64 "${BHETS:-40}" "$W/het.json"
run real concurrent f64 "${BREAL:-30}" "${REAL[@]}"
run large concurrent f64 "${BLARGE:-30}" "$W/large.json"
run het concurrent f32 "${BHET32:-30}" "$W/het.json"
say "[all in $((SECONDS - t0)) s]"

python3 "$(dirname "$0")/concurrent_table.py" "$W" "$GPU" > "$W/concurrent-$GPU.md" \
    || echo "(python3 failed: table not written)"
tar -czf "$OUT/concurrent-$GPU.tar.gz" -C "$W" $(cd "$W" && ls conc-*.json out-*.txt "concurrent-$GPU.md" "log-$GPU.txt" 2>/dev/null)
ls -la "$OUT"
# The table last (matrix, plan, blocks, serial µs, concurrent µs, best single µs, predicted by
# the serial / concurrent rule, overlapped, max error); µs, warm mean.
python3 "$(dirname "$0")/concurrent_table.py" "$W" "$GPU" --short
