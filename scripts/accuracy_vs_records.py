import json,sys,statistics as st
# usage: acc_cmp.py old_pred.json eval_results.jsonl [repredicted report? no] 
old=json.load(open(sys.argv[1]))
recs=[json.loads(l) for l in open(sys.argv[2])]
meas={}
best={}
for r in recs:
    if r['status']!='ok' or r['kind']!='ours' or not r['matrix'].startswith('mats/'): continue
    name=r['matrix'].split('/')[-1]; p=r['precision']; t=r['median_s']
    meas[(name,p,r['config'])]=t
    best[(name,p)]=min(best.get((name,p),1e9),t)
rates={}; within5={}; frac={}
for res in old['results']:
    name=res['input']; p=res['precision']
    preds={k['variant']:k['seconds'] for k in res['kernels'] if k.get('seconds')}
    for v,s in preds.items():
        m=meas.get((name,p,v))
        if m: rates.setdefault((p,v),[]).append(abs(s-m)/m)
    cand=[(s,v) for v,s in preds.items() if (name,p,v) in meas]
    if cand and (name,p) in best:
        s,v=min(cand); t=meas[(name,p,v)]; b=best[(name,p)]
        within5.setdefault(p,[]).append(t/b-1<0.05); frac.setdefault(p,[]).append(b/t)
for k in sorted(rates):
    v=sorted(rates[k]); print(k, len(v), 'mean %.1f%% median %.1f%% p90 %.1f%%'%(100*st.mean(v),100*st.median(v),100*v[int(0.9*len(v))-1]))
for p in within5: print(p,'pick<5%%: %d/%d, mean fraction of best %.1f%%'%(sum(within5[p]),len(within5[p]),100*st.mean(frac[p])))
