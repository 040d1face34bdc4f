#!/usr/bin/env python3
"""One configuration timed again, by band of its old time (session 82: HYB with programmatic
dependent launch against the seed-14 table): per precision and band, the number of
matrix-precisions, the geomean of new / old and the median of new - old in µs.

    python3 scripts/ab_bands.py OLD NEW [--configs hyb]
    python3 scripts/ab_bands.py data/corpus/h200-s14.jsonl.gz \\
        docs/h200/session82/corpus-h200-v82-0-new.jsonl.gz --configs hyb
"""
import argparse
import math
import os
import statistics as st
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_ab import times  # noqa: E402

BANDS = [(0, 3), (3, 5), (5, 10), (10, 20), (20, 100), (100, math.inf)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--configs", default="hyb")
    a = ap.parse_args()
    old, new = times([a.old]), times([a.new])
    for c in a.configs.split(","):
        for p in ("f32", "f64"):
            print(f"{c} {p}: band (old µs)   n   new/old  median Δ µs")
            for lo, hi in BANDS:
                pairs = [(old[k], new[k]) for k in old
                         if k[1] == p and k[2] == c and k in new and lo <= old[k] * 1e6 < hi]
                if not pairs:
                    continue
                g = math.exp(st.mean(math.log(n / o) for o, n in pairs))
                d = st.median((n - o) * 1e6 for o, n in pairs)
                print(f"  {lo:>5}-{hi:<5} {len(pairs):>5}   {g:.3f}   {d:+.2f}")


if __name__ == "__main__":
    main()
