#!/usr/bin/env bash
# Session 39: the optimizer sets not yet measured with session 38's profiles (issue 16), tuned,
# one device call per GPU (scripts/device_optimizer.sh):
#   H100: the 8 heterogeneous matrices session 38 had no budget for (f64 6–10, f32 8–10),
#         then the SuiteSparse set (every other of the 60 smallest files) and the large set;
#   H200: the SuiteSparse and large sets.
#
#   cp profiles/G.json.gz .dev/s39/; cp scripts/device_s39.sh .dev/s39/run.sh
#   bash .dev/s39/run.sh        # carry [".dev/s39", ".dev/mats"]; .dev/s39/sparsecast.xz:
#                               # a release build without profiles (SPARSECAST_NO_EMBED=1)
# Writes $OUT/optimizer-GPU.tar.gz.
set -u
mkdir -p .dev/bin && xz -dc .dev/s39/sparsecast.xz > .dev/bin/sparsecast && chmod +x .dev/bin/sparsecast
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in *H200*) G=h200;; *) G=h100;; esac
export TUNE=1 TAIL=8 BIN=$PWD/.dev/bin/sparsecast PROFILE=.dev/s39/$G.json.gz MATS=$PWD/.dev/mats GPU=$G
if [ "$G" = h100 ] && [ -z "${SETS:-}" ]; then
    export SETS="het real large" HET_f64=6,7,8,9,10 HET_f32=8,9,10 BHET=${BHET:-200}
    export BREAL=${BREAL:-60} BLARGE=${BLARGE:-60}
else
    export SETS=${SETS:-"real large"} BREAL=${BREAL:-90} BLARGE=${BLARGE:-90}
fi
timeout ${T:-560} bash scripts/device_optimizer.sh 2>&1 | tail -60
