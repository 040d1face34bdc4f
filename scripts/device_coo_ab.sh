#!/usr/bin/env bash
# A/B of HYB's launch sequences in one device call (sessions 81-82). `SPARSECAST_PDL=1` (pass
# kind `new`) makes HYB's COO kernel the programmatic dependent of its ELL kernel on sm_90; the
# default (kind `old`) is the sequence the shipped profiles were fitted on (the ELL kernel, then
# the COO kernel queued plainly). The COO format keeps its memset node either way (call 1 of
# session 82 timed a zero kernel with the COO kernel as its dependent: docs/PERFORMANCE.md).
# Tables timed with `new` store HYB's times as `hyb-pdl` (ConfigTime::kernel). Steps:
#   1. the self-test of FORMATS (default coo,hyb) at block sizes 64, 256 and 1,024, with
#      SPARSECAST_PDL set to each of $SELFTEST_PDL (default 1; "1 0" both; a failure stops the call);
#   2. the matrices of $ONLY (ids of seed 14's draw; default $D/only.txt) timed with CONFIGS
#      (default `coo`, `hyb` and the control, cuSPARSE's COO ALG1) in passes alternating the new
#      sequence and the old one (PASSES, e.g. "new old new", or KIND:SEED to time the ids of
#      $D/sSEED.txt in another seed's draw, e.g. "new:13 new:12"), into
#      corpus-GPU-$V-N-KIND.jsonl.gz (seed 14) or corpus-GPU-$V-sSEED-KIND.jsonl.gz (V default
#      v82), which a later call resumes from .dev/table/ (scripts/device_collect.sh).
#   Session 83 re-times the training seeds' HYB where it matters (scripts/pdl_retime_list.py):
#   D=.dev/s83 V=v83 PASSES="new:10 new:15" CONFIGS=hyb SELFTEST_PDL="1 0" \
#       FORMATS=hyb,coo,ell bash scripts/device_coo_ab.sh
#
#   PROFILES=1 DOCS=1 bash scripts/device_park.sh park
#   SPARSECAST_NO_EMBED=1 CARGO_TARGET_DIR=/tmp/tgt-ne cargo build --release
#   strip -o /tmp/sc-ne /tmp/tgt-ne/release/sparsecast && xz -9 -T2 -c /tmp/sc-ne > .dev/s82/sparsecast.xz
#   cp LIST .dev/s82/only.txt
#   PASSES="new old" bash scripts/device_coo_ab.sh     # carry [".dev/s82"]; $OUT/coo-ab-GPU.tar
#   PASSES=new CONFIGS=hyb FORMATS=hyb,coo,ell ONLY=.dev/s82/all.txt bash scripts/device_coo_ab.sh
#       # call 2: HYB re-timed on every matrix of seed 14 (scripts/replace_times.py --configs hyb)
#   PASSES="new:13 new:12" CONFIGS=hyb FORMATS=hyb,coo SELFTEST_PDL=0 \
#       bash scripts/device_coo_ab.sh   # calls 3-4: the training seeds 12 and 13 under PDL
#   then python3 scripts/kernel_ab.py corpus-GPU-v82-1-old.jsonl.gz corpus-GPU-v82-0-new.jsonl.gz
#   --full data/corpus/GPU-s14.jsonl.gz data/corpus/GPU-seg-s14.jsonl.gz
# (Session 81's variant, a COO kernel that stores rows without the memset, is
# scripts/prototype/s81_coo_write.patch; docs/PERFORMANCE.md has both.)
set -u
T0=$SECONDS
LIMIT=${LIMIT:-560}
D=${D:-.dev/s82}
V=${V:-v82}
CONFIGS=${CONFIGS:-coo,hyb,cusparse-coo-alg1}
read -r -a PASSES <<< "${PASSES:-new old}"
source scripts/device_env.sh
source scripts/seed_args.sh
"$BIN" device --kernels 2>&1 | grep -E "(coo|ell)[a-z_]*_f(32|64)" | head -12
if [ "${SELFTEST:-1}" = 1 ]; then
    # SELFTEST_PDL: one or more settings of SPARSECAST_PDL, e.g. "1 0" (both sequences).
    for pdl in ${SELFTEST_PDL:-1}; do
        st="$OUT/selftest-coo-hyb-$G-pdl$pdl.txt"
        SPARSECAST_PDL=$pdl timeout 150 "$BIN" selftest --backend cuda --formats ${FORMATS:-coo,hyb} --block-sizes 64,256,1024 \
            > "$st" 2>&1
        rc=$?
        tail -3 "$st"
        if [ $rc != 0 ]; then
            echo "the self-test with SPARSECAST_PDL=$pdl fails (rc $rc): nothing timed"
            grep -i "fail" "$st" | head -5
            (cd "$OUT" && tar cf "coo-ab-$G.tar" selftest-*)
            exit 1
        fi
        echo "self-test (SPARSECAST_PDL=$pdl) done at $((SECONDS - T0)) s"
    done
fi
n=${#PASSES[@]}
for i in "${!PASSES[@]}"; do
    kind=${PASSES[$i]%%:*}
    seed=14
    tag=-$V-$i-$kind
    only=${ONLY:-$D/only.txt}
    if [[ ${PASSES[$i]} == *:* ]]; then
        seed=${PASSES[$i]#*:}
        tag=-$V-s$seed-$kind
        only=$D/s$seed.txt
    fi
    left=$((LIMIT - (SECONDS - T0) - 20))
    share=$((left / n))
    n=$((n - 1))
    [ $share -lt 30 ] && { echo "== pass $i ($kind, seed $seed): skipped, $share s"; continue; }
    pdl=0
    [ "$kind" = new ] && pdl=1
    # MATS_SRC (e.g. $D/mats-xz: the 69 shared files of seed 1, .mtx.xz) for the draws with files
    # or their Kronecker expansions; unpacked to /root/mats, the corpus directory they were drawn in.
    mats=/tmp/none
    [ -n "${MATS_SRC:-}" ] && mats=/root/mats
    echo "== pass $i: $kind, seed $seed ($share s)"
    SPARSECAST_PDL=$pdl env $(seed_args s$seed) GPU=$G TAG=$tag SEED=$seed \
        MATS=$mats MATS_SRC=${MATS_SRC:-/tmp/none} OUT="$OUT" ONLY=$only CONFIGS=$CONFIGS \
        BUDGET=$((share - 12)) HARD=$((share - 4)) timeout $((share + 5)) bash scripts/device_collect.sh 2>&1 |
        grep -v '^-\|^total\|^d\|^\[' | tail -4
done
echo "total $((SECONDS - T0)) s"
(cd "$OUT" && tar cf "coo-ab-$G.tar" corpus-*.jsonl.gz $(ls selftest-* 2>/dev/null) &&
    rm -f corpus-*.jsonl.gz collect-*.log.gz selftest-*; ls -la)
