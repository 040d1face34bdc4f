#!/usr/bin/env python3
"""HYB's accuracy by the shape of its split and by time, and HYB's part in the pick misses.

    python3 scripts/hyb_breakdown.py R.jsonl.gz [more.jsonl.gz …]

Reads the records of `sparsecast train --score … --records R` (or of a cross-validation) and
prints, for the `hyb` configuration (CONFIG=label for another), the share of predictions within
10 % of the measurement, the signed median and the median absolute error by the kind of HYB split
the features hold (`nocoo`: no COO part; `allcoo(w=0)`: an ELL width of 0; otherwise the COO
part's share of the entries), by the measured time, by both, and by the generator's family; then
the first stage's pick misses (the argmin of the predictions beyond 5 % of the best measured
configuration) and how many have HYB as the pick or as the best passed over (docs/ACCURACY.md
sessions 88–89).
"""
import collections
import gzip
import json
import os
import sys

CONFIG = os.environ.get("CONFIG", "hyb")


def lines(path):
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def line(label, errors):
    if not errors:
        return
    a = sorted(abs(e) for e in errors)
    within = sum(1 for e in errors if abs(e) <= 0.10) / len(errors)
    signed = sorted(errors)[len(errors) // 2]
    print(f"  {label:38s} n={len(errors):5d}  within 10 % {100 * within:5.1f} %  "
          f"median {100 * signed:+5.1f} %  median |e| {100 * a[len(a) // 2]:4.1f} %")


def kind(f):
    coo, share = f.get("hyb_coo_nnz", 0), f.get("hyb_coo_share", 0.0)
    if coo == 0:
        return "nocoo"
    if f.get("hyb_width") == 0:
        return "allcoo(w=0)"
    return "coo<1%" if share < 0.01 else "coo<10%" if share < 0.1 else "coo>=10%"


def band(t):
    return "<5us" if t < 5e-6 else "5-20us" if t < 20e-6 else "20-100us" if t < 1e-4 else ">100us"


def report(path):
    feats, rows = {}, []
    by_matrix = collections.defaultdict(list)
    for text in lines(path):
        r = json.loads(text)
        if r.get("features"):
            feats[r["matrix"]] = r["features"]
        p = (r.get("predictions") or {}).get("sparsecast")
        if r.get("status") != "ok" or not p or not r.get("median_s"):
            continue
        by_matrix[(r["matrix"], r["precision"])].append((p["seconds"], r["median_s"], r["config"]))
        if r["config"] == CONFIG:
            family = ((r.get("source") or {}).get("generated") or {}).get("family", "file")
            rows.append((r["matrix"], p["seconds"], r["median_s"], family))
    groups = collections.defaultdict(list)
    for m, pred, t, family in rows:
        e = pred / t - 1
        k = kind(feats.get(m, {}))
        for g in ("all", "kind " + k, "time " + band(t), f"kind/time {k} {band(t)}",
                  "family " + family):
            groups[g].append(e)
    print(f"{path}: {CONFIG}")
    for g in sorted(groups):
        line(g, groups[g])
    miss = side = picked = passed = best_on = 0
    for v in by_matrix.values():
        pick, best = min(v), min(v, key=lambda c: c[1])
        best_on += best[2] == CONFIG
        if pick[1] > 1.05 * best[1]:
            miss += 1
            side += CONFIG in (pick[2], best[2])
            picked += pick[2] == CONFIG
            passed += best[2] == CONFIG
    print(f"  first-stage misses {miss} of {len(by_matrix)} matrix-precisions; {CONFIG} a side of "
          f"{side} (picked {picked}, the best passed over {passed}); the best on {best_on}")


for p in sys.argv[1:]:
    report(p)
