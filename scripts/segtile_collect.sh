#!/usr/bin/env bash
# SEG-TILE's configurations (segtile, @128, @512) on the matrices of a draw that admit it (seed
# 12's by default; each seed's draw from scripts/seed_args.sh),
# listed in scripts/segtile-only/only-seg-GPU-SEED.txt (made from the draw's table: the matrices
# whose mean segment reaches 32 entries in f32 or f64). Session 37, 4-42 s a seed; the tables data/corpus/GPU-seg-SEED.jsonl.gz merge with
# GPU-SEED.jsonl.gz by matrix and precision in `train` / `score`:
#   cp scripts/segtile_collect.sh .dev/s37/collect.sh; cp scripts/segtile-only/*.txt .dev/s37/
#   for s in s12 s13 s14; do S=$s LIMIT=200 bash .dev/s37/collect.sh; done   # carry [".dev/s37"]
# (.dev/s37/sparsecast.xz: a release build without profiles; a table in .dev/table continues.)
set -u
T0=$SECONDS
LIMIT=${LIMIT:-540}
mkdir -p .dev/bin && xz -dc .dev/s37/sparsecast.xz > .dev/bin/sparsecast && chmod +x .dev/bin/sparsecast
export BIN=$PWD/.dev/bin/sparsecast
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in *H200*) G=h200;; *) G=h100;; esac
left=$((LIMIT - (SECONDS - T0) - 45))
S=${S:-s12}
# Each seed's draw (seed 10's differs from 11-14's): scripts/seed_args.sh.
source scripts/seed_args.sh
env $(seed_args $S) GPU=$G TAG=-seg-$S SEED=${S#s} MATS=/tmp/none MATS_SRC=/tmp/none \
  CONFIGS=segtile,segtile@128,segtile@512 ONLY=.dev/s37/only-seg-$G-$S.txt BUDGET=$((left-70)) timeout $((left+40)) bash scripts/device_collect.sh 2>&1 | tail -8
