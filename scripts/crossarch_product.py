#!/usr/bin/env python3
"""Score the product path of cross-architecture prediction (docs/CROSS_ARCH.md, session 16):
`predict --json` outputs of a target profile written by `instrument --cross-from` against a
training table measured on the target (the truth) and one measured on the reference (`same`:
the reference's time unchanged).

    python3 scripts/crossarch_product.py TRUTH.jsonl.gz REFERENCE.jsonl.gz \
        NAME=PREDICT.json[.gz]:MODEL ...

Matrices are matched by generator-spec name (the tables' `gen/sNN-NNNNN-` prefix removed).
Prints per precision and size (all, >= 1e6, < 1e6 non-zeros) the median and mean difference
rate, the share within 10 %, and how often the predicted-fastest configuration (among the
predicted ones) is within 5 % of the fastest of them measured, and (`in 1σ`) the share of
predictions within the uncertainty `predict` states (|ln(p/m)| ≤ σ/p; σ being a median
|ln error|, a calibrated one covers ≈ 50 %)."""
import json,gzip,sys,collections,math
from jsonio import jload
# usage: score_unseen.py TRUTH_TABLE REF_TABLE name=pred.json ...
truth=collections.defaultdict(dict); ref=collections.defaultdict(dict)
def name(m): return m.split('/',1)[1].split('-',2)[2]
NNZ={}
for path,dst in ((sys.argv[1],truth),(sys.argv[2],ref)):
    for l in gzip.open(path,'rt'):
        r=json.loads(l); NNZ[name(r['matrix'])]=r['features']['nnz']
        for t in r['times']:
            if t['status']=='ok' and t.get('median_s'): dst[(name(r['matrix']),r['precision'])][t['config']]=t['median_s']
preds={'same':{k:dict(v) for k,v in ref.items()}}
SIG={}
for a in sys.argv[3:]:
    n,p=a.split('=',1); p,model=p.split(':'); d=collections.defaultdict(dict)
    for r in jload(p)['results']:
        for k in r['kernels']:
            if k.get('seconds') and k['model']==model:
                d[(r['input'],r['precision'])][k['variant']]=k['seconds']
                if k.get('uncertainty_seconds'):
                    SIG[(n,r['input'],r['precision'],k['variant'])]=k['uncertainty_seconds']/k['seconds']
    preds[n]=d
def fam(c):
    return 'cusparse' if c.startswith('cusparse') else c.split('@')[0].split('-c')[0]
print(f"{len(truth)} matrix x precision in truth")
for prec in ['f32','f64']:
  for size,lo,hi in (('all',0,1e99),('>=1e6',1e6,1e99),('<1e6',0,1e6)):
    line=[]
    for n,d in preds.items():
        e=[]; picks=[]; cov=[]
        for k,tt in truth.items():
            if k[1]!=prec or not (lo<=NNZ[k[0]]<hi): continue
            nnz=None
            for c,m in tt.items():
                p=d.get(k,{}).get(c)
                if p:
                    e.append(abs(p-m)/m)
                    sg=SIG.get((n,k[0],k[1],c))
                    if sg: cov.append(abs(math.log(p/m))<=sg)
            # ranking: pick by prediction among configs with truth
            cand={c:d[k][c] for c in tt if c in d.get(k,{})}
            if cand:
                pick=min(cand,key=cand.get); picks.append(min(tt[c] for c in cand)/tt[pick])
        if not e: continue
        e.sort()
        line.append(f"{n}: med {100*e[len(e)//2]:.1f}% mean {100*sum(e)/len(e):.1f}% w10 {100*sum(x<0.1 for x in e)/len(e):.0f}% n{len(e)} picks<5% {100*sum(x>=1/1.05 for x in picks)/max(1,len(picks)):.0f}% ({len(picks)})"+(f" in 1σ {100*sum(cov)/len(cov):.0f}%" if cov else ""))
    print(prec, size); print('\n'.join('   '+x for x in line))
