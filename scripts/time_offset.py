#!/usr/bin/env python3
"""The same configurations timed by two runs: the difference B − A per (matrix file,
precision, configuration), by A's time, in microseconds (additive) and as a ratio.

    python3 scripts/time_offset.py data/corpus/h100.jsonl.gz docs/h100/optimizer/session51/opt-real-f32.json.gz …

A and B are one or more files each, separated by `--` when both are several (A -- B…; with
exactly two files no `--` is needed). Each file may be a `collect` table (.jsonl[.gz], rows with
`times`), a timing record table (rows with `config` and `warm_mean_s`, e.g.
docs/h100/timing/new1.jsonl.gz), `optimize --measure --json-out` (every single configuration
timed: `measured.singles`) or `predict --measure --json` (`kernels[].measured_seconds`).
Matrices are matched by file name, so `mats/4elt.mtx.gz` and `/root/x/4elt.mtx.gz` are one.
Session 51 found `optimize --measure` ≈ 0.15 µs slower per SpMV than the training tables on
matrices under 8 µs, in every optimizer run since session 11 (docs/ACCURACY.md).
"""
import collections
import json
import math
import os
import statistics
import sys

from jsonio import jload
from shortlist_replay import lines


def times(f):
    """(file name, precision, configuration) -> warm-mean seconds."""
    out = {}
    if '.jsonl' in f:
        for line in lines(f):
            r = json.loads(line)
            key = (os.path.basename(r['matrix']), r['precision'])
            if isinstance(r.get('times'), list):
                for t in r['times']:
                    if isinstance(t, dict) and t.get('warm_mean_s'):
                        out[key + (t['config'],)] = t['warm_mean_s']
            elif r.get('status') == 'ok' and r.get('warm_mean_s') and r.get('config'):
                out[key + (r['config'],)] = r['warm_mean_s']
        return out
    for r in jload(f)['results']:
        key = (os.path.basename(r['input']), r['precision'])
        for c in (r.get('measured') or {}).get('singles') or []:
            if c[1]:
                out[key + (c[0],)] = c[1]
        for k in r.get('kernels') or []:
            if k.get('measured_seconds') and k.get('model') in (None, 'sparsecast'):
                out[key + (k['variant'],)] = k['measured_seconds']
    return out


def main(args):
    if '--' in args:
        i = args.index('--')
        a_files, b_files = args[:i], args[i + 1:]
    else:
        a_files, b_files = args[:1], args[1:]
    a, b = {}, {}
    for f in a_files:
        a.update(times(f))
    for f in b_files:
        b.update(times(f))
    common = [k for k in a if k in b]
    if not common:
        sys.exit('no configuration of a matrix timed by both')
    print(f'{len(common)} configurations timed by both; B − A by A\'s time')
    bins = collections.defaultdict(list)
    for k in common:
        bins[min(int(2 * math.log2(max(a[k], 1e-7) / 1e-6)), 13)].append(k)
    for i in sorted(bins):
        ks = bins[i]
        d = sorted((b[k] - a[k]) * 1e6 for k in ks)
        r = [b[k] / a[k] for k in ks]
        lo, hi = 2 ** (i / 2), 2 ** ((i + 1) / 2)
        print(f'  {lo:6.2f}–{hi:6.2f} µs: {len(ks):5d}  median {statistics.median(d):+.3f} µs '
              f'(p25 {d[len(d) // 4]:+.3f}, p75 {d[3 * len(d) // 4]:+.3f}), ratio median '
              f'{statistics.median(r):.3f}')
    by = collections.defaultdict(list)
    for k in common:
        if a[k] < 8e-6:
            by[k[2].split('@')[0]].append((b[k] - a[k]) * 1e6)
    print('  under 8 µs, by configuration (median µs): ' + ', '.join(
        f'{c} {statistics.median(v):+.2f}' for c, v in sorted(by.items())))


if __name__ == '__main__':
    main(sys.argv[1:])
