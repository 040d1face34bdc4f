#!/usr/bin/env python3
"""Replay the adoption rule of `optimize` on recorded device runs (opt-*.json or .json.gz of
scripts/device_optimizer.sh): for every measured result whose DP plan has >= 2 blocks, recompute
the plan's predicted time with a per-block cost of K launch floors and adopt it when
(T_single - T_plan) > z * (u_single + u_plan), u = the recorded one-sigma uncertainties. Prints,
per (K, z), the plans adopted and their measured speed against the best measured single
configuration. Caveat: the recorded plan is the DP's optimum under the rule of its run; a larger
K may make the DP choose fewer blocks, which this replay does not redo (its plan time is an
upper bound of the new optimum's).

    python3 scripts/replay_adoption.py docs/h200/optimizer docs/h100/optimizer
"""
import os, re, sys

from jsonio import jglob, jload

dirs = sys.argv[1:] or ["docs/h200/optimizer", "docs/h100/optimizer"]
cases = []
for d in dirs:
    for f in jglob(os.path.join(d, "opt-*.json")):
        for r in jload(f)["results"]:
            m = r.get("measured") or {}
            if len(r["plan"]) < 2 or not m.get("plan_seconds") or not m.get("best_single"):
                continue
            u = re.search(r"uncertainty[^0-9]*([0-9.]+) µs", r["verdict"])
            if not u:
                continue
            u_total = float(u.group(1)) * 1e-6
            cases.append(dict(
                name=f"{os.path.basename(f).removesuffix('.gz')[4:-5]} {r['input'][-44:]}",
                floor=r["rule"]["floor_s"],
                times=[b["predicted_seconds"] for b in r["plan"]],
                u_plan=r["plan_uncertainty"],
                u_single=u_total - r["plan_uncertainty"],
                t_single=r["best_single"][1],
                ratio=m["best_single"][1] / m["plan_seconds"],
            ))
print(f"{len(cases)} measured DP plans of >= 2 blocks")
for k in (1.0, 3.0, 5.0):
    for z in (1.0, 1.5, 2.0):
        adopted = []
        for c in cases:
            fl, n = c["floor"], len(c["times"])
            t_plan = fl + sum(max(t - fl, 0) for t in c["times"]) + (n - 1) * k * fl
            if c["t_single"] - t_plan > z * (c["u_single"] + c["u_plan"]):
                adopted.append(c)
        lose = [c for c in adopted if c["ratio"] < 1 / 1.02]
        win = [c for c in adopted if c["ratio"] >= 1.15]
        print(f"K={k:.0f} floors, z={z}: adopted {len(adopted)}, slower than 1.02x best single "
              f"{len(lose)}, >= 1.15x faster {len(win)}; measured "
              + ", ".join(f"{c['ratio']:.2f}" for c in adopted))
        if (k, z) == (5.0, 1.5):
            for c in adopted:
                print(f"    {c['name']}: {c['ratio']:.2f}x")
