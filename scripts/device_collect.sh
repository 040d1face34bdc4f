#!/usr/bin/env bash
# Collect the training corpus on the device machine (`sparsecast collect`, docs/ACCURACY.md).
# Runs from the repository root with the stripped release binary in .dev/bin/sparsecast and the
# SuiteSparse matrices in .dev/mats/ (copied to $MATS, which lasts while the machine stays warm).
# Resumable: call it again (same machine or a fresh one with the table carried back) to continue.
#
#   GPU=h100 BUDGET=500 bash scripts/device_collect.sh
#
# Writes $OUT/corpus-$GPU.jsonl.gz (the whole table so far) and the log.
set -u
OUT=${OUT:-$PWD/.dev/out}
MATS=${MATS:-/root/mats}
GPU=${GPU:?set GPU=h100 or h200}
TABLE=${TABLE:-/root/corpus-$GPU.jsonl}
BIN=${BIN:-$PWD/.dev/bin/sparsecast}
mkdir -p "$OUT" "$MATS"
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export SPARSECAST_CACHE=/tmp/sparsecast-cache
[ -d .dev/mats ] && cp -n .dev/mats/*.mtx.gz "$MATS"/ 2>/dev/null
# A table carried back from an earlier machine continues there.
[ ! -s "$TABLE" ] && [ -s ".dev/table/corpus-$GPU.jsonl.gz" ] && gunzip -c ".dev/table/corpus-$GPU.jsonl.gz" > "$TABLE"
echo "corpus: $(ls "$MATS" | wc -l) files; $(nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader)"
t0=$SECONDS
"$BIN" collect --backend cuda --corpus "$MATS" --generated "${GENERATED:-400}" --seed 1 \
    --out "$TABLE" --budget-s "${BUDGET:-500}" 2>&1 | tail -40
echo "[collect: ${PIPESTATUS[0]} in $((SECONDS - t0)) s; $(wc -l < "$TABLE") rows]"
gzip -9 -c "$TABLE" > "$OUT/corpus-$GPU.jsonl.gz"
ls -la "$OUT"
