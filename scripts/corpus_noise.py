#!/usr/bin/env python3
"""The corpus protocol's noise floor: the same configurations of the SuiteSparse files measured
by two `collect` runs on two machines of the same GPU kind (data/corpus/GPU.jsonl.gz and
data/corpus/GPU-repeat.jsonl.gz).  python3 scripts/corpus_noise.py h200 h100"""
import gzip, json, sys
import numpy as np

def times(path):
    out = {}
    for line in gzip.open(path):
        r = json.loads(line)
        if r["matrix"].startswith("mats/"):
            for t in r["times"]:
                if t["status"] == "ok":
                    out[(r["matrix"], r["precision"], t["config"])] = t["median_s"]
    return out

for g in sys.argv[1:] or ["h200", "h100"]:
    a, b = times(f"data/corpus/{g}.jsonl.gz"), times(f"data/corpus/{g}-repeat.jsonl.gz")
    d = np.array([abs(b[k] / a[k] - 1) for k in a if k in b])
    print(f"{g}: {len(d)} configurations, difference median {100*np.median(d):.2f} % mean "
          f"{100*d.mean():.2f} % p90 {100*np.percentile(d, 90):.2f} % max {100*d.max():.1f} %")
