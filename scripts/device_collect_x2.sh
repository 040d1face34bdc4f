#!/usr/bin/env bash
# Two seeds' collects at once on an `nvidia-h200-x2` (session 69): one queue of seeds a GPU, each
# collect with its own CUDA_VISIBLE_DEVICES, kernel cache, table and log; every collect of a
# queue gets the time left before DEADLINE seconds (from the start) and stops resumably. Two GPUs
# for one held machine double the measurements a device second buys. The two GPUs of that host
# time the same configurations 0.6-1.3 % slower than the single H200 (median; medians of the
# difference 1.2-1.4 %, the H200's noise floor 1.2 %; data/corpus/h200-s23-x2-repeat,
# -s28-x2-repeat, -files-x2-repeat; docs/ACCURACY.md session 69). Session 69's s28-s35 ran this
# script's first form (the same queues and arguments; the files' folder for every seed).
#
#   Q0="28 29" Q1="30 31" DEADLINE=540 bash scripts/device_collect_x2.sh
#
# Inputs in DIR (default .dev/k23, carried): sparsecast.xz (a release binary built with
# SPARSECAST_NO_EMBED=1, stripped, xz), mats-xz/*.mtx.xz (the training files the expansions
# need), only-sN.txt (the draw's ids to measure: `collect --list` on seed N's arguments,
# scripts/seed_args.sh; without it the seed's whole draw, e.g. a stacks-only seed), and
# .dev/table/corpus-h200-sN.jsonl.gz to continue a table. A queue entry `N-x` measures seed N's
# draw listed in only-sN-x.txt into its own table `-sN-x` (a repeat).
# Writes $OUT/corpus-h200-sN.jsonl.gz and its log per entry: a device call returns at most 8
# files, so at most four entries a call.
set -u
T0=$SECONDS
DEADLINE=${DEADLINE:-540}
DIR=${DIR:-.dev/k23}
mkdir -p /tmp/sc && [ -x /tmp/sc/sparsecast ] || xz -dc "$DIR/sparsecast.xz" > /tmp/sc/sparsecast
chmod +x /tmp/sc/sparsecast
nvidia-smi --query-gpu=index,name,clocks.sm,memory.used --format=csv,noheader
mkdir -p /root/mats
for f in "$DIR"/mats-xz/*.mtx.xz; do
    xz -dc "$f" | gzip -1 > "/root/mats/$(basename "$f" .xz).gz" &
done
wait
queue() { # $1 = GPU index, the rest = queue entries
    local g=$1 s b left args only mats
    shift
    for s in "$@"; do
        b=${s%%-*}
        args=$(source scripts/seed_args.sh; seed_args s"$b")
        # The ids to measure where DIR lists them, else the seed's whole draw.
        only=
        [ -f "$DIR/only-s$s.txt" ] && only=ONLY=$DIR/only-s$s.txt
        # The files only where the seed expands them: in the corpus folder collect would draw
        # them too (session 69's first s36 and s37 calls timed the 69 files first).
        mats=/root/mats
        if [[ $args == *KRON=0* ]]; then
            mats=/tmp/no-mats
            mkdir -p $mats
        fi
        left=$((DEADLINE - (SECONDS - T0)))
        [ $left -lt 60 ] && { echo "gpu$g: no time left for s$s"; break; }
        # shellcheck disable=SC2086 # $args and $only are VAR=value words for env
        CUDA_VISIBLE_DEVICES=$g SPARSECAST_CACHE=/tmp/sc-cache-$g \
            env GPU=h200 TAG=-s"$s" SEED="$b" $args MATS=$mats MATS_SRC=/nonexistent $only \
            BIN=/tmp/sc/sparsecast OUT="$OUT" BUDGET=$((left - 45)) HARD=$((left - 8)) \
            bash scripts/device_collect.sh 2>&1 \
            | grep -E '^\[|rows written|stopped by' | tail -4 | sed "s/^/gpu$g s$s: /"
    done
}
queue 0 ${Q0:-} > /tmp/q0.log 2>&1 &
queue 1 ${Q1:-} > /tmp/q1.log 2>&1 &
wait
cat /tmp/q0.log /tmp/q1.log
ls -la "$OUT"
