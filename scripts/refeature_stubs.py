#!/usr/bin/env python3
"""Refeature the training tables on another machine's cores (session 71).

`sparsecast refeature` rebuilds every distinct matrix of the tables it reads; the H200's tables
hold ≈ 20,000 of them (≈ 2 × 10^11 non-zeros, hours on the 2-core build machine) in ≈ 75 MB that
a device call cannot carry beside the binary and the shared matrices. So:

    python3 scripts/refeature_stubs.py stubs .dev/rf/stubs 8 TABLE...   # one row per matrix, 8 shards
    … on the device: sparsecast refeature .dev/rf/stubs/stub-K.jsonl.gz --out-dir OUT (scripts/device_refeature.sh)
    python3 scripts/refeature_stubs.py merge DONE_DIR OUT_DIR TABLE...  # the new counts into every row

`stubs` keeps the first row of each distinct source (key: its JSON) and deals the matrices over
the shards, largest first, each to the shard of the fewest non-zeros so far. `merge` reads every
`*.jsonl.gz` of DONE_DIR (refeatured stubs) and writes each TABLE to OUT_DIR with the refeatured
`features.access` fields FIELDS (default `row_len_sectors`) of its source copied into every row;
a row whose source no stub carries, or whose non-zeros, rows or warp steps differ from the
stub's (a table of another GPU whose matrix of that source is not the one rebuilt), is written
unchanged and counted.
"""
import gzip
import json
import os
import sys


def key(row):
    return json.dumps(row["source"], sort_keys=True)


def rows(path):
    with gzip.open(path, "rt") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def same(row):
    """What a table's row and the refeatured stub of its source must share (the rebuilt matrix
    was checked against the stub's row; a row of another table, another GPU's, is checked here)."""
    f = row["features"]
    return f["nnz"], f["nrows"], (f.get("access") or {}).get("warp_steps")


def stubs(out_dir, shards, tables):
    first = {}
    for t in tables:
        for r in rows(t):
            first.setdefault(key(r), r)
    os.makedirs(out_dir, exist_ok=True)
    load = [0] * shards
    parts = [[] for _ in range(shards)]
    for r in sorted(first.values(), key=lambda r: -r["features"]["nnz"]):
        k = load.index(min(load))
        load[k] += r["features"]["nnz"]
        parts[k].append(r)
    for k, part in enumerate(parts):
        with gzip.open(os.path.join(out_dir, f"stub-{k}.jsonl.gz"), "wt") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in part)
    print(f"{len(first)} matrices of {len(tables)} tables in {shards} shards of "
          f"{min(load) / 1e9:.1f}-{max(load) / 1e9:.1f} x 10^9 non-zeros")


def merge(done_dir, out_dir, tables, fields):
    new = {}
    for name in sorted(os.listdir(done_dir)):
        if name.endswith(".jsonl.gz"):
            for r in rows(os.path.join(done_dir, name)):
                a = r["features"].get("access") or {}
                if all(f in a for f in fields):
                    new[key(r)] = ({f: a[f] for f in fields}, same(r))
    os.makedirs(out_dir, exist_ok=True)
    missing = differ = total = 0
    for t in tables:
        out = os.path.join(out_dir, os.path.basename(t))
        tmp = out + ".tmp"
        with gzip.open(tmp, "wt") as fh:
            for r in rows(t):
                total += 1
                got = new.get(key(r))
                if got is None or r["features"].get("access") is None:
                    missing += 1
                elif got[1] != same(r):
                    differ += 1
                else:
                    r["features"]["access"].update(got[0])
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
        os.replace(tmp, out)
    print(f"{len(new)} refeatured matrices; {total} rows of {len(tables)} tables written to "
          f"{out_dir}, {missing} without the new counts, {differ} left without them because "
          f"their matrix differs from the stub's (non-zeros, rows, warp steps)")


def main():
    if len(sys.argv) < 5 or sys.argv[1] not in ("stubs", "merge"):
        sys.exit(__doc__)
    if sys.argv[1] == "stubs":
        stubs(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
    else:
        fields = os.environ.get("FIELDS", "row_len_sectors").split()
        merge(sys.argv[2], sys.argv[3], sys.argv[4:], fields)


if __name__ == "__main__":
    main()
