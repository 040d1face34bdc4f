#!/usr/bin/env bash
# Two device jobs at once on an `nvidia-h200-x2` (session 76): job 0 on GPU 0, job 1 on GPU 1,
# each with its own CUDA_VISIBLE_DEVICES, kernel cache (SPARSECAST_CACHE) and output folder
# ($OUT/j0, $OUT/j1 under the device's $OUT), so that neither clobbers the other's files; both
# logs come back (the device returns at most 8 files in all: tar inside a job if it writes
# more). Each job is one shell command line (environment assignments then a script), run from
# the repository root. The jobs compare configurations only within themselves (one GPU each), never across.
#
#   J0='D=.dev/s75c SET=c LIMIT=540 bash scripts/device_s74.sh' \
#   J1='TUNE=1 SETS=het … bash scripts/device_optimizer.sh' bash scripts/device_pair.sh
set -u
nvidia-smi --query-gpu=index,name,clocks.sm,memory.used --format=csv,noheader
job() { # $1 = GPU index, $2 = command line
    mkdir -p "$OUT/j$1"
    CUDA_VISIBLE_DEVICES=$1 SPARSECAST_CACHE=/tmp/sc-cache-pair-$1 OUT="$OUT/j$1" \
        bash -c "$2" > "$OUT/j$1/job$1.log" 2>&1
    echo "job $1 rc $? after $SECONDS s"
}
job 0 "${J0:?set J0}" &
job 1 "${J1:?set J1}" &
wait
for g in 0 1; do
    echo "===== job $g"
    tail -40 "$OUT/j$g/job$g.log"
done
