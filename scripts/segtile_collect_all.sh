#!/usr/bin/env bash
# SEG-TILE's configurations (segtile, @128, @512) on the matrices of seeds 1-9 that admit it, each
# seed with its own draw's arguments (docs/ACCURACY.md), one device call per GPU (session 38).
# Seeds 10-14: scripts/segtile_collect.sh. The lists scripts/segtile-only/only-seg-GPU-SEED.txt
# are made from each seed's table by scripts/segtile_only.py (the matrices whose mean segment
# reaches 32 entries in f32 or f64). Seed 1's generated matrices and seed 3's mixtures are of an
# older draw whose ids the current draw no longer makes, so those lists hold only the files and
# Kronecker expansions. The expansions need all 70 shared files (the draw's random stream runs
# over every file), carried as .mtx.xz; `train` refuses to merge rows of one id whose matrices
# differ, so a draw that changed fails loudly:
#
#   PROFILES=1 bash scripts/device_park.sh park          # the tree must leave room for the files
#   mkdir -p .dev/s38/mats && for f in ../shared/matrices/suitesparse/*.mtx.gz; do
#       zcat "$f" | xz -9 -T2 > .dev/s38/mats/$(basename "$f" .gz).xz; done
#   cp scripts/segtile_collect_all.sh .dev/s38/collect_all.sh; cp scripts/segtile-only/*.txt .dev/s38/
#   bash .dev/s38/collect_all.sh        # carry [".dev/s38"]; $OUT/corpus-GPU-seg-sN.jsonl.gz
#
# (.dev/s38/sparsecast.xz: a release build without profiles.) SEEDS="s4 s8" limits the seeds.
set -u
T0=$SECONDS
LIMIT=${LIMIT:-560}
mkdir -p .dev/bin && xz -dc .dev/s38/sparsecast.xz > .dev/bin/sparsecast && chmod +x .dev/bin/sparsecast
export BIN=$PWD/.dev/bin/sparsecast
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in *H200*) G=h200;; *) G=h100;; esac
# Each seed's draw: scripts/seed_args.sh.
source scripts/seed_args.sh
# The files once, unpacked into the directory the draw names them by (`mats/…`).
mkdir -p /root/mats
for f in .dev/s38/mats/*.mtx.xz; do
    [ -f "$f" ] && { xz -dc "$f" | gzip -1 > "/root/mats/$(basename "$f" .xz).gz" & }
done
wait
echo "files: $(ls /root/mats | wc -l) in $((SECONDS - T0)) s"
for S in ${SEEDS:-s4 s8 s9 s6 s2 s5 s1 s3 s7}; do
    left=$((LIMIT - (SECONDS - T0) - 30))
    [ $left -lt 40 ] && { echo "== $S: skipped, $left s left"; continue; }
    echo "== $S ($left s left)"
    env $(seed_args $S) GPU=$G TAG=-seg-$S SEED=${S#s} MATS=/root/mats MATS_SRC=/tmp/none \
        CONFIGS=segtile,segtile@128,segtile@512 ONLY=.dev/s38/only-seg-$G-$S.txt \
        BUDGET=$((left - 20)) timeout $((left + 10)) bash scripts/device_collect.sh 2>&1 | grep -v '^-\|^total\|^d' | tail -4
done
echo "total $((SECONDS - T0)) s"
# A call brings back at most 8 files: one archive.
(cd "${OUT:-.dev/out}" && tar cf "seg-$G.tar" corpus-*.jsonl.gz collect-*.log.gz && rm -f corpus-*.jsonl.gz collect-*.log.gz; ls -la)
