#!/usr/bin/env python3
"""Where the model's picks miss: held-out records of `train --records` (docs/ACCURACY.md, session 24).

    python3 scripts/pick_misses.py cv.jsonl [MODEL]

Prints, for the picks (argmin of MODEL's predicted times, default `sparsecast`) more than 5 %
slower than the best measured configuration of their matrix × precision: where the best stood
in the predicted order, how far the pick and the best were mispredicted, the most frequent
(pick, best) pairs, picks within 5 % by set × measured time and by x size × non-zeros, and
the oracles that choose perfectly within the pick's block sizes, CSR mappings or class.
"""
import collections
import json
import math
import sys


def quantiles(a, qs=(0.1, 0.25, 0.5, 0.75, 0.9)):
    a = sorted(a)
    return [round(a[int(q * (len(a) - 1))], 3) for q in qs] if a else []


def main():
    path = sys.argv[1]
    model = sys.argv[2] if len(sys.argv) > 2 else "sparsecast"
    recs, feats = collections.defaultdict(list), {}
    for line in open(path):
        r = json.loads(line)
        p = (r.get("predictions") or {}).get(model)
        if r.get("status") != "ok" or not p:
            continue
        k = (r["matrix"], r["precision"])
        recs[k].append((r["config"], r["median_s"], p["seconds"]))
        if r.get("features"):
            feats[k] = r["features"]
    recs = {k: v for k, v in recs.items() if len(v) >= 5}
    misses, rank, pairs, gap, slow, pe, be = 0, collections.Counter(), collections.Counter(), [], [], [], []
    by = collections.defaultdict(lambda: [0, 0])
    for k, v in recs.items():
        best = min(v, key=lambda t: t[1])
        pick = min(v, key=lambda t: t[2])
        miss = pick[1] > 1.05 * best[1]
        name = k[0]
        kind = "kron" if name.startswith("kron/") else ("stack" if "stack" in name else ("gen" if name.startswith("gen/") else "file"))
        t = best[1]
        time = "<5us" if t < 5e-6 else ("<20us" if t < 2e-5 else ("<100us" if t < 1e-4 else ">=100us"))
        keys = [f"{kind} {time}"]
        f = feats.get(k)
        if f:
            x = f["ncols"] * (4 if k[1] == "f32" else 8)
            xs = "x<1MB" if x < 1e6 else ("x<12.5MB" if x < 12.5e6 else ("x<50MB" if x < 50e6 else "x>=50MB"))
            nz = f["nnz"]
            ns = "<1e5" if nz < 1e5 else ("<1e6" if nz < 1e6 else ("<1e7" if nz < 1e7 else ">=1e7"))
            keys.append(f"{xs} nnz{ns}")
        for key in keys:
            by[key][0] += 1
            by[key][1] += miss
        if not miss:
            continue
        misses += 1
        order = [c[0] for c in sorted(v, key=lambda t: t[2])]
        rank[min(order.index(best[0]), 5)] += 1
        pairs[(pick[0], best[0])] += 1
        gap.append(math.log(best[2] / pick[2]))
        slow.append(pick[1] / best[1])
        pe.append(math.log(pick[2] / pick[1]))
        be.append(math.log(best[2] / best[1]))
    n = len(recs)
    print(f"{n} matrix × precision pairs; picks within 5 %: {100 * (1 - misses / n):.1f} % ({misses} misses)")
    print("rank of the best in the predicted order (5 = 5 or more):", sorted(rank.items()))
    print("pick / best, quantiles 10-25-50-75-90 %:", quantiles(slow))
    print("ln(predicted / measured) of the pick:", quantiles(pe))
    print("ln(predicted / measured) of the best:", quantiles(be))
    print("predicted gap ln(best predicted / pick predicted):", quantiles(gap))
    print("most frequent (pick, best):")
    for p, c in pairs.most_common(12):
        print(f"  {c:4d} {p[0]} instead of {p[1]}")
    print("picks within 5 % by group (pairs, misses, share):")
    for key in sorted(by):
        a, m = by[key]
        print(f"  {key:28s} {a:5d} {m:4d} {100 * (1 - m / a):5.1f} %")

    def csr(c):
        b = c.split("@")[0]
        return "csr-mapped" if b.startswith("csr-t") or b in ("csr-vector", "csr-scalar") else b

    def klass(c):
        b = csr(c)
        if b.startswith("sell") or b.startswith("ell") or b == "cusparse-sell":
            return "ell-like"
        if b.startswith("cusparse"):
            return "cusparse"
        return "balanced" if b in ("coo", "hyb", "csr-merge") else b

    for what, fam in (("block size", lambda c: c.split("@")[0]), ("CSR mapping and block size", csr), ("class", klass)):
        ok = 0
        for v in recs.values():
            best = min(x[1] for x in v)
            pick = min(v, key=lambda t: t[2])
            ok += min(x[1] for x in v if fam(x[0]) == fam(pick[0])) <= 1.05 * best
        print(f"oracle choosing the best of the pick's {what}: {100 * ok / n:.1f} %")


if __name__ == "__main__":
    main()
