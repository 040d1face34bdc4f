#!/usr/bin/env python3
"""Session 92: HYB under the merged sequence against the programmatic one, timed in one device call
(`STEP=ab scripts/device_s92.sh`): per matrix-precision the ratio merged / programmatic of HYB's
median time, split by the features' `hyb_line_carries` (the launcher merges at >= 1,200; below it
both ran the same kernel, so those ratios are the pair's noise). Optionally, TABLE (the seed's
training table) gives what the merged times are worth: the perfect pick's geomean against the
best cuSPARSE configuration with HYB's time replaced where the launcher merges.

    python3 scripts/merge_ab.py MERGE.jsonl[.gz] PDL.jsonl[.gz] [TABLE]
"""
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jsonio import table_rows  # noqa: E402

CUT = 1200


def hyb(r):
    t = [t for t in r["times"] if t["config"] == "hyb" and t.get("status") == "ok"]
    return t[0]["median_s"] if t else None


def carries(r):
    c = (r["features"].get("access") or {}).get("hyb_line_carries")
    return None if c is None else c[0 if r["precision"] == "f32" else 1]


def main():
    merge = {(r["matrix"], r["precision"]): r for r in table_rows(sys.argv[1])}
    pdl = {(r["matrix"], r["precision"]): r for r in table_rows(sys.argv[2])}
    groups = {}
    for k, m in merge.items():
        if k not in pdl or hyb(m) is None or hyb(pdl[k]) is None:
            continue
        c = carries(m)
        g = ("merged" if c >= CUT else "same kernel", k[1])
        groups.setdefault(g, []).append((hyb(m) / hyb(pdl[k]), hyb(pdl[k]), k, c))
    for g in sorted(groups):
        v = sorted(x[0] for x in groups[g])
        gm = math.exp(sum(math.log(x) for x in v) / len(v))
        print(f"{g[0]:12s} {g[1]}: {len(v):4d}  geomean {gm:.3f}  median {statistics.median(v):.3f}"
              f"  range {v[0]:.3f}-{v[-1]:.3f}  p10 {v[len(v) // 10]:.3f} p90 {v[9 * len(v) // 10]:.3f}")
    if len(sys.argv) > 3:
        worth(sys.argv[3], merge, groups)


def worth(table, merge, groups):
    """The perfect pick's geomean against the best cuSPARSE configuration over the whole table,
    HYB's time there replaced by the merged one where the launcher merges."""
    new = {x[2]: x[0] for g, xs in groups.items() if g[0] == "merged" for x in xs}
    for prec in ("f32", "f64"):
        logs_old, logs_new, n, wins = 0.0, 0.0, 0, 0
        for r in table_rows(table):
            if r["precision"] != prec:
                continue
            ok = {t["config"]: t["median_s"] for t in r["times"] if t.get("status") == "ok"}
            vend = [v for c, v in ok.items() if c.startswith("cusparse")]
            ours = {c: v for c, v in ok.items() if not c.startswith("cusparse")}
            if not vend or not ours:
                continue
            k = (r["matrix"], prec)
            best_old = min(ours.values())
            if k in new and "hyb" in ours:
                ours["hyb"] = ours["hyb"] * new[k]
            best_new = min(ours.values())
            wins += best_new < best_old
            logs_old += math.log(min(vend) / best_old)
            logs_new += math.log(min(vend) / best_new)
            n += 1
        print(f"{prec}: {n} matrices, perfect pick vs best cuSPARSE {math.exp(logs_old / n):.4f}x -> "
              f"{math.exp(logs_new / n):.4f}x with HYB merged where the launcher merges "
              f"({wins} now faster than our best before)")


if __name__ == "__main__":
    main()
