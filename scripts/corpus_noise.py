#!/usr/bin/env python3
"""The corpus protocol's noise floor: the same configurations measured by two `collect` runs on two
machines of the same GPU kind.

  python3 scripts/corpus_noise.py h200 h100      # the SuiteSparse files: data/corpus/GPU.jsonl.gz
                                                 # against data/corpus/GPU-repeat.jsonl.gz
  python3 scripts/corpus_noise.py --tables A B   # every matrix the two tables share (e.g. the
                                                 # unseen seed-12 set and its repeat, session 31)

Beside the difference of each configuration's two times, the ranking's noise ceiling (session 66):
each matrix's fastest configuration picked by one measurement and scored by the other (both ways
round; the configurations both timed) — how often a model that predicted every time exactly as
one measurement found it would be within 5 % of the best, beyond 1.2×, and its mean fraction of
the best, over every matrix and by class (stacks, single-family)."""
import gzip, json, math, sys

def percentile(d, q):
    """numpy.percentile's default (linear between the two nearest ranks) of the sorted `d`, so
    the script runs where numpy is not installed (the build machine)."""
    h = (len(d) - 1) * q / 100
    lo = math.floor(h)
    return d[lo] + (h - lo) * (d[min(lo + 1, len(d) - 1)] - d[lo])

def times(path, files_only):
    out = {}
    for line in gzip.open(path):
        r = json.loads(line)
        if not files_only or r["matrix"].startswith("mats/"):
            for t in r["times"]:
                if t["status"] == "ok":
                    out[(r["matrix"], r["precision"], t["config"])] = t["median_s"]
    return out

def report(name, a, b):
    keys = [k for k in a if k in b]
    for p in ["f32", "f64", None]:
        d = sorted(abs(b[k] / a[k] - 1) for k in keys if p is None or k[1] == p)
        if len(d) == 0:
            continue
        print(f"{name} {p or 'both'}: {len(d)} configurations of {len({k[0] for k in keys})} "
              f"matrices, difference median {100*percentile(d, 50):.2f} % "
              f"mean {100*sum(d)/len(d):.2f} % p90 {100*percentile(d, 90):.2f} % max {100*d[-1]:.1f} %, "
              f"within 10 % {100*sum(x <= 0.1 for x in d)/len(d):.1f} %")

def picks(name, a, b):
    """The ranking's noise ceiling of the two measurements `a` and `b` (see the module doc)."""
    per = {}
    for (m, p, c), t in a.items():
        if (m, p, c) in b:
            per.setdefault((m, p), {})[c] = (t, b[(m, p, c)])
    for prec in ["f32", "f64"]:
        tally = {}
        for (m, p), cs in per.items():
            if p != prec or len(cs) < 2:
                continue
            for first, second in [(0, 1), (1, 0)]:
                pick = min(cs, key=lambda c: cs[c][first])
                r = cs[pick][second] / min(t[second] for t in cs.values())
                for cls in ["every matrix", "stacks" if "-stack-" in m else "single-family"]:
                    t = tally.setdefault(cls, [0, 0, 0, 0.0])
                    t[0] += 1; t[1] += r <= 1.05; t[2] += r > 1.2; t[3] += 1 / r
        for cls, (n, w5, beyond, frac) in tally.items():
            print(f"{name} {prec} {cls}: {n // 2} matrices, a pick by one measurement within 5 % of "
                  f"the other's best {100*w5/n:.1f} %, beyond 1.2x {beyond}, "
                  f"mean fraction of the best {100*frac/n:.2f} %")

def both(name, a, b):
    report(name, a, b)
    picks(name, a, b)

args = sys.argv[1:]
if args[:1] == ["--tables"]:
    both("tables", times(args[1], False), times(args[2], False))
else:
    for g in args or ["h200", "h100"]:
        both(g, times(f"data/corpus/{g}.jsonl.gz", True),
               times(f"data/corpus/{g}-repeat.jsonl.gz", True))
