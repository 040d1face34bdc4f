exec(open('explore.py').read().split("configs=sorted")[0])
import numpy as np
from sklearn.linear_model import Ridge
fam=lambda r: int(hashlib.md5(r['family'].encode()).hexdigest(),16)%5
configs=sorted({t['config'] for r in rows for t in r['times']})
def base(r,t):
    f=r['features']; a=f['access']; vb=4 if r['precision']=='f32' else 8
    fp=t.get('footprint_bytes') or 0
    xs=(a['x_sectors_f32'] if vb==4 else a['x_sectors_f64'])
    xb = min(xs*32, f['ncols']*vb) if f['ncols']*vb > L2/2 else f['ncols']*vb
    ws=fp+xb+f['nrows']*vb
    return 2e-6 + ws/BW
res={'A':[], 'B':[], 'C':[]}
for prec in ['f32','f64']:
  for c in configs:
    X=[];y=[];grp=[];b=[]
    for r in rows:
        if r['precision']!=prec: continue
        t=[t for t in r['times'] if t['config']==c][0]
        if t['status']!='ok': continue
        X.append(feats(r,c,t)); y.append(np.log(t['median_s'])); grp.append(fam(r)); b.append(np.log(base(r,t)))
    X=np.array(X);y=np.array(y);grp=np.array(grp);b=np.array(b)
    X2=np.column_stack([X,b])
    pa=np.zeros_like(y); pb=np.zeros_like(y); pc=np.zeros_like(y)
    for k in range(5):
        tr=grp!=k; te=grp==k
        gb=lambda: HistGradientBoostingRegressor(max_iter=300,learning_rate=0.05,max_leaf_nodes=15,min_samples_leaf=5)
        m=gb().fit(X2[tr],y[tr]-b[tr]); pa[te]=b[te]+m.predict(X2[te])
        lr=Ridge(alpha=1e-3).fit(X2[tr],y[tr]); r0=y[tr]-lr.predict(X2[tr])
        m=gb().fit(X2[tr],r0); pb[te]=lr.predict(X2[te])+m.predict(X2[te])
        pc[te]=lr.predict(X2[te])
    for key,p in [('A',pa),('B',pb),('C',pc)]:
        res[key].append(np.abs(np.exp(p-y)-1))
for k,v in res.items():
    e=np.concatenate(v); print(k,"median %.2f%% mean %.2f%% p90 %.1f%% w10 %.1f%%"%(100*np.median(e),100*e.mean(),100*np.percentile(e,90),100*(e<0.1).mean()))
