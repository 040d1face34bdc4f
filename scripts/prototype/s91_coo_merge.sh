#!/usr/bin/env bash
# Session 91 (docs/PERFORMANCE.md, "COO's carries merged per block"): the shipped COO and HYB
# against the block-merged variant that scripts/prototype/s91_coo_merge.patch adds to kernels/coo.cu
# (compiled with -DSC_COO_MERGE=1 through SPARSECAST_NVRTC_OPTIONS), the same binary built with the patch, alternating A (shipped) / B (merged) runs of
# `sparsecast bench` (every result checked against the f64 CPU reference before it is timed) on
# the 30 seed-41 matrices of scripts/prototype/s91_specs/ (list.txt: b00-b17 the f32 matrices of
# at most 2e7 entries where our COO is slowest against cuSPARSE's, c00-c11 a random dozen where
# they are even); first a selftest of COO and HYB with the variant and both resource reports.
# On the device, from the repository root, with the binary unpacked by scripts/device_env.sh
# (D=.dev/j91: a build without profiles as $D/sparsecast.xz):
#   D=.dev/j91 bash scripts/prototype/s91_coo_merge.sh   # writes $OUT/mb2.tar.gz
# Scored here by python3 scripts/prototype/s91_coo_merge_an.py DIR (the unpacked r/).
set -u
T0=$SECONDS
source scripts/device_env.sh
M="-DSC_COO_MERGE=1"
S=scripts/prototype/s91_specs
R=$OUT/r; mkdir -p $R
( SPARSECAST_NVRTC_OPTIONS=$M timeout 150 $BIN selftest --backend cuda --formats coo,hyb > $R/selftest-merged.txt 2>&1; echo "selftest rc $?" >> $R/selftest-merged.txt )
tail -3 $R/selftest-merged.txt
SPARSECAST_NVRTC_OPTIONS=$M timeout 60 $BIN device --kernels > $R/device-kernels-merged.txt 2>&1
timeout 60 $BIN device --kernels > $R/device-kernels-plain.txt 2>&1
for s in $S/*.json; do
  n=$(basename $s .json)
  [ $((SECONDS - T0)) -gt ${DEADLINE:-470} ] && { echo "stop before $n"; break; }
  $BIN generate spec @$s --out /tmp/$n.mtx > /dev/null 2>&1 || { echo "gen $n failed"; continue; }
  for p in f32 f64; do
    vs="A B A B"; [ $p = f64 ] && vs="A B"
    for v in $vs; do
      if [ $v = B ]; then opt=$M; else opt=""; fi
      SPARSECAST_PDL=1 SPARSECAST_NVRTC_OPTIONS="$opt" $BIN bench /tmp/$n.mtx --backend cuda --precision $p \
        --formats coo,hyb,cusparse-coo-alg1 --json > $R/$n-$p-$v-$RANDOM.json 2> $R/$n-$p-$v.err || echo "bench $n $p $v rc $?"
    done
  done
  rm -f /tmp/$n.mtx
  echo "$n at $((SECONDS - T0)) s"
done
tar czf $OUT/mb2.tar.gz -C $OUT r && rm -rf $R
echo "total $((SECONDS - T0)) s"
