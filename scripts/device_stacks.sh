#!/usr/bin/env bash
# One device call of stacks-only collection (session 59): optionally `selftest --backend cuda`
# first, then each seed of $SEEDS in turn (scripts/seed_args.sh) until $END seconds have passed
# since the start, each continuing the table carried in .dev/table/ (scripts/device_collect.sh).
# $END is checked only between matrices (a stack can run 40 s past it); LIMIT (the call's
# timeout, default 600) is a hard stop: the collect is killed 35 s before it, so that the table
# written so far is packed into $OUT in time.
#
# Prepare here (the collect binary needs no profile; 2.8 MB compressed):
#   SPARSECAST_NO_EMBED=1 cargo build --release && mkdir -p .dev/stk/table
#   strip -o .dev/stk/sc target/release/sparsecast && xz -9e -c .dev/stk/sc > .dev/stk/sparsecast.xz && rm .dev/stk/sc
#   cp data/corpus/h200-s17.jsonl.gz .dev/stk/table/corpus-h200-s17.jsonl.gz   # each table to continue
#   PROFILES=1 DOCS=1 bash scripts/device_park.sh park                          # the 64 MiB carry
# Device call (carry [".dev/stk"], timeout 600):
#   GPU=h200 SEEDS="s17" SELFTEST=1 END=545 bash scripts/device_stacks.sh
# Then `bash scripts/device_park.sh restore` and copy $OUT/corpus-$GPU-$SEED.jsonl.gz to
# data/corpus/$GPU-$SEED.jsonl.gz (and into .dev/stk/table/ for the next call).
set -u
GPU=${GPU:?set GPU=h100 or h200}
DIR=${DIR:-.dev/stk}
OUT=${OUT:-$PWD/.dev/out}
mkdir -p .dev/table "$OUT" && cp "$DIR/sparsecast.xz" .dev/ && cp "$DIR"/table/* .dev/table/ 2>/dev/null
source scripts/seed_args.sh
T0=$SECONDS
if [ "${SELFTEST:-0}" = 1 ]; then
    mkdir -p /tmp/sparsecast-bin && xz -dc .dev/sparsecast.xz > /tmp/sparsecast-bin/sparsecast && chmod +x /tmp/sparsecast-bin/sparsecast
    for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
        [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    done
    /tmp/sparsecast-bin/sparsecast selftest --backend cuda --json "$OUT/selftest.json" > "$OUT/selftest.log" 2>&1
    echo "selftest rc=$? in $((SECONDS - T0)) s"
    grep -E "FAIL|cases:" "$OUT/selftest.log" | tail -5
    gzip -9 "$OUT/selftest.json"
fi
for s in ${SEEDS:?set SEEDS, e.g. \"s17\"}; do
    left=$((${END:-540} - (SECONDS - T0)))
    hard=$((${LIMIT:-600} - 35 - (SECONDS - T0)))
    # (`timeout` takes 0 as no limit and refuses a negative one.)
    [ $left -lt 30 ] || [ $hard -lt 30 ] && break
    env $(seed_args "$s") GPU="$GPU" TAG=-"$s" SEED="${s#s}" MATS=/tmp/none MATS_SRC=/tmp/none \
        BUDGET=$left HARD=$hard OUT="$OUT" bash scripts/device_collect.sh 2>&1 | grep -E '^\[collect|stopped|done' | tail -4
done
ls -la "$OUT"
