#!/usr/bin/env bash
# Session 86: one device call per GPU that (1) runs issue 16's large set under `optimize --tune`
# with the GPU's shipped profile and (2) grows that GPU's seed 40 (the unseen draw, docs/ACCURACY.md
# session 84) with the time left. Kind nvidia-h200 or nvidia-h100-x1, carry [".dev/j86", ".dev/table"].
# Prepared here (from the repository root):
#   SPARSECAST_NO_EMBED=1 CARGO_TARGET_DIR=/tmp/tgt-ne cargo build --release
#   strip -o /tmp/sc-ne /tmp/tgt-ne/release/sparsecast && xz -9 -T2 -c /tmp/sc-ne > .dev/j86/sparsecast.xz
#   cp profiles/$GPU.json.gz .dev/j86/; cp ../shared/matrices/suitesparse/{rajat19,hep-th}.mtx.gz .dev/j86/km/
#   cp data/corpus/$GPU-s40.jsonl.gz .dev/table/corpus-$GPU-s40.jsonl.gz   # device_collect resumes it
#   PROFILES=1 DOCS=1 bash scripts/device_park.sh park   # restore afterwards
# SETS (default "large s40"), LIMIT the call's seconds, BLARGE the large set's budget per precision.
# `s41` grows seed 41 likewise (session 89: a third unseen draw of seed 40's recipe; carry .dev/j87,
# the binary, and .dev/table holding corpus-$GPU-s41.jsonl.gz to resume it):
#   D=.dev/j87 SETS=s41 LIMIT=560 bash scripts/device_s86.sh
# Writes $OUT/optimizer-$G.tar.gz (device_optimizer.sh) and $OUT/corpus-$G-s40.jsonl.gz (the whole
# seed 40 table so far; s41 likewise) with its log.
set -u
T0=$SECONDS
LIMIT=${LIMIT:-570}
D=${D:-.dev/j86}
source scripts/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
for s in ${SETS:-large s40}; do
    case $s in
    large)
        TUNE=1 TAIL=8 SETS=large BLARGE=${BLARGE:-200} MATS=$PWD/$D/km PROFILE=$PWD/$D/$G.json.gz \
            GPU=$G BIN=$BIN WORK=/tmp/opt-large OUT="$OUT" bash scripts/device_optimizer.sh 2>&1 | tail -30
        echo "large set done at $((SECONDS - T0)) s"
        ;;
    s40 | s41)
        left=$((LIMIT - (SECONDS - T0)))
        [ $left -lt 60 ] && { echo "seed ${s#s}: skipped, $left s left"; continue; }
        OUT="$OUT" GPU=$G TAG=-$s SEED=${s#s} KRON=0 GENERATED=400 MIXTURES=800 MIN_NNZ=30000 \
            MAX_NNZ=100000000 MATS=/tmp/none MATS_SRC=/tmp/none HYB_LAUNCH=${HYB_LAUNCH-programmatic} \
            BUDGET=$((left - 45)) HARD=$((left - 15)) BIN=$BIN bash scripts/device_collect.sh 2>&1 | tail -4
        echo "seed ${s#s} done at $((SECONDS - T0)) s"
        ;;
    esac
done
echo "total $((SECONDS - T0)) s"
ls -la "$OUT"
