#!/usr/bin/env bash
# Session 43: the SELL split rule on balanced rows at 15-25 % fill (the band where it lost
# against older tables), shipped rule vs fill=0.15 vs off (session 40's kernel), `sell` only, in
# one call per GPU (76 s each; docs/PERFORMANCE.md, session 43):
#   python3 scripts/sell_rule_trial.py --make-lists G .dev/r43   # band + 12 control per seed
#   cp .dev/s43/sparsecast.xz .dev/r43/     # a release build without profiles
#   bash scripts/device_s43_rule.sh G       # carry [".dev/r43"]; writes $OUT/r43-G.tar
#   python3 scripts/sell_rule_trial.py DIR .dev/r43 G
set -u
T0=$SECONDS
D=.dev/r43
source scripts/device_env.sh
[ "$G" = "$1" ] || { echo "wanted $1 got $G"; exit 3; }
source scripts/seed_args.sh
for S in s10 s11 s12 s14; do
  for R in shipped fill=0.15 off; do
    tag=-r${R//[=.]/}-$S
    echo "== $S $R ($((SECONDS - T0)) s)"
    ( [ $R = shipped ] || export SPARSECAST_SELL_SPLIT=$R
      env $(seed_args $S) GPU=$G TAG=$tag SEED=${S#s} MATS=/tmp/none MATS_SRC=/tmp/none OUT="$OUT" \
        ONLY=$D/only-sell-$G-$S.txt CONFIGS=sell BUDGET=60 timeout 90 bash scripts/device_collect.sh 2>&1 |
        grep "rows written" )
  done
done
echo "total $((SECONDS - T0)) s"
(cd "$OUT" && tar cf "r43-$G.tar" corpus-*.jsonl.gz && rm -f corpus-*.jsonl.gz collect-*.log.gz; ls -la)
