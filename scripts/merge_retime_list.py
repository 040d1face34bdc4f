#!/usr/bin/env python3
"""The matrices of a training table whose HYB time must be measured again under the block-merged
COO walk (session 92, `HybLaunch::ProgrammaticMerged`) before a profile can model it: those where
HYB's COO part *may* send >= MERGE_FROM (1,200) carries onto one 128-byte line of y
(`formats::hyb::line_carries`), by a bound the table's features give without the matrix. A row r
of the COO part spans at most l_r / W + 2 of COO's warps (W = 32 x chunks entries, chunks as
`launch::coo_chunks` sets them for the COO part's entries on 132 x 64 resident warps), and a line
holds R = 128 / value bytes rows, so a line reaches MERGE_FROM carries only where its rows hold
>= (MERGE_FROM - 2R) W entries beyond the width: the COO part at least that, its longest row at
least a 1/R of it, and the R longest rows (each at the top of its log2 length bucket, at most the
longest row) at least that too. Every matrix-precision the launcher merges passes the bound; those that pass it
without being merged run the same kernel as before (a new timing of it). Prints the ids, one a
line, for `collect --only`; the counts go to stderr.

    python3 scripts/merge_retime_list.py data/corpus/h200-s10.jsonl.gz > .dev/j92/s10.txt
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jsonio import table_rows  # noqa: E402

MERGE_FROM = 1200
RESIDENT_WARPS = 132 * 64


def may_merge(f, value_bytes):
    ex = f.get("hyb_coo_nnz", 0)
    if ex <= 0:
        return False
    chunks = min(8, max(1, math.ceil(ex / (32 * RESIDENT_WARPS))))
    w, r = 32 * chunks, 128 // value_bytes
    need = (MERGE_FROM - 2 * r) * w
    if ex < need:
        return False
    # The R longest rows' excess, each at its log2 bucket's top (at most the longest row).
    top, left = 0, r
    hist = f.get("row_len_log2_hist") or []
    for k in range(len(hist) - 1, 0, -1):
        n = min(hist[k], left)
        if n <= 0:
            continue
        length = min((1 << k) - 1, f["max_nnz"])
        top += n * max(0, length - f["hyb_width"])
        left -= n
        if left == 0:
            break
    return top >= need


def main():
    ids, seen, mp, rows = [], set(), 0, 0
    for r in table_rows(sys.argv[1]):
        rows += 1
        vb = 8 if r["precision"] == "f64" else 4
        if may_merge(r["features"], vb):
            mp += 1
            if r["matrix"] not in seen:
                seen.add(r["matrix"])
                ids.append(r["matrix"])
    print("\n".join(ids))
    print(f"{sys.argv[1]}: {len(ids)} matrices, {mp} of {rows} matrix-precisions may merge",
          file=sys.stderr)


if __name__ == "__main__":
    main()
