#!/usr/bin/env bash
# Session 78's probe (docs/ACCURACY.md, "Session 78"): SELL-C-σ at eight (C, σ), with the kernel's
# split of wide slices (default) and without it (SPARSECAST_SELL_SPLIT=off), on the stacks whose
# SELL at C = 32 ran 2–3× slower than at C = 512 — the generator specs in $D/*.json. One line a
# (matrix, precision, C, σ, split): the median of `sparsecast bench --runs 10`, µs.
#
#   mkdir -p .dev/p78 && cp docs/h200/sell-probe-s78/*.json .dev/p78/
#   SPARSECAST_NO_EMBED=1 cargo build --release && xz -c target/release/sparsecast > .dev/p78/sparsecast.xz
#   PROFILES=1 DOCS=1 bash scripts/device_park.sh park
#   device call (carry [".dev/p78"], ≈ 70 s): bash scripts/device_sell_probe.sh   # → $OUT/probe.txt
#   bash scripts/device_park.sh restore
set -u
D=${D:-.dev/p78}
BINXZ=$D/sparsecast.xz source scripts/device_env.sh
W=/tmp/p78; mkdir -p $W
for f in "$D"/*.json; do
  m=$(basename "$f" .json)
  $BIN generate spec @"$f" --out $W/$m.mtx >/dev/null 2>&1 || { echo "gen $m failed"; continue; }
  for prec in f64 f32; do
    for cs in "32 256" "32 32" "32 2048" "64 256" "128 256" "256 256" "512 512" "512 2048"; do
      set -- $cs
      for split in default off; do
        if [ $split = off ]; then export SPARSECAST_SELL_SPLIT=off; else unset SPARSECAST_SELL_SPLIT; fi
        t=$($BIN bench $W/$m.mtx --backend cuda --precision $prec --formats sell --sell-c $1 \
              --sell-sigma $2 --runs 10 --warmup-ms 10 --json 2>&1 | python3 -c "
import json,sys
t=sys.stdin.read()
try:
  d=json.loads(t); rs=d['results'] if isinstance(d,dict) and 'results' in d else d
  print(' '.join('%s=%.2f'%(r['kernel'],r['median_s']*1e6) for r in rs if r.get('median_s')))
except Exception as e: print('ERR',t[-300:].replace(chr(10),' '))
")
        echo "$m $prec C=$1 sigma=$2 split=$split $t"
      done
    done
  done
done 2>&1 | tee "$OUT/probe.txt"
