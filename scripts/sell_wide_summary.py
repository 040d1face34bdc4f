#!/usr/bin/env python3
"""Session 80's measurement of the SELL split rule `wide` (src/backend/cuda/sell_split.rs) on the
H200, summarised from docs/h200/sell-wide-s80/ (python3, standard library only):

1. the probe (`band.txt`, scripts/device_sell_band.sh with RULES="waves=1 wide=4 wide=5 wide=6",
   both shards): per rule, SELL's time against session 41's rule (`waves=1`, the shipped one) by
   class (stacks, Kronecker expansions, session 78's band stacks, the GPU-filling guards), the
   better of the two C per (matrix, precision), and what it does to the fastest configuration
   of the training tables (data/corpus/h200-sN.jsonl.gz: every other configuration's time);
2. seed 14's 28 matrices `wide=4` changes (`only-sell-h200-s14.txt`, never trained on), the four
   SELL configurations timed in one device session under `wide=4` (s14-new*.jsonl.gz, three
   passes) and session 41's rule (s14-old*.jsonl.gz, two), interleaved: SELL's ratio, the noise
   between two passes, and the fastest configuration of data/corpus/h200-s14.jsonl.gz with SELL's
   times replaced.

    python3 scripts/sell_wide_summary.py [DIR]
"""
import collections
import gzip
import json
import math
import sys

D = sys.argv[1] if len(sys.argv) > 1 else "docs/h200/sell-wide-s80"
GUARDS = {"g41-banded", "g41-random", "het-powerlaw"}
BAND78 = {"s12-m00578", "s20-m00762", "s6-m00031", "s39-m00677"}


def gm(v):
    return math.exp(sum(map(math.log, v)) / len(v))


def cls(m):
    if m in GUARDS:
        return "guards"
    if m in BAND78:
        return "band-78"
    return "kronecker" if m.startswith("kron-") else "stacks"


def table_times(path):
    """{(matrix, precision): {config: seconds}} of a table."""
    out = {}
    with gzip.open(path, "rt") as f:
        for line in f:
            r = json.loads(line)
            out[(r["matrix"], r["precision"])] = {
                t["config"]: t["median_s"] for t in r["times"] if t.get("median_s")
            }
    return out


def probe():
    rows = []
    for line in open(f"{D}/band.txt"):
        p = line.split()
        if len(p) < 4 or "ERR" in line:
            continue
        d = {k: float(v) for k, v in (x.split(":") for x in p[3:])}
        rows.append((p[0], p[1], int(p[2][2:]), d))
    rules = [r for r in rows[0][3] if r != "waves=1"]
    print(f"1. probe: {len({r[0] for r in rows})} matrices, {len(rows)} (matrix, precision, C)")
    for rule in rules:
        by = collections.defaultdict(list)
        for m, _, _, d in rows:
            by[cls(m)].append(d[rule] / d["waves=1"])
            by["all"].append(d[rule] / d["waves=1"])
        best = collections.defaultdict(dict)
        for m, prec, _, d in rows:
            for k in ("waves=1", rule):
                best[(m, prec)][k] = min(best[(m, prec)].get(k, 1e9), d[k])
        b = [x[rule] / x["waves=1"] for x in best.values()]
        print(f"  {rule}: SELL time / session 41's rule, geometric mean (min … max, > 1.03):")
        for c, v in sorted(by.items()):
            print(f"    {c:9s} n={len(v):3d} {gm(v):.3f} ({min(v):.3f} … {max(v):.3f}, "
                  f"{sum(x > 1.03 for x in v)})")
        print(f"    better C  n={len(b):3d} {gm(b):.3f} ({min(b):.3f} … {max(b):.3f}, "
              f"{sum(x > 1.03 for x in b)})")
    # The fastest configuration of the tables, SELL's best C replaced (`wide=4`).
    tables = {}
    up = down = n = 0
    best4 = collections.defaultdict(dict)
    for m, prec, _, d in rows:
        for k in ("waves=1", "wide=4"):
            best4[(m, prec)][k] = min(best4[(m, prec)].get(k, 1e9), d[k])
    for (m, prec), d in sorted(best4.items()):
        if m in GUARDS:
            continue
        if m.startswith("kron-"):
            *base, seed, idx = m.split("-")[1:]
            key = (f"kron/{'-'.join(base)}-{idx}", prec)
        else:
            seed = m.split("-")[0]
            key = None
        if seed not in tables:
            tables[seed] = table_times(f"data/corpus/h200-{seed}.jsonl.gz")
        t = tables[seed]
        if key is None:
            key = next((k for k in t if k[1] == prec and k[0].startswith(f"gen/{m}-")), None)
        if key not in t:
            continue
        other = min(v for c, v in t[key].items() if not c.startswith("sell")) * 1e6
        r = min(d["wide=4"], other) / min(d["waves=1"], other)
        n += 1
        up += r < 0.97
        down += r > 1.03
    print(f"  wide=4, the fastest configuration (the tables' others beside SELL): of {n} "
          f"(matrix, precision), {up} > 3 % faster, {down} > 3 % slower")


def seed14():
    def load(k):
        t = table_times(f"{D}/s14-{k}.jsonl.gz")
        return {(m, p, c): s for (m, p), cs in t.items() for c, s in cs.items()}

    new = [load(k) for k in ("new", "new2", "new3")]
    old = [load(k) for k in ("old1", "old2")]
    keys = sorted(new[0])
    n = {k: gm([x[k] for x in new]) for k in keys}
    o = {k: gm([x[k] for x in old]) for k in keys}
    r = [n[k] / o[k] for k in keys]
    noise = sorted(abs(math.log(new[1][k] / new[2][k])) for k in keys)
    print(f"2. seed 14: {len({k[0] for k in keys})} matrices, {len(keys)} SELL times")
    print(f"  wide=4 / session 41: geometric mean {gm(r):.3f} ({min(r):.3f} … {max(r):.3f}); "
          f"> 3 % faster {sum(x < 0.97 for x in r)}, > 3 % slower {sum(x > 1.03 for x in r)}; "
          f"two passes differ by {noise[len(noise) // 2]:.1%} (median)")
    for cfg in sorted({k[2] for k in keys}):
        v = [n[k] / o[k] for k in keys if k[2] == cfg]
        print(f"    {cfg:16s} {gm(v):.3f} ({min(v):.3f} … {max(v):.3f})")
    table = table_times("data/corpus/h200-s14.jsonl.gz")
    drift = [o[k] / table[k[:2]][k[2]] for k in keys if k[2] in table.get(k[:2], {})]
    print(f"  session 41's rule re-timed / the table: {gm(drift):.3f} "
          f"({min(drift):.3f} … {max(drift):.3f})")
    up, down = [], []
    for mp in sorted({k[:2] for k in keys}):
        other = min(v for c, v in table[mp].items() if not c.startswith("sell"))
        sn = min(n[k] for k in keys if k[:2] == mp)
        so = min(o[k] for k in keys if k[:2] == mp)
        ratio = min(sn, other) / min(so, other)
        if ratio < 0.97:
            up.append((mp, ratio))
        if ratio > 1.03:
            down.append((mp, ratio))
    print(f"  the fastest configuration: {len(up)} of {len({k[:2] for k in keys})} > 3 % faster, "
          f"{len(down)} > 3 % slower {[(m[0][:28], m[1], round(x, 3)) for m, x in down]}")


probe()
seed14()
