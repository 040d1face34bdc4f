#!/usr/bin/env python3
"""How far the kernels let the recommendation go against cuSPARSE (docs/ACCURACY.md, session 40).

    python3 scripts/kernel_bound.py data/corpus/h200-s14.jsonl.gz [data/corpus/h200-seg-s14.jsonl.gz]

Per precision, over every matrix of a table (SEG-TILE's table merged where given): the geomean of
(fastest cuSPARSE algorithm / fastest of our configurations), the matrices where ours are slower
(and by more than 5 %), that geomean by generator family, the perfect pick's geomean against
cuSPARSE (the faster of the two on every matrix: no model can do better), the cuSPARSE
algorithms that beat all of ours (session 66), and our SELL-C-σ against cuSPARSE's SELL
(quantiles of `sell` / `cusparse-sell`). With `LIST=FAMILY:MICROSECONDS` (e.g. `LIST=random:100`)
it also lists every matrix of that generator family whose best cuSPARSE time is at least that,
with both bests. With `GAIN=F32:F64` (e.g. `GAIN=0.974:0.957`, session 67's evict-first load) it
also estimates the perfect pick's geomean were our best time multiplied by that gain on every
matrix whose working set (CSR: 8 / 12 bytes an entry in f32 / f64 + 4 a row) is at least twice
the L2 (`L2=` bytes, default the H200's 60e6) — an estimate, not a measurement.
With `PAIR=A:B` (e.g. `PAIR=coo:cusparse-coo-alg1`, session 75) it also compares two
configurations on every matrix that has both: the geomean and quantiles of A's time / B's time,
by B's time (< 4, 4-6, 6-10, 10-20, 20-50, 50-100, >= 100 µs), and where B takes >= 6 µs by the
locality of x (the distinct 32-byte sectors of x a warp's entries touch, summed, per non-zero:
< 0.1, 0.1-0.5, >= 0.5).
"""
import collections
import gzip
import json
import math
import os
import sys


def gm(v):
    return math.exp(sum(map(math.log, v)) / len(v))


def main():
    table, extra = sys.argv[1], sys.argv[2:]
    more = {}
    for path in extra:
        for line in gzip.open(path):
            r = json.loads(line)
            more.setdefault((r["matrix"], r["precision"]), []).extend(r["times"])
    by = collections.defaultdict(list)
    for line in gzip.open(table):
        r = json.loads(line)
        by[r["precision"]].append(r)
    lfam, _, lus = os.environ.get("LIST", "").partition(":")
    gains = dict(zip(("f32", "f64"), map(float, os.environ["GAIN"].split(":")))) \
        if os.environ.get("GAIN") else {}
    l2 = float(os.environ.get("L2", "60e6"))
    for prec, rows in sorted(by.items()):
        ratio, perfect, sell, gained, nbig = [], [], [], [], 0
        fam = collections.defaultdict(list)
        wins = collections.Counter()
        listed = []
        for r in rows:
            t = {x["config"]: x["median_s"] for x in r["times"] + more.get((r["matrix"], prec), [])
                 if x["status"] == "ok"}
            vendor = [v for k, v in t.items() if k.startswith("cusparse")]
            ours = [v for k, v in t.items() if not k.startswith("cusparse")]
            if not vendor or not ours:
                continue
            q = min(vendor) / min(ours)
            ratio.append(q)
            perfect.append(max(q, 1.0))
            f = r["features"]
            big = (12 if prec == "f64" else 8) * f["nnz"] + 4 * f["nrows"] >= 2 * l2
            nbig += big
            gained.append(max(q / gains.get(prec, 1.0) if big else q, 1.0))
            family = r["matrix"].split("-")[2]
            fam[family].append(q)
            best = {v: k for k, v in t.items()}
            if q < 1:
                wins[best[min(vendor)]] += 1
            if family == lfam and min(vendor) >= float(lus or 0) * 1e-6:
                listed.append(f"    {r['matrix']}: ours {best[min(ours)]} {min(ours)*1e6:.0f} µs, "
                              f"cuSPARSE {best[min(vendor)]} {min(vendor)*1e6:.0f} µs, {q:.3f}")
            if "sell" in t and "cusparse-sell" in t:
                sell.append(t["sell"] / t["cusparse-sell"])
        sell.sort()
        print(f"{prec}: {len(ratio)} matrices; ours / cuSPARSE best: geomean {gm(ratio):.3f}, "
              f"ours slower on {sum(q < 1 for q in ratio)} ({sum(q < 0.95 for q in ratio)} by > 5 %); "
              f"perfect pick {gm(perfect):.3f}")
        if prec in gains:
            print(f"    estimate: perfect pick {gm(gained):.3f} with our best x{gains[prec]} on the "
                  f"{nbig} matrices at >= 2x the L2 ({l2:.0e} bytes)")
        for k, v in sorted(fam.items()):
            print(f"    {k:<12} {len(v):4d}  geomean {gm(v):.3f}  worst {min(v):.3f}  "
                  f"ours slower on {sum(q < 1 for q in v)}")
        print("    cuSPARSE ahead of all ours with: "
              + ", ".join(f"{k} {n}" for k, n in wins.most_common()))
        if listed:
            print("\n".join(listed))
        if os.environ.get("PAIR"):
            pair(rows, more, prec, *os.environ["PAIR"].split(":"))
        if sell:
            qs = [sell[int(p * (len(sell) - 1))] for p in (0.1, 0.25, 0.5, 0.75, 0.9)]
            print("    sell / cusparse-sell, 10-25-50-75-90 %: " + " ".join(f"{x:.2f}" for x in qs))


def pair(rows, more, prec, a, b):
    """A's time over B's per matrix, by B's time (PAIR=A:B)."""
    edges = [4, 6, 10, 20, 50, 100, math.inf]
    names = ["< 4", "4-6", "6-10", "10-20", "20-50", "50-100", ">= 100"]
    buckets = collections.defaultdict(list)
    local = collections.defaultdict(list)
    for r in rows:
        t = {x["config"]: x["median_s"] for x in r["times"] + more.get((r["matrix"], prec), [])
             if x["status"] == "ok"}
        if a in t and b in t:
            us = t[b] * 1e6
            buckets[next(i for i, e in enumerate(edges) if us < e)].append(t[a] / t[b])
            if us >= 6:
                f = r["features"]
                per = f["access"]["x_sectors_" + prec] / f["nnz"]
                local["< 0.1" if per < 0.1 else "0.1-0.5" if per < 0.5 else ">= 0.5"].append(
                    t[a] / t[b])
    def line(label, v):
        v, n = sorted(v), len(v)
        print(f"      {label:>7} {n:4d}  {gm(v):.3f}  "
              f"{v[n // 10]:.2f} {v[n // 2]:.2f} {v[9 * n // 10]:.2f}")

    print(f"    {a} / {b} by {b}'s time (µs): matrices, geomean, 10-50-90 %")
    for i in sorted(buckets):
        line(names[i], buckets[i])
    print(f"    the same where {b} takes >= 6 µs, by x's sectors per non-zero")
    for k in ("< 0.1", "0.1-0.5", ">= 0.5"):
        if local[k]:
            line(k, local[k])


if __name__ == "__main__":
    main()
