#!/usr/bin/env python3
"""Would averaging several fits rank better? (docs/ACCURACY.md, session 70)

    python3 scripts/ensemble_picks.py A/s14.jsonl.gz B/s14.jsonl.gz [C/s14.jsonl.gz …]

Reads the seed-14 records of several refits (`s14.jsonl.gz` of scripts/refit_cv.sh, or
`s14-NAME.jsonl.gz` of scripts/stacks_curve.sh) — the same matrices, each predicted by one fit's
`sparsecast` — and prints, for every single fit and every combination of two or three (and all of
them), the share of predictions within 10 % of the measurement and the first stage's argmin picks
within 5 % of the best measured configuration (per precision; pooled and on the stacks), where a
combination predicts the geometric mean of its fits' predictions. Fits are numbered in the
order given. Only (matrix, precision, configuration) measured and predicted by every fit count.
"""
import collections
import gzip
import itertools
import json
import math
import sys


def load(path):
    d = {}
    with gzip.open(path, "rt") as fh:
        for line in fh:
            r = json.loads(line)
            if r.get("status") != "ok" or not r.get("median_s"):
                continue
            p = (r.get("predictions") or {}).get("sparsecast")
            if p:
                d[(r["matrix"], r["precision"], r["config"])] = (r["median_s"], p["seconds"])
    return d


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    fits = [load(p) for p in sys.argv[1:]]
    keys = set(fits[0]).intersection(*fits[1:])
    by = collections.defaultdict(list)
    for k in keys:
        by[k[:2]].append(k)
    for i, p in enumerate(sys.argv[1:]):
        print(f"fit {i}: {p}")
    print("fits          within 10 %   picks within 5 %: f32  f64   stacks' f32  f64")
    sizes = [r for r in range(1, len(fits) + 1) if r <= 3 or r == len(fits)]
    for r in sizes:
        for idx in itertools.combinations(range(len(fits)), r):
            near = total = 0
            picks, n = collections.Counter(), collections.Counter()
            for (m, prec), ks in by.items():
                best = min(fits[0][k][0] for k in ks)
                pred = {k: math.exp(sum(math.log(fits[i][k][1]) for i in idx) / r) for k in ks}
                for k in ks:
                    meas = fits[0][k][0]
                    total += 1
                    near += abs(pred[k] - meas) <= 0.10 * meas
                ok = fits[0][min(ks, key=pred.get)][0] <= 1.05 * best
                cls = [prec, "stack-" + prec] if "-stack-" in m else [prec]
                for c in cls:
                    picks[c] += ok
                    n[c] += 1
            share = lambda c: 100.0 * picks[c] / max(n[c], 1)
            print(f"{'+'.join(map(str, idx)):12s}  {100.0 * near / total:5.1f} %       "
                  f"{share('f32'):5.1f} {share('f64'):5.1f}     {share('stack-f32'):5.1f} {share('stack-f64'):5.1f}")


if __name__ == "__main__":
    main()
