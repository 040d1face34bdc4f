#!/usr/bin/env python3
"""The tuned recommendation's shortlist (`model::shortlist`, src/model/rank.rs) replayed on the
records of `sparsecast train --score … --records R` (JSON Lines, plain or .gz): for each
matrix × precision, the fastest *measured* configuration among the shortlist of k
predicted-fastest (+ the predicted-fastest cuSPARSE algorithm + the fastest of each format those
leave out within 20 % of the fastest), against the best measured of all; without the second
stage's pick (which `predict --tune` times as well). Variants: k = 3…6, k + "siblings"
(the other block sizes and the neighbouring thread mappings of the s predicted-fastest), and
k5+msib: the other block sizes of the shortlist's fastest *measured* configuration of ours
(`model::block_size_siblings`, the tuned pick's second step since session 52).

    python3 scripts/shortlist_replay.py R_H200.jsonl.gz R_H100.jsonl.gz

Prints per file and variant: configurations timed per matrix, the share of matrices whose
shortlist holds one within 2 % / 5 % of the best, and the worst ratio; then per file and
precision the tuned pick of k = 5 with the second stage's pick (by median): picks beyond 1.2x
the best and below 0.95x the best cuSPARSE algorithm. Session 50 (docs/ACCURACY.md) chose
k = 5 on it.
"""
import collections
import gzip
import json
import math
import sys

LADDER = ['csr-scalar', 'csr-t2', 'csr-t4', 'csr-t8', 'csr-t16', 'csr-vector']


def lines(f):
    with open(f, 'rb') as h:
        gz = h.read(2) == b'\x1f\x8b'
    return gzip.open(f, 'rt') if gz else open(f)


def load(f):
    """(matrix, precision) -> [(config, kind, format, predicted s, measured s)]."""
    by = collections.defaultdict(list)
    for line in lines(f):
        r = json.loads(line)
        p = r['predictions'].get('sparsecast')
        if r['status'] != 'ok' or not r.get('warm_mean_s') or not p:
            continue
        by[(r['matrix'], r['precision'])].append(
            (r['config'], r['kind'], r['format'], p['seconds'], r['warm_mean_s']))
    return by


def shortlist(rows, k, band=0.2, sib=0):
    o = sorted(rows, key=lambda x: x[3])
    out = [x[0] for x in o[:k]]
    vendor = next((x for x in o if x[1] != 'ours'), None)
    if vendor and vendor[0] not in out:
        out.append(vendor[0])
    seen = {x[2] for x in o[:k] if x[1] == 'ours'}  # as model::shortlist since session 50
    for x in o[k:]:
        if x[3] > o[0][3] * (1 + band):
            break
        if x[1] == 'ours' and x[2] not in seen:
            seen.add(x[2])
            out.append(x[0])
    labels = {x[0] for x in rows}
    pred = {x[0]: x[3] for x in rows}
    for top in [x[0] for x in o[:sib]]:
        base, _, bs = top.partition('@')
        sibs = [l for l in labels if l.partition('@')[0] == base and l != top]
        if base in LADDER:
            i = LADDER.index(base)
            sibs += [c for j in (i - 1, i + 1) if 0 <= j < len(LADDER)
                     for c in [LADDER[j] + ('@' + bs if bs else '')] if c in labels]
        out += [l for l in sorted(set(sibs), key=pred.get) if l not in out]
    return out


def measured_siblings(rows, short):
    """`model::block_size_siblings` (session 52): the other block sizes of the fastest measured
    configuration of ours in `short`, not yet in it (rows: label, kind, format, pred., measured)."""
    t = {x[0]: x[4] for x in rows}
    ours = [l for l in short if any(x[0] == l and x[1] == 'ours' for x in rows)]
    if not ours:
        return []
    top = min(ours, key=t.get).partition('@')[0]
    return [x[0] for x in rows
            if x[1] == 'ours' and x[0].partition('@')[0] == top and x[0] not in short]


VARIANTS = [('k3', dict(k=3)), ('k4', dict(k=4)), ('k5', dict(k=5)), ('k6', dict(k=6)),
            ('k3+sib1', dict(k=3, sib=1)), ('k3+sib2', dict(k=3, sib=2)),
            ('k4+sib1', dict(k=4, sib=1)), ('k5+msib', dict(k=5, msib=1))]


def tuned_pick_scores(f, k=5):
    """`predict --tune`'s pick (the shortlist of k, its block-size siblings since session 52
    and the second stage's pick, the fastest by
    median), per precision: matrices, beyond 1.2x the best, below 0.95x the best cuSPARSE
    algorithm, the geomean and worst against it."""
    by = collections.defaultdict(list)
    for line in lines(f):
        r = json.loads(line)
        p = r['predictions'].get('sparsecast')
        if r['status'] != 'ok' or not p or r.get('median_s') is None or r['kind'] == 'plan':
            continue
        by[(r['matrix'], r['precision'])].append(
            (r['config'], r['kind'], r['format'], p['seconds'], r['median_s'], p.get('picked')))
    res = collections.defaultdict(list)
    for (_, prec), rows in by.items():
        t = {x[0]: x[4] for x in rows}
        short = shortlist([x[:5] for x in rows], k)
        short += measured_siblings([x[:5] for x in rows], short)
        cands = short + [x[0] for x in rows if x[5]]
        got = min(t[c] for c in cands)
        vendor = min((x[4] for x in rows if x[1] != 'ours'), default=None)
        if vendor:
            res[prec].append((got / min(t.values()), vendor / got))
    for prec, v in sorted(res.items()):
        sp = [x[1] for x in v]
        print(f'  tuned pick (k = {k} + the second stage), {prec}: {len(v)} matrices, beyond 1.2x '
              f'the best {sum(x[0] > 1.2 for x in v)}, below 0.95x the best cuSPARSE '
              f'{sum(x < 0.95 for x in sp)}, against it geomean '
              f'{math.exp(sum(map(math.log, sp)) / len(sp)):.3f}x (worst {min(sp):.3f}x)')


def replay(f):
    by = load(f)
    print(f, len(by), 'matrix-precisions')
    for name, kw in VARIANTS:
        w2 = w5 = timed = 0
        worst = 1.0
        for rows in by.values():
            best = min(x[4] for x in rows)
            t = {x[0]: x[4] for x in rows}
            s = shortlist(rows, **{k: v for k, v in kw.items() if k != 'msib'})
            if kw.get('msib'):
                s = s + measured_siblings(rows, s)
            got = min(t[c] for c in s)
            timed += len(s)
            w2 += got <= best * 1.02
            w5 += got <= best * 1.05
            worst = max(worst, got / best)
        n = len(by)
        print(f'  {name:8s} timed {timed / n:.2f}  within 2 % {100 * w2 / n:.2f} %  '
              f'within 5 % {100 * w5 / n:.2f} %  worst {worst:.3f}')


if __name__ == '__main__':
    for f in sys.argv[1:]:
        replay(f)
    for f in sys.argv[1:]:
        print(f)
        tuned_pick_scores(f)
