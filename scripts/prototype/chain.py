# Base variants for the sparsecast model: the current T0, T0 with a longest-row chain term, and a
# smoother L2 rule for the gathers of x.  python3 chain.py h200
exec(open('explore.py').read().split("configs=sorted")[0])
import numpy as np
fam=lambda r: int(hashlib.md5(r['family'].encode()).hexdigest(),16)%5
configs=sorted({t['config'] for r in rows for t in r['times']})
def tpr(c):
    v=c.split('@')[0]
    d={'csr-scalar':1,'csr-t2':2,'csr-t4':4,'csr-t8':8,'csr-t16':16,'csr-vector':32,'jad':1,'sell':1,'sell-c512-s2048':1,'cusparse-sell':1,'ell':1,'bsr':4,'ell-bro':1}
    return d.get(v)
def xbytes(r, mode):
    f=r['features']; a=f['access']; vb=4 if r['precision']=='f32' else 8
    xs=(a['x_sectors_f32'] if vb==4 else a['x_sectors_f64'])*32.0
    X=f['ncols']*vb
    if mode=='step':
        return min(xs, X) if X > L2/2 else X  # as variants.py (min!)
    if mode=='step_max':
        return max(xs, min(X, a['cols_used']*vb)) if X > L2/2 else X
    # smooth: random reuse hits with probability min(1, C/X), C = 0.5 L2
    C=0.5*L2; hit=min(1.0, C/max(X,1.0))
    return X + max(xs-X,0.0)*(1-hit)
def parts(r,t,mode):
    f=r['features']; vb=4 if r['precision']=='f32' else 8
    fp=t.get('footprint_bytes') or 0
    return fp + xbytes(r,mode) + f['nrows']*vb
FLOOR=2e-6
def chain(r,c):
    k=tpr(c)
    if not k: return 0.0
    return np.ceil(r['features']['max_nnz']/k)
res={}
for prec in ['f32','f64']:
  for c in configs:
    X=[];y=[];grp=[];rs=[]
    for r in rows:
        if r['precision']!=prec: continue
        t=[t for t in r['times'] if t['config']==c][0]
        if t['status']!='ok': continue
        X.append(feats(r,c,t)); y.append(np.log(t['median_s'])); grp.append(fam(r)); rs.append((r,t))
    X=np.array(X);y=np.array(y);grp=np.array(grp)
    ch=np.array([chain(r,c) for r,t in rs])
    sets=np.array([r['matrix'].split('/')[0] for r,t in rs])
    for variant in ['A','D','E','F']:
        mode={'A':'step_max','D':'step_max','E':'smooth','F':'smooth'}[variant]
        by=np.array([parts(r,t,mode) for r,t in rs])
        p=np.zeros_like(y)
        for k in range(5):
            tr=grp!=k; te=grp==k
            b=FLOOR+by/BW
            if variant in ('D','F') and ch.max()>0:
                T=np.exp(y[tr]); sel=ch[tr]>=256
                L=np.percentile((T[sel]-FLOOR)/ch[tr][sel],10) if sel.sum()>=5 else 0.0
                b=FLOOR+np.maximum(by/BW, L*ch)
            lb=np.log(b)
            X2=np.column_stack([X,lb,np.log1p(ch)])
            m=HistGradientBoostingRegressor(max_iter=300,learning_rate=0.05,max_leaf_nodes=15,min_samples_leaf=5).fit(X2[tr],y[tr]-lb[tr]); p[te]=lb[te]+m.predict(X2[te])
        e=np.abs(np.exp(p-y)-1)
        res.setdefault(variant,[]).append((e,sets))
for k,v in res.items():
    e=np.concatenate([a for a,_ in v]); s=np.concatenate([b for _,b in v])
    out="%s all median %.2f%% mean %.2f%% w10 %.1f%%"%(k,100*np.median(e),100*e.mean(),100*(e<0.1).mean())
    for q in ['mats','kron','gen']: out+=" | %s %.1f/%.1f"%(q,100*np.median(e[s==q]),100*e[s==q].mean())
    print(out)
