#!/usr/bin/env python3
"""Per matrix and precision, from the summaries of scripts/device_stream_hint.sh (branch
`stream-hint`): the best of our kernels with the cache-streaming hint off and on, and the best
cuSPARSE algorithm (the hint does not touch cuSPARSE; its time is the hint-off median).

    python3 scripts/stream_hint_best.py docs/h200/session67/stream-hint-*.txt

ours/cu below 1: our best kernel is faster than cuSPARSE's best. A matrix that appears in several
summaries (a repeat) is printed once per summary."""
import collections
import re
import sys

LINE = re.compile(r"(\S+) (f\d+) (\S+): ([\d.]+) -> ([\d.]+) µs")
print(f"{'summary':<34} {'matrix':<13} prec  {'best ours, off':>22}  {'best ours, on':>22}  on/off"
      f"  {'best cuSPARSE':>26}  ours/cu off  on")
for path in sys.argv[1:]:
    runs = collections.defaultdict(dict)
    for line in open(path, encoding="utf-8"):
        m = LINE.match(line)
        if m:
            mat, prec, kernel, off, on = m.groups()
            runs[(mat, prec)][kernel] = (float(off), float(on))
    for (mat, prec), k in sorted(runs.items()):
        ours = {n: t for n, t in k.items() if not n.startswith("cusparse")}
        cu = {n: t for n, t in k.items() if n.startswith("cusparse")}
        if not ours or not cu:
            continue
        o_off = min(ours, key=lambda n: ours[n][0])
        o_on = min(ours, key=lambda n: ours[n][1])
        c = min(cu, key=lambda n: cu[n][0])
        t_off, t_on, t_cu = ours[o_off][0], ours[o_on][1], cu[c][0]
        name = path.rsplit("/", 1)[-1]
        print(f"{name:<34} {mat:<13} {prec}  {o_off:>12} {t_off:>8.1f}  {o_on:>12} {t_on:>8.1f}"
              f"  {t_on / t_off:6.3f}  {c:>17} {t_cu:>8.1f}  {t_off / t_cu:11.3f}  {t_on / t_cu:.3f}")
