#!/usr/bin/env python3
"""Replay the concurrent plan-time rule on measured plans (offline, no GPU).

Reads the conc-*.json(.gz) of `scripts/device_concurrent.sh` (one folder per GPU) and compares, on
every plan timed concurrently, the measured time with
  * the rule as recorded (`predicted_concurrent_seconds`), and
  * the work chain `floor + Σ w_b + (blocks − 1)·c` (w_b = T_b − floor, the block's predicted
    work alone), never below the recorded largest-block bound, for c in floors,
and fits c by least squares on the DP's plans (with and without csr-merge) and on the splits.
Σ w_b is recovered from the serial prediction (`predicted_serial_seconds` = floor + Σ w_b +
(blocks − 1)·5 floors, the serial default of the runs), or read from `work_seconds` where the
records have it.

  python3 scripts/concurrent_refit.py docs/h200/optimizer/concurrent docs/h100/optimizer/concurrent
"""
import statistics as st
import sys

SERIAL_FLOORS = 5.0

from jsonio import jglob, jload

def load(folder):
    rows = []
    for f in jglob(folder + "/conc-*.json"):
        tag = f.split("conc-")[1].removesuffix(".gz")[:-5]
        for r in jload(f)["results"]:
            fl = r["rule"]["floor_s"]
            for o in (r.get("measured") or {}).get("overlap", []):
                if o.get("concurrent_seconds") is None or not o.get("overlapped"):
                    continue
                sw = o.get("work_seconds")
                if sw is None:
                    sw = o["predicted_serial_seconds"] - fl - (o["blocks"] - 1) * SERIAL_FLOORS * fl
                rows.append(dict(tag=tag, plan=o["plan"], k=o["blocks"], con=o["concurrent_seconds"],
                                 pc=o["predicted_concurrent_seconds"], fl=fl, sw=sw, cf=o["configs"]))
    return rows


def err(rows, c_of):
    e = [abs(max(r["fl"] + r["sw"] + (r["k"] - 1) * c_of(r), r["pc"]) - r["con"]) / r["con"] for r in rows]
    return st.median(e) * 100, st.mean(e) * 100


def main(folders):
    sets = [("DP plans", lambda r: r["plan"] == "dp"),
            ("DP plans without csr-merge", lambda r: r["plan"] == "dp" and "csr-merge" not in r["cf"]),
            ("equal splits", lambda r: r["plan"] != "dp"),
            ("all", lambda r: True)]
    for folder in folders:
        rows = load(folder)
        print(f"== {folder}: {len(rows)} plans timed concurrently")
        for name, sel in sets:
            rs = [r for r in rows if sel(r)]
            if not rs:
                continue
            sxx = sum((r["k"] - 1) ** 2 for r in rs)
            c = sum((r["k"] - 1) * (r["con"] - r["fl"] - r["sw"]) for r in rs) / sxx
            old = [abs(r["pc"] - r["con"]) / r["con"] for r in rs]
            m4, a4 = err(rs, lambda r: 4 * r["fl"])
            mf, af = err(rs, lambda r: c)
            print(f"  {name:27} n={len(rs):3}  recorded rule: median {st.median(old)*100:5.1f} %, "
                  f"mean {st.mean(old)*100:5.1f} % | work chain, 4 floors: {m4:5.1f} / {a4:5.1f} % | "
                  f"fitted c = {c*1e6:5.2f} µs ({c/rs[0]['fl']:.2f} floors): {mf:5.1f} / {af:5.1f} %")


if __name__ == "__main__":
    main(sys.argv[1:] or ["docs/h200/optimizer/concurrent", "docs/h100/optimizer/concurrent"])
