#!/usr/bin/env python3
"""Exploratory replay (session 52, not a shipped rule): the untuned recommendation with a vendor
tie-break — where the predicted-fastest cuSPARSE algorithm is predicted within `d` of our pick
(relative: pick × (1 + d); `unc`: pick + d × the two uncertainties in quadrature), recommend the
cuSPARSE algorithm instead. On the records of `sparsecast train --score … --records R` (JSON
Lines .gz; the pick is the second stage's `picked`, else the predicted argmin; times by median):
share within 5 % of the best, mean fraction of the best, picks beyond 1.2×, picks below 0.95× the
best cuSPARSE algorithm, geomean against it.

    python3 scripts/vendor_tiebreak_replay.py R_H200.jsonl.gz R_H100.jsonl.gz

Session 52 on seed 14 (the shipped profiles): d = 1 % takes picks below 0.95× cuSPARSE from 57 to
46 (H200) and 60 to 50 (H100) and within 5 % from 89.6 to 90.0 % / 89.8 to 90.1 %, geomean
unchanged — chosen on the test draw itself, so a d for shipping must come from cross-validation
records. Those (`train --data <the profiles' 28 tables> --base profiles/G.json.gz --models
sparsecast --folds 5 --quick-cv --records R`, 11.4 min per GPU; the 5 family folds' held-out
predictions, first stage only, table times) agree: d = 1 % takes picks below 0.95x from 446 to 388
of 16,068 (H200) and 423 to 373 of 15,972 (H100), within 5 % +0.05 point on both, beyond 1.2x
138 -> 139 / 100 -> 103, geomean unchanged; d = 2 % goes to 341 / 334 below but loses 0.04 / 0.17
points within 5 %.

Session 53: the `train --score` and `--quick-cv` records carry no second-stage pick, so the figures
above are of the rule after the first stage's argmin. After the second stage, where the product
would apply it, the gain mostly goes (`examples/stage_tie.rs`; docs/ACCURACY.md, session 53): at
1 % on the cross-validation records, below 0.95x 330 -> 309 (H200) and 307 -> 295 (H100) of
~16,000, but 0.1-0.3 point fewer within 5 % and 1-3 more beyond 1.2x. Not shipped.
"""

import collections
import gzip
import json
import math
import sys


def load(f):
    """(matrix, precision) -> [(config, kind, predicted, measured median, picked, uncertainty)]."""
    by = collections.defaultdict(list)
    for line in gzip.open(f, 'rt'):
        r = json.loads(line)
        p = r['predictions'].get('sparsecast')
        if (r['status'] != 'ok' or not p or r.get('median_s') is None or r['kind'] == 'plan'
                or p.get('seconds') is None):
            continue
        by[(r['matrix'], r['precision'])].append(
            (r['config'], r['kind'], p['seconds'], r['median_s'], p.get('picked'),
             p.get('uncertainty_s') or 0))
    return by


def replay(by, mode, d):
    w5 = below = beyond = 0
    frac, speed = [], []
    for rows in by.values():
        vendor = [x for x in rows if x[1] != 'ours']
        if not vendor:
            continue
        pick = next((x for x in rows if x[4]), min(rows, key=lambda x: x[2]))
        pv = min(vendor, key=lambda x: x[2])
        lim = pick[2] * (1 + d) if mode == 'rel' else pick[2] + d * math.hypot(pick[5], pv[5])
        if pick[1] == 'ours' and pv[2] <= lim:
            pick = pv
        best = min(x[3] for x in rows)
        bv = min(x[3] for x in vendor)
        w5 += pick[3] <= best * 1.05
        beyond += pick[3] > best * 1.2
        below += bv / pick[3] < 0.95
        frac.append(best / pick[3])
        speed.append(bv / pick[3])
    n = len(frac)
    geo = math.exp(sum(map(math.log, speed)) / n)
    print(f'  {mode} {d:<6} matrices {n}  within 5 % {100 * w5 / n:.2f} %  mean fraction '
          f'{100 * sum(frac) / n:.2f} %  beyond 1.2x {beyond}  below 0.95x cuSPARSE {below}  '
          f'geomean {geo:.4f}x')


if __name__ == '__main__':
    for f in sys.argv[1:]:
        by = load(f)
        print(f)
        for d in [0, 0.005, 0.01, 0.02, 0.03, 0.05]:
            replay(by, 'rel', d)
        for d in [0.25, 0.5, 1.0]:
            replay(by, 'unc', d)
