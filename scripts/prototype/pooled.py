exec(open('variants.py').read().split("res={'A'")[0])
import numpy as np
cfgs=configs
def cdesc(c):
    v=c.split('@')[0]; bs=int(c.split('@')[1]) if '@' in c else 256
    oh=[1.0 if v==x else 0.0 for x in sorted({q.split('@')[0] for q in cfgs})]
    return oh+[np.log2(bs)]
tpr={'csr-scalar':0,'csr-t2':1,'csr-t4':2,'csr-t8':3,'csr-t16':4,'csr-vector':5}
for prec in ['f32','f64']:
    X=[];y=[];grp=[];b=[];cc=[]
    for r in rows:
        if r['precision']!=prec: continue
        for t in r['times']:
            if t['status']!='ok': continue
            c=t['config']; v=c.split('@')[0]
            ft=feats(r,c,t); a=r['features']['access']
            ws=np.log1p(a['warp_steps'][tpr[v]]) if v in tpr else 0.0
            X.append(ft+cdesc(c)+[ws]); y.append(np.log(t['median_s'])); grp.append(fam(r)); b.append(np.log(base(r,t))); cc.append(c)
    X=np.array(X);y=np.array(y);grp=np.array(grp);b=np.array(b);X=np.column_stack([X,b])
    p=np.zeros_like(y)
    for k in range(5):
        tr=grp!=k; te=grp==k
        m=HistGradientBoostingRegressor(max_iter=1500,learning_rate=0.05,max_leaf_nodes=31,min_samples_leaf=10).fit(X[tr],y[tr]-b[tr]); p[te]=b[te]+m.predict(X[te])
    e=np.abs(np.exp(p-y)-1)
    print(prec,"pooled median %.2f%% mean %.2f%% p90 %.1f%% w10 %.1f%%"%(100*np.median(e),100*e.mean(),100*np.percentile(e,90),100*(e<0.1).mean()))
