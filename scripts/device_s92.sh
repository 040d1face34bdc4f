#!/usr/bin/env bash
# Session 92: HYB's block-merged COO walk (`HybLaunch::ProgrammaticMerged`, `SPARSECAST_PDL=merge`)
# on the device. One call (kind nvidia-h200, carry [".dev/j92"]):
#   STEP=check (default): `selftest --backend cuda` in full (the binary embeds no profile: HYB
#     plain), then HYB and COO at block sizes 64, 256 and 1,024 with SPARSECAST_PDL=merge and
#     SPARSECAST_MERGE_FROM=0 (every COO part of HYB merged) and with the shipped cut (a failure
#     stops the call); then
#   STEP=check or ab: HYB (`collect --configs hyb`) on the ids of $D/$SEED.txt
#     (`scripts/merge_retime_list.py data/corpus/h200-$SEED.jsonl.gz`: the matrices the merged
#     walk may apply to) in seed $SEED's draw, twice in one call, alternating halves of the
#     budget: `--hyb-launch programmatic-merged` (TAG -v92-$SEED-merge) and `programmatic`
#     (-v92-$SEED-pdl); where the features' `hyb_line_carries` stay below the cut both ran the
#     same kernel (the pair's noise), above it the ratio is the merged walk's effect;
#   STEP=retime: the merged sequence alone on each seed of SEEDS ($D/sN.txt), each seed's share
#     of the time its share of the ids (as scripts/device_s85_h100.sh).
# Prepared here:
#   SPARSECAST_NO_EMBED=1 cargo build --release
#   strip -o /tmp/sc-ne target/release/sparsecast && xz -9 -T2 -c /tmp/sc-ne > .dev/j92/sparsecast.xz
#   the lists .dev/j92/h200-sN.txt; PROFILES=1 DOCS=1 bash scripts/device_park.sh park (restore after).
# LIMIT the call's seconds. Writes $OUT/s92-$G.tar.
set -u
T0=$SECONDS
LIMIT=${LIMIT:-570}
D=${D:-.dev/j92}
STEP=${STEP:-check}
SEED=${SEED:-s41}
source scripts/device_env.sh
source scripts/seed_args.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
# One tar of whatever exists (a missing pattern must not stop it: the call returns 8 files at most).
pack() { (cd "$OUT" && shopt -s nullglob && f=(corpus-*.jsonl.gz collect-*.log.gz selftest-*) &&
    [ ${#f[@]} -gt 0 ] && tar cf "s92-$G.tar" "${f[@]}" && rm -f "${f[@]}"; ls -la); }
if [ "$STEP" = check ]; then
    timeout 200 "$BIN" selftest --backend cuda > "$OUT/selftest-full-$G.txt" 2>&1
    rc=$?
    echo "full self-test rc $rc at $((SECONDS - T0)) s"; tail -2 "$OUT/selftest-full-$G.txt"
    SPARSECAST_PDL=merge SPARSECAST_MERGE_FROM=0 timeout 120 "$BIN" selftest --backend cuda \
        --formats hyb,coo --block-sizes 64,256,1024 > "$OUT/selftest-merge0-$G.txt" 2>&1
    rc2=$?
    echo "merged (every COO part) self-test rc $rc2 at $((SECONDS - T0)) s"; tail -2 "$OUT/selftest-merge0-$G.txt"
    SPARSECAST_PDL=merge timeout 120 "$BIN" selftest --backend cuda --formats hyb \
        --block-sizes 64,256,1024 > "$OUT/selftest-merge-$G.txt" 2>&1
    rc3=$?
    echo "merged (the cut) self-test rc $rc3 at $((SECONDS - T0)) s"; tail -2 "$OUT/selftest-merge-$G.txt"
    if [ $rc != 0 ] || [ $rc2 != 0 ] || [ $rc3 != 0 ]; then
        grep -i "fail" "$OUT"/selftest-*.txt | head -8
        pack; exit 1
    fi
fi
run_collect() { # seed launch tag seconds
    local s=$1 launch=$2 tag=$3 share=$4
    echo "== $s $launch ($(wc -l < "$D/h200-$s.txt") ids, $share s)"
    env $(seed_args "$s") GPU=$G TAG=$tag SEED=${s#s} MATS=/tmp/none MATS_SRC=/tmp/none OUT="$OUT" \
        TABLE=/root/corpus-$G$tag.jsonl ONLY=$D/h200-$s.txt CONFIGS=hyb HYB_LAUNCH=$launch \
        BUDGET=$((share - 8)) HARD=$((share - 2)) \
        timeout $((share + 5)) bash scripts/device_collect.sh 2>&1 | grep -v '^-\|^total\|^d\|^\[' | tail -2
}
if [ "$STEP" = check ] || [ "$STEP" = ab ]; then
    # Four turns, merged first, so both sequences see the same stretch of the list.
    for turn in 1 2; do
        left=$((LIMIT - (SECONDS - T0) - 20))
        q=$((left / (2 * (3 - turn))))
        run_collect "$SEED" programmatic-merged "-v92-$SEED-merge" $q
        run_collect "$SEED" programmatic "-v92-$SEED-pdl" $q
    done
fi
if [ "$STEP" = retime ]; then
    read -r -a SEEDS <<< "${SEEDS:?list the seeds}"
    idsleft=0
    for s in "${SEEDS[@]}"; do idsleft=$((idsleft + $(wc -l < "$D/h200-$s.txt") + 20)); done
    for s in "${SEEDS[@]}"; do
        ids=$(($(wc -l < "$D/h200-$s.txt") + 20))
        left=$((LIMIT - (SECONDS - T0) - 15))
        share=$((left * ids / idsleft))
        idsleft=$((idsleft - ids))
        [ $share -lt 30 ] && share=$((left < 30 ? left : 30))
        [ $share -lt 20 ] && { echo "== $s: skipped, $share s"; continue; }
        run_collect "$s" programmatic-merged "-v92-$s-merge" $share
    done
fi
echo "total $((SECONDS - T0)) s"
pack
