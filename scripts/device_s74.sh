#!/usr/bin/env bash
# Session 74: more loads in flight in the row-per-thread ELL / SELL loops and the COO kernel —
# an A/B of kernel variants selected at NVRTC time (SPARSECAST_NVRTC_OPTIONS, part of the module
# cache key), the shipped kernels untouched when no macro is set (kernels/sell.cu SC_SELL_UNROLL,
# kernels/ell.cu SC_ELL_UNROLL, kernels/coo.cu SC_COO_BATCH: scripts/prototype/s74_loads_in_flight.patch,
# `git apply` it before the build — the macros are not in the shipped kernels). One device call:
#   1. the assembler's report (registers, spills) of the coo / ell / sell kernels per variant;
#   2. the self-test of coo, ell, sell and hyb under every variant (a failure drops the variant);
#   3. the matrices of $D/only.txt (seed 14's draw) timed with CONFIGS under each variant in
#      turn, the shipped kernels (variant 0) first, into corpus-GPU-v74-N.jsonl.gz.
#
#   PROFILES=1 DOCS=1 bash scripts/device_park.sh park
#   SPARSECAST_NO_EMBED=1 CARGO_TARGET_DIR=/tmp/tgt-ne cargo build --release
#   strip -o /tmp/sc-ne /tmp/tgt-ne/release/sparsecast && xz -9 -T2 -c /tmp/sc-ne > .dev/s74/sparsecast.xz
#   cp LIST .dev/s74/only.txt
#   bash scripts/device_s74.sh        # carry [".dev/s74"]; $OUT/s74-GPU.tar
#   Session 75's SET=c: `git apply scripts/prototype/s75_coo_items.patch` (check the logic first:
#   python3 scripts/prototype/s75_coo_items_emu.py), build as above, cp
#   docs/h200/session75/only-s14-coo.txt .dev/s74/only.txt, SET=c bash scripts/device_s74.sh;
#   then python3 scripts/kernel_ab.py corpus-GPU-v74c-0.jsonl.gz corpus-GPU-v74c-{1,2,3}.jsonl.gz
#   --full data/corpus/GPU-s14.jsonl.gz data/corpus/GPU-seg-s14.jsonl.gz
set -u
T0=$SECONDS
LIMIT=${LIMIT:-560}
D=${D:-.dev/s74}
source scripts/device_env.sh
source scripts/seed_args.sh
# SET=a (the first call): every loop at two depths, 32 and 64 registers. SET=b (the second): COO
# batched with the chunks past the interval skipped, ELL at 8, 32 registers; then SWEEP=1 times
# cuSPARSE's SELL on random matrices of constant row length k around multiples of 16 and row
# counts a multiple of 8 or not (docs/PERFORMANCE.md, session 74).
# SET=c (session 75): the coarsened COO kernel of scripts/prototype/s75_coo_items.patch (apply it
# instead of s74's), K = 4 and 8 entries a lane, on docs/h200/session75/only-s14-coo.txt; with
# SC_COO_MIN_CHUNKS (read by the patched launcher) every warp gets at least one whole tile.
# SET=d (session 76): SET=c's K = 4 and 8 spilled under the 32 registers of SC_MIN_BLOCKS=2
# (8-128 B local; f64 K = 4 12 % slower, f32 8 % faster): the same with 64 registers
# (SC_MIN_BLOCKS=1, every kernel of the module), beside the shipped kernels at 64 registers.
if [ "${SET:-a}" = d ]; then
    CONFIGS=${CONFIGS:-coo,hyb,cusparse-coo-alg1}
    FORMATS=coo,hyb BLOCKS=64,1024
    VARIANTS=(
        ""
        "-DSC_MIN_BLOCKS=1"
        "-DSC_COO_ITEMS=4 -DSC_MIN_BLOCKS=1"
        "-DSC_COO_ITEMS=8 -DSC_MIN_BLOCKS=1"
    )
elif [ "${SET:-a}" = c ]; then
    CONFIGS=${CONFIGS:-coo,hyb,cusparse-coo-alg1}
    FORMATS=coo,hyb BLOCKS=64,256,1024
    VARIANTS=(
        ""
        "-DSC_COO_ITEMS=4"
        "-DSC_COO_ITEMS=4 -DSC_COO_MIN_CHUNKS=4"
        "-DSC_COO_ITEMS=8 -DSC_COO_MIN_CHUNKS=8"
    )
elif [ "${SET:-a}" = a ]; then
    CONFIGS=${CONFIGS:-coo,ell,ell@128,sell,sell@128,sell@512,sell-c512-s2048,hyb,cusparse-sell,cusparse-coo-alg1}
    FORMATS=coo,ell,sell,hyb BLOCKS=64,256,1024
    VARIANTS=(
        ""
        "-DSC_SELL_UNROLL=8 -DSC_ELL_UNROLL=8 -DSC_COO_BATCH=4"
        "-DSC_SELL_UNROLL=8 -DSC_ELL_UNROLL=8 -DSC_COO_BATCH=4 -DSC_MIN_BLOCKS=1"
        "-DSC_SELL_UNROLL=16 -DSC_ELL_UNROLL=16 -DSC_COO_BATCH=8 -DSC_MIN_BLOCKS=1"
    )
else
    CONFIGS=${CONFIGS:-coo,ell,ell@128,hyb,cusparse-coo-alg1}
    FORMATS=coo,ell,hyb BLOCKS=64,1024
    VARIANTS=(
        ""
        "-DSC_ELL_UNROLL=8 -DSC_COO_BATCH=4"
        "-DSC_ELL_UNROLL=8 -DSC_COO_BATCH=8"
    )
fi
if [ "${SWEEP:-0}" = 1 ]; then
    echo "== cuSPARSE SELL sweep"
    mkdir -p /dev/shm/s74
    for n in 400000 400003; do
        for k in 9 12 16 17 20 24 28 32 33 40; do
            f=/dev/shm/s74/r-$n-$k.mtx
            "$BIN" generate random --rows $n --per-row $k --seed $k --out $f > /dev/null 2>&1 || { echo "generate $n $k failed"; continue; }
            for p in f32 f64; do
                "$BIN" bench $f --backend cuda --precision $p \
                    --formats cusparse-sell,sell,ell,cusparse-csr-alg1 --json > /dev/shm/s74/b.json 2>/dev/null &&
                    python3 -c "
import json,sys
d=json.load(open('/dev/shm/s74/b.json'))
rs=d['results'] if isinstance(d,dict) and 'results' in d else d
out=[]
for r in (rs if isinstance(rs,list) else []):
    c=r.get('config') or r.get('kernel') or r.get('name'); t=r.get('median_s')
    if c and t: out.append(f'{c}={t*1e6:.1f}')
print('sweep $n $k $p',' '.join(out))" || echo "bench $n $k $p failed"
            done
            cp /dev/shm/s74/b.json "$OUT/sweep-$n-$k-last.json" 2>/dev/null
            rm -f $f
        done
    done
    echo "sweep done at $((SECONDS - T0)) s"
fi
ok=()
for i in "${!VARIANTS[@]}"; do
    export SPARSECAST_NVRTC_OPTIONS="${VARIANTS[$i]}"
    echo "== variant $i: '${VARIANTS[$i]}'"
    "$BIN" device --kernels 2>&1 | grep -E "(coo|ell|sell)_f(32|64)" | head -14
    if [ "$i" != 0 ]; then
        timeout 120 "$BIN" selftest --backend cuda --formats $FORMATS --block-sizes $BLOCKS > "$OUT/selftest-v$i-$G.txt" 2>&1
        rc=$?
        tail -2 "$OUT/selftest-v$i-$G.txt"
        grep -i "fail" "$OUT/selftest-v$i-$G.txt" | grep -v " 0 failed" | head -3
        [ $rc = 0 ] || { echo "variant $i fails its self-test (rc $rc): not timed"; continue; }
    fi
    ok+=("$i")
done
echo "self-tests done at $((SECONDS - T0)) s; timed variants: ${ok[*]}"
n=${#ok[@]}
for i in "${ok[@]}"; do
    left=$((LIMIT - (SECONDS - T0) - 20))
    share=$((left / n))
    n=$((n - 1))
    [ $share -lt 30 ] && { echo "== variant $i: skipped, $share s"; continue; }
    echo "== variant $i timed ($share s)"
    SPARSECAST_NVRTC_OPTIONS="${VARIANTS[$i]}" env $(seed_args s14) GPU=$G TAG=-v74${SET:-a}-$i SEED=14 \
        MATS=/tmp/none MATS_SRC=/tmp/none OUT="$OUT" ONLY=$D/only.txt CONFIGS=$CONFIGS \
        BUDGET=$((share - 12)) timeout $((share + 5)) bash scripts/device_collect.sh 2>&1 |
        grep -v '^-\|^total\|^d\|^\[' | tail -2
done
echo "total $((SECONDS - T0)) s"
(cd "$OUT" && tar cf "s74-${SET:-a}-$G.tar" corpus-*.jsonl.gz $(ls selftest-* sweep-* 2>/dev/null) &&
    rm -f corpus-*.jsonl.gz collect-*.log.gz selftest-* sweep-*; ls -la)
