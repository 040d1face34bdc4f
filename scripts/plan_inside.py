#!/usr/bin/env python3
"""Each block's cost inside its plan against alone (issue 16, docs/OPTIMIZER.md session 48).

    python3 scripts/plan_inside.py opt-het-f32.json[.gz] [more …] > inside.md

Reads `optimize --measure --json-out` files whose DP plans (two blocks or more) were timed whole
(`plan_seconds`), block by block alone (`plan_block_seconds`) and with each block left out in
turn (`plan_left_out_seconds`, `PreparedPlan::time_left_out`). A block's cost *inside* the plan
is the plan's time less the plan without it; the table gives it beside its time alone and the
model's prediction. For a plan of two blocks, leaving one out leaves the other alone, so both
blocks show the same excess (the plan's time less its blocks alone): only plans of three blocks
or more attribute the excess to a block.
"""
import gzip
import json
import sys


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return json.load(f)


def main():
    print("| input | prec | mode | plan µs | Σ alone µs | block rows | config | predicted µs | alone µs | inside µs | inside − alone µs |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for path in sys.argv[1:]:
        for r in load(path)["results"]:
            m = r.get("measured") or {}
            lo = m.get("plan_left_out_seconds") or []
            alone = m.get("plan_block_seconds") or []
            plan = r.get("plan") or []
            if not lo or len(lo) != len(plan) or len(alone) != len(plan):
                continue
            t = m["plan_seconds"]
            mode = (r.get("rule") or {}).get("overlap", "")
            for k, b in enumerate(plan):
                inside = t - lo[k]
                head = (
                    f"| {r['input'][:48]} | {r['precision']} | {mode} | {t * 1e6:.1f} | {sum(alone) * 1e6:.1f}"
                    if k == 0
                    else "| | | | |"
                )
                pred = b.get("predicted_seconds")
                print(
                    f"{head} | {b['rows'][0]}–{b['rows'][1]} | {b['config']} | "
                    f"{pred * 1e6 if pred else float('nan'):.1f} | {alone[k] * 1e6:.1f} | "
                    f"{inside * 1e6:.1f} | {(inside - alone[k]) * 1e6:+.1f} |"
                )


if __name__ == "__main__":
    main()
