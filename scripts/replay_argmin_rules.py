#!/usr/bin/env python3
"""Replay two other first-stage rankings on score or held-out records (docs/ACCURACY.md,
session 66; neither kept): `sparsecast`'s predicted times blended with a seed model's
(`ln T = (1 - w) ln T_sparsecast + w ln T_MODEL`, MODEL `gb` or `knn`), and ranked by the risk
(`ln T + k sigma`, sigma the relative uncertainty `sparsecast` states). Per precision: the share of
predictions within 10 % (blend only) and of argmin picks within 5 % of the best measured.

    python3 scripts/replay_argmin_rules.py s14.jsonl     # refit_cv.sh's s14.jsonl.gz, unpacked
"""
import collections
import json
import math
import sys

recs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    p = r.get("predictions") or {}
    if r["status"] != "ok" or not r.get("median_s") or "sparsecast" not in p:
        continue
    s = p["sparsecast"]
    recs[(r["matrix"], r["precision"])].append(
        (r["median_s"], s["seconds"], s["uncertainty_s"] / s["seconds"],
         {m: v["seconds"] for m, v in p.items() if v.get("seconds")}))


def score(prec, predict):
    """(within 10 %, argmin picks within 5 %) of the predicted times `predict(record)`."""
    n = w10 = picks = mats = 0
    for (_, pr), rs in recs.items():
        if pr != prec:
            continue
        pred = [predict(x) for x in rs]
        n += len(rs)
        w10 += sum(abs(t / x[0] - 1) <= 0.1 for t, x in zip(pred, rs))
        best = min(x[0] for x in rs)
        mats += 1
        picks += rs[min(range(len(rs)), key=pred.__getitem__)][0] / best <= 1.05
    return 100 * w10 / n, 100 * picks / mats


for model in ("gb", "knn"):
    for w in (0, 0.1, 0.2, 0.5):
        def blend(x):
            o = x[3].get(model)
            return math.exp((1 - w) * math.log(x[1]) + w * math.log(o)) if o and w else x[1]
        print(f"blend with {model}, w = {w}: " + "; ".join(
            "{}: within 10 % {:.1f} %, argmin picks {:.1f} %".format(p, *score(p, blend))
            for p in ("f32", "f64")))
for k in (0, 0.1, 0.25, 0.5, 1.0):
    print(f"risk k = {k}: argmin picks " + " / ".join(
        f"{score(p, lambda x: math.exp(math.log(x[1]) + k * x[2]))[1]:.1f} %" for p in ("f32", "f64")))
