#!/usr/bin/env python3
"""The matrices of a training table whose SELL slices the session-41 kernel splits over warps
(src/backend/cuda/sell_split.rs, the shipped rule), from the table alone: the widest slice is the
longest row (`max_nnz`), the work is the stored slots over 32 (from `sell`'s and
`sell-c512-s2048`'s footprints), 132 SMs × 64 warps on both GPUs. A matrix within 10 % of the
threshold counts as split (the C = 512 slices' last lane groups are approximated).

    python3 scripts/sell_split_set.py --list TABLE > only-sell-GPU-sN.txt   # what to measure again
    python3 scripts/sell_split_set.py --drop TABLE [TABLE ...]              # see below
    python3 scripts/sell_split_set.py --missing OLD TABLE > only.txt         # what is left to time

--missing: the split matrices of OLD (a table from before --drop, e.g. `git show
af4abdb:data/corpus/GPU-sN.jsonl.gz`, whose SELL footprints tell the slots) whose rows in TABLE
hold no `sell` time yet, i.e. those a budget-limited collect did not reach (session 42).

--drop removes the four SELL configurations' times from the rows the kernel splits (rewriting
each table atomically): those times are the old kernel's, 1.3-400x slower than the shipped one
(docs/PERFORMANCE.md, session 41), and a model must not learn them. Rows whose slices are not
split keep theirs: the row path is unchanged (H200, seed 14: 114 such rows, geomean 1.001x).
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jsonio import table_rows as rows, write_table as write  # noqa: E402

RESIDENT_WARPS = 132 * 64
MIN_CHUNK, FILL, SKEW = 16, 0.25, 4.0
SELL = {"sell", "sell@128", "sell@512", "sell-c512-s2048"}


def threshold(work, groups):
    chunk = max(MIN_CHUNK, math.ceil(work / RESIDENT_WARPS))
    t = 2 * chunk
    if groups >= FILL * RESIDENT_WARPS:
        t = max(t, int(SKEW * work / groups))
    return t


def splits(row):
    f = row["features"]
    nrows, vb = f["nrows"], 4 if row["precision"] == "f32" else 8
    fb = {t["config"]: t.get("footprint_bytes") for t in row["times"]}
    for cfg, c in (("sell", 32), ("sell-c512-s2048", 512)):
        b = fb.get(cfg)
        if not b or nrows == 0:
            continue
        ns = -(-nrows // c)
        slots = (b - (ns + 1) * 4 - ns * 4 - nrows * 4) / (4 + vb)
        groups = (ns - 1) * (c // 32) + -(-(nrows - (ns - 1) * c) // 32)
        if f["max_nnz"] > 0.9 * threshold(slots / 32, max(groups, 1)):
            return True
    return False


def skew_fill(row):
    """The two quantities of the rule for `sell` (C = 32) from a row's stored footprint: the
    longest row over the mean slice width (`skew`) and the slices over the resident warps
    (`fill`); None without a `sell` footprint."""
    f = row["features"]
    nrows, vb = f["nrows"], 4 if row["precision"] == "f32" else 8
    b = {t["config"]: t.get("footprint_bytes") for t in row["times"]}.get("sell")
    if not b:
        return None
    ns = -(-nrows // 32)
    work = (b - (ns + 1) * 4 - ns * 4 - nrows * 4) / (4 + vb) / 32
    return f["max_nnz"] * ns / work, ns / RESIDENT_WARPS


def main():
    if len(sys.argv) < 3 or sys.argv[1] not in ("--list", "--drop", "--missing"):
        sys.exit(__doc__)
    if sys.argv[1] in ("--list", "--missing"):
        if sys.argv[1] == "--missing" and len(sys.argv) != 4:
            sys.exit(__doc__)
        timed = set()
        if sys.argv[1] == "--missing":
            timed = {r["matrix"] for r in rows(sys.argv[3]) if any(t["config"] == "sell" for t in r["times"])}
        seen = []
        for r in rows(sys.argv[2]):
            m = r["matrix"]
            if any(t["config"] == "sell" for t in r["times"]) and splits(r) and m not in timed and m not in seen:
                seen.append(m)
        print("\n".join(seen))
        return
    for path in sys.argv[2:]:
        out, dropped, hit = rows(path), 0, 0
        for r in out:
            if splits(r):
                n = len(r["times"])
                r["times"] = [t for t in r["times"] if t["config"] not in SELL]
                dropped += n - len(r["times"])
                hit += n > len(r["times"])
        write(path, out)
        print(f"{path}: {dropped} SELL times dropped from {hit} of {len(out)} rows")


if __name__ == "__main__":
    main()
