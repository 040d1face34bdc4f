#!/usr/bin/env bash
# Hand-made plans with SEG-TILE blocks on the heterogeneous set's stacks of long rows (the stacks
# of scripts/device_optimizer.sh: H2 = its 2-D stencil + 200 long rows, R2 the same stacked the
# other way round, H3 / H4 / H7 its random stacks with 50 / 10,000 / 5,000 long rows), beside the
# single configurations and plans with other blocks; L2 / L4 are the long-row parts alone. Then
# the CUDA self-test. Session 37 (docs/OPTIMIZER.md), one device call of 150-210 s:
#
#   xz -c sparsecast > .dev/s37/sparsecast.xz          # a release build (SPARSECAST_NO_EMBED=1)
#   xz -c target/release/examples/plan_time > .dev/s37/plan_time.xz
#   cp scripts/device_segtile.sh .dev/s37/run.sh       # the device call: carry [".dev/s37"]
#   G=h200 SELFTEST_S=300 bash .dev/s37/run.sh         # writes $OUT/plans-$G.jsonl, selftest-$G.txt
#   python3 scripts/segtile_table.py plans-h200.jsonl  # offline: the tables
#
# M2 (not by default) is H2 cut where the optimizer cut it in session 35 (1,100,544: the long
# block holds 1,956 stencil rows too). MATS="H2 L2" limits the matrices; SELFTEST_ARGS="--formats segtile" the self-test.
set -u
G=${G:-h100}
D=/tmp/s37; mkdir -p $D
xz -dc .dev/s37/sparsecast.xz > $D/sparsecast; xz -dc .dev/s37/plan_time.xz > $D/plan_time; chmod +x $D/*
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64; do [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; done
export SPARSECAST_CACHE=/tmp/scc
T0=$(date +%s)
P=$D/plan_time
H2='{"family":"stack","parts":[{"family":"stencil","stencil":"2d5","n":1050},{"family":"random","rows":200,"cols":490000,"row_len":{"dist":"uniform","min":5000,"max":40000},"seed":42}]}'
H3='{"family":"stack","parts":[{"family":"random","rows":1500000,"cols":500000,"row_len":{"dist":"constant","nnz":3},"seed":43},{"family":"random","rows":50,"cols":500000,"row_len":{"dist":"constant","nnz":200000},"seed":44}]}'
H4='{"family":"stack","parts":[{"family":"random","rows":1500000,"cols":500000,"row_len":{"dist":"constant","nnz":4},"seed":45},{"family":"random","rows":10000,"cols":500000,"row_len":{"dist":"constant","nnz":256},"seed":46}]}'
H7='{"family":"stack","parts":[{"family":"random","rows":500000,"cols":500000,"row_len":{"dist":"normal","mean":32.0,"std":4.0},"seed":51},{"family":"random","rows":5000,"cols":500000,"row_len":{"dist":"uniform","min":200,"max":800},"seed":52}]}'
R2='{"family":"stack","parts":[{"family":"random","rows":200,"cols":490000,"row_len":{"dist":"uniform","min":5000,"max":40000},"seed":42},{"family":"stencil","stencil":"2d5","n":1050}]}'
L2='{"family":"random","rows":200,"cols":490000,"row_len":{"dist":"uniform","min":5000,"max":40000},"seed":42}'
L4='{"family":"random","rows":10000,"cols":500000,"row_len":{"dist":"constant","nnz":256},"seed":46}'
for prec in f32 f64; do
  for m in ${MATS:-H2 R2 H3 H4 H7 L2 L4}; do
    case $m in
      H2) S="$H2"; PL=(hyb cusparse-csr-alg1 cusparse-csr-alg2 "0-1102500:dia,1102500-1102700:segtile" "0-1102500:dia,1102500-1102700:segtile@512" "0-1102500:dia,1102500-1102700:segtile@1024" "0-1102500:csr-vector,1102500-1102700:segtile@512" "0-1102500:dia,1102500-1102700:coo" "0-1102500:dia,1102500-1102700:csr-merge" "0-1102500:dia,1102500-1102700:cusparse-csr-alg1");;
      M2) S="$H2"; PL=(hyb cusparse-csr-alg1 "0-1100544:dia,1100544-1102700:segtile@512" "0-1100544:dia,1100544-1102700:segtile@1024" "0-1100544:dia,1100544-1102700:cusparse-csr-alg1" "0-275680:ell@512,275680-1100544:dia,1100544-1102700:segtile@512" "0-1102500:dia,1102500-1102700:segtile@512");;
      R2) S="$R2"; PL=(hyb cusparse-csr-alg1 "0-200:segtile,200-1102700:dia" "0-200:segtile@512,200-1102700:dia" "0-200:cusparse-csr-alg1,200-1102700:dia");;
      H3) S="$H3"; PL=(cusparse-csr-alg2 cusparse-csr-alg1 hyb ell-bro "0-1500000:ell@128,1500000-1500050:segtile" "0-1500000:ell-bro,1500000-1500050:segtile" "0-1500000:ell@128,1500000-1500050:segtile@512" "0-1500000:ell@128,1500000-1500050:csr-merge" "0-1500000:ell@128,1500000-1500050:cusparse-csr-alg2");;
      H4) S="$H4"; PL=(cusparse-csr-alg1 cusparse-csr-alg2 hyb "0-1500000:ell-bro,1500000-1510000:segtile" "0-1500000:hyb,1500000-1510000:segtile" "0-1500000:ell-bro,1500000-1510000:csr-t16" "0-1500000:ell-bro,1500000-1510000:cusparse-csr-alg1");;
      H7) S="$H7"; PL=(cusparse-csr-alg1 hyb "0-500000:hyb,500000-505000:segtile" "0-500000:sell,500000-505000:segtile" "0-500000:hyb,500000-505000:csr-vector@128");;
      L2|L4) [ $m = L2 ] && S="$L2" || S="$L4"; PL=(segtile segtile@128 segtile@512 segtile@1024 csr-merge coo cusparse-csr-alg1 cusparse-csr-alg2 cusparse-coo-alg1);;
    esac
    echo "== $m $prec $(( $(date +%s) - T0 )) s" >&2
    timeout 150 $P "$S" $prec cuda "${PL[@]}" | sed "s/^{/{\"matrix\":\"$m\",\"precision\":\"$prec\",/" >> $OUT/plans-$G.jsonl
  done
done
echo "plans done $(( $(date +%s) - T0 )) s"
timeout ${SELFTEST_S:-200} $D/sparsecast selftest --backend cuda ${SELFTEST_ARGS:-} > $OUT/selftest-$G.txt 2>&1; echo "rc $?" >> $OUT/selftest-$G.txt
echo "total $(( $(date +%s) - T0 )) s"
tail -5 $OUT/selftest-$G.txt
grep -i -E 'fail|mismatch' $OUT/selftest-$G.txt | head -20
