#!/usr/bin/env bash
# Collect a training corpus on the device machine (`sparsecast collect`, docs/ACCURACY.md).
# Runs from the repository root with the release binary (.dev/bin/sparsecast, or the compressed
# .dev/sparsecast.xz or .gz) and the SuiteSparse matrices in $MATS_SRC (copied to $MATS).
# Resumable: call it again (same machine or a fresh one with the table carried back in
# .dev/table/corpus-$GPU$TAG.jsonl.gz) to continue.
#
#   GPU=h100 BUDGET=500 bash scripts/device_collect.sh                        # the seed-1 corpus
#   GPU=h100 TAG=-s3 SEED=3 KRON=1 GENERATED=0 MIXTURES=120 MAX_NNZ=30000000 \
#       MATS_SRC=.dev/mats-all ONLY=.dev/only-s3.txt BUDGET=240 \
#       bash scripts/device_collect.sh                                        # session 10's table
#   GPU=h100 TAG=-s5 SEED=5 KRON=1 GENERATED=0 MIXTURES=0 MAX_NNZ=30000000 MATS_SRC=.dev/mats-xz \
#       ONLY=.dev/only-s5.txt BUDGET=230 bash scripts/device_collect.sh     # session 11's table
#   GPU=h200 TAG=-s6 SEED=6 KRON=0 GENERATED=110 MIXTURES=60 MIN_NNZ=1000000 MAX_NNZ=40000000 \
#       MATS=/tmp/none MATS_SRC=/tmp/none BUDGET=420 bash scripts/device_collect.sh  # session 12
#   GPU=h200 TAG=-s21 SEED=21 KRON=0 GENERATED=0 MIXTURES=0 LONG_BLOCKS=300 MIN_NNZ=10000 \
#       MAX_NNZ=30000000 MATS=/tmp/none MATS_SRC=/tmp/none BUDGET=500 \
#       bash scripts/device_collect.sh   # blocks of long rows (session 38)
#   GPU=h100 TAG=-bro CONFIGS=ell-bro ONLY=.dev/only-bro.txt MATS_SRC=.dev/mats-all \
#       bash scripts/device_collect.sh   # fill in ELL-BRO on seed-1 rows that lack it (train
#                                        # merges the rows of one matrix across tables)
# (ONLY: the draw's ids to measure, here every expansion and mixture but not the files, which
#  the seed-1 table holds; made with `collect --list` on the same arguments.)
#
# The working tree (65 MiB by session 25) exceeds a device call's 64 MiB: park the training tables
# first (`bash scripts/device_park.sh park`, then `restore`).
#
# Writes $OUT/corpus-$GPU$TAG.jsonl.gz (the whole table so far) and $OUT/collect-$GPU$TAG.log.gz
# (the whole log) and prints the log's tail.
set -u
OUT=${OUT:-$PWD/.dev/out}
MATS=${MATS:-/root/mats}
MATS_SRC=${MATS_SRC:-.dev/mats}
GPU=${GPU:?set GPU=h100 or h200}
TAG=${TAG:-}
TABLE=${TABLE:-/root/corpus-$GPU$TAG.jsonl}
if [ -z "${BIN:-}" ]; then
    BIN=$PWD/.dev/bin/sparsecast
    # Compressed: the 64 MiB carry. `SPARSECAST_NO_EMBED=1 cargo build --release`, strip, then
    # `xz -9e` leaves the binary 2.4 MB (collect needs no profile; 19 MB with both profiles).
    for z in xz gz; do
        if [ ! -x "$BIN" ] && [ -f .dev/sparsecast.$z ]; then
            BIN=/tmp/sparsecast-bin/sparsecast
            mkdir -p /tmp/sparsecast-bin && $( [ $z = xz ] && echo xz || echo gzip ) -dc .dev/sparsecast.$z > "$BIN" && chmod +x "$BIN"
        fi
    done
fi
mkdir -p "$OUT" "$MATS"
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export SPARSECAST_CACHE=${SPARSECAST_CACHE:-/tmp/sparsecast-cache}
# TRACE=1: every phase of every configuration's measurement is logged (`trace:` lines, kept in
# $OUT/collect-$GPU$TAG.log.gz beside the table; the console shows the rest).
[ "${TRACE:-0}" = 1 ] && export SPARSECAST_TRACE=1
[ -d "$MATS_SRC" ] && cp -n "$MATS_SRC"/*.mtx.gz "$MATS"/ 2>/dev/null
# Files packed as .mtx.xz (`zcat F.mtx.gz | xz -9e`: the 70 shared files 28 → 16 MB) are unpacked.
if [ -d "$MATS_SRC" ]; then
    for f in "$MATS_SRC"/*.mtx.xz; do
        [ -f "$f" ] && [ ! -f "$MATS/$(basename "$f" .xz).gz" ] && { xz -dc "$f" | gzip -1 > "$MATS/$(basename "$f" .xz).gz" & }
    done
    wait
fi
# A table carried back from an earlier machine continues there.
[ ! -s "$TABLE" ] && [ -s ".dev/table/corpus-$GPU$TAG.jsonl.gz" ] && gunzip -c ".dev/table/corpus-$GPU$TAG.jsonl.gz" > "$TABLE"
echo "corpus: $(ls "$MATS" | wc -l) files; $(nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader)"
t0=$SECONDS
# HARD=S: the collect is killed after S seconds whatever --budget-s says (that budget is checked
# only between matrices, and one large stack can run 40 s past it: session 64 lost a whole device
# call so). The rows written so far stay: collect flushes each row and drops a cut last line when
# it resumes.
# HYB_LAUNCH=plain|programmatic: HYB's launch sequence to time (collect --hyb-launch). Unset, collect
# times the one the embedded profile of the GPU models — but the compressed device binaries embed
# none (SPARSECAST_NO_EMBED=1), so they time the plain one: pass HYB_LAUNCH=programmatic for the
# H200 whose profile models it (since session 83; the rows say which, `"kernel": "hyb-pdl"`).
${HARD:+timeout -s KILL "$HARD"} "$BIN" collect --backend cuda ${HYB_LAUNCH:+--hyb-launch "$HYB_LAUNCH"} --corpus "$MATS" --generated "${GENERATED:-400}" --seed "${SEED:-1}" \
    --kron-per-file "${KRON:-1}" ${MAX_KRON:+--max-kron-nnz "$MAX_KRON"} --mixtures "${MIXTURES:-0}" \
    ${LONG_BLOCKS:+--long-blocks "$LONG_BLOCKS"} --min-nnz "${MIN_NNZ:-1000}" --max-nnz "${MAX_NNZ:-100000000}" \
    ${ONLY:+--only "$ONLY"} ${CONFIGS:+--configs "$CONFIGS"} --out "$TABLE" --budget-s "${BUDGET:-500}" 2>&1 \
    | tee >(gzip -c > "$OUT/collect-$GPU$TAG.log.gz") | grep -v '^trace:' | tail -40
rc=${PIPESTATUS[0]}
echo "[collect: $rc in $((SECONDS - t0)) s; $(wc -l < "$TABLE") rows]"
gzip -9 -c "$TABLE" > "$OUT/corpus-$GPU$TAG.jsonl.gz"
ls -la "$OUT"
