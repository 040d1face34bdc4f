#!/usr/bin/env python3
"""How well `optimize`'s row blocks are predicted, and what a factor on their sigma would have
adopted: reads recorded device runs (opt-*.json of scripts/device_optimizer.sh, or .json.gz).

1. Every measured block of a plan of >= 2 blocks: ln(predicted / measured), and |that| / sigma
   (a calibrated sigma gives a median of 0.67), by the block's share of the rows.
2. Replay of the adoption rule (gain > 1.5 x (u_single + F x sum sigma_b T_b)) for factors F: plans
   adopted, adopted plans that lost (> 2 % slower than the single configuration they replaced),
   plans >= 1.15x faster than the best measured single, geomean of the answer against it.
   The recorded runs used F = 1 (u_single is backed out of the recorded verdict).

    python3 scripts/block_calibration.py 'docs/h*/optimizer/session12/opt-*.json'
"""
import math, re, statistics as st, sys

from jsonio import jglob, jload

UNIT = {"µs": 1e-6, "ms": 1e-3, "ns": 1e-9, "s": 1.0}
runs = []
for f in jglob(sys.argv[1] if len(sys.argv) > 1 else "docs/h*/optimizer/**/opt-*.json", recursive=True):
    for r in jload(f).get("results", []):
        m, plan = r.get("measured") or {}, r.get("plan") or []
        if len(plan) < 2 or not m.get("plan_seconds") or not r.get("best_single"):
            continue
        runs.append((f, r, m, plan))

blocks = []
for f, r, m, plan in runs:
    for b, t in zip(plan, m.get("plan_block_seconds") or []):
        if t and b.get("predicted_seconds") and len(m["plan_block_seconds"]) == len(plan):
            rows = b["rows"][1] - b["rows"][0]
            err = math.log(b["predicted_seconds"] / t)
            blocks.append((rows / r["nrows"], err, abs(err) / max(b.get("sigma") or 0, 1e-3)))
print(f"{len(blocks)} measured blocks of {len(runs)} plans")
for lo, hi in [(0, 0.02), (0.02, 0.5), (0.5, 1.01), (0, 1.01)]:
    sel = [b for b in blocks if lo <= b[0] < hi]
    if sel:
        print(f"  row share {lo:.2f}-{hi:.2f}: n {len(sel):3d}, median ln error {st.median(b[1] for b in sel):+.3f}, "
              f"median |z| {st.median(b[2] for b in sel):.2f}")

cases = []
for f, r, m, plan in runs:
    need = re.search(r"uncertainty \(?([0-9.]+) (µs|ms|ns|s)", r.get("verdict", ""))
    singles = {s[0]: s[1] for s in m.get("singles", []) if s[1]}
    replaced = singles.get(r["best_single"][0])
    if not need or not replaced:
        continue
    u_single = max(float(need.group(1)) * UNIT[need.group(2)] / 1.5 - r["plan_uncertainty"], 0.0)
    cases.append((r, m, plan, u_single, replaced))
print(f"replay on {len(cases)} plans with a verdict")
for factor in (1.0, 1.5, 2.0, 3.0):
    adopted = lost = wins = 0
    logs = []
    for r, m, plan, u_single, replaced in cases:
        u_plan = factor * sum(b["sigma"] * b["predicted_seconds"] for b in plan)
        adopt = r["best_single"][1] - r["plan_predicted"] > 1.5 * (u_single + u_plan)
        answer = m["plan_seconds"] if adopt else replaced
        logs.append(math.log(m["best_single"][1] / answer))
        if adopt:
            adopted += 1
            lost += m["plan_seconds"] > 1.02 * replaced
            wins += m["best_single"][1] / m["plan_seconds"] >= 1.15
    print(f"  F = {factor}: adopted {adopted}, lost {lost}, >= 1.15x {wins}, "
          f"geomean vs best single {math.exp(sum(logs) / len(logs)):.3f}")
