#!/usr/bin/env python3
"""Held-out error of thread-per-row kernels on single-family generated matrices of one constant
row length, by the length's alignment (docs/ACCURACY.md, session 43): rows of L entries start
L·4 bytes apart in `col` and L·v in `val`, so for L a multiple of 8, 16 or 32 the 32 lanes of a
thread-per-row warp load at the same offset of their 128-byte lines, step after step.

    python3 scripts/align_check.py cv.jsonl f32 csr-scalar,csr-t2,jad,ell

cv.jsonl: the records of `train --records` (held-out predictions of the cross-validation) or of
`train --score`. Prints per configuration and class of L (≥ 4; block-diagonal and constant
random rows — a band is always of odd length) the count, the median ln(predicted / measured)
and the share within 10 %.
"""
import collections
import json
import math
import statistics
import sys


def constant_length(spec):
    """The one row length of a generator spec, else None."""
    family = spec.get("family")
    if family == "block-diagonal":
        return spec["block_size"]
    if family == "random" and spec["row_len"]["dist"] == "constant":
        return spec["row_len"]["nnz"]
    if family == "banded":
        return 2 * spec["half_bandwidth"] + 1
    return None


def alignment(length):
    for k in (32, 16, 8):
        if length % k == 0:
            return f"len%{k}==0"
    return "other"


def main():
    path, prec, configs = sys.argv[1], sys.argv[2], set(sys.argv[3].split(","))
    res = collections.defaultdict(list)
    for line in open(path):
        r = json.loads(line)
        if r.get("status") != "ok" or r["precision"] != prec or r["config"] not in configs:
            continue
        p = (r.get("predictions") or {}).get("sparsecast")
        spec = (r.get("source") or {}).get("generated")
        if not p or not spec or spec.get("family") == "stack":
            continue
        length = constant_length(spec)
        if length is None or length < 4:
            continue
        res[(r["config"], alignment(length))].append(math.log(p["seconds"] / r["median_s"]))
    print("| configuration | row length | matrices | median ln(pred / meas) | within 10 % |")
    print("|---|---|---|---|---|")
    for (cfg, cls), e in sorted(res.items()):
        within = sum(abs(math.exp(x) - 1) <= 0.1 for x in e) / len(e)
        print(f"| {cfg} | {cls} | {len(e)} | {statistics.median(e):+.3f} | {100 * within:.0f} % |")


if __name__ == "__main__":
    main()
