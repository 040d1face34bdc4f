#!/usr/bin/env python3
"""The SELL split rule against alternatives, timed in one device call (docs/PERFORMANCE.md,
session 43): the shipped rule, `SPARSECAST_SELL_SPLIT=fill=0.15` (balanced rows at 15-25 % fill
left whole) and `off` (session 40's kernel), `sell` only.

    python3 scripts/sell_rule_trial.py --make-lists GPU OUTDIR   # the lists the call runs
    bash scripts/device_s43_rule.sh GPU                         # on the device (carry .dev/r43)
    python3 scripts/sell_rule_trial.py DIR LISTS GPU

DIR holds corpus-GPU-r{shipped,fill015,off}-sN.jsonl.gz (the collect tables of the call), LISTS
the lists it ran (only-sell-GPU-sN.txt: the band's matrices first, then 12 other split matrices
of the seed as a control). Prints per set and precision the geomean time ratios (> 1: the
second rule of the pair is faster), then every band matrix.
"""
import collections
import glob
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jsonio import table_rows  # noqa: E402
from sell_split_set import skew_fill, splits  # noqa: E402

RULES = ["shipped", "fill015", "off"]
CONTROL = 12


def gm(v):
    return math.exp(sum(map(math.log, v)) / len(v)) if v else float("nan")


def make_lists(g, out):
    """Per seed 10-14: the split matrices of balanced rows (longest row ≤ 2× the mean slice
    width, `sell_compare.py`'s skew) whose slices fill 15-25 % of the resident warps, then
    CONTROL other split matrices drawn with a fixed seed."""
    import random
    for s in ("s10", "s11", "s12", "s13", "s14"):
        band, other = set(), set()
        for r in table_rows(f"data/corpus/{g}-{s}.jsonl.gz"):
            sf = skew_fill(r)
            if not splits(r) or sf is None:
                continue
            balanced = sf[0] <= 2 and 0.15 <= sf[1] < 0.25
            (band if balanced else other).add(r["matrix"])
        random.seed(43)
        ctrl = random.sample(sorted(other), min(len(other), CONTROL))
        with open(os.path.join(out, f"only-sell-{g}-{s}.txt"), "w") as fh:
            fh.write("".join(m + "\n" for m in sorted(band) + ctrl))
        print(s, len(band), "band,", len(ctrl), "control")


def main():
    if sys.argv[1] == "--make-lists":
        return make_lists(sys.argv[2], sys.argv[3])
    d, lists, g = sys.argv[1], sys.argv[2], sys.argv[3]
    band = set()
    for fn in glob.glob(os.path.join(lists, f"only-sell-{g}-s*.txt")):
        names = [m.strip() for m in open(fn) if m.strip()]
        band |= set(names[:-CONTROL])
    t, feat = collections.defaultdict(dict), {}
    for rule in RULES:
        for fn in glob.glob(os.path.join(d, f"corpus-{g}-r{rule}-s*.jsonl.gz")):
            for r in table_rows(fn):
                feat[r["matrix"]] = r["features"]
                for x in r["times"]:
                    if x["config"] == "sell" and x.get("status") == "ok":
                        t[(r["matrix"], r["precision"])][rule] = x["median_s"]
    pairs = [("shipped", "fill015"), ("off", "shipped"), ("off", "fill015")]
    print("| set | prec | n | " + " | ".join(f"{a} / {b} (min, max)" for a, b in pairs) + " |")
    print("|---|---|---|---|---|---|")
    for name, inside in (("band", True), ("control", False)):
        for prec in ("f32", "f64"):
            ks = [k for k in t if k[1] == prec and (k[0] in band) == inside and len(t[k]) == 3]
            cells = []
            for a, b in pairs:
                v = [t[k][a] / t[k][b] for k in ks]
                cells.append(f"{gm(v):.3f} ({min(v):.2f}, {max(v):.2f})" if v else "-")
            print(f"| {name} | {prec} | {len(ks)} | " + " | ".join(cells) + " |")
    print("\nBand matrices, shipped / fill=0.15 (µs shipped), by mean row:\n")
    for m in sorted(band & set(feat), key=lambda m: feat[m]["mean_nnz"]):
        f = feat[m]
        cells = [f"{p} {t[(m, p)]['shipped'] / t[(m, p)]['fill015']:.2f} ({t[(m, p)]['shipped'] * 1e6:.0f})"
                 for p in ("f32", "f64") if len(t.get((m, p), {})) == 3]
        print(f"{m[:64]:64s} rows {f['nrows']:7d} mean {f['mean_nnz']:6.1f} max {f['max_nnz']:5d} | "
              + "  ".join(cells))


if __name__ == "__main__":
    main()
