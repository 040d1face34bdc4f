#!/usr/bin/env bash
# SEG-TILE against our other kernels and cuSPARSE on random matrices of constant row length
# 8-1,024 (mean segment 8-128 entries): the measurement behind its admission threshold
# (src/formats/segtile.rs; docs/OPTIMIZER.md, session 37). One device call of under a minute,
# with examples/plan_time compressed into .dev/s37/plan_time.xz (see scripts/device_segtile.sh):
#   cp scripts/segtile_minseg.sh .dev/s37/minseg.sh; G=h100 bash .dev/s37/minseg.sh   # carry [".dev/s37"]
# writes $OUT/minseg-$G.jsonl.
set -u
D=/tmp/s37; mkdir -p $D
xz -dc .dev/s37/plan_time.xz > $D/plan_time; chmod +x $D/plan_time
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; done
export SPARSECAST_CACHE=/tmp/scc
PL=(segtile segtile@512 csr-vector csr-t8 csr-t4 csr-merge cusparse-csr-alg1 cusparse-csr-alg2)
for prec in f32 f64; do
  for spec in "200000 60000 8" "200000 60000 16" "200000 60000 32" "100000 60000 64" "50000 60000 128" "20000 500000 256" "10000 500000 512" "5000 500000 1024"; do
    set -- $spec
    S="{\"family\":\"random\",\"rows\":$1,\"cols\":$2,\"row_len\":{\"dist\":\"constant\",\"nnz\":$3},\"seed\":7}"
    timeout 120 $D/plan_time "$S" $prec cuda "${PL[@]}" | sed "s/^{/{\"matrix\":\"r$1x$2k$3\",\"precision\":\"$prec\",/" >> $OUT/minseg-$G.jsonl
  done
done
echo done
