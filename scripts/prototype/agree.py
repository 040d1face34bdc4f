import gzip, json, numpy as np
for g in ['h200','h100']:
    ev={}
    for l in gzip.open(f'../../docs/{g}/timing/new1.jsonl.gz'):
        r=json.loads(l)
        if r['status']=='ok' and r.get('median_s'): ev[(r['matrix'].split('/')[-1],r['precision'],r['config'])]=r['median_s']
    ev2={}
    for l in gzip.open(f'../../docs/{g}/timing/new2.jsonl.gz'):
        r=json.loads(l)
        if r['status']=='ok' and r.get('median_s'): ev2[(r['matrix'].split('/')[-1],r['precision'],r['config'])]=r['median_s']
    d=[];d2=[]
    for l in gzip.open(f'../../data/corpus/{g}.jsonl.gz'):
        r=json.loads(l)
        for t in r['times']:
            k=(r['matrix'].split('/')[-1],r['precision'],t['config'])
            if t['status']=='ok' and k in ev:
                d.append(abs(t['median_s']/ev[k]-1))
                if k in ev2: d2.append(abs(ev2[k]/ev[k]-1))
    d=np.array(d); d2=np.array(d2)
    print(g,"collect vs evaluate: n=%d median %.2f%% p90 %.2f%% max %.1f%% | evaluate vs evaluate: median %.2f%% p90 %.2f%% max %.1f%%"%(len(d),100*np.median(d),100*np.percentile(d,90),100*d.max(),100*np.median(d2),100*np.percentile(d2,90),100*d2.max()))
