"""The ranking's noise ceiling: pick each matrix's fastest configuration by one measurement and
score the pick by an independent second measurement of the same configurations (share of the
picks within 5 % of the second measurement's best, beyond 1.2x, mean fraction of the best), both
ways round. What a model that predicted every time exactly as one measurement found it would
reach: issue 14's "recommended within 5 % of the best on >= 95 %" is only as reachable as this.

    python3 scripts/pick_noise.py data/corpus/h200-s12.jsonl.gz data/corpus/h200-s12-repeat.jsonl.gz

Only the matrices and configurations both tables timed ("ok") count."""
import gzip, json, sys
def load(p):
    d = {}
    for l in gzip.open(p, 'rt'):
        r = json.loads(l)
        t = {x['config']: x['median_s'] for x in r['times'] if x.get('status') == 'ok' and x.get('median_s')}
        d[(r['matrix'], r['precision'])] = t
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
for prec in ('f32', 'f64'):
    keys = [k for k in b if k in a and k[1] == prec]
    w5 = bey = 0; fr = []; n = 0
    for k in keys:
        for A, B in ((a[k], b[k]), (b[k], a[k])):
            common = [c for c in A if c in B]
            if len(common) < 2: continue
            pick = min(common, key=lambda c: A[c]); best = min(B[c] for c in common)
            r = B[pick] / best; n += 1
            w5 += r <= 1.05; bey += r > 1.2; fr.append(best / B[pick])
    print(f"{prec}: {len(keys)} matrices x 2 directions = {n}; pick by one measurement within 5 % of the other's best: {100*w5/n:.1f} %; beyond 1.2x {bey}; mean fraction {100*sum(fr)/n:.2f} %")
