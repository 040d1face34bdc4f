#!/usr/bin/env bash
# Session 47: which parts of the heterogeneous stacks lose when the L2 is not theirs? Each part
# of four stacks of scripts/device_optimizer.sh (the stencil + 200 long rows stack that loses
# beyond the per-block cost in a plan, and three that do not; docs/OPTIMIZER.md session 47),
# generated alone and timed with `bench` warm (back to back, as the model was trained) and
# `--cold` (the L2 cleared before every SpMV), f32 and f64, in the kernels the DP chose for them.
#   D=.dev/o47 bash scripts/device_l2_parts.sh    # carry [".dev/o47"] (binary + mats/hep-th)
# Writes $OUT/l2-parts.tar.gz (one bench JSON per part, mode and precision) and prints a table.
set -u
D=${D:-.dev/o47}
source scripts/device_env.sh
W=/tmp/l2parts; mkdir -p $W
KM2=$(ls $D/mats/hep-th.mtx.gz)
N1=500000; N2=700; N3=100; LONG=40000
declare -A P=(
  [stencil2d5-1050]='{"family":"stencil","stencil":"2d5","n":1050}'
  [long-rows-200]='{"family":"random","rows":200,"cols":490000,"row_len":{"dist":"uniform","min":5000,"max":40000},"seed":42}'
  [banded-b16]='{"family":"banded","n":500000,"half_bandwidth":16,"seed":47}'
  [powerlaw-m8]='{"family":"power-law","n":500000,"mean":8.0,"exponent":1.9,"seed":48}'
  [stencil3d7-100]='{"family":"stencil","stencil":"3d7","n":100}'
  [blockdiag-8]='{"family":"block-diagonal","blocks":100000,"block_size":8,"seed":49}'
  [powerlaw-m4]='{"family":"power-law","n":500000,"mean":4.0,"exponent":2.5,"seed":50}'
  [kron-hep-th]='{"family":"kronecker","matrix":"'$KM2'","pattern":{"kind":"random","k":16,"density":0.5},"seed":54}'
  [stencil3d27-50]='{"family":"stencil","stencil":"3d27","n":50}'
)
K=dia,segtile,coo,hyb,csr-merge,ell,sell,cusparse-csr-alg1
for name in "${!P[@]}"; do
  $BIN generate spec "${P[$name]}" --out $W/$name.mtx >/dev/null 2>&1 || echo "generate $name failed"
  # Block size 256 (the default); the long rows also at 512 (the plan that pays tuned).
  bs=256; [ $name = long-rows-200 ] && bs="256 512"
  for b in $bs; do for p in f32 f64; do for mode in warm cold; do
    c=""; [ $mode = cold ] && c=--cold
    n=$name; [ $b = 512 ] && n=$name@512
    timeout 120 $BIN bench $W/$name.mtx --backend cuda --precision $p --formats $K --block-size $b \
      $c --json > $W/$n-$p-$mode.json 2> $W/$n-$p-$mode.err || echo "bench $n $p $mode rc=$?"
  done; done; done
  rm -f $W/$name.mtx
done
python3 - "$W" <<'PY'
import json, glob, os, sys
w = sys.argv[1]; rows = {}
for f in sorted(glob.glob(f"{w}/*.json")):
    name, p, mode = os.path.basename(f)[:-5].rsplit("-", 2)
    try: d = json.load(open(f))
    except Exception as e: print("unreadable", f, e); continue
    for k in d.get("results", []):
        t = k.get("warm_mean_s")
        lab = k.get("kernel")
        if t: rows.setdefault((name, p, str(lab)), {})[mode] = (t, k.get("footprint_bytes"))
print("| part | prec | kernel | footprint MB | warm µs | cold µs | cold − warm µs |")
for (n, p, l), v in sorted(rows.items()):
    if "warm" in v and "cold" in v:
        fw = (v["warm"][1] or 0) / 1e6
        print(f"| {n} | {p} | {l} | {fw:.1f} | {v['warm'][0]*1e6:.2f} | {v['cold'][0]*1e6:.2f} | {(v['cold'][0]-v['warm'][0])*1e6:.2f} |")
PY
tar -czf $OUT/l2-parts.tar.gz -C $W $(cd $W && ls *.json *.err)
