#!/usr/bin/env python3
"""Where the stacks' errors are not: residuals of row-per-thread configurations on stacks
against feature-level candidates (docs/ACCURACY.md, session 48).

    python3 scripts/stack_residuals.py data/corpus/h200-s14.jsonl.gz score.jsonl [CONFIGS]

`score.jsonl` is `sparsecast train --score … --records` on the table; CONFIGS (comma-separated,
default csr-scalar,csr-scalar@512,jad,cusparse-sell) are scored on the table's stacks. Prints,
per configuration, the correlation of ln(predicted / measured) on stacks of 3–256 µs with each
candidate (from the stored features), then the stacks' errors by the family of their longest-row
part and by their size in waves of resident warps (132 SMs × 64 warps × 32 rows).
"""
import collections
import gzip
import json
import math
import sys

import numpy as np


def mean_len(p):
    f = p["family"]
    if f == "random":
        rl = p["row_len"]
        vals = [v for k, v in rl.items() if k != "dist"]
        if rl["dist"] == "uniform":
            return (rl["min"] + rl["max"]) / 2
        return rl.get("mean", rl.get("nnz", vals[0] if vals else 10))
    return {
        "stencil": {"2d5": 5, "3d7": 7, "3d27": 27}.get(p.get("stencil"), 9),
        "banded": 2 * p.get("half_bandwidth", 4) + 1,
        "block-diagonal": p.get("block_size", 8),
        "power-law": p.get("mean", 8),
    }.get(f, 10)


def summary(v):
    v = sorted(v)
    n = len(v)
    within = sum(abs(x) <= math.log(1.1) for x in v) / n
    return f"n={n:5d} median {100 * v[n // 2]:+5.1f} %  within 10 % {100 * within:3.0f} %"


def main():
    table, records = sys.argv[1], sys.argv[2]
    configs = (sys.argv[3] if len(sys.argv) > 3 else "csr-scalar,csr-scalar@512,jad,cusparse-sell").split(",")
    feats = {}
    for line in gzip.open(table, "rt"):
        r = json.loads(line)
        feats[(r["matrix"], r["precision"])] = r["features"]
    rows = collections.defaultdict(list)
    for line in open(records):
        r = json.loads(line)
        p = (r.get("predictions") or {}).get("sparsecast")
        g = (r.get("source") or {}).get("generated") or {}
        if r.get("status") != "ok" or not p or r["config"] not in configs or g.get("family") != "stack":
            continue
        f = feats.get((r["matrix"], r["precision"]))
        if f and f.get("access"):
            rows[r["config"]].append((math.log(p["seconds"] / r["median_s"]), r, f, g))
    for c in configs:
        mid = [(e, r, f, g) for e, r, f, g in rows[c] if 3e-6 <= r["median_s"] <= 256e-6]
        if len(mid) < 10:
            continue
        e = np.array([x[0] for x in mid])
        cand = collections.defaultdict(list)
        for _, r, f, g in mid:
            a = f["access"]
            ws = a["warp_steps"]
            vb = 0 if r["precision"] == "f32" else 1
            nnz = max(f["nnz"], 1)
            align = a.get("align_steps", [0, 0])
            cand["lane-alignment degree"].append(math.log(max(align[vb], ws[0]) / max(ws[0], 1)))
            cand["passes per entry"].append(math.log(max(align[vb], ws[0]) * 32 / nnz))
            cand["warp imbalance"].append(math.log(max(ws[0], 1) * 32 / nnz))
            cand["x sectors per entry"].append(math.log(max(a["x_sectors_f32" if vb == 0 else "x_sectors_f64"], 1) / nnz))
            cand["x against the L2"].append(math.log(f["ncols"] * (4 << vb) / 60e6))
            h = a["warp_hist"][0] if a.get("warp_hist") else {"steps": [1]}
            cand["heaviest warps' share"].append(h["steps"][-1] / max(sum(h["steps"]), 1))
            cand["rows in the longest bucket"].append(math.log(max(f["row_len_log2_hist"][-1], 1)))
            cand["parts"].append(len(g["parts"]))
        print(f"{c}: {summary(e)} (stacks of 3-256 us)")
        for k, v in cand.items():
            print(f"    corr with {k:28s} {np.corrcoef(np.array(v), e)[0, 1]:+.3f}")
    by_family = collections.defaultdict(list)
    by_waves = collections.defaultdict(list)
    for c in configs:
        for e, r, f, g in rows[c]:
            by_waves[min(max(math.floor(math.log2(f["nrows"] / (132 * 64 * 32))), -6), 4)].append(e)
            if 3e-6 <= r["median_s"] <= 256e-6:
                by_family[max(g["parts"], key=mean_len)["family"]].append(e)
    print("by the family of the longest-row part (3-256 us):")
    for k, v in sorted(by_family.items(), key=lambda kv: -len(kv[1])):
        print(f"    {k:16s} {summary(v)}")
    print("by waves of resident warps (log2, clamped to -6..4):")
    for k in sorted(by_waves):
        print(f"    2^{k:<3d} {summary(by_waves[k])}")


if __name__ == "__main__":
    main()
