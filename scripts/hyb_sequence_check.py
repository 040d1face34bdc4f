#!/usr/bin/env python3
"""Session 83's device check, read back (scripts/device_s83_check.sh): per file and precision,
HYB's prediction beside its time measured with the sequence the embedded profile models
(default) and with the plain one (SPARSECAST_PDL=0), both from `predict --measure` in the same
run (the median over the passes); then the difference rate of every configuration measured by
default (the profile's in-sample files: a check that predictions and runs agree, not a held-out
accuracy).

    python3 scripts/hyb_sequence_check.py docs/h200/session83   # or the unpacked s83-check-GPU.tar
"""
import os
import statistics as st
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from jsonio import jglob, jload  # noqa: E402


def measured(path):
    """{(input, precision, variant): (predicted s, measured s)} of one `predict --measure --json`."""
    out = {}
    d = jload(path)
    for r in d["results"]:
        for k in r["kernels"]:
            if k.get("measured_seconds"):
                out[(r["input"], r["precision"], k["variant"])] = (k["seconds"], k["measured_seconds"])
    return out


def main():
    d = sys.argv[1]
    runs = {}
    for kind in ("default", "0"):
        files = jglob(os.path.join(d, f"measure-{kind}-*.json"))
        runs[kind] = [measured(p) for p in files if os.path.getsize(p) > 0]
    keys = sorted({k for r in runs["default"] for k in r if k[2] == "hyb"})
    print(f"{'file':38s} prec  HYB predicted  measured default  plain   default/plain")
    ratios = []
    for k in keys:
        pred = runs["default"][0][k][0]
        md = st.median(r[k][1] for r in runs["default"] if k in r)
        mp = st.median(r[k][1] for r in runs["0"] if k in r)
        ratios.append(md / mp)
        print(f"{k[0]:38s} {k[1]}  {pred * 1e6:9.2f} µs  {md * 1e6:9.2f} µs  {mp * 1e6:7.2f} µs  {md / mp:6.3f}")
    if ratios:
        print(f"HYB default / plain: median {st.median(ratios):.3f} over {len(ratios)}")
    diffs = [abs(p / m - 1) for r in runs["default"][:1] for (p, m) in r.values()]
    if diffs:
        within = sum(x <= 0.1 for x in diffs) / len(diffs)
        print(f"every configuration (default, pass 1): {len(diffs)} predictions, median difference "
              f"{100 * st.median(diffs):.1f} %, within 10 % {100 * within:.1f} % (in-sample files)")


if __name__ == "__main__":
    main()
