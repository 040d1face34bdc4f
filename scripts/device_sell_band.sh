#!/usr/bin/env bash
# Session 78's second probe: the SELL split rule with the band (src/backend/cuda/sell_split.rs,
# `band`; an experiment, not shipped) against the shipped rule and against splitting every slice
# wider than two chunks (`skew=0`), on the straggler stacks of docs/ACCURACY.md session 78 and on
# three guards that fill the GPU (session 41's banded matrix of rows of 223, random rows of mean
# 92, the heterogeneous set's power law) — the generator specs in $D/*.json. Per (matrix,
# precision, C): the three rules in turn, the median of `bench --runs 10` each.
#
#   mkdir -p .dev/p78b && cp docs/h200/sell-probe-s78/*.json .dev/p78b/
#   SPARSECAST_NO_EMBED=1 cargo build --release && xz -c target/release/sparsecast > .dev/p78b/sparsecast.xz
#   PROFILES=1 DOCS=1 bash scripts/device_park.sh park
#   device call (carry [".dev/p78b"], 81 s): D=.dev/p78b bash scripts/device_sell_band.sh   # → $OUT/band.txt
#   bash scripts/device_park.sh restore
# RULES (default "waves=1 band=0.25 skew=0", waves=1 being the shipped rule) names the rules, each
# a SPARSECAST_SELL_SPLIT value; SHARD=i/N measures every N-th spec from the i-th (0-based), and
# DEADLINE (s, default 540) stops before a matrix would start past it. The wide-rule
# measurement (session 79 prepared it, session 80 ran it: docs/PERFORMANCE.md, "SELL: the `wide`
# rule"; scripts/sell_wide_summary.py): the 50 s38/s39 stacks
# `wide=5` changes (a slice left whole though wider than 5 chunks at C = 32 or 512, by
# `examples/sell_chain.rs` over both tables), seven Kronecker expansions it changes (the class
# where it changes most: 8-12 % of each Kronecker-only seed), session 78's band probe's
# s12-m00578, s20-m00762, s6-m00031 and s39-m00677 (the band's loser, unchanged by wide=5) and
# the three guards, in docs/h200/sell-wide-s79/ (a spec's `/root/mats/X.mtx.gz` is copied
# there from $D/mats, below). 64 specs, 16 bench runs each:
#   mkdir -p .dev/w79/mats && cp docs/h200/sell-wide-s79/*.json .dev/w79/
#   for m in $(grep -ho '/root/mats/[^"]*' .dev/w79/kron-*.json | sort -u); do
#       cp ../shared/matrices/suitesparse/${m#/root/mats/} .dev/w79/mats/; done   # the Kronecker bases
#   SPARSECAST_NO_EMBED=1 cargo build --release && xz -c target/release/sparsecast > .dev/w79/sparsecast.xz
#   device calls (carry [".dev/w79"], ≈ 4 min each):
#   RULES="waves=1 wide=4 wide=5 wide=6" SHARD=0/2 D=.dev/w79 bash scripts/device_sell_band.sh
#   RULES="waves=1 wide=4 wide=5 wide=6" SHARD=1/2 D=.dev/w79 bash scripts/device_sell_band.sh
set -u
D=${D:-.dev/p78b}
RULES=${RULES:-"waves=1 band=0.25 skew=0"}
SHARD=${SHARD:-0/1}
DEADLINE=${DEADLINE:-540}
T0=$(date +%s)
BINXZ=$D/sparsecast.xz source scripts/device_env.sh
W=/tmp/p78b; mkdir -p $W
if ls "$D"/mats/*.mtx.gz >/dev/null 2>&1; then mkdir -p /root/mats && cp "$D"/mats/*.mtx.gz /root/mats/; fi
one() {  # matrix prec C sigma rule
    SPARSECAST_SELL_SPLIT=$5 $BIN bench $W/$1.mtx --backend cuda --precision $2 --formats sell \
        --sell-c $3 --sell-sigma $4 --runs 10 --warmup-ms 10 --json 2>&1 | python3 -c "
import json,sys
t=sys.stdin.read()
try:
  d=json.loads(t); print(' '.join('%.2f'%(r['median_s']*1e6) for r in d['results'] if r.get('median_s')))
except Exception: print('ERR', t[-200:].replace(chr(10),' '))
"
}
k=0
for f in "$D"/*.json; do
  k=$((k + 1))
  [ $(( (k - 1) % ${SHARD#*/} )) -eq ${SHARD%/*} ] || continue
  [ $(( $(date +%s) - T0 )) -lt $DEADLINE ] || { echo "deadline: stopped before $f"; break; }
  m=$(basename "$f" .json)
  $BIN generate spec @"$f" --out $W/$m.mtx >/dev/null 2>&1 || { echo "gen $m failed"; continue; }
  for prec in f64 f32; do
    for cs in "32 256" "512 2048"; do
      set -- $cs
      line="$m $prec C=$1"
      for rep in 1; do
        for rule in $RULES; do
          line="$line $rule:$(one $m $prec $1 $2 $rule)"
        done
      done
      echo "$line"
    done
  done
  rm -f $W/$m.mtx
done 2>&1 | tee "$OUT/band.txt"
