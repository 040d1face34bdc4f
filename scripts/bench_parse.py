#!/usr/bin/env python3
"""Helpers for scripts/bench_parse.sh.

  bench_parse.py gen FILE            write the benchmark matrix (coordinate real general)
  bench_parse.py scipy FILE [--tocsr]  time scipy.io.mmread (and .tocsr()) in-process; JSON line
  bench_parse.py summary RESULTS     median of each tool's runs, as a Markdown table
"""
import json
import statistics
import sys
import time

# 1M x 1M, 10 entries per column on average, sorted by column then row (the order of the
# SuiteSparse files); values are standard normal doubles, written in shortest round-trip form.
N = 1_000_000
NNZ = 10_000_000


def gen(path):
    import numpy as np
    import scipy.io
    import scipy.sparse

    rng = np.random.default_rng(20240611)
    cols = rng.integers(0, N, NNZ, dtype=np.int64)
    rows = rng.integers(0, N, NNZ, dtype=np.int64)
    key = np.unique(cols * N + rows)  # sorted by (col, row), duplicates dropped
    cols, rows = key // N, key % N
    vals = rng.standard_normal(len(key))
    a = scipy.sparse.coo_matrix((vals, (rows, cols)), shape=(N, N))
    scipy.io.mmwrite(path, a, comment="sparsecast parser benchmark")


def scipy_read(path, tocsr):
    import scipy.io
    import scipy.io._fast_matrix_market as fmm

    fmm.PARALLELISM = 2  # the same two cores as sparsecast (the script also pins with taskset)
    t = time.perf_counter()
    a = scipy.io.mmread(path)
    read_s = time.perf_counter() - t
    out = {"tool": "scipy.mmread", "read_s": read_s, "nnz": int(a.nnz)}
    if tocsr:
        t = time.perf_counter()
        c = a.tocsr()
        out["tool"] = "scipy.mmread+tocsr"
        out["tocsr_s"] = time.perf_counter() - t
        out["read_s"] = read_s + out["tocsr_s"]
        out["nnz"] = int(c.nnz)
    print(json.dumps(out))


def summary(path):
    runs = {}
    for line in open(path):
        r = json.loads(line)
        runs.setdefault(r["tool"], []).append(r)
    print("| reader | runs | median s | median MB/s | median max RSS MiB | median process CPU s |")
    print("|---|---|---|---|---|---|")
    for tool, rs in runs.items():
        s = statistics.median(r["read_s"] for r in rs)
        mb = rs[0]["bytes"] / 1e6
        rss = statistics.median(r["max_rss_kb"] for r in rs) / 1024
        cpu = statistics.median(r["process_cpu_s"] for r in rs)
        print(f"| {tool} | {len(rs)} | {s:.3f} | {mb / s:.0f} | {rss:.0f} | {cpu:.2f} |")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "gen":
        gen(sys.argv[2])
    elif cmd == "scipy":
        scipy_read(sys.argv[2], "--tocsr" in sys.argv)
    elif cmd == "summary":
        summary(sys.argv[2])
    else:
        sys.exit(__doc__)
