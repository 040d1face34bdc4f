#!/usr/bin/env bash
# Session 83: `collect` on the H200 with the binary that embeds the H200 profile (HYB modelled
# under programmatic dependent launch) times HYB that way by default and marks it `hyb-pdl`;
# SPARSECAST_PDL=0 times the plain sequence, unmarked. Six small generated matrices, hyb and coo.
# Carry .dev/s83c (sparsecast.xz: a release build with the profiles embedded, xz-compressed);
# records in docs/h200/session83/collect-*.jsonl.gz.
set -u
D=.dev/s83c; BINXZ=$D/sparsecast.xz
source scripts/device_env.sh
for v in default 0; do
  env $([ $v = 0 ] && echo SPARSECAST_PDL=0) "$BIN" collect --backend cuda --generated 6 --mixtures 0 --min-nnz 30000 --max-nnz 300000 --seed 83 --configs hyb,coo --out /tmp/c-$v.jsonl > /tmp/c-$v.log 2>&1
  echo "$v: rc $? rows $(wc -l < /tmp/c-$v.jsonl), hyb-pdl marks $(grep -o '"kernel":"hyb-pdl"' /tmp/c-$v.jsonl | wc -l)"
  python3 -c "
import json
for l in open('/tmp/c-$v.jsonl'):
    r=json.loads(l)
    t={x['config']:(x.get('median_s'),x.get('kernel')) for x in r['times']}
    print(r['matrix'][:40], r['precision'], r['features']['hyb_coo_nnz'], t.get('hyb'))
"
done
cp /tmp/c-*.jsonl "$OUT"/
