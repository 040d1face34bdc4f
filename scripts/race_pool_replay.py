#!/usr/bin/env python3
"""Replays `optimize --tune`'s last choice on recorded `--tune --measure` runs (session 77): the
race's fastest (the rule until session 77) against the fastest by the race pooled with the
search's time, each weighted by its placements (`race::with_search`: a plan searched in one
placement, a single configuration in min(race placements, 3)). Where the two answers differ and
the pooled one is the best single configuration of the sweep, the fair pair (the race's answer
and the best single, timed again side by side after the choice: independent of both) scores the
change: ratio = race answer / best single, > 1 where pooling is faster.

    python3 scripts/race_pool_replay.py docs/h*/optimizer/session5[0-9]/opt-*.json* \\
        docs/h*/optimizer/session7[0-9]/opt-*.json* docs/h*/optimizer/session7[0-9]/search/opt-*.json*
"""
import gzip
import json
import math
import sys


def load(f):
    return json.load(gzip.open(f, 'rt') if f.endswith('.gz') else open(f))


def main(files):
    races = changed = 0
    scored = []
    for f in files:
        for r in load(f).get('results', []):
            m = r.get('measured') or {}
            t = m.get('tuned')
            if not t or len(t.get('raced') or []) < 2:
                continue
            placed = t.get('raced_placements') or []
            if len(placed) != len(t['raced']):
                continue  # runs before the placements were recorded
            races += 1
            search = {l: s for l, s in t['timed'] if s}
            ok = [(l, s, n) for (l, s), n in zip(t['raced'], placed) if s]

            def pooled(l, s, n):
                if l not in search:
                    return s
                q = 1 if l.startswith('plan') else max(1, min(n, 3))
                return math.exp((n * math.log(s) + q * math.log(search[l])) / (n + q))

            race_pick = min(ok, key=lambda x: x[1])[0]
            pool_pick = min(ok, key=lambda x: pooled(*x))[0]
            if pool_pick == race_pick:
                continue
            changed += 1
            best = (m.get('best_single') or [None])[0]
            a, b = t.get('retimed_seconds'), t.get('best_single_retimed_seconds')
            if pool_pick == best and a and b:
                scored.append(a / b)
    print(f'{races} races; the pooled answer differs on {changed}; scored by the fair pair {len(scored)}')
    if scored:
        g = math.exp(sum(map(math.log, scored)) / len(scored))
        print(f'  pooled faster on {sum(x > 1 for x in scored)}, slower on {sum(x < 1 for x in scored)}; '
              f'geomean {g:.4f}; race answers beyond 1.02x of the best single turned to it: '
              f'{sum(x > 1.02 for x in scored)} ({", ".join(f"{x:.3f}" for x in scored if x > 1.02)}); '
              f'the worst loss {min(scored):.3f}')


if __name__ == '__main__':
    main(sys.argv[1:])
