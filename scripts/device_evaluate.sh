#!/usr/bin/env bash
# The H200 evaluation of docs/EVALUATION.md in one GPU session: a device profile (unless one is
# given), then `sparsecast evaluate` over the SuiteSparse corpus and the default generated set,
# then the report. Runs on the device machine from the repository root with the stripped release
# binary in .dev/; writes everything under $OUT/eval-h200 (or .dev/out).
#
#   cargo build --release && mkdir -p .dev && strip -o .dev/sparsecast target/release/sparsecast
#   then on the GPU machine (carry .dev):  bash scripts/device_evaluate.sh
#
# Environment:
#   PROFILE  device profile to use (default: profiles/h200.json.gz if committed, else measured into
#            $OUT/h200.json with `sparsecast instrument --backend cuda`)
#   CORPUS   SuiteSparse folder (default: the first of shared/, ../shared/, /work/shared/)
#   RESUME   results of an earlier, interrupted session (default .dev/eval-h200, if present):
#            copied into the output first, so the run continues where it stopped
#   LIMIT_S  seconds after which evaluate is stopped (default 540, under a 600 s session limit);
#            the records written so far are kept and the report covers them
#   RETRY_FAILED=1  measure again the configurations recorded as failed
set -u
OUT=${OUT:-$PWD/.dev/out}
BIN=${BIN:-$PWD/.dev/sparsecast}
EVAL="$OUT/eval-h200"
mkdir -p "$EVAL"
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export SPARSECAST_CACHE=/tmp/sparsecast-cache
if [ -z "${CORPUS:-}" ]; then
    for c in shared/matrices/suitesparse ../shared/matrices/suitesparse /work/shared/matrices/suitesparse; do
        if [ -d "$c" ]; then CORPUS=$c; break; fi
    done
fi
[ -d "${CORPUS:-}" ] || { echo "no SuiteSparse corpus found: set CORPUS"; exit 1; }
RESUME=${RESUME:-.dev/eval-h200}
if [ -f "$RESUME/results.jsonl" ]; then
    cp "$RESUME/results.jsonl" "$EVAL/" && cp -f "$RESUME/run.json" "$EVAL/" 2>/dev/null
    echo "resuming from $RESUME ($(wc -l < "$EVAL/results.jsonl") records)"
fi
step() { local name=$1; shift; local t0=$SECONDS; "$@"; echo "[$name: rc=$? in $((SECONDS - t0)) s]"; }
if [ -z "${PROFILE:-}" ]; then
    if [ -f profiles/h200.json.gz ]; then
        PROFILE=profiles/h200.json.gz
    else
        PROFILE="$OUT/h200.json"
        step instrument "$BIN" instrument --backend cuda --out "$PROFILE" > "$OUT/instrument.log" 2>&1
        tail -3 "$OUT/instrument.log"
    fi
fi
step evaluate timeout -s INT "${LIMIT_S:-540}" "$BIN" evaluate --corpus "$CORPUS" --generated default \
    --backend cuda --profile "$PROFILE" --out "$EVAL" ${RETRY_FAILED:+--retry-failed} > "$OUT/evaluate.log" 2>&1
# A stopped run wrote no report: write one from the records so far.
[ -f "$EVAL/report.md" ] || step report "$BIN" evaluate --report-only --out "$EVAL" >> "$OUT/evaluate.log" 2>&1
grep -E "^\[|records|warning|error" "$OUT/evaluate.log" | tail -20
sed -n '/^## Accuracy/,/^## Skipped/p' "$EVAL/report.md" | grep -E "^\||^#" | head -80
