#!/usr/bin/env python3
"""Issue 16's <= 1.02x target for the tuned answer, from `optimize --measure --tune` output
(`scripts/device_optimizer.sh` with TUNE=1; .json or .json.gz):

    python3 scripts/tuned_fair.py docs/h100/optimizer/session50/opt-*.json.gz

Per set (from the file name: opt-[big-]SET-PREC) and precision, over the matrices of all the
files given (a matrix named twice counts once, its first file's record):
  fair    the tuned answer and the best single configuration of the --measure pass, both timed
          again side by side after the search: answer <= 1.02x that best (the target's test
          without the bias of keeping the fastest of ~60 noisy times), and the worst;
  tuned   the tuned answer timed again against the best of the --measure pass (biased low);
  untuned the predicted answer (plan or single configuration) against the same best;
  vs cuSPARSE  geomean of best cuSPARSE / tuned answer.
A miss marked "same configuration" is the best single configuration timed twice (the answer
*is* it): its ratio is noise — where there are misses, the line also counts the matrices within
1.02x or answered by the best single itself. ">= 1.15x faster (fair)": the heterogeneous target's
count, the answer against the best single configuration timed beside it (session 78). Since
session 53 a pair whose two times disagree by more than 1 % is raced again and pooled
(`fair_raced_twice`; src/cli/optimize/race.rs, FAIR_AGAIN): counted per line as "raced twice".
Then the noise floor of the fair test: where the tuned answer *is* the best single
configuration, its two timings differ by this much (share beyond 2 %).
"""
import math
import os
import re
import statistics
import sys

from jsonio import jload

groups, noise = {}, []
seen = set()
for f in sys.argv[1:]:
    m = re.search(r"opt-(?:big-)?([a-z]+)-", os.path.basename(f))
    kind = m.group(1) if m else "?"
    for r in jload(f)["results"]:
        ms = r.get("measured") or {}
        t = ms.get("tuned")
        key = (kind, r["precision"], os.path.basename(r["input"]))
        if not t or not t.get("retimed_seconds") or key in seen or not ms.get("best_single"):
            continue
        seen.add(key)
        best = ms["best_single"]
        same = t["answer"] == best[0]
        g = groups.setdefault(key[:2], [])
        g.append({
            "name": key[2],
            "fair": t["best_single_retimed_seconds"] / t["retimed_seconds"],
            "tuned": best[1] / t["retimed_seconds"],
            "untuned": best[1] / ms["answer_seconds"] if ms.get("answer_seconds") else None,
            "vendor": ms["best_vendor"][1] / t["retimed_seconds"] if ms.get("best_vendor") else None,
            "same": same,
            "twice": t.get("fair_raced_twice", False),
        })
        if same:
            noise.append(abs(math.log(t["best_single_retimed_seconds"] / t["retimed_seconds"])))

ok = lambda x: x is not None and x >= 1 / 1.02
for (kind, prec), g in sorted(groups.items()):
    worst = min(g, key=lambda x: x["fair"])
    un = [x["untuned"] for x in g if x["untuned"]]
    v = [x["vendor"] for x in g if x["vendor"]]
    fast = [x["fair"] for x in g if x["fair"] >= 1.15]
    misses = ", ".join(f'{x["name"].replace(".mtx.gz", "")} {1 / x["fair"]:.3f}x'
                       + (" (same configuration)" if x["same"] else "")
                       for x in g if not ok(x["fair"]))
    print(f"{kind} {prec}: {len(g)} matrices; fair <= 1.02x on {sum(ok(x['fair']) for x in g)} "
          f"(worst {1 / worst['fair']:.3f}x); tuned vs the --measure best {sum(ok(x['tuned']) for x in g)}; "
          f"untuned {sum(ok(x) for x in un)} of {len(un)} (worst {1 / min(un):.3f}x); "
          f"vs best cuSPARSE geomean {math.exp(statistics.fmean(map(math.log, v))):.3f}x; "
          f"fair pair raced twice {sum(x['twice'] for x in g)}"
          + (f"; beyond 1.02x: {misses}" if misses else "")
          + (f"; <= 1.02x or the best single itself {sum(ok(x['fair']) or x['same'] for x in g)}"
             if misses else "")
          + (f"; >= 1.15x faster (fair): {len(fast)} ({', '.join(f'{x:.2f}x' for x in fast)})"
             if fast else ""))
if noise:
    noise.sort()
    pct = lambda d: 100 * (math.exp(d) - 1)
    print(f"noise floor: {len(noise)} matrices whose tuned answer is the best single configuration: "
          f"the two timings differ by median {pct(statistics.median(noise)):.2f} %, "
          f"p90 {pct(noise[int(0.9 * len(noise))]):.2f} %, beyond 2 % on "
          f"{sum(d > math.log(1.02) for d in noise)}, max {pct(noise[-1]):.2f} %")
