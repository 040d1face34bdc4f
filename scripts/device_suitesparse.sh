#!/usr/bin/env bash
# SuiteSparse comparison on the GPU machine: `sparsecast bench --backend cuda --json` on every
# .mtx.gz in .dev/matrices (f64), our kernels at block sizes 64, 128 and 256 and cuSPARSE's
# algorithms once; the JSON reports go into $OUT/suitesparse-<tag>.tgz. Summarize them here with
#   python3 scripts/device_suitesparse_summary.py <unpacked folder>
# Usage (from the repository root, binaries and matrices in .dev/): bash .dev/device_suitesparse.sh TAG
set -u
TAG=${1:-all}
OUT=${OUT:-$PWD/.dev/out}
mkdir -p "$OUT"
cd .dev || exit 1
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export SPARSECAST_CACHE=/tmp/sparsecast-cache
DIR=/tmp/suitesparse-$TAG
mkdir -p "$DIR"
t0=$SECONDS
n=0
for f in matrices/*.mtx.gz; do
    name=$(basename "$f" .mtx.gz)
    for b in 64 128 256; do
        formats=ours
        [ "$b" = 256 ] && formats=all
        ./sparsecast bench "$f" --backend cuda --json --formats "$formats" --block-size "$b" \
            > "$DIR/$name-b$b.json" 2> "$DIR/$name-b$b.err" || echo "bench $name b$b: rc=$?"
    done
    n=$((n + 1))
done
echo "suitesparse $TAG: $n matrices in $((SECONDS - t0)) s"
tar czf "$OUT/suitesparse-$TAG.tgz" -C "$DIR" .
