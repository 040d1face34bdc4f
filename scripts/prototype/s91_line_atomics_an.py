#!/usr/bin/env python3
"""Session 91: the shipped model's error on coo, hyb and cusparse-coo-alg1 by s91_line_atomics.py's carries per
line of y (none, < 300, 300-1k, 1k-3k, >= 3k), from `train --score --records` of seed 41, unpacked
to /tmp/s41.jsonl:  python3 scripts/prototype/s91_line_atomics_an.py
"""
import json,glob,math,collections
M={}
for f in glob.glob('/tmp/cont/metric-*.jsonl'):
    for l in open(f):
        r=json.loads(l); M[r['matrix']]=r
err=collections.defaultdict(list); ratio=collections.defaultdict(list)
meas={}
for l in open('/tmp/s41.jsonl'):
    r=json.loads(l)
    if r['matrix'] not in M or r.get('status')!='ok': continue
    p=(r.get('predictions') or {}).get('sparsecast')
    if not p: continue
    pred=p['seconds'] if isinstance(p,dict) else p
    cfg=r['config']
    if cfg not in ('hyb','coo','cusparse-coo-alg1'): continue
    key='hyb' if cfg=='hyb' else 'coo'
    m=M[r['matrix']][key][r['precision']]
    b=0 if m==0 else 1 if m<300 else 2 if m<1000 else 3 if m<3000 else 4
    err[(cfg,r['precision'],b)].append(math.log(pred/r['median_s']))
    meas[(r['matrix'],r['precision'],cfg)]=r['median_s']
def q(a):
    a=sorted(a); return [round(a[int(x*(len(a)-1))],3) for x in (0.1,0.5,0.9)]
names={0:'none',1:'<300',2:'300-1k',3:'1k-3k',4:'>=3k'}
for k in sorted(err): 
    v=err[k]; print(k[0],k[1],names[k[2]],len(v),'ln(pred/meas) 10/50/90%',q(v),'within10 %.0f%%'%(100*sum(abs(math.exp(x)-1)<=0.1 for x in v)/len(v)))
