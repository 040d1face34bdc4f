#!/usr/bin/env python3
"""A protocol variant against the run-to-run noise (docs/ACCURACY.md, session 23): three
`collect` tables of one draw — BASE1 and BASE2 with the default protocol, VARIANT with one
setting changed — and how far VARIANT's medians sit from BASE1's beside how far BASE2's do, with
each table's measuring seconds.

    python3 scripts/collect_ab3.py BASE1.jsonl.gz VARIANT.jsonl.gz BASE2.jsonl.gz
"""
import gzip,json,sys,math,statistics as st
def load(p): return {(r['matrix'],r['precision']):r for r in map(json.loads,gzip.open(p,'rt'))}
a,b,c=(load(p) for p in sys.argv[1:4])  # base1, variant, base2
def diffs(x,y):
    out=[]
    for k,r in x.items():
        if k not in y: continue
        for t,u in zip(r['times'],y[k]['times']):
            if t.get('median_s') and u.get('median_s'): out.append(u['median_s']/t['median_s'])
    return out
for name,y in (('variant',b),('repeat',c)):
    v=sorted(diffs(a,y)); d=sorted(abs(math.log(x)) for x in v)
    print(f"{name} vs base1: n {len(v)} median ratio {st.median(v):.4f} 5-95% {v[len(v)//20]:.3f}-{v[-len(v)//20-1]:.3f} median|d| {100*(math.exp(st.median(d))-1):.2f}% p90 {100*(math.exp(d[int(.9*len(d))])-1):.2f}%")
tot=lambda x: sum(r['cost']['measure_s'] for r in x.values())
print("measure_s: base1 %.1f variant %.1f base2 %.1f"%(tot(a),tot(b),tot(c)))
