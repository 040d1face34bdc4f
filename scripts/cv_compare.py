#!/usr/bin/env python3
"""Compare two cross-validation record files of `sparsecast train --records` on the matrices they
share (e.g. a model trained on a larger corpus against the old one, scored on the old rows only).

    python3 scripts/cv_compare.py BASE.jsonl NEW.jsonl [--model sparsecast]

Prints, per precision and matrix set (files / kron / gen), the median and mean difference rate,
the share within 10 %, and the ranking: pick within 5 % of the best measured, mean fraction of
the best, and the pick against the best cuSPARSE algorithm (geomean, worst)."""
import json, math, sys, collections

def load(path, model):
    rows = collections.defaultdict(dict)
    for line in open(path):
        r = json.loads(line)
        if r.get('status') != 'ok' or not r.get('median_s'):
            continue
        p = (r.get('predictions') or {}).get(model)
        if not p or p.get('in_sample'):
            continue
        rows[(r['matrix'], r['precision'])][r['config']] = (r['median_s'], p['seconds'])
    return rows

def kind(m):
    return 'kron' if m.startswith('kron/') else 'gen' if m.startswith('gen/') else 'files'

def stats(rows, keys):
    errs, within5, frac, vs = [], [], [], []
    for k in keys:
        cfgs = rows[k]
        errs += [abs(p - m) / m for m, p in cfgs.values()]
        best = min(m for m, p in cfgs.values())
        pick = min(cfgs, key=lambda c: cfgs[c][1])
        t = cfgs[pick][0]
        within5.append(t <= 1.05 * best)
        frac.append(best / t)
        cus = [m for c, (m, p) in cfgs.items() if c.startswith('cusparse')]
        if cus:
            vs.append(min(cus) / t)
    errs.sort()
    n = len(errs)
    return dict(n=len(keys), median=errs[n // 2] * 100, mean=sum(errs) / n * 100,
                w10=sum(e <= 0.10 for e in errs) / n * 100,
                pick5=sum(within5) / len(within5) * 100, frac=sum(frac) / len(frac) * 100,
                geo=math.exp(sum(map(math.log, vs)) / len(vs)), worst=min(vs),
                below=sum(v < 0.95 for v in vs))

def main():
    args = [a for a in sys.argv[1:] if not a.startswith('--')]
    model = sys.argv[sys.argv.index('--model') + 1] if '--model' in sys.argv else 'sparsecast'
    base, new = load(args[0], model), load(args[1], model)
    shared = sorted(set(base) & set(new))
    print(f"{len(shared)} matrix × precision pairs in both; model {model}")
    print("| set | precision | n | median (base → new) | mean | within 10 % | pick < 5 % | fraction of best | vs cuSPARSE geomean (worst; < 0.95×) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for prec in ('f32', 'f64'):
        for s in ('all', 'files', 'kron', 'gen'):
            keys = [k for k in shared if k[1] == prec and (s == 'all' or kind(k[0]) == s)]
            if not keys:
                continue
            a, b = stats(base, keys), stats(new, keys)
            f = lambda x, y, d=1: f"{x:.{d}f} → {y:.{d}f}"
            print(f"| {s} | {prec} | {a['n']} | {f(a['median'], b['median'])} % | {f(a['mean'], b['mean'])} % | "
                  f"{f(a['w10'], b['w10'])} % | {f(a['pick5'], b['pick5'])} % | {f(a['frac'], b['frac'], 2)} % | "
                  f"{f(a['geo'], b['geo'], 3)}× ({f(a['worst'], b['worst'], 2)}×; {a['below']} → {b['below']}) |")

if __name__ == '__main__':
    main()
