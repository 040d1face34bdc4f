#!/usr/bin/env bash
# Session 41: the SELL kernel that splits wide slices over warps (kernels/sell.cu,
# src/backend/cuda/sell_split.rs). One device call per GPU and step:
#   STEP=trial: the assembler's report of the SELL kernels, the SELL self-test (every block size,
#     the parameter sets of src/backend/selftest/cases.rs), then seed 14's draw timed with the
#     shipped rule (the four SELL configurations) and, for `sell` alone, with the rules in RULES
#     (SPARSECAST_SELL_SPLIT: `off` is session 40's kernel, same binary, same call).
#   STEP=collect: the SELL self-test first (SELFTEST=0 skips it; BLOCKS the block sizes, a failure
#     stops the call), then the four SELL configurations on every seed in SEEDS (scripts/seed_args.sh;
#     seeds 1-9 need the 70 shared files in $D/mats as .mtx.xz, as in scripts/device_s40.sh).
#     The tables corpus-GPU-sell-sN.jsonl.gz replace the SELL times of data/corpus/GPU-sN.jsonl.gz
#     (scripts/replace_times.py). $D/only-sell-GPU-sN.txt, where present, limits a seed to the
#     matrices whose slices the kernel splits (scripts/sell_split_set.py); the others run the
#     unchanged row path. SELFTEST=full runs the whole `selftest --backend cuda` instead
#     (session 42; its --json kept as selftest-full-GPU.json.gz).
#
#   PROFILES=1 bash scripts/device_park.sh park
#   SPARSECAST_NO_EMBED=1 CARGO_TARGET_DIR=/tmp/tgt-ne cargo build --release
#   strip -o /tmp/sc-ne /tmp/tgt-ne/release/sparsecast && xz -9 -T2 -c /tmp/sc-ne > .dev/s41/sparsecast.xz
#   STEP=trial bash scripts/device_s41.sh          # carry [".dev/s41"]
# Writes $OUT/s41-STEP-GPU.tar.
set -u
T0=$SECONDS
LIMIT=${LIMIT:-570}
D=${D:-.dev/s41}
STEP=${STEP:-trial}
source scripts/device_env.sh
SELL=sell,sell@128,sell@512,sell-c512-s2048
source scripts/seed_args.sh
# One seed's SELL times: seed $1, tag $2, configurations $3, seconds $4 (env: the rule).
collect() {
    local S=$1 left=$4 mats=/tmp/none
    case $S in s1|s2|s3|s4|s5|s6|s7|s8|s9) mats=/root/mats;; esac
    local only=$D/only-sell-$G-$S.txt
    [ -f $only ] || only=
    env $(seed_args $S) GPU=$G TAG=$2 SEED=${S#s} MATS=$mats MATS_SRC=/tmp/none OUT="$OUT" \
        ONLY=$only CONFIGS=$3 BUDGET=$((left - 15)) timeout $((left + 10)) bash scripts/device_collect.sh 2>&1 |
        grep -v '^-\|^total\|^d\|^\[' | tail -3
}
if [ "$STEP" = trial ]; then
    "$BIN" device --kernels 2>&1 | grep "sell_" | head -4
    echo "== self-test ($G)"
    timeout 150 "$BIN" selftest --backend cuda --formats sell --block-sizes 64,128,256,512,1024 \
        > "$OUT/selftest-sell-$G.txt" 2>&1
    echo "selftest rc=$? in $((SECONDS - T0)) s"
    grep -i "fail\|mismatch" "$OUT/selftest-sell-$G.txt" | head -5
    tail -6 "$OUT/selftest-sell-$G.txt"
    left=$((LIMIT - (SECONDS - T0) - 20))
    echo "== s14, the shipped rule ($left s left)"
    collect s14 -sell-s14 $SELL $((left * ${SHARE:-45} / 100))
    for R in ${RULES:-off waves=2,min=16}; do
        left=$((LIMIT - (SECONDS - T0) - 20))
        n=$(echo ${RULES:-off waves=2,min=16} | wc -w)
        echo "== s14, sell, SPARSECAST_SELL_SPLIT=$R ($left s left)"
        SPARSECAST_SELL_SPLIT=$R collect s14 -sell-s14-${R//[=,]/} sell $((left / n))
    done
else
    if [ "${SELFTEST:-1}" != 0 ]; then
        if [ "${SELFTEST:-1}" = full ]; then   # every format (session 42)
            name=full secs=280 args=(--json "$OUT/selftest-full-$G.json")
        else
            "$BIN" device --kernels 2>&1 | grep "sell_" | head -4
            name=sell secs=150 args=(--formats sell --block-sizes "${BLOCKS:-64,256,1024}")
        fi
        echo "== self-test $name ($G)"
        timeout $secs "$BIN" selftest --backend cuda "${args[@]}" > "$OUT/selftest-$name-$G.txt" 2>&1
        rc=$?
        [ -f "$OUT/selftest-full-$G.json" ] && gzip -9 "$OUT/selftest-full-$G.json"
        echo "selftest rc=$rc in $((SECONDS - T0)) s"
        grep -i "fail\|mismatch" "$OUT/selftest-$name-$G.txt" | grep -v " 0 failed" | head -5
        tail -3 "$OUT/selftest-$name-$G.txt"
        [ $rc = 0 ] || SEEDS=""   # a kernel that fails is not timed
    fi
    mkdir -p /root/mats
    for f in $D/mats/*.mtx.xz; do
        [ -f "$f" ] && { xz -dc "$f" | gzip -1 > "/root/mats/$(basename "$f" .xz).gz" & }
    done
    wait
    for S in ${SEEDS-}; do
        left=$((LIMIT - (SECONDS - T0) - 25))
        [ $left -lt 40 ] && { echo "== $S: skipped, $left s left"; continue; }
        echo "== $S ($left s left)"
        collect $S -sell-$S $SELL $left
    done
fi
echo "total $((SECONDS - T0)) s"
(cd "$OUT" && tar cf "s41-$STEP-$G.tar" corpus-*.jsonl.gz collect-*.log.gz $(ls selftest-* 2>/dev/null) &&
    rm -f corpus-*.jsonl.gz collect-*.log.gz selftest-*; ls -la)
