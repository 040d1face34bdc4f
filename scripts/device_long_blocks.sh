#!/usr/bin/env bash
# Blocks of long rows for the training corpus (`collect --long-blocks`, every configuration):
# seed 21's draw of 300 blocks of 10^4-1.5x10^7 non-zeros (session 38). The first H200 call
# measured the draw in its own order and spent 339 of 472 s on 14 blocks of rows over 2x10^5
# entries (thread-per-row kernels at 0.3-1.9 s an SpMV); the later calls measured only the
# blocks of rows up to 2x10^5 (scripts/segtile-only/only-s21-rows-le-2e5.txt, 255 of the 300;
# the H200's list less what its first call measured). Tables data/corpus/GPU-s21.jsonl.gz.
#
#   PROFILES=1 bash scripts/device_park.sh park
#   cp scripts/device_long_blocks.sh .dev/s38/long.sh; cp scripts/segtile-only/only-s21-rows-le-2e5.txt .dev/s38/only-s21-GPU.txt
#   ONLY= bash .dev/s38/long.sh    # the whole draw, in its order (as the first H200 call)
#   bash .dev/s38/long.sh          # carry [".dev/s38"] (.dev/s38/sparsecast.xz: a build without profiles)
set -u
mkdir -p .dev/bin && xz -dc .dev/s38/sparsecast.xz > .dev/bin/sparsecast && chmod +x .dev/bin/sparsecast
export BIN=$PWD/.dev/bin/sparsecast
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in *H200*) G=h200;; *) G=h100;; esac
GPU=$G TAG=-s21 SEED=21 KRON=0 GENERATED=0 MIXTURES=0 LONG_BLOCKS=300 MIN_NNZ=10000 MAX_NNZ=15000000 \
  ONLY=${ONLY-.dev/s38/only-s21-$G.txt} \
  MATS=/tmp/none MATS_SRC=/tmp/none BUDGET=${BUDGET:-470} timeout ${T:-545} bash scripts/device_collect.sh 2>&1 | grep -v '^\[' | tail -12
