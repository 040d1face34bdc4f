exec(open('explore.py').read().split("configs=sorted")[0])
import numpy as np
configs=['csr-vector','ell','csr-scalar','coo','bsr']
fam=lambda r: int(hashlib.md5(r['family'].encode()).hexdigest(),16)%5
for c in configs:
  for prec in ['f64']:
    X=[];y=[];grp=[];meta=[]
    for r in rows:
        if r['precision']!=prec: continue
        t=[t for t in r['times'] if t['config']==c][0]
        if t['status']!='ok': continue
        X.append(feats(r,c,t)); y.append(np.log(t['median_s'])); grp.append(fam(r)); meta.append((r['matrix'],r['features']['nnz'],t['median_s']))
    X=np.array(X);y=np.array(y);grp=np.array(grp)
    pred=np.zeros_like(y)
    for k in range(5):
        tr=grp!=k; te=grp==k
        m=HistGradientBoostingRegressor(max_iter=300,learning_rate=0.05,max_leaf_nodes=15,min_samples_leaf=5).fit(X[tr],y[tr])
        pred[te]=m.predict(X[te])
    err=np.abs(np.exp(pred-y)-1)
    nnz=np.array([m[1] for m in meta]); src=np.array([m[0].split('/')[0] for m in meta]); tm=np.array([m[2] for m in meta])
    print(c)
    for lo,hi in [(0,1e4),(1e4,1e5),(1e5,1e6),(1e6,1e7),(1e7,1e9)]:
        s=(nnz>=lo)&(nnz<hi)
        print("  nnz %g-%g n=%d median %.1f%% mean %.1f%% time med %.1fus"%(lo,hi,s.sum(),100*np.median(err[s]),100*err[s].mean(),1e6*np.median(tm[s])))
    for k in ['mats','kron','gen']:
        s=src==k; print("  ",k,s.sum(),"median %.1f%% mean %.1f%%"%(100*np.median(err[s]),100*err[s].mean()))
    idx=np.argsort(-err)[:6]
    for i in idx: print("    worst",meta[i][0],meta[i][1],"%.1fus"%(1e6*meta[i][2]),"%.0f%%"%(100*err[i]))
