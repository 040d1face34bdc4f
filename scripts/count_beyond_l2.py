#!/usr/bin/env python3
"""How many training matrices of a GPU have a working set of at least k times its L2 (f64 CSR
bytes: 12 per entry + 4 per row) — the matrices whose kernel times a change that acts only on
large matrices (docs/PERFORMANCE.md, the evict-first load) would make stale.

    python3 scripts/count_beyond_l2.py h200      # L2 60 MB; h100: 50 MB

Counts the f64 rows of data/corpus/GPU*.jsonl.gz but seed 14's and the repeats (the training
tables of scripts/training_tables.sh)."""
import glob
import gzip
import json
import sys

gpu = sys.argv[1] if len(sys.argv) > 1 else "h200"
l2 = {"h200": 60e6, "h100": 50e6}[gpu]
factors = (1, 2, 4, 8, 16)
count = dict.fromkeys(factors, 0)
total = 0
for path in sorted(glob.glob(f"data/corpus/{gpu}*.jsonl.gz")):
    if "repeat" in path or "s14" in path:
        continue
    for line in gzip.open(path, "rt"):
        rec = json.loads(line)
        if rec["precision"] != "f64":
            continue
        f = rec["features"]
        total += 1
        size = 12 * f["nnz"] + 4 * f["nrows"]
        for k in factors:
            count[k] += size >= k * l2
print(f"{gpu}: {total} training matrices (f64 rows)")
for k in factors:
    print(f"  working set >= {k:>2}x the L2: {count[k]}")
