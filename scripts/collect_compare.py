#!/usr/bin/env python3
"""Compare two `sparsecast collect` tables of the same draw (issue 13, docs/ACCURACY.md session 22).

    python3 scripts/collect_compare.py BEFORE.jsonl.gz AFTER.jsonl.gz [--measure-only]

For the matrix × precision rows both hold: the measuring cost per decade of non-zeros (AFTER's
`measure_s`; BEFORE's `measure_s + build_s`, since before session 22 the host built each matrix
between measurements, and after it builds the next one while the device measures; with
--measure-only, when both tables were made by session 22 or later, BEFORE's `measure_s` alone),
whether every
configuration got the same status, and how the medians agree (AFTER / BEFORE).
"""
import collections
import gzip
import json
import math
import statistics
import sys


def rows(path):
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f]


def main(before_path, after_path, measure_only=False):
    before = {(r["matrix"], r["precision"]): r for r in rows(before_path)}
    after = rows(after_path)
    by_decade = collections.defaultdict(lambda: [set(), 0.0, 0.0])
    same = total = 0
    ratios = []
    for r in after:
        b = before.get((r["matrix"], r["precision"]))
        if b is None:
            continue
        d = by_decade[min(7, int(math.log10(max(r["features"]["nnz"], 1))))]
        d[0].add(r["matrix"])
        d[1] += r["cost"]["measure_s"]
        d[2] += b["cost"]["measure_s"] + (0.0 if measure_only else b["cost"]["build_s"])
        old = {t["config"]: t for t in b["times"]}
        for t in r["times"]:
            u = old.get(t["config"])
            if u is None:
                continue
            total += 1
            same += u["status"] == t["status"]
            if t.get("median_s") and u.get("median_s"):
                ratios.append(t["median_s"] / u["median_s"])
    print("| non-zeros | matrices | after: s | before: s | s per matrix (after / before) | speed-up |")
    print("|---|---:|---:|---:|---|---:|")
    ta = tb = 0.0
    for k in sorted(by_decade):
        m, a, b = by_decade[k]
        ta += a
        tb += b
        print(f"| 10^{k} | {len(m)} | {a:.1f} | {b:.1f} | {a / len(m):.2f} / {b / len(m):.2f} | {b / a:.2f}× |")
    n = len({r['matrix'] for r in after if (r['matrix'], r['precision']) in before})
    print(f"| all | {n} | {ta:.1f} | {tb:.1f} | | {tb / ta:.2f}× |")
    ratios.sort()
    k = len(ratios)
    dev = sorted(abs(math.log(x)) for x in ratios)
    print(f"\nstatuses the same: {same} of {total} configurations")
    print(
        f"medians after / before: median {statistics.median(ratios):.4f}, 5–95 % "
        f"{ratios[k // 20]:.4f}–{ratios[-(k // 20) - 1]:.4f}; median |difference| "
        f"{100 * (math.exp(statistics.median(dev)) - 1):.2f} %, p90 "
        f"{100 * (math.exp(dev[int(0.9 * k)]) - 1):.2f} %"
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], "--measure-only" in sys.argv[3:])
