#!/usr/bin/env python3
"""Score the tuned recommendation (`predict --tune`) against everything measured in one run
(`predict --measure` on the same inputs and profile): per precision, how often the model's pick
and the tuned pick are within 5 % of the fastest configuration measured, their mean fraction of
the best, and their speed against the best cuSPARSE algorithm (geomean, worst, count < 0.95x).
The tuned pick is scored twice: by the --measure run's time of the configuration it chose (same
run as the best: no run-to-run noise) and by its own measurement in the --tune run.

usage: tune_score.py MEASURE.json TUNE.json"""
import json, math, sys

meas = json.load(open(sys.argv[1]))
tune = json.load(open(sys.argv[2]))
truth = {}
for r in meas['results']:
    ks = [k for k in r['kernels'] if k['model'] == 'sparsecast']
    t = {k['variant']: k['measured_seconds'] for k in ks if k.get('measured_seconds')}
    pred = {k['variant']: k['seconds'] for k in ks if k.get('seconds')}
    truth[(r['input'], r['precision'])] = (t, pred)
tuned = {(r['input'], r['precision']): r['tuned'][0] for r in tune['results'] if r.get('tuned')}
for prec in ('f32', 'f64'):
    rows = {'model pick': [], 'tuned (same run)': [], 'tuned (its own run)': []}
    for key, (t, pred) in truth.items():
        if key[1] != prec or not t:
            continue
        best = min(t.values())
        cus = [v for c, v in t.items() if c.startswith('cusparse')]
        cus = min(cus) if cus else None
        ran = [c for c in pred if c in t]
        pick = min(ran, key=lambda c: pred[c])
        rows['model pick'].append((t[pick], best, cus))
        tp = tuned.get(key)
        if tp and tp['recommendation'] in t:
            rows['tuned (same run)'].append((t[tp['recommendation']], best, cus))
            rows['tuned (its own run)'].append((tp['measured_seconds'], best, cus))
    for name, v in rows.items():
        if not v:
            continue
        w5 = sum(x <= 1.05 * b for x, b, _ in v) / len(v)
        frac = sum(b / x for x, b, _ in v) / len(v)
        s = [c / x for x, _, c in v if c]
        vs = (f"vs best cuSPARSE geomean {math.exp(sum(map(math.log, s)) / len(s)):.3f}x "
              f"worst {min(s):.3f}x < 0.95x: {sum(x < 0.95 for x in s)}") if s else "no cuSPARSE"
        print(f"{prec} {name:20s} n {len(v):3d}  within 5 % of best {100 * w5:5.1f} %  "
              f"fraction of best {100 * frac:6.2f} %  {vs}")
