#!/usr/bin/env python3
"""Accuracy and picks of `sparsecast` by matrix class: stacks against single-family matrices.

    python3 scripts/stack_breakdown.py score.jsonl [more.jsonl …]
    BY=family SKIP='"kron/[^"]*-s2[345]-' python3 scripts/stack_breakdown.py R.jsonl.gz

`BY=family` classes by the generator's family instead (`kronecker`, `stack`, `random`, …; `file`
for a real matrix) and by size (`-large`: ≥ 10⁶ non-zeros, the issue's large set; docs/ACCURACY.md
session 68); `SKIP=REGEX` leaves out the records whose line matches it (the Kronecker-only seeds
above, as refit_cv.sh leaves them out of the issue's sets). Plain or gzip-compressed records.

Reads the records of `sparsecast train --score … --records R` (or of a cross-validation) and
prints, per class (`stack`: generated stacks of parts; `single-family`: every other matrix) and
precision, the share of predictions within 10 % of the measurement and the share of matrices whose
first-stage pick (the argmin of the predictions, without the second stage) is within 5 % of the
best measured configuration (docs/ACCURACY.md, session 45); then, per precision over every
matrix, how many argmin picks are beyond 1.2× the best and the worst (session 48).
"""
import collections
import gzip
import json
import os
import re
import sys

BY_FAMILY = os.environ.get("BY") == "family"
SKIP = re.compile(os.environ["SKIP"]) if os.environ.get("SKIP") else None


def lines(path):
    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def classify(family, nnz):
    """The class of a matrix of generator `family` (None: a file), `nnz` its non-zeros if known."""
    if not BY_FAMILY:
        return "stack" if family == "stack" else "single-family"
    return (family or "file") + ("-large" if nnz and nnz >= 1e6 else "")


def load(path):
    acc = collections.defaultdict(lambda: [0, 0])
    picks = collections.defaultdict(dict)
    recs, nnz = [], {}
    for line in lines(path):
        if SKIP and SKIP.search(line):
            continue
        r = json.loads(line)
        if r.get("features"):
            nnz[r["matrix"]] = r["features"].get("nnz")
        p = (r.get("predictions") or {}).get("sparsecast")
        if r.get("status") != "ok" or not p or not r.get("median_s"):
            continue
        family = ((r.get("source") or {}).get("generated") or {}).get("family")
        recs.append((family, r["matrix"], r["precision"], r["config"], p["seconds"], r["median_s"]))
    # Classed after the pass: a matrix's non-zeros may come on a later record than its first.
    for family, m, prec, config, pred, t in recs:
        cl = classify(family, nnz.get(m))
        a = acc[(cl, prec)]
        a[0] += 1
        a[1] += abs(pred / t - 1) <= 0.10
        picks[(cl, prec, m)][config] = (pred, t)
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
                f"  {k[0]:{18 if BY_FAMILY else 14}s} {k[1]}: within 10 % {100 * ok / n:.1f} % of {n} predictions; "
                f"argmin picks within 5 % {100 * good / max(m, 1):.1f} % of {m} matrices"
            )
        for prec, r in sorted(worst.items()):
            print(
                f"  every matrix   {prec}: argmin picks beyond 1.2x the best {sum(x > 1.2 for x in r)} "
                f"of {len(r)}, worst {max(r):.2f}x"
            )


if __name__ == "__main__":
    main()
