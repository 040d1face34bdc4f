#!/usr/bin/env python3
"""What the row-per-thread kernel's misses on chain-bound stacks follow (docs/ACCURACY.md, session 70).

    sparsecast train --score --data data/corpus/h200-s14.jsonl.gz data/corpus/h200-seg-s14.jsonl.gz \\
        --base profiles/h200.json.gz --models sparsecast --records /tmp/s14.jsonl.gz
    python3 scripts/heavy_rows_probe.py /tmp/s14.jsonl.gz [target/release/sparsecast]

Takes seed 14's matrices of at most 600,000 non-zeros whose `csr-scalar` f64 time the longest
row rules (0.16 µs a step × the longest row ≥ 10× the footprint at 4.0 TB/s), regenerates each
(`sparsecast generate spec`, a temporary file) and measures its heavy rows — the rows of at least
half the longest: how many, how packed (their warps of 32 rows per block of 256 rows holding
one), the distinct 32-byte sectors of an 8-byte `x` per entry along them, and the median span of
their columns in bytes; then prints, for the stacks, the correlation of each with the
prediction's signed and absolute ln error, and for stacks and single-family matrices the share
within 10 % by class. Pure Python (no numpy on the build machine), ≈ 1 min.
"""
import collections
import gzip
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile


SMALL_NNZ = 600_000  # the matrices regenerated and read in Python here and in stack_parts_probe.py


def load_records(path):
    """Every record of a `--records` file, and each matrix's features (a record carries them
    once per matrix, on its first configuration only)."""
    recs = [json.loads(line) for line in gzip.open(path, "rt")]
    return recs, {r["matrix"]: r["features"] for r in recs if r.get("features")}


def is_chain_bound(f, footprint_bytes):
    """Whether `csr-scalar`'s longest row rules its time: 0.16 µs a step × the longest row at
    least 10× the footprint streamed at 4.0 TB/s."""
    return 0.16e-6 * f["max_nnz"] >= 10 * footprint_bytes / 4.0e12


def chain_bound(path):
    recs, features = load_records(path)
    for r in recs:
        if r.get("status") != "ok" or not r.get("median_s") or r["config"] != "csr-scalar":
            continue
        f, p = features.get(r["matrix"]), (r.get("predictions") or {}).get("sparsecast")
        if r["precision"] != "f64" or not f or not p:
            continue
        if f["nnz"] > SMALL_NNZ or not is_chain_bound(f, r["footprint_bytes"]):
            continue
        a = f["access"]
        yield dict(m=r["matrix"], stack="-stack-" in r["matrix"],
                   e=math.log(p["seconds"] / r["median_s"]),
                   spec=r["source"]["generated"], rs=a["row_sectors_f64"] / f["nnz"])


def read_rows(path):
    """A Matrix Market file's header line, rows, columns and each row's entries as the rest of
    their lines after the row index (`"col value\n"`)."""
    rows = collections.defaultdict(list)
    with open(path) as fh:
        header = fh.readline()
        line = fh.readline()
        while line.startswith("%"):
            line = fh.readline()
        nrows, ncols, _ = map(int, line.split())
        for line in fh:
            r, rest = line.split(None, 1)
            rows[int(r) - 1].append(rest)
    return header, nrows, ncols, rows


def heavy_rows(sc, spec, tmp):
    subprocess.run([sc, "generate", "spec", json.dumps(spec), "--out", tmp], check=True,
                   capture_output=True)
    cols = {r: [int(rest.split(None, 1)[0]) - 1 for rest in entries]
            for r, entries in read_rows(tmp)[3].items()}
    top = max(len(c) for c in cols.values())
    heavy = {r: c for r, c in cols.items() if len(c) >= top / 2}
    entries = sum(len(c) for c in heavy.values())
    sectors = sum(len({x // 4 for x in c}) for c in heavy.values())
    spans = sorted((max(c) - min(c) + 1) * 8 for c in heavy.values())
    pack = len({r // 32 for r in heavy}) / len({r // 256 for r in heavy})
    return len(heavy), pack, sectors / entries, spans[len(spans) // 2]


def corr(x, y):
    mx, my = statistics.mean(x), statistics.mean(y)
    sx = math.sqrt(sum((a - mx) ** 2 for a in x))
    sy = math.sqrt(sum((b - my) ** 2 for b in y))
    return sum((a - mx) * (b - my) for a, b in zip(x, y)) / (sx * sy)


def within10(v):
    return 100.0 * sum(abs(x) <= math.log(1.1) for x in v) / len(v)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sc = sys.argv[2] if len(sys.argv) > 2 else "target/release/sparsecast"
    rows = list(chain_bound(sys.argv[1]))
    with tempfile.TemporaryDirectory() as d:
        for r in rows:
            r["n"], r["pack"], r["sec"], r["span"] = heavy_rows(sc, r["spec"], os.path.join(d, "m.mtx"))
    for cls, stack in [("stacks", True), ("single-family", False)]:
        sub = [r for r in rows if r["stack"] == stack]
        e = [r["e"] for r in sub]
        print(f"{len(sub)} chain-bound {cls}, csr-scalar f64: {within10(e):.1f} % within 10 %")
        if stack:
            for name, v in [("ln heavy rows", [math.log(r["n"]) for r in sub]),
                            ("ln heavy sectors / entry", [math.log(r["sec"]) for r in sub]),
                            ("ln (that / the matrix's)", [math.log(r["sec"] / r["rs"]) for r in sub]),
                            ("ln span of a heavy row", [math.log(r["span"]) for r in sub])]:
                print(f"  {name:26s} corr with ln error {corr(v, e):+.3f}, with |ln error| "
                      f"{corr(v, [abs(x) for x in e]):+.3f}")
        for key, edges in [("n", [1, 8, 64, 1024, math.inf]), ("span", [0, 32e3, 256e3, math.inf])]:
            for lo, hi in zip(edges, edges[1:]):
                v = [r for r in sub if lo <= r[key] < hi]
                if v:
                    pack = statistics.median(r["pack"] for r in v)
                    print(f"  heavy rows' {key} in [{lo:g}, {hi:g}): {len(v)}, "
                          f"{within10([r['e'] for r in v]):.0f} % within 10 %, "
                          f"median {pack:.1f} heavy warps a block holding one")

if __name__ == "__main__":
    main()
