#!/usr/bin/env python3
"""Session 40: SEG-TILE's shipped kernel against flat chunks (docs/OPTIMIZER.md, session 40).

    python3 segtile_flat_compare.py csv docs/GPU/optimizer/session40/segtile-flat-v1-vs-shipped.csv.gz
    python3 segtile_flat_compare.py trial DIR GPU SUFFIX...   # DIR: the trial tarballs unpacked

`csv`: version 1 against the tables' own times, per configuration (geomean and percentiles of
shipped / flat time, above 1 where flat chunks are faster). `trial`: the tables of one call
(`corpus-GPU-seg-SEED-old.jsonl.gz` for the shipped kernel, `…SUFFIX.jsonl.gz` for a variant; the
suffix "" is version 2) on seeds 14, 12 and 21, by the kernel's path (shared memory when
max_row_len · tile / ncols ≥ 64, else the L1) and by the shipped kernel's time.
"""
import collections
import csv
import gzip
import json
import math
import sys


def summary(v):
    v = sorted(v)
    gm = math.exp(sum(map(math.log, v)) / len(v))
    q = lambda p: v[int(p * (len(v) - 1))]
    return f"{len(v)}: geomean {gm:.3f}, 10/50/90th pct {q(.1):.2f} / {q(.5):.2f} / {q(.9):.2f}"


def load(path):
    out = {}
    for line in gzip.open(path):
        r = json.loads(line)
        for x in r["times"]:
            if x["config"].startswith("segtile") and x["status"] == "ok":
                out[(r["matrix"], r["precision"], x["config"])] = (x["median_s"], r["features"])
    return out


def main():
    if sys.argv[1] == "csv":
        by = collections.defaultdict(list)
        with gzip.open(sys.argv[2], "rt") as f:
            rows = csv.DictReader(line for line in f if not line.startswith("#"))
            for r in rows:
                by[r["config"]].append(float(r["shipped_s"]) / float(r["flat_v1_s"]))
        for c, v in sorted(by.items()):
            print(f"{c}: {summary(v)}")
        return
    d, gpu = sys.argv[2], sys.argv[3]
    for var in sys.argv[4:]:
        by = collections.defaultdict(list)
        for seed in ["s14", "s12", "s21"]:
            a = load(f"{d}/corpus-{gpu}-seg-{seed}-old.jsonl.gz")
            b = load(f"{d}/corpus-{gpu}-seg-{seed}{var}.jsonl.gz")
            for k, (t, f) in a.items():
                if k not in b:
                    continue
                shared = 8192 if k[1] == "f32" else 4096
                path = "smem" if f["max_nnz"] * shared / max(1, f["ncols"]) >= 64 else "l1"
                size = "<5us" if t < 5e-6 else "<20us" if t < 2e-5 else ">=20us"
                r = t / b[k][0]
                by[(path,)].append(r)
                by[(path, size)].append(r)
        print(f"variant {var or '(version 2)'}: shipped / variant time")
        for key, v in sorted(by.items()):
            print(f"  {' '.join(key)}: {summary(v)}")


if __name__ == "__main__":
    main()
