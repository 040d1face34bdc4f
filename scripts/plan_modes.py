#!/usr/bin/env python3
"""The DP's plan timed serially and concurrently, from `optimize --tune` records (docs/OPTIMIZER.md
session 48: why `concurrent` became the default execution mode).

    python3 scripts/plan_modes.py opt-het-f32.json.gz [more …]

`--tune` times the DP's plan in its mode (`plan (N blocks, MODE)`) and in the other
(`plan #K (N blocks, OTHER; the DP's plan)`); this prints both times per matrix, their ratio
(concurrent / serial) and the best single configuration, then the count and the median ratio.
"""
import gzip
import json
import re
import statistics
import sys


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return json.load(f)


def main():
    ratios = []
    print("| file | input | blocks | serial µs | concurrent µs | concurrent / serial | adopted | best single µs |")
    print("|---|---|---|---|---|---|---|---|")
    for path in sys.argv[1:]:
        for r in load(path)["results"]:
            m = r.get("measured") or {}
            timed = {k: v for k, v in (m.get("tuned") or {}).get("timed", [])}
            own = [(k, v) for k, v in timed.items() if re.match(r"plan \((\d+) blocks, (serial|concurrent)\)$", k)]
            other = [(k, v) for k, v in timed.items() if re.match(r"plan #\d+ \(\d+ blocks, (serial|concurrent); the DP's plan\)$", k)]
            if not own or not other or own[0][1] is None or other[0][1] is None:
                continue
            t = {}
            for k, v in own + other:
                t["serial" if "serial" in k else "concurrent"] = v
            if len(t) < 2:
                continue
            ratio = t["concurrent"] / t["serial"]
            ratios.append(ratio)
            bs = m.get("best_single")
            n = re.search(r"\((\d+) blocks", own[0][0]).group(1)
            print(
                f"| {path.split('/')[-1]} | {r['input'][:48]} | {n} | {t['serial'] * 1e6:.1f} | "
                f"{t['concurrent'] * 1e6:.1f} | {ratio:.3f} | {'yes' if r.get('adopted') else 'no'} | "
                f"{bs[1] * 1e6 if bs else float('nan'):.1f} |"
            )
    if ratios:
        faster = sum(x < 1 for x in ratios)
        print(
            f"\nconcurrent faster on {faster} of {len(ratios)} plans; concurrent / serial median "
            f"{statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f})"
        )


if __name__ == "__main__":
    main()
