#!/usr/bin/env python3
"""An estimate, not a measurement: how far a gated evict-first load (docs/PERFORMANCE.md,
session 67) could move the kernels' bound on issue 14's geomean against cuSPARSE.

    python3 scripts/stream_hint_bound.py [GAIN_F32 GAIN_F64]    # default 0.974 0.957

Per precision, over the unseen seed 14 of the H200 (SEG-TILE's table merged): the perfect pick's
geomean against the best cuSPARSE algorithm (the faster of our best and cuSPARSE's best on every
matrix, as scripts/kernel_bound.py), then the same with our best time multiplied by GAIN on every
matrix whose working set (CSR: 8 / 12 bytes an entry in f32 / f64 + 4 a row) is at least twice
the 60 MB L2. The default gains are the geomeans the hint measured on the large set (best ours,
on / off); the crossover set measured 0.981, so the estimate is generous."""
import gzip
import json
import math
import sys


def gm(v):
    return math.exp(sum(map(math.log, v)) / len(v))


gains = {"f32": 0.974, "f64": 0.957}
if len(sys.argv) == 3:
    gains = {"f32": float(sys.argv[1]), "f64": float(sys.argv[2])}
more = {}
for line in gzip.open("data/corpus/h200-seg-s14.jsonl.gz"):
    r = json.loads(line)
    more.setdefault((r["matrix"], r["precision"]), []).extend(r["times"])
for prec, gain in gains.items():
    base, hinted, big = [], [], 0
    for line in gzip.open("data/corpus/h200-s14.jsonl.gz"):
        r = json.loads(line)
        if r["precision"] != prec:
            continue
        f = r["features"]
        ws = (12 if prec == "f64" else 8) * f["nnz"] + 4 * f["nrows"]
        times = r["times"] + more.get((r["matrix"], prec), [])
        ok = [(t["config"], t["median_s"]) for t in times if t.get("median_s")]
        ours = [s for c, s in ok if not c.startswith("cusparse")]
        cu = [s for c, s in ok if c.startswith("cusparse")]
        if not ours or not cu:
            continue
        g = gain if ws >= 2 * 60e6 else 1.0
        big += g != 1.0
        base.append(min(cu) / min(min(ours), min(cu)))
        hinted.append(min(cu) / min(min(ours) * g, min(cu)))
    print(f"{prec}: {len(base)} matrices, {big} at >= 2x the L2; perfect pick against cuSPARSE "
          f"geomean {gm(base):.3f} -> {gm(hinted):.3f} with our best x{gain} there")
