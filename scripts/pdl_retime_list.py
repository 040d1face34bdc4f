#!/usr/bin/env python3
"""The matrices of a training table whose HYB time must be measured again under programmatic
dependent launch before a profile can model it (session 83): HYB has a COO part
(`hyb_coo_nnz > 0`) and its plain time is below CUT_US (20 µs) in either precision. Above it the
two sequences differ by less than the noise (docs/PERFORMANCE.md, session 82: new / old
0.995–1.007 at ≥ 20 µs on seeds 11–14), so those rows keep their plain time. Matrices already in
a --done table (an earlier re-timing) are left out. Prints the ids, one a line, for
`collect --only`; the counts go to stderr.

    python3 scripts/pdl_retime_list.py data/corpus/h200-s10.jsonl.gz [--done F ...] > .dev/s83/s10.txt
"""
import argparse
import sys

from jsonio import table_rows

CUT_US = 20.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("table")
    ap.add_argument("--done", nargs="*", default=[])
    ap.add_argument("--cut-us", type=float, default=CUT_US)
    a = ap.parse_args()
    done = {r["matrix"] for p in a.done for r in table_rows(p)}
    ids, seen, mp = [], set(), 0
    for r in table_rows(a.table):
        if r["features"].get("hyb_coo_nnz", 0) <= 0 or r["matrix"] in done:
            continue
        for t in r.get("times") or []:
            if (t["config"] == "hyb" and t.get("status") == "ok"
                    and t["median_s"] * 1e6 < a.cut_us and not t.get("kernel")):
                mp += 1
                if r["matrix"] not in seen:
                    seen.add(r["matrix"])
                    ids.append(r["matrix"])
    print("\n".join(ids))
    print(f"{a.table}: {len(ids)} matrices, {mp} matrix-precisions below {a.cut_us} µs "
          f"({len(done)} done)", file=sys.stderr)


if __name__ == "__main__":
    main()
