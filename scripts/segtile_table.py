#!/usr/bin/env python3
"""Tables of `examples/plan_time.rs` output (docs/OPTIMIZER.md, session 37).

usage: python3 scripts/segtile_table.py plans-h100.jsonl [plans-h200.jsonl ...]

Per matrix and precision: the best single configuration timed, the best hand-made plan without
a SEG-TILE block and the best with one (each plan's faster mode, serial or concurrent), and
their speed against the best single. Matrices L2 / L4 (a block of long rows alone): SEG-TILE
at 256 / 512 / 1,024 threads against the best cuSPARSE algorithm.
"""
import json
import sys

for path in sys.argv[1:]:
    rows = [json.loads(l) for l in open(path)]
    print(f"\n{path}\n")
    print("| matrix | prec | best single (µs) | best plan without SEG-TILE | × | best plan with SEG-TILE | × |")
    print("|---|---|---|---|---|---|---|")
    keys = []
    for r in rows:
        k = (r["matrix"], r["precision"])
        if k not in keys:
            keys.append(k)
    for m, p in keys:
        rs = [r for r in rows if (r["matrix"], r["precision"]) == (m, p) and "serial" in r]
        if m.startswith("L"):
            seg = {r["plan"]: r["serial"] for r in rs if r["plan"].startswith("segtile")}
            cus = min((r["serial"], r["plan"]) for r in rs if r["plan"].startswith("cusparse"))
            s = ", ".join(f"{k} {v * 1e6:.1f}" for k, v in seg.items())
            best = min(seg.values())
            print(f"| {m} | {p} | {cus[1]} {cus[0] * 1e6:.1f} | {s} | | best SEG-TILE | {cus[0] / best:.2f} |")
            continue
        singles = [(r["serial"], r["plan"]) for r in rs if ":" not in r["plan"]]
        plans = [(min(r["serial"], r.get("concurrent", 1e9)), r["plan"],
                  "conc" if r.get("concurrent", 1e9) < r["serial"] else "ser")
                 for r in rs if ":" in r["plan"]]
        s = min(singles)
        without = min(x for x in plans if "segtile" not in x[1])
        with_ = min(x for x in plans if "segtile" in x[1])
        f = lambda x: f"{x[1]} ({x[2]}) {x[0] * 1e6:.1f}"
        print(f"| {m} | {p} | {s[1]} {s[0] * 1e6:.1f} | {f(without)} | {s[0] / without[0]:.2f} | {f(with_)} | {s[0] / with_[0]:.2f} |")
