#!/usr/bin/env python3
"""Accuracy and picks of `sparsecast` by matrix class: stacks against single-family matrices.

    python3 scripts/stack_breakdown.py score.jsonl [more.jsonl …]

Reads the records of `sparsecast train --score … --records R` (or of a cross-validation) and
prints, per class (`stack`: generated stacks of parts; `single-family`: every other matrix) and
precision, the share of predictions within 10 % of the measurement and the share of matrices whose
first-stage pick (the argmin of the predictions, without the second stage) is within 5 % of the
best measured configuration (docs/ACCURACY.md, session 45); then, per precision over every
matrix, how many argmin picks are beyond 1.2× the best and the worst (session 48).
"""
import collections
import json
import sys


def load(path):
    acc = collections.defaultdict(lambda: [0, 0])
    picks = collections.defaultdict(dict)
    for line in open(path):
        r = json.loads(line)
        p = (r.get("predictions") or {}).get("sparsecast")
        if r.get("status") != "ok" or not p or not r.get("median_s"):
            continue
        g = (r.get("source") or {}).get("generated") or {}
        cl = "stack" if g.get("family") == "stack" else "single-family"
        a = acc[(cl, r["precision"])]
        a[0] += 1
        a[1] += abs(p["seconds"] / r["median_s"] - 1) <= 0.10
        picks[(cl, r["precision"], r["matrix"])][r["config"]] = (p["seconds"], r["median_s"])
    pk = collections.defaultdict(lambda: [0, 0])
    worst = collections.defaultdict(list)
    for (cl, prec, _), v in picks.items():
        if len(v) < 5:
            continue
        best = min(t for _, t in v.values())
        pick = min(v.values(), key=lambda pt: pt[0])[1]
        q = pk[(cl, prec)]
        q[0] += 1
        q[1] += pick <= 1.05 * best
        worst[prec].append(pick / best)
    return acc, pk, worst


def main():
    for path in sys.argv[1:]:
        acc, pk, worst = load(path)
        print(path)
        for k in sorted(acc):
            n, ok = acc[k]
            m, good = pk[k]
            print(
                f"  {k[0]:14s} {k[1]}: within 10 % {100 * ok / n:.1f} % of {n} predictions; "
                f"argmin picks within 5 % {100 * good / max(m, 1):.1f} % of {m} matrices"
            )
        for prec, r in sorted(worst.items()):
            print(
                f"  every matrix   {prec}: argmin picks beyond 1.2x the best {sum(x > 1.2 for x in r)} "
                f"of {len(r)}, worst {max(r):.2f}x"
            )


if __name__ == "__main__":
    main()
