#!/usr/bin/env bash
# The optimizer on one GPU (issue 16, docs/OPTIMIZER.md): for SuiteSparse matrices, generated
# large matrices and heterogeneous matrices, in f32 and f64, `optimize --measure --calibrate`
# with the embedded profile's sparsecast model: the answer's measured time (plan or best single
# configuration) against the best measured single configuration and the best cuSPARSE
# algorithm, predicted against measured, and the per-block cost of the plan-time rule.
# Runs from the repository root with the stripped binary in .dev/bin/sparsecast and the
# SuiteSparse files in .dev/mats/.
#
#   GPU=h200 bash scripts/device_optimizer.sh            # ≈ 5 minutes (budgets: BHET, BREAL, BLARGE)
#   GPU=h100 SUBSET=all bash scripts/device_optimizer.sh # every SuiteSparse file (longer)
#   BACKEND=cpu GPU=h200 SCALE=tiny bash scripts/device_optimizer.sh   # dry run on the CPU
#   PROFILE=profiles/h100.json.gz GPU=h100 BIN=… bash scripts/device_optimizer.sh  # a binary
#                                            # built without profiles (SPARSECAST_NO_EMBED=1)
#   TUNE=1 GPU=h100 bash scripts/device_optimizer.sh   # also the tuned answer (optimize --tune),
#                                            # timed again beside the best single configuration
#   SETS="het" BHET=200 … bash scripts/device_optimizer.sh   # only these sets (het real large)
#   HET_f64=6,7 LARGE_f32=10 …   # only these matrices of the heterogeneous / large set (1-based)
#   HET_f64=6,7,8 HET_f32=9,10 …                          # only these heterogeneous matrices
#                                            # (1-based, in het.json's order) of that precision
#   PRECS=f32 …                                           # only this precision (default: f64 then f32)
#
# Writes $OUT/optimizer-$GPU.tar.gz (one JSON per set and precision, the log, optimizer-$GPU.md:
# the tables to paste into docs/OPTIMIZER.md) and prints the summaries. The calibration line
# ("serial per-block cost … µs", from split plans run serially) is what `optimize --overlap
# serial --block-cost-us` should be given on this GPU; "concurrent: per-branch cost" (from the
# DP's plans run concurrently, the default mode since session 48) what the concurrent rule should.
set -u
OUT=${OUT:-$PWD/.dev/out}
MATS=${MATS:-$PWD/.dev/mats}
GPU=${GPU:?set GPU=h100 or h200}
BIN=${BIN:-$PWD/.dev/bin/sparsecast}
BACKEND=${BACKEND:-cuda}
SCALE=${SCALE:-full}
W=${WORK:-/tmp/optimizer-$GPU}
mkdir -p "$OUT" "$W"
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export SPARSECAST_CACHE=${SPARSECAST_CACHE:-/tmp/scc}
LOG="$W/log.txt"
: > "$LOG"
say() { echo "$@" | tee -a "$LOG"; }

# SuiteSparse: every other file by name (SUBSET=all: every file); conf5 is complex.
mapfile -t ALLM < <(ls "$MATS"/*.mtx.gz 2>/dev/null | grep -v conf5 | sort)
if [ "${SUBSET:-half}" = all ]; then REAL=("${ALLM[@]}"); else
    REAL=(); for i in "${!ALLM[@]}"; do [ $((i % 2)) -eq 0 ] && REAL+=("${ALLM[$i]}"); done
fi
# The first that exists (not `ls A B | head -1`: ls sorts its operands, which made both 4elt
# before session 20).
first() { for f in "$@"; do [ -f "$f" ] && { echo "$f"; return; }; done; }
KM=$(first "$MATS"/rajat19.mtx.gz "${ALLM[@]}")   # an irregular circuit
KM2=$(first "$MATS"/hep-th.mtx.gz "${ALLM[@]}")   # a power-law graph

# Sizes: full on the GPU (10^7–10^8 entries), tiny for the CPU dry run.
# Kronecker expansions (session 20, when KM / KM2 became rajat19 / hep-th — 5.4·10³ and
# 1.6·10⁴ non-zeros): KL for the large set's dense pattern, KA / KB for the heterogeneous
# stacks' random patterns, so that each expansion holds 10⁶–10⁷ non-zeros beside its stencil.
if [ "$SCALE" = tiny ]; then N1=2000; N2=40; N3=20; N4=40; LONG=300; K=2; KL=2; KA=4; KB=4; else
    N1=${N1:-500000}; N2=700; N3=100; N4=2000; LONG=40000; K=4; KL=16; KA=64; KB=16; fi
cat > "$W/large.json" <<EOF
[{"family":"stencil","stencil":"3d7","n":$((N3 * 16 / 10))},
 {"family":"stencil","stencil":"2d5","n":$N4},
 {"family":"stencil","stencil":"3d27","n":$N3},
 {"family":"random","rows":$((N1 * 2)),"cols":$((N1 * 2)),"row_len":{"dist":"constant","nnz":16},"seed":31},
 {"family":"random","rows":$N1,"cols":$N1,"row_len":{"dist":"uniform","min":1,"max":64},"seed":32},
 {"family":"random","rows":$N1,"cols":$N1,"row_len":{"dist":"normal","mean":32.0,"std":8.0},"seed":33},
 {"family":"banded","n":$((N1 * 2)),"half_bandwidth":8,"seed":34},
 {"family":"block-diagonal","blocks":$((N1 / 2)),"block_size":6,"seed":35},
 {"family":"power-law","n":$((N1 * 2)),"mean":8.0,"exponent":2.1,"seed":36},
 {"family":"kronecker","matrix":"$KM2","pattern":{"kind":"dense","k":$KL},"seed":37}]
EOF
# Heterogeneous: power law on a stencil, circuit-like (a few very long rows), Kronecker of
# irregular matrices, block mixtures, short rows with a band of long ones.
cat > "$W/het.json" <<EOF
[{"stack":[{"family":"power-law","n":$N1,"mean":12.0,"exponent":2.1,"seed":41},{"family":"stencil","stencil":"2d5","n":$N2}]},
 {"stack":[{"family":"stencil","stencil":"2d5","n":$((N2 * 3 / 2))},{"family":"random","rows":200,"cols":$((N2 * N2)),"row_len":{"dist":"uniform","min":$((LONG / 8)),"max":$LONG},"seed":42}]},
 {"stack":[{"family":"random","rows":$((N1 * 3)),"cols":$N1,"row_len":{"dist":"constant","nnz":3},"seed":43},{"family":"random","rows":50,"cols":$N1,"row_len":{"dist":"constant","nnz":$((LONG * 5))},"seed":44}]},
 {"stack":[{"family":"random","rows":$((N1 * 3)),"cols":$N1,"row_len":{"dist":"constant","nnz":4},"seed":45},{"family":"random","rows":$((N1 / 50)),"cols":$N1,"row_len":{"dist":"constant","nnz":256},"seed":46}]},
 {"stack":[{"family":"banded","n":$N1,"half_bandwidth":16,"seed":47},{"family":"power-law","n":$N1,"mean":8.0,"exponent":1.9,"seed":48},{"family":"stencil","stencil":"3d7","n":$N3}]},
 {"stack":[{"family":"block-diagonal","blocks":$((N1 / 5)),"block_size":8,"seed":49},{"family":"power-law","n":$N1,"mean":4.0,"exponent":2.5,"seed":50}]},
 {"stack":[{"family":"random","rows":$N1,"cols":$N1,"row_len":{"dist":"normal","mean":32.0,"std":4.0},"seed":51},{"family":"random","rows":$((N1 / 100)),"cols":$N1,"row_len":{"dist":"uniform","min":200,"max":800},"seed":52}]},
 {"stack":[{"family":"kronecker","matrix":"$KM","pattern":{"kind":"random","k":$KA,"density":0.3},"seed":53},{"family":"stencil","stencil":"2d5","n":$N2}]},
 {"stack":[{"family":"kronecker","matrix":"$KM2","pattern":{"kind":"random","k":$KB,"density":0.5},"seed":54},{"family":"stencil","stencil":"3d27","n":$((N3 / 2))}]},
 {"family":"power-law","n":$((N1 * 2)),"mean":16.0,"exponent":2.0,"seed":55}]
EOF

run() { # set precision budget-seconds inputs…
    local set=$1 p=$2 b=$3; shift 3
    say "== $set $p ($# inputs, budget ${b} s)"
    "$BIN" optimize "$@" --precision "$p" --measure --backend "$BACKEND" --calibrate ${PROFILE:+--profile "$PROFILE"} \
        ${ANY:+--any-backend} ${RUNS:+--runs $RUNS --warmup 1} ${TUNE:+--tune} --budget-s "$b" --summary-only \
        --json-out "$W/opt-$set-$p.json" 2>&1 | grep -v '^skipped\|^\s*$' | tail -${TAIL:-6} | tee -a "$LOG"
}
[ "$BACKEND" = cpu ] && ANY=1
say "optimizer on $GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || echo "$BACKEND backend")"
say "$(${BIN} --version 2>/dev/null); ${#REAL[@]} SuiteSparse files; kron of $(basename "$KM") and $(basename "$KM2")"
t0=$SECONDS
# Heterogeneous first (the plans' targets), then the SuiteSparse and large sets (the ≤ 1.02×
# target); the budgets stop taking new inputs, so one call stays within ≈ 5 minutes.
for p in ${PRECS:-f64 f32}; do
    for set in ${SETS:-het real large}; do case $set in
        het) h="$W/het.json"; pick="HET_$p"; if [ -n "${!pick:-}" ]; then
                 h="$W/het-$p.json"; python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); json.dump([a[int(i)-1] for i in sys.argv[2].split(",")], open(sys.argv[3],"w"))' "$W/het.json" "${!pick}" "$h"; fi
             run het "$p" "${BHET:-75}" "$h" ;;
        real) run real "$p" "${BREAL:-30}" "${REAL[@]}" ;;
        large) l="$W/large.json"; pick="LARGE_$p"; if [ -n "${!pick:-}" ]; then
                 l="$W/large-$p.json"; python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); json.dump([a[int(i)-1] for i in sys.argv[2].split(",")], open(sys.argv[3],"w"))' "$W/large.json" "${!pick}" "$l"; fi
             run large "$p" "${BLARGE:-25}" "$l" ;;
    esac; done
done
python3 "$(dirname "$0")/replay_adoption.py" "$W" 2>&1 | tee -a "$LOG" | head -12
say "[all in $((SECONDS - t0)) s]"

# The tables for docs/OPTIMIZER.md.
python3 "$(dirname "$0")/optimizer_tables.py" "$W" "$GPU" > "$W/optimizer-$GPU.md" \
    || echo "(python3 failed: tables not written)"
head -12 "$W/optimizer-$GPU.md"
grep -h "calibration" "$LOG" | sed 's/^ *//'
cp "$LOG" "$W/log-$GPU.txt"
tar -czf "$OUT/optimizer-$GPU.tar.gz" -C "$W" $(cd "$W" && ls opt-*.json optimizer-$GPU.md log-$GPU.txt 2>/dev/null)
ls -la "$OUT"
