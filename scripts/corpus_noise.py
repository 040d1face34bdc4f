#!/usr/bin/env python3
"""The corpus protocol's noise floor: the same configurations measured by two `collect` runs on two
machines of the same GPU kind.

  python3 scripts/corpus_noise.py h200 h100      # the SuiteSparse files: data/corpus/GPU.jsonl.gz
                                                 # against data/corpus/GPU-repeat.jsonl.gz
  python3 scripts/corpus_noise.py --tables A B   # every matrix the two tables share (e.g. the
                                                 # unseen seed-12 set and its repeat, session 31)"""
import gzip, json, sys
import numpy as np

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
        d = np.array([abs(b[k] / a[k] - 1) for k in keys if p is None or k[1] == p])
        if len(d) == 0:
            continue
        print(f"{name} {p or 'both'}: {len(d)} configurations of {len({k[0] for k in keys})} "
              f"matrices, difference median {100*np.median(d):.2f} % mean {100*d.mean():.2f} % "
              f"p90 {100*np.percentile(d, 90):.2f} % max {100*d.max():.1f} %, "
              f"within 10 % {100*(d <= 0.1).mean():.1f} %")

args = sys.argv[1:]
if args[:1] == ["--tables"]:
    report("tables", times(args[1], False), times(args[2], False))
else:
    for g in args or ["h200", "h100"]:
        report(g, times(f"data/corpus/{g}.jsonl.gz", True),
               times(f"data/corpus/{g}-repeat.jsonl.gz", True))
