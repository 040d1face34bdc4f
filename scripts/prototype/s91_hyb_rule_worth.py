#!/usr/bin/env python3
"""Session 91 estimate (not a measurement): seed 41's matrices of <= 1e6 entries whose HYB COO part sends
>= 1,200 carries onto one line of y (`ANY=1 LIM=1e6 python3 s91_line_atomics.py PART NPARTS`: /tmp/cont/any-*.jsonl),
and the perfect pick's geomean against cuSPARSE were their HYB time multiplied by 0.55 or 0.70
(the merged kernel's measured ratios on the 30 matrices: 0.38-0.84)."""
import json,glob,gzip,math,collections
M={}
for f in glob.glob('/tmp/cont/any-*.jsonl'):
    for l in open(f): r=json.loads(l); M[r['matrix']]=r
rows={}
for l in gzip.open('/tmp/s41-table.jsonl.gz'):
    r=json.loads(l); rows[(r['matrix'],r['precision'])]=r
for factor in (0.55,0.7):
  for p in ('f32','f64'):
    sel=0; gain=0.0; win=0; n=0
    for (m,pp),r in rows.items():
        if pp!=p or m not in M: continue
        n+=1
        if M[m]['hyb'][p]<1200: continue
        sel+=1
        t={x['config']:x['median_s'] for x in r['times'] if x['status']=='ok'}
        if 'hyb' not in t: continue
        cu=min(v for k,v in t.items() if k.startswith('cusparse')); ours=min(v for k,v in t.items() if not k.startswith('cusparse'))
        ours2=min(ours,t['hyb']*factor)
        gain+=math.log(cu/min(ours2,cu))-math.log(cu/min(ours,cu))
        if ours2<ours: win+=1
    print('hyb x%.2f'%factor,p,'of',n,'matrices <=1e6 entries:',sel,'selected,',win,'with HYB then our fastest; perfect pick geomean over 1200 x%.4f'%math.exp(gain/1200))
