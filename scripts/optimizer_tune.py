#!/usr/bin/env python3
"""The tuned answer of `optimize` replayed on `optimize --measure` output (docs/OPTIMIZER.md;
.json or .json.gz).

`optimize --tune N` times the DP's plan (two blocks or more, adopted or not), the N
predicted-fastest single configurations and the predicted-fastest cuSPARSE algorithm, and
answers with the fastest measured. `--measure` output holds every single configuration in
prediction order, so the same rule is replayed here on it, beside the untuned answer:

    python3 scripts/optimizer_tune.py DIR_OR_JSON… [--k 3]

Per file: matrices, the answer (untuned / tuned) within 1.02x of the best measured single
configuration, the geometric mean and worst of best single / answer, and best cuSPARSE / answer.
"""
import math
import os
import sys

from jsonio import jglob, jload

def tuned(r, k):
    ms = r["measured"]
    cands = []
    if len(r["plan"]) >= 2 and ms.get("plan_seconds"):
        cands.append(ms["plan_seconds"])
    singles = ms["singles"]
    cands += [t for _, t, _ in singles[:k] if t]
    vendor = next((s for s in singles if s[0].startswith("cusparse")), None)
    if vendor and vendor[1]:
        cands.append(vendor[1])
    return min(cands) if cands else None


def gm(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def main():
    args = sys.argv[1:]
    k = 3
    if "--k" in args:
        i = args.index("--k")
        k = int(args[i + 1])
        del args[i : i + 2]
    files = []
    for a in args:
        files += jglob(os.path.join(a, "opt-*.json")) if os.path.isdir(a) else [a]
    print(f"| file | n | answer ≤1.02× best single (untuned / tuned) | geomean vs best single (worst) untuned | tuned | geomean vs best cuSPARSE untuned / tuned |")
    print("|---|---|---|---|---|---|")
    for f in files:
        rs = [r for r in jload(f)["results"] if r.get("measured")]
        rows = []
        for r in rs:
            ms = r["measured"]
            best = ms.get("best_single")
            ans = ms.get("answer_seconds")
            t = tuned(r, k)
            if not (best and ans and t):
                continue
            v = ms.get("best_vendor")
            rows.append((best[1] / ans, best[1] / t, v[1] / ans if v else None, v[1] / t if v else None))
        if not rows:
            continue
        u = [x[0] for x in rows]
        tt = [x[1] for x in rows]
        vu = [x[2] for x in rows if x[2]]
        vt = [x[3] for x in rows if x[3]]
        ok = lambda xs: sum(1 for x in xs if x >= 1 / 1.02)
        print(
            f"| {os.path.basename(os.path.dirname(os.path.abspath(f)))}/{os.path.basename(f).removesuffix('.gz')} | {len(rows)} "
            f"| {ok(u)} / {ok(tt)} | {gm(u):.3f}× ({min(u):.3f}×) | {gm(tt):.3f}× ({min(tt):.3f}×) "
            f"| {gm(vu):.3f}× / {gm(vt):.3f}× |"
        )


if __name__ == "__main__":
    main()
