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
def classes(k):
    yield "every matrix"
    yield "stacks" if "-stack-" in k[0] else "single-family"
for prec in ('f32', 'f64'):
    tally = {}
    for k in (k for k in b if k in a and k[1] == prec):
        for A, B in ((a[k], b[k]), (b[k], a[k])):
            common = [c for c in A if c in B]
            if len(common) < 2:
                continue
            pick = min(common, key=lambda c: A[c])
            best = min(B[c] for c in common)
            r = B[pick] / best
            for c in classes(k):
                t = tally.setdefault(c, [0, 0, 0, 0.0])
                t[0] += 1; t[1] += r <= 1.05; t[2] += r > 1.2; t[3] += best / B[pick]
    for c, (n, w5, bey, fr) in tally.items():
        print(f"{prec} {c}: {n // 2} matrices x 2 directions; pick by one measurement within 5 % of"
              f" the other's best: {100 * w5 / n:.1f} %; beyond 1.2x {bey}; mean fraction {100 * fr / n:.2f} %")
