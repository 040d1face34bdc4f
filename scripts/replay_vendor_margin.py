#!/usr/bin/env python3
"""Replay a "prefer cuSPARSE when close" rule on held-out records (docs/ACCURACY.md, session 20):
the model's pick is replaced by its predicted-fastest cuSPARSE algorithm when that one is
predicted within MARGIN of the pick. Scores, per precision: picks within 5 % of the best
measured, picks > 1.2× the best, matrices where the pick runs < 0.95× the best cuSPARSE
algorithm, and the geomean against it (medians).

    sparsecast train --data … --models sparsecast --folds 5 --quick-cv --out /tmp/cv.json.gz \
        --records /tmp/rec.jsonl
    python3 scripts/replay_vendor_margin.py /tmp/rec.jsonl
"""
import json, sys, math, collections
recs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    recs[(r['matrix'], r['precision'])].append(r)
def stat(r):
    return r.get('median_s')
def run(margin):
    res = collections.defaultdict(lambda: {'n':0,'pick5':0,'lose95':0,'gm':0.0,'gt12':0})
    for (m, p), rs in recs.items():
        rows = []
        for r in rs:
            pr = (r.get('predictions') or {}).get('sparsecast')
            t = stat(r)
            if not pr or pr.get('seconds') is None or t is None or r.get('status') != 'ok':
                continue
            rows.append((r['config'], r['kind'] == 'vendor' or r['config'].startswith('cusparse'), pr['seconds'], t))
        if not rows: continue
        best = min(x[3] for x in rows)
        vend = [x for x in rows if x[1]]
        if not vend: continue
        bv = min(x[3] for x in vend)
        pick = min(rows, key=lambda x: x[2])
        pv = min(vend, key=lambda x: x[2])
        if not pick[1] and pv[2] <= (1 + margin) * pick[2]:
            pick = pv
        s = res[p]; s['n'] += 1
        s['pick5'] += pick[3] <= 1.05 * best
        s['gt12'] += pick[3] > 1.2 * best
        s['lose95'] += bv / pick[3] < 0.95
        s['gm'] += math.log(bv / pick[3])
    for p, s in sorted(res.items()):
        print(f"margin {margin:.2f} {p}: n {s['n']} picks<5% {100*s['pick5']/s['n']:.1f} >1.2x {s['gt12']} <0.95x cuSPARSE {s['lose95']} geomean vs cuSPARSE {math.exp(s['gm']/s['n']):.3f}")
for mg in [0.0, 0.02, 0.05, 0.1, 0.2]:
    run(mg)
