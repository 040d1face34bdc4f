#!/usr/bin/env bash
# Session 40, after the flat SEG-TILE kernel was measured and not kept: the shipped kernel against
# the self-test's new SEG-TILE cases (every matrix admitted, runs of empty rows), then on the
# H200 the large set with the shortlist band (issue 16; scripts/device_optimizer.sh, tuned).
#
#   PROFILES=1 bash scripts/device_park.sh park
#   mkdir -p .dev/s40r && cp profiles/h200.json.gz .dev/s40r/   # the GPU's profile
#   bash scripts/device_s40_check.sh   # carry [".dev/s40r"]; .dev/s40r/sparsecast.xz: a release
#                                      # build without profiles. SETS="" skips the optimizer.
#   SELFTEST=0 SETS=large LARGE_f32=10 LARGE_f64=10 bash scripts/device_s40_check.sh
#                                      # the Kronecker expansion alone (.dev/s40r/mats/hep-th.mtx.gz)
# Writes $OUT/selftest-segtile-GPU.txt and $OUT/optimizer-GPU.tar.gz.
set -u
D=.dev/s40r
mkdir -p .dev/bin && xz -dc $D/sparsecast.xz > .dev/bin/sparsecast && chmod +x .dev/bin/sparsecast
OUT=${OUT:-$PWD/.dev/out}
mkdir -p "$OUT"
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in *H200*) G=h200;; *) G=h100;; esac
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
T0=$SECONDS
[ "${SELFTEST:-1}" = 1 ] && timeout 170 .dev/bin/sparsecast selftest --backend cuda --formats segtile \
    --block-sizes 64,128,256,512,1024 > "$OUT/selftest-segtile-$G.txt" 2>&1
[ "${SELFTEST:-1}" = 1 ] && { echo "selftest rc=$? in $((SECONDS - T0)) s"
    grep "cases:" "$OUT/selftest-segtile-$G.txt" | tail -1
    grep -i "FAIL" "$OUT/selftest-segtile-$G.txt" | head -5; }
SETS=${SETS-large}
if [ -n "$SETS" ] && [ -f "$D/$G.json.gz" ]; then
    export TUNE=1 TAIL=8 BIN=$PWD/.dev/bin/sparsecast PROFILE=$D/$G.json.gz GPU=$G SETS
    # MATS: hep-th for the large set's Kronecker expansion (its 10th matrix), if carried.
    export BLARGE=${BLARGE:-90} MATS=$PWD/$D/mats
    timeout $((580 - (SECONDS - T0))) bash scripts/device_optimizer.sh 2>&1 | tail -30
fi
