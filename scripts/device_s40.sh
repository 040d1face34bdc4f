#!/usr/bin/env bash
# Every SEG-TILE row of the training and scoring tables measured again, for a change of the
# SEG-TILE kernel (session 40 ran it with the flat-chunk kernel, version 1, which lost: docs/
# OPTIMIZER.md, session 40). One device call per GPU:
#   1. the self-test of SEG-TILE against the f64 CPU reference (every block size, every
#      matrix admitted, the tile widths that take the kernel's other paths);
#   2. SEG-TILE's configurations on the matrices of seeds 1-14 that admit it
#      (scripts/segtile-only/, the lists scripts/segtile_collect_all.sh and
#      scripts/segtile_collect.sh measured in sessions 37-38, each seed with its own draw's
#      arguments) and seed 21's blocks of long rows whose table holds SEG-TILE (the list
#      only-s21-seg-GPU.txt: the ids of data/corpus/GPU-s21.jsonl.gz with a SEG-TILE time).
#   The new tables (corpus-GPU-seg-sN.jsonl.gz) replace data/corpus/GPU-seg-sN.jsonl.gz; seed
#   21's replace the SEG-TILE times of data/corpus/GPU-s21.jsonl.gz. Then refit both profiles.
#
#   PROFILES=1 bash scripts/device_park.sh park
#   mkdir -p .dev/s40/mats && for f in ../shared/matrices/suitesparse/*.mtx.gz; do
#       case $f in *G3_circuit*|*landmark*) continue;; esac    # the draws' 70 files
#       zcat "$f" | xz -6 -T2 > .dev/s40/mats/$(basename "$f" .gz).xz; done
#   cp scripts/segtile-only/*.txt .dev/s40/    # only-s21-seg-GPU.txt included
#   bash scripts/device_s40.sh                 # carry [".dev/s40"]; .dev/s40/sparsecast.xz:
#                                              # a release build without profiles
# D: the folder (.dev/s40), BINXZ: the binary (D/sparsecast.xz).
# SEEDS="s4 s8" limits the seeds (all by default, the cheapest first); LIMIT the call's seconds.
# Writes $OUT/seg40-GPU.tar (the tables corpus-GPU-seg-sN.jsonl.gz, their logs, the self-test).
set -u
T0=$SECONDS
LIMIT=${LIMIT:-570}
D=${D:-.dev/s40}
source scripts/device_env.sh
# SELFTEST=0 skips the self-test; SUFFIX names the tables of a variant (TAG -seg-sN$SUFFIX), e.g.
# SUFFIX=-l1flat SPARSECAST_NVRTC_OPTIONS="-DSC_SEG_L1_FLAT=1"; KERNELS=1 prints the assembler's
# report (registers, spills) of the SEG-TILE kernels first.
[ "${KERNELS:-0}" = 1 ] && "$BIN" device --kernels 2>&1 | grep "segtile_" | head -8
[ "${SELFTEST:-1}" = 1 ] && { echo "== self-test ($G)"
timeout 150 "$BIN" selftest --backend cuda --formats segtile --block-sizes 64,128,256,512,1024 \
    > "$OUT/selftest-segtile-$G.txt" 2>&1
echo "selftest rc=$? in $((SECONDS - T0)) s"
grep -i "fail\|mismatch" "$OUT/selftest-segtile-$G.txt" | head -5
tail -12 "$OUT/selftest-segtile-$G.txt"; }
# Each seed's draw: scripts/seed_args.sh.
source scripts/seed_args.sh
# The files once, unpacked into the directory the draw names them by (`mats/…`).
mkdir -p /root/mats
for f in $D/mats/*.mtx.xz; do
    [ -f "$f" ] && { xz -dc "$f" | gzip -1 > "/root/mats/$(basename "$f" .xz).gz" & }
done
wait
echo "files: $(ls /root/mats | wc -l) in $((SECONDS - T0)) s"
for S in ${SEEDS:-s4 s8 s9 s6 s2 s5 s1 s3 s7 s14 s12 s13 s11 s10 s21}; do
    left=$((LIMIT - (SECONDS - T0) - 25))
    [ $left -lt 40 ] && { echo "== $S: skipped, $left s left"; continue; }
    only=$D/only-seg-$G-$S.txt
    [ $S = s21 ] && only=$D/only-s21-seg-$G.txt
    # Seeds 1-9 were measured with the 70 files in the corpus directory (the Kronecker
    # expansions need them; scripts/segtile_collect_all.sh), seeds 10-14 and 21 without.
    mats=/root/mats
    case $S in s1|s2|s3|s4|s5|s6|s7|s8|s9) ;; *) mats=/tmp/none;; esac
    echo "== $S ($left s left)"
    env $(seed_args $S) GPU=$G TAG=-seg-$S${SUFFIX:-} SEED=${S#s} MATS=$mats MATS_SRC=/tmp/none OUT="$OUT" \
        CONFIGS=segtile,segtile@128,segtile@512 ONLY=$only \
        BUDGET=$((left - 20)) timeout $((left + 10)) bash scripts/device_collect.sh 2>&1 |
        grep -v '^-\|^total\|^d\|^\[' | tail -3
done
echo "total $((SECONDS - T0)) s"
# A call brings back at most 8 files: one archive.
(cd "$OUT" && tar cf "seg40-$G${SUFFIX:-}.tar" corpus-*.jsonl.gz collect-*.log.gz $(ls selftest-*.txt 2>/dev/null) &&
    rm -f corpus-*.jsonl.gz collect-*.log.gz selftest-*.txt; ls -la)
