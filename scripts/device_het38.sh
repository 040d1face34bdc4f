#!/usr/bin/env bash
# Session 38: the heterogeneous optimizer set, tuned, with the profiles refit on the SEG-TILE
# tables and the blocks of long rows (scripts/device_optimizer.sh's het set; the cuts refined to
# the 32-row group). One device call per GPU, ~5 minutes:
#
#   cp /tmp/s38/G.json.gz .dev/s38/G.json.gz   # the profile to test (or profiles/G.json.gz)
#   cp scripts/device_het38.sh .dev/s38/het.sh; bash .dev/s38/het.sh   # carry [".dev/s38", ".dev/mats"]
#
# (.dev/mats: rajat19 and hep-th, the Kronecker bases of the set; .dev/s38/sparsecast.xz: a
# release build without profiles.) Writes $OUT/optimizer-GPU.tar.gz.
set -u
mkdir -p .dev/bin && xz -dc .dev/s38/sparsecast.xz > .dev/bin/sparsecast && chmod +x .dev/bin/sparsecast
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in *H200*) G=h200;; *) G=h100;; esac
TUNE=1 SETS=het BHET=${BHET:-230} TAIL=8 BIN=$PWD/.dev/bin/sparsecast PROFILE=.dev/s38/$G.json.gz \
  MATS=$PWD/.dev/mats GPU=$G timeout ${T:-560} bash scripts/device_optimizer.sh 2>&1 | tail -45
