#!/usr/bin/env python3
"""Replace some configurations' times in a training table with those of a table that measured
them again (session 41: the SELL kernel that splits wide slices, scripts/device_s41.sh).

usage: python3 scripts/replace_times.py TABLE NEW [NEW ...] --configs sell,sell@128 [--out OUT]
       [--copy-access hyb_line_carries]

Every row of TABLE (matrix, precision) that a NEW table also holds gets NEW's times of the named
configurations in place of its own (a configuration NEW lacks for that row is dropped from the
row, so no time of the old kernel survives beside the new ones); rows NEW lacks keep theirs and
are counted. The two rows must describe the same matrix (rows, columns, non-zeros) on the same
device, else the command stops — unless --skip-different, which keeps such a row as it was and
counts it (session 44: the draws of seeds 1-3 name 6-10 Kronecker expansions by ids whose
expansion factor has changed since those tables were measured, so the same id is another matrix).
Writes OUT (default: TABLE itself, atomically) and prints what changed.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jsonio import table_rows as rows, write_table  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("table")
    ap.add_argument("new", nargs="+")
    ap.add_argument("--configs", required=True)
    ap.add_argument("--out")
    ap.add_argument("--copy-access", default="",
                    help="access features to copy from the new row too (session 92: hyb_line_carries)")
    ap.add_argument("--skip-different", action="store_true",
                    help="keep rows whose new row is another matrix (count them) instead of stopping")
    a = ap.parse_args()
    configs = set(a.configs.split(","))
    new = {}
    for p in a.new:
        for r in rows(p):
            new.setdefault((r["matrix"], r["precision"]), r)
    out, replaced, added, kept, dropped, different = [], 0, 0, 0, 0, 0
    for r in rows(a.table):
        n = new.get((r["matrix"], r["precision"]))
        if n is None:
            kept += sum(t["config"] in configs for t in r["times"])
            out.append(r)
            continue
        shape = lambda x: (x["features"]["nrows"], x["features"]["ncols"], x["features"]["nnz"])
        same = shape(r) == shape(n) and r["device"] == n["device"]
        if not same and a.skip_different:
            different += 1
            kept += sum(t["config"] in configs for t in r["times"])
            out.append(r)
            continue
        if not same:
            sys.exit(f"{r['matrix']} {r['precision']}: not the same matrix or device in the new table")
        fresh = {t["config"]: t for t in n["times"] if t["config"] in configs}
        times = []
        for t in r["times"]:
            if t["config"] not in configs:
                times.append(t)
            elif t["config"] in fresh:
                times.append(fresh.pop(t["config"]))
                replaced += 1
            else:
                dropped += 1
        added += len(fresh)
        times.extend(fresh.values())
        for key in filter(None, a.copy_access.split(",")):
            src = (n["features"].get("access") or {}).get(key)
            if src is not None and r["features"].get("access") is not None:
                r["features"]["access"][key] = src
        r["times"] = times
        out.append(r)
    dest = a.out or a.table
    write_table(dest, out)
    print(f"{dest}: {replaced} times replaced, {added} added (the row lacked them), "
          f"{dropped} dropped (not measured again), "
          f"{kept} kept (rows the new tables lack"
          + (f"; {different} rows skipped: another matrix under the same id)" if different else ")"))


if __name__ == "__main__":
    main()
