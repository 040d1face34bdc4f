#!/usr/bin/env python3
"""The tuned shortlist and the untuned pick on the shared SuiteSparse files with *held-out*
predictions, against a device run's measurements of every configuration.

The shipped profiles trained on every SuiteSparse family (the corpus's `mats/…` rows and their
Kronecker expansions), so `optimize --tune` on those files ranks with a model that saw them.
Here the ranking comes instead from the cross-validation records of `sparsecast train --folds 5
--records R` on the profile's own tables (each file predicted by the fold that held its family
out), and the measured times from `optimize --measure --tune --json-out` (`measured.singles`:
every single configuration timed once on the device):

    python3 scripts/heldout_shortlist.py R.jsonl.gz docs/h100/optimizer/session51/opt-real-*.json.gz

Per precision: matrices; the held-out shortlist of 5 (`shortlist_replay.shortlist`: the 5
predicted-fastest, the predicted-fastest cuSPARSE algorithm, the fastest of each other format
within 20 %) — its fastest within 2 % / 5 % of the fastest measured, and the worst; the same
for the configurations the device run's `--tune` timed (ranked by the shipped, in-sample
profile); the held-out argmin (the untuned answer without the second stage) within 2 % / 5 %,
beyond 1.2x, and against the best cuSPARSE algorithm. All against one noisy timing per
configuration: the fastest of ≈ 60 is biased low, the same way for both rankings. Last, the
held-out difference rate |pred − meas| / meas against the device run's times and against the
training table's own times of the same configurations, and between those two times.
"""
import collections
import json
import math
import os
import statistics
import sys

from jsonio import jload
from shortlist_replay import lines, shortlist


def heldout(f):
    """(file name, precision) -> [(config, kind, format, held-out predicted s, table's s)]."""
    by = collections.defaultdict(list)
    for line in lines(f):
        r = json.loads(line)
        p = r['predictions'].get('sparsecast')
        if not r['matrix'].startswith('mats/') or not p or r['kind'] == 'plan':
            continue
        by[(os.path.basename(r['matrix']), r['precision'])].append(
            (r['config'], r['kind'], r['format'], p['seconds'], r.get('warm_mean_s')))
    return by


def main(rec, runs):
    pred = heldout(rec)
    res = collections.defaultdict(list)
    rates = collections.defaultdict(list)
    missing = 0
    for f in runs:
        for r in jload(f)['results']:
            ms = r.get('measured') or {}
            key = (os.path.basename(r['input']), r['precision'])
            t = {c[0]: c[1] for c in ms.get('singles') or [] if c[1]}
            rows = [x for x in pred.get(key, []) if x[0] in t]
            if not t or not rows:
                missing += 1
                continue
            rates[r['precision']] += [(x[3] / t[x[0]] - 1, x[3] / x[4] - 1, x[4] / t[x[0]] - 1)
                                      for x in rows if x[4]]
            best = min(t.values())
            held = min(t[c] for c in shortlist([x[:4] for x in rows], 5))
            tuned = (ms.get('tuned') or {}).get('timed') or []
            shipped = min((t[c[0]] for c in tuned if c[0] in t), default=math.nan)
            argmin = t[min(rows, key=lambda x: x[3])[0]]
            vendor = min((t[x[0]] for x in rows if x[1] != 'ours'), default=None)
            res[r['precision']].append((held / best, shipped / best, argmin / best,
                                        vendor / argmin if vendor else None))
    for prec, v in sorted(res.items()):
        def share(i, lim):
            return f'{100 * sum(x[i] <= lim for x in v) / len(v):.1f} %'
        sp = [x[3] for x in v if x[3]]
        print(f'{prec}: {len(v)} matrices')
        print(f'  held-out shortlist of 5: within 2 % {share(0, 1.02)}, within 5 % {share(0, 1.05)}, '
              f'worst {max(x[0] for x in v):.3f}x')
        print(f'  --tune as run (shipped profile, in sample): within 2 % {share(1, 1.02)}, '
              f'within 5 % {share(1, 1.05)}, worst {max(x[1] for x in v):.3f}x')
        print(f'  held-out argmin (untuned): within 2 % {share(2, 1.02)}, within 5 % {share(2, 1.05)}, '
              f'beyond 1.2x {sum(x[2] > 1.2 for x in v)}, median {statistics.median(x[2] for x in v):.3f}x, '
              f'worst {max(x[2] for x in v):.3f}x; against the best cuSPARSE geomean '
              f'{math.exp(statistics.fmean(map(math.log, sp))):.3f}x, below 0.95x {sum(x < 0.95 for x in sp)}')
    for prec, v in sorted(rates.items()):
        def rate(i):
            e = [abs(x[i]) for x in v]
            return (f'median {100 * statistics.median(e):.1f} %, mean {100 * statistics.fmean(e):.1f} %, '
                    f'within 10 % {100 * sum(x <= 0.1 for x in e) / len(e):.1f} %')
        print(f'{prec}: {len(v)} configurations; held-out prediction vs the device run: {rate(0)}; '
              f'vs the table: {rate(1)}; table vs the device run: {rate(2)}')
    if missing:
        print(f'({missing} matrix-precisions without held-out predictions or measurements, left out)')


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2:])
