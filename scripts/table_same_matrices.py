#!/usr/bin/env python3
"""Drop the rows of a fill-in table (`collect --configs …`) whose matrix is not the base tables'
matrix of the same id (rows, columns or non-zeros differ: a draw whose generator or file sizes
changed since), which `train` refuses to merge (src/corpus/table.rs `read_all`). Rows of ids the
base tables lack are kept. Session 38.

    python3 scripts/table_same_matrices.py EXTRA.jsonl.gz OUT.jsonl.gz BASE.jsonl.gz [BASE …]
"""
import gzip
import json
import sys


def shape(d):
    f = d["features"]
    return (f["nrows"], f["ncols"], f["nnz"])


def main():
    extra, out, bases = sys.argv[1], sys.argv[2], sys.argv[3:]
    known = {}
    for b in bases:
        for line in gzip.open(b, "rt"):
            d = json.loads(line)
            known.setdefault((d["matrix"], d["precision"]), shape(d))
    kept, dropped = [], []
    for line in gzip.open(extra, "rt"):
        d = json.loads(line)
        k = (d["matrix"], d["precision"])
        if k in known and known[k] != shape(d):
            dropped.append(f"{k[0]} {k[1]}: {shape(d)} here, {known[k]} in the base")
        else:
            kept.append(line if line.endswith("\n") else line + "\n")
    with gzip.open(out, "wt", compresslevel=9) as w:
        w.writelines(kept)
    print(f"{extra}: kept {len(kept)} rows, dropped {len(dropped)}")
    for d in dropped:
        print("  dropped", d)


if __name__ == "__main__":
    main()
