#!/usr/bin/env python3
"""Kernel variants timed beside the shipped kernels in one device call (scripts/device_s74.sh):
each variant's table against the base table (the shipped kernels, same call), per precision and
configuration — geomean, min and max of the ratio variant / base, and the geomean over the
matrix-precisions whose base time is ≥ 20 µs — then, with --full, what the variant would do to
the best configuration of each matrix: the full table's times (every configuration, measured
once by `collect`) with the variant's configurations scaled by their measured ratio.

    python3 scripts/kernel_ab.py BASE VARIANT [VARIANT ...] [--full TABLE [TABLE ...]] [--configs C,…]
    python3 scripts/kernel_ab.py docs/h200/session74/corpus-h200-v74b-{0,1,2}.jsonl.gz \\
        --full data/corpus/h200-s14.jsonl.gz data/corpus/h200-seg-s14.jsonl.gz

Ratios below 1 are faster. The base against --full (the same kernels on another day) is the
comparison's own noise. With --full, each configuration's ratio is also split by where that
configuration stands in the full table (the best of all, within 5 % of it, the rest), and --add
counts the variant's configurations as new ones beside the shipped (the best of both: what a
model that could pick either would reach) instead of replacing them (session 76).
"""
import argparse
import math
import os
import statistics as st
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jsonio import table_rows  # noqa: E402


def times(paths):
    t = {}
    for p in paths:
        for r in table_rows(p):
            for x in r.get("times") or []:
                if x.get("status") == "ok" and x.get("median_s"):
                    t[(r["matrix"], r["precision"], x["config"])] = x["median_s"]
    return t


def geo(v):
    return math.exp(st.mean(math.log(x) for x in v))


def compare(new, base, label):
    print(f"== {label}")
    for p in ("f32", "f64"):
        for c in sorted({k[2] for k in base}):
            ks = [k for k in new if k in base and k[1] == p and k[2] == c]
            if not ks:
                continue
            r = [new[k] / base[k] for k in ks]
            big = [new[k] / base[k] for k in ks if base[k] >= 20e-6]
            g = f"{geo(big):.3f}" if big else "-"
            print(f"{p} {c:18s} n={len(r):4d} geomean {geo(r):.3f} min {min(r):.3f} "
                  f"max {max(r):.3f}   ≥ 20 µs: n={len(big):4d} geomean {g}")


def per_matrix(full):
    """The full table's times as {(matrix, precision): {configuration: seconds}}."""
    rows = {}
    for (m, p, c), t in full.items():
        rows.setdefault((m, p), {})[c] = t
    return rows


def by_standing(new, base, full, label, only=None):
    rows = per_matrix(full)
    for p in ("f32", "f64"):
        for c in sorted({k[2] for k in new if k[1] == p}):
            if only is not None and c not in only:
                continue
            parts = {"best of all": [], "within 5 % of it": [], "the rest": []}
            for (m, q), t in rows.items():
                k = (m, p, c)
                if q != p or c not in t or k not in new or k not in base:
                    continue
                b = min(t.values())
                where = ("best of all" if t[c] <= b else
                         "within 5 % of it" if t[c] <= 1.05 * b else "the rest")
                parts[where].append(new[k] / base[k])
            cells = [f"{w}: n={len(r)} {geo(r):.3f}" for w, r in parts.items() if r]
            if cells:
                print(f"{label}: {p} {c} where it stands — " + "; ".join(cells))


def best_of_all(new, base, full, label, only=None, add=False):
    rows = per_matrix(full)
    gains, vs0, vs1 = [], [], []
    for (m, p), t in rows.items():
        if not any((m, p, c) in base for c in t):
            continue
        t1 = dict(t)
        for c in t:
            k = (m, p, c)
            if k in new and k in base and (only is None or c in only):
                t1[c + "*" if add else c] = t[c] * new[k] / base[k]
        cus = [v for c, v in t.items() if c.startswith("cusparse")]
        if not cus:
            continue
        gains.append(min(t.values()) / min(t1.values()))
        vs0.append(min(cus) / min(t.values()))
        vs1.append(min(cus) / min(t1.values()))
    if gains:
        below = f"{sum(x < 0.95 for x in vs0)} → {sum(x < 0.95 for x in vs1)}"
        print(f"{label}: {len(gains)} matrix-precisions{' (added)' if add else ''}; the best "
              f"configuration {geo(gains):.4f}× as fast (geomean); the best against the best "
              f"cuSPARSE {geo(vs0):.4f}× → {geo(vs1):.4f}×, below 0.95× of it {below}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("variants", nargs="+")
    ap.add_argument("--full", nargs="+")
    ap.add_argument("--configs", help="comma-separated: only these configurations take the "
                    "variant's ratio in --full's best (default: every one the variant timed)")
    ap.add_argument("--add", action="store_true", help="with --full: the variant's "
                    "configurations join the shipped ones instead of replacing them")
    a = ap.parse_args()
    only = set(a.configs.split(",")) if a.configs else None
    base = times([a.base])
    full = times(a.full) if a.full else None
    if full:
        compare(base, full, f"{a.base} / the full table (the same kernels, another day)")
    for v in a.variants:
        new = times([v])
        compare(new, base, f"{v} / {a.base}")
        if full:
            by_standing(new, base, full, v, only)
            best_of_all(new, base, full, v, only, a.add)


if __name__ == "__main__":
    main()
