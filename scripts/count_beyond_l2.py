#!/usr/bin/env python3
"""How many f64 rows of the given tables have a working set of at least k times an L2 (f64 CSR
bytes: 12 per entry + 4 per row) — the rows whose kernel times a change that acts only on large
matrices (docs/PERFORMANCE.md, the evict-first load) would make stale.

    source scripts/training_tables.sh && python3 scripts/count_beyond_l2.py 60e6 $(training_tables h200)

The first argument is the L2's bytes (H200 60e6, H100 50e6), the rest the tables."""
import gzip
import json
import sys

l2 = float(sys.argv[1])
factors = (1, 2, 4, 8, 16)
count = dict.fromkeys(factors, 0)
total = 0
for path in sys.argv[2:]:
    for line in gzip.open(path, "rt"):
        rec = json.loads(line)
        if rec["precision"] != "f64":
            continue
        f = rec["features"]
        total += 1
        size = 12 * f["nnz"] + 4 * f["nrows"]
        for k in factors:
            count[k] += size >= k * l2
print(f"{total} f64 rows in {len(sys.argv) - 2} tables; L2 {l2:.0e} bytes")
for k in factors:
    print(f"  working set >= {k:>2}x the L2: {count[k]}")
