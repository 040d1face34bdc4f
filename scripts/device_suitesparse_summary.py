#!/usr/bin/env python3
"""Summarize the SuiteSparse bench reports of scripts/device_suitesparse.sh: per matrix, our best
kernel (over kernels and block sizes) against cuSPARSE's best algorithm, by median time; then the
geometric mean of the speedups and the worst case. Prints a Markdown table.

Usage: python3 scripts/device_suitesparse_summary.py DIR [DIR ...]   (folders of <name>-b<block>.json)
"""
import glob
import json
import math
import os
import sys


def main(dirs):
    best = {}  # name -> dict
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(d, "*.json"))):
            base = os.path.basename(path)[: -len(".json")]
            name, block = base.rsplit("-b", 1)
            try:
                with open(path) as fh:
                    rep = json.load(fh)
            except (json.JSONDecodeError, OSError):
                continue
            m = best.setdefault(
                name,
                {"rows": rep["nrows"], "cols": rep["ncols"], "nnz": rep["nnz"],
                 "ours": None, "vendor": None, "mismatch": []},
            )
            for r in rep["results"]:
                if r["status"] == "mismatch":
                    m["mismatch"].append(f"{r['kernel']}@{block}")
                if r["status"] != "ok" or r.get("median_s") is None:
                    continue
                side = "vendor" if r["kernel"].startswith("cusparse") else "ours"
                cand = (r["median_s"], r["kernel"], int(block), r.get("warm_mean_s"))
                if m[side] is None or cand[0] < m[side][0]:
                    m[side] = cand
    rows = []
    for name, m in best.items():
        if m["ours"] and m["vendor"]:
            rows.append((name, m, m["vendor"][0] / m["ours"][0]))
    rows.sort(key=lambda r: r[1]["nnz"])
    print("| matrix | rows | nnz | our best | µs | cuSPARSE best | µs | speedup |")
    print("|---|---:|---:|---|---:|---|---:|---:|")
    for name, m, s in rows:
        o, v = m["ours"], m["vendor"]
        print(f"| {name} | {m['rows']} | {m['nnz']} | {o[1]} (b{o[2]}) | {o[0]*1e6:.2f} | "
              f"{v[1]} | {v[0]*1e6:.2f} | {s:.2f}× |")
    if rows:
        gm = math.exp(sum(math.log(s) for _, _, s in rows) / len(rows))
        worst = min(rows, key=lambda r: r[2])
        bestc = max(rows, key=lambda r: r[2])
        wins = sum(1 for r in rows if r[2] >= 1.0)
        print()
        print(f"{len(rows)} matrices: geometric-mean speedup {gm:.3f}×; ours faster on {wins}; "
              f"worst {worst[0]} {worst[2]:.2f}×; best {bestc[0]} {bestc[2]:.2f}×")
    missing = [n for n, m in best.items() if not (m["ours"] and m["vendor"])]
    if missing:
        print(f"no comparison for: {', '.join(sorted(missing))}")
    bad = {n: m["mismatch"] for n, m in best.items() if m["mismatch"]}
    if bad:
        print(f"MISMATCHES: {bad}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["."])
