#!/usr/bin/env bash
# The tuned recommendation through the product (docs/ACCURACY.md, session 18), on the device
# machine from the repository root: `predict --tune` (time the model's shortlist, recommend the
# fastest measured) and `predict --measure` (time everything: the truth of the same run) on the
# inputs, both precisions, with the profile of this GPU. Scoring, on any machine:
# python3 scripts/tune_score.py $OUT/measure-$GPU.json $OUT/tune-$GPU.json
# Binary: .dev/ne/sparsecast.xz (`SPARSECAST_NO_EMBED=1 cargo build --release`, stripped, xz).
#
#   GPU=h100 INPUTS=.dev/unseen-s16-specs.json bash scripts/device_tune.sh
set -u
OUT=${OUT:-$PWD/.dev/out}
GPU=${GPU:?set GPU}
PROFILE=${PROFILE:-profiles/$GPU.json.gz}
mkdir -p /tmp/scbin "$OUT"
[ -x /tmp/scbin/sparsecast ] || { xz -dc .dev/ne/sparsecast.xz > /tmp/scbin/sparsecast && chmod +x /tmp/scbin/sparsecast; }
B=/tmp/scbin/sparsecast
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export SPARSECAST_CACHE=/tmp/sparsecast-cache
for mode in ${MODES:-tune measure}; do
    t0=$SECONDS
    $B predict --$mode --backend cuda --profile "$PROFILE" --json --summary-only $INPUTS \
        > "$OUT/$mode-$GPU.json" 2> "$OUT/$mode-$GPU.err"
    echo "[predict --$mode: rc $?, $((SECONDS - t0)) s]"
    tail -3 "$OUT/$mode-$GPU.err"
done
