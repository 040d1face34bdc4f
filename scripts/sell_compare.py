#!/usr/bin/env python3
"""The session-41 SELL kernel against session 40's, on the matrices whose slices it splits
(docs/PERFORMANCE.md, session 41).

    git show af4abdb:data/corpus/h200-s14.jsonl.gz > /tmp/old-h200-s14.jsonl.gz
    python3 scripts/sell_compare.py /tmp/old-h200-s14.jsonl.gz data/corpus/h200-s14.jsonl.gz

OLD holds the session-40 kernel's times (the table before session 41), NEW the table after it.
Over the matrix-precisions NEW's rule splits (scripts/sell_split_set.py) and both tables timed:
per SELL configuration and precision, the speed-up old / new (geomean, quantiles, how many below
0.95x); then `sell`, `sell@128` and `sell@512` together by the slices' skew (longest row / mean
slice width) and fill (slices / resident warps), the two quantities of the rule.
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jsonio import table_rows  # noqa: E402
from sell_split_set import skew_fill, splits  # noqa: E402

CONFIGS = ["sell", "sell@128", "sell@512", "sell-c512-s2048"]


def load(path):
    return {(r["matrix"], r["precision"]): r for r in table_rows(path)}


def times(r):
    return {t["config"]: t.get("median_s") for t in r["times"] if t.get("status") == "ok"}


def gm(v):
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")


def q(v, p):
    v = sorted(v)
    return v[int(p * (len(v) - 1))] if v else float("nan")


def main():
    old, new = load(sys.argv[1]), load(sys.argv[2])
    pairs = [(k, times(old[k]), times(r), r) for k, r in new.items() if k in old and splits(r)]
    print(f"{len(pairs)} matrix-precisions split by the rule and in both tables\n")
    print("| configuration | prec | n | old / new geomean | 10 % | median | 90 % | min | < 0.95× |")
    print("|---|---|---|---|---|---|---|---|---|")
    for cfg in CONFIGS:
        for prec in ("f32", "f64"):
            v = [o[cfg] / n[cfg] for k, o, n, _ in pairs if k[1] == prec and o.get(cfg) and n.get(cfg)]
            if v:
                print(f"| `{cfg}` | {prec} | {len(v)} | {gm(v):.2f} | {q(v, .1):.2f} | {q(v, .5):.2f} | "
                      f"{q(v, .9):.1f} | {min(v):.2f} | {sum(x < 0.95 for x in v)} |")
    print("\n`sell`, `sell@128`, `sell@512` by skew and fill:\n")
    print("| skew | fill | n | old / new geomean | min | < 0.97× |")
    print("|---|---|---|---|---|---|")
    rows = []
    for k, o, n, r in pairs:
        sf = skew_fill(r)
        if sf is None:
            continue
        for cfg in CONFIGS[:3]:
            if o.get(cfg) and n.get(cfg):
                rows.append((o[cfg] / n[cfg], *sf))
    for skew in ((0, 2), (2, 4), (4, 16), (16, math.inf)):
        for fill in ((0, 0.05), (0.05, 0.15), (0.15, 0.25), (0.25, math.inf)):
            v = [x for x, s, fl in rows if skew[0] < s <= skew[1] and fill[0] <= fl < fill[1]]
            if v:
                print(f"| {skew[0]}–{skew[1]} | {fill[0]}–{fill[1]} | {len(v)} | {gm(v):.2f} | "
                      f"{min(v):.2f} | {sum(x < 0.97 for x in v)} |")


if __name__ == "__main__":
    main()
