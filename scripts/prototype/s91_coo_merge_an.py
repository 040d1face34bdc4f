#!/usr/bin/env python3
"""Score scripts/prototype/s91_coo_merge.sh's runs (session 91, docs/PERFORMANCE.md).

    python3 scripts/prototype/s91_coo_merge_an.py DIR

DIR holds the unpacked r/ of mb2.tar.gz: NAME-PREC-V-*.json, `sparsecast bench --json` of the
shipped kernels (V = A) and of the block-merged COO (V = B); NAME-f32-V-1024.json (COO at
1,024 threads a block, the first run only) are left out. Per matrix and precision, the
fastest run of each (min over the alternating runs) for coo, hyb and cusparse-coo-alg1, the
ratio merged / shipped, and the geomean ratio over the b (COO slow against cuSPARSE) and c
(control) matrices. A kernel whose result failed the bench's check shows its status.
"""
import collections
import glob
import json
import math
import os
import sys

KERNELS = ["coo", "hyb", "cusparse-coo-alg1"]


def main():
    d = collections.defaultdict(list)
    for f in glob.glob(os.path.join(sys.argv[1], "*.json")):
        parts = os.path.basename(f)[:-5].split("-")
        if parts[3:] == ["1024"]:
            continue  # the v1 run's COO at 1,024 threads a block (not in this table)
        name, prec, variant = parts[:3]
        for r in json.load(open(f))["results"]:
            if r["status"] != "ok":
                print(name, prec, variant, r["kernel"], r["status"])
                continue
            d[(name, prec, r["kernel"], variant)].append(r["median_s"] * 1e6)
    names = sorted({k[0] for k in d})
    for prec in ["f32", "f64"]:
        print(f"== {prec}: shipped -> merged µs (ratio) for " + ", ".join(KERNELS))
        g = collections.defaultdict(list)
        for n in names:
            cells = []
            for k in KERNELS:
                a, b = d.get((n, prec, k, "A")), d.get((n, prec, k, "B"))
                if not a or not b:
                    cells.append("-")
                    continue
                cells.append(f"{min(a):7.2f} -> {min(b):7.2f} ({min(b) / min(a):.3f})")
                g[(n[0], k)].append(math.log(min(b) / min(a)))
            print(n, " | ".join(cells))
        for key in sorted(g):
            v = g[key]
            print(f"  geomean merged / shipped, set {key[0]}, {key[1]}: {math.exp(sum(v) / len(v)):.3f} ({len(v)})")


if __name__ == "__main__":
    main()
