#!/usr/bin/env python3
"""The matrices of a training table that admit SEG-TILE with the default parameters
(src/formats/segtile.rs `admit`): the mean segment reaches 32 entries in f32 or in f64, within
32-bit offsets. The lists scripts/segtile-only/only-seg-GPU-SEED.txt (session 38).

    python3 scripts/segtile_only.py data/corpus/h200-s4.jsonl.gz > only-seg-h200-s4.txt
    python3 scripts/segtile_only.py TABLE LIST     # compare a list with the table's admissions
"""
import gzip
import json
import sys

SHARED_BYTES, LONG_SEGMENT, MAX_WIDTH, MIN_SEGMENT = 32 * 1024, 64, 1 << 16, 32


def admits(f, value_bytes):
    nrows, ncols, nnz, longest = f["nrows"], f["ncols"], f["nnz"], f["max_nnz"]
    shared = SHARED_BYTES // value_bytes
    width = shared if longest * shared // max(ncols, 1) >= LONG_SEGMENT else MAX_WIDTH
    segments = nrows * -(-ncols // width)
    if segments >= 2**32 or nnz >= 2**32:
        return False
    return not (segments > 0 and nnz < MIN_SEGMENT * segments)


def main():
    admitted = {}
    for line in gzip.open(sys.argv[1], "rt"):
        d = json.loads(line)
        ok = admits(d["features"], 4 if d["precision"] == "f32" else 8)
        admitted[d["matrix"]] = admitted.get(d["matrix"], False) or ok
    chosen = [m for m, ok in admitted.items() if ok]
    if len(sys.argv) > 2:
        listed = {l.strip() for l in open(sys.argv[2]) if l.strip() and not l.startswith("#")}
        print(f"table {len(admitted)} matrices, {len(chosen)} admit SEG-TILE; the list "
              f"{len(listed)}; in one but not the other: {len(listed ^ set(chosen))}")
    else:
        print("\n".join(chosen))


if __name__ == "__main__":
    main()
