#!/usr/bin/env bash
# Session 45: are the optimizer's blocks, timed alone, L2-warm where the plan is not? The
# heterogeneous set's stencil + 200 long random rows stack (f32): its two parts alone under
# `bench` warm and `--cold`, then `optimize --measure --overlap-splits 2` on the stack
# (docs/OPTIMIZER.md, session 45; output docs/h100/optimizer/session45/l2-check.txt).
#   cp <release build without profiles, xz> .dev/o45/sparsecast.xz; cp profiles/h100.json.gz .dev/o45/
#   bash scripts/device_l2_blocks.sh    # carry [".dev/o45"]; ≈ 20 s on an H100
set -u
D=.dev/o45
source scripts/device_env.sh
W=/tmp/l2; mkdir -p $W
S='{"family":"stencil","stencil":"2d5","n":1050}'
R='{"family":"random","rows":200,"cols":490000,"row_len":{"dist":"uniform","min":5000,"max":40000},"seed":42}'
$BIN generate spec "$S" --out $W/s.mtx >/dev/null
$BIN generate spec "$R" --out $W/r.mtx >/dev/null
ls -la $W
for mode in warm cold; do
  c=""; [ $mode = cold ] && c=--cold
  echo "== $mode"
  timeout 60 $BIN bench $W/s.mtx --backend cuda --precision f32 --formats dia,sell $c 2>&1 | grep 'µs' 
  timeout 60 $BIN bench $W/r.mtx --backend cuda --precision f32 --formats segtile,sell $c 2>&1 | grep 'µs'
done
echo '{"stack":['"$S,$R"']}' > $W/st.json
timeout 100 $BIN optimize $W/st.json --precision f32 --measure --backend cuda --profile $D/$G.json.gz --overlap-splits 2 2>&1 | tail -40
