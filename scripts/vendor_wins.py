"""Where cuSPARSE's best algorithm beats our best kernel: on score records (`train --score
--records R`, or refit_cv.sh's s14.jsonl.gz), per precision the geomean of best cuSPARSE / best
ours (the kernels' bound on issue 14's geomean, before the recommendation's own cuSPARSE picks
lift each loss to 1.0), the matrices where cuSPARSE is faster by class and time, the algorithms
that win, and every single-family random matrix of >= 100 us with both bests.

    python3 scripts/vendor_wins.py /tmp/refit/s14.jsonl.gz
"""
import gzip, json, sys, collections, math
recs = collections.defaultdict(list)
for l in gzip.open(sys.argv[1], 'rt'):
    r = json.loads(l)
    if r['status'] != 'ok' or not r.get('median_s'): continue
    recs[(r['matrix'], r['precision'])].append((r['config'], r['median_s'], r['kind']))
for prec in ('f32','f64'):
    g = []; lose = collections.Counter(); tot = collections.Counter(); byalg = collections.Counter()
    for (m, pr), rs in recs.items():
        if pr != prec: continue
        ours = min((x for x in rs if x[2] == 'ours'), key=lambda x: x[1], default=None)
        cu = min((x for x in rs if x[2] != 'ours'), key=lambda x: x[1], default=None)
        if not ours or not cu: continue
        ratio = cu[1] / ours[1]; g.append(math.log(ratio))
        sz = 'lt10us' if cu[1] < 1e-5 else ('lt100us' if cu[1] < 1e-4 else 'ge100us')
        cls = ('stack' if '-stack-' in m else m.split('-')[2]) + ' ' + sz
        tot[cls] += 1
        if ratio < 1.0: lose[cls] += 1; byalg[cu[0]] += 1
    print(prec, 'bound geomean best-ours vs best-cuSPARSE', f"{math.exp(sum(g)/len(g)):.3f}", len(g))
    for c in sorted(tot, key=lambda c: -tot[c]): print(f"   {c}: cuSPARSE faster on {lose[c]}/{tot[c]}")
    print('  ', byalg.most_common(6))
print('--- random >=100us')
for (m, pr), rs in sorted(recs.items()):
    if '-random-' not in m or '-stack-' in m: continue
    ours = min((x for x in rs if x[2] == 'ours'), key=lambda x: x[1]); cu = min((x for x in rs if x[2] != 'ours'), key=lambda x: x[1])
    if cu[1] < 1e-4: continue
    print(pr, m[8:60], f"ours {ours[0]} {ours[1]*1e6:.0f}us  cu {cu[0]} {cu[1]*1e6:.0f}us ratio {cu[1]/ours[1]:.3f}")
