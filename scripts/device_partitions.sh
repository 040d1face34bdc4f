#!/usr/bin/env bash
# Green-context partitions as cross-architecture targets (issue 15, docs/CROSS_ARCH.md,
# "Partitions"): on one GPU, for each partition of SMS (default 8 16 32 72) SMs,
#  1. `instrument --sms N --cross-from profiles/$GPU.json.gz`: 003's 17 benchmark matrices per
#     precision measured on the partition (the target profile of 003's model);
#  2. `collect --sms N --only data/corpus/subset-partitions.txt`: 81 matrices of the seed-1
#     corpus (6 generated of 1-4e6 non-zeros, the 69 SuiteSparse files, 6 small generated), f32
#     and f64, every configuration, into one table per partition (capped at BUDGET s each).
# The whole GPU's committed table data/corpus/$GPU.jsonl.gz is the reference; score offline with
#   bash scripts/partitions_offline.sh partitions-$GPU.tar.gz
#
#   bash scripts/device_partitions.sh              # the GPU present (h200 or h100, read off nvidia-smi)
#
# Needs .dev/bin/sparsecast and .dev/mats/*.mtx.gz (the 70 files the committed tables were drawn
# from: ids mats/NAME; checked first with `collect --list --only`, which names any id the draw
# lacks). Device time about 5 min: per partition ~5 s of instrument and at most BUDGET=65 s of
# collect, the 8-SM partition the slowest. Writes $OUT/partitions-$GPU.tar.gz (sms$N.jsonl.gz and
# cross-sms$N.json per partition, log-partitions-$GPU.txt) and $OUT/log-partitions-$GPU.txt.
# CPU dry run (no --sms there: each "partition" is the whole CPU; a few matrices):
#   BACKEND=cpu SMS="8 16" LIMIT=6 BUDGET=60 MATS=/tmp/mats OUT=/tmp/pdry bash scripts/device_partitions.sh
set -u
OUT=${OUT:-$PWD/.dev/out}
BIN=${BIN:-$PWD/.dev/bin/sparsecast}
MATS=${MATS:-$PWD/.dev/mats}
BACKEND=${BACKEND:-cuda}
SMS=${SMS:-8 16 32 72}
BUDGET=${BUDGET:-65}
LIST=${LIST:-data/corpus/subset-partitions.txt}
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export SPARSECAST_CACHE=${SPARSECAST_CACHE:-/tmp/scc}
if [ -z "${GPU:-}" ]; then
    case "$( (nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null || true) | head -1)" in
        *H200*) GPU=h200 ;;
        *H100*) GPU=h100 ;;
        *) GPU=h200 ;;   # the CPU dry run: the H200's reference
    esac
fi
[ "$(basename "$MATS")" = mats ] || { echo "MATS must be a directory named mats (ids mats/NAME)" >&2; exit 2; }
W=$(mktemp -d)
mkdir -p "$OUT"
LOG=$W/log-partitions-$GPU.txt
if [ -n "${LIMIT:-}" ]; then
    grep -v '^#' "$LIST" | head -"$LIMIT" > "$W/list.txt"
    LIST=$W/list.txt
fi

run() {
    [ "$BACKEND" = cuda ] && nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
    echo "reference: profiles/$GPU.json.gz, data/corpus/$GPU.jsonl.gz; $(grep -cv '^#' "$LIST") matrices per partition: $LIST"
    # Every listed id must be in this corpus draw (else collect stops at once, per partition).
    if ! "$BIN" collect --list --corpus "$MATS" --generated 400 --seed 1 --only "$LIST" | tail -1; then
        echo "the subset does not match the draw of $MATS; stopping" >&2
        return 1
    fi
    local T0=$SECONDS N PART t0
    for N in $SMS; do
        PART="--sms $N"
        [ "$BACKEND" = cpu ] && PART=""
        echo "== $N SMs: instrument --cross-from profiles/$GPU.json.gz"
        t0=$SECONDS
        "$BIN" instrument --backend "$BACKEND" $PART --statistic median \
            --cross-from "profiles/$GPU.json.gz" --out "$W/cross-sms$N.json" 2>&1 | tail -4
        echo "[instrument $N SMs: rc ${PIPESTATUS[0]} in $((SECONDS - t0)) s]"
        echo "== $N SMs: collect (budget $BUDGET s)"
        t0=$SECONDS
        "$BIN" collect --backend "$BACKEND" $PART --corpus "$MATS" --generated 400 --seed 1 \
            --only "$LIST" --out "$W/sms$N.jsonl" --budget-s "$BUDGET" 2>&1 | tail -4
        echo "[collect $N SMs: rc ${PIPESTATUS[0]} in $((SECONDS - t0)) s; $(wc -l < "$W/sms$N.jsonl" 2>/dev/null || echo 0) rows]"
        [ -s "$W/sms$N.jsonl" ] && gzip -9 "$W/sms$N.jsonl"
    done
    echo "[all partitions: $((SECONDS - T0)) s]"
}

run 2>&1 | tee "$LOG"
cp "$LOG" "$OUT/log-partitions-$GPU.txt"
FILES=("log-partitions-$GPU.txt")
for N in $SMS; do
    for f in "sms$N.jsonl.gz" "cross-sms$N.json"; do
        [ -s "$W/$f" ] && FILES+=("$f")
    done
done
tar -czf "$OUT/partitions-$GPU.tar.gz" -C "$W" "${FILES[@]}"
ls -la "$OUT"
