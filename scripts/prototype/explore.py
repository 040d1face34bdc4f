import gzip, json, numpy as np, sys, hashlib
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.model_selection import GroupKFold
g=sys.argv[1]
rows=[json.loads(l) for l in gzip.open(f"../../data/corpus/{g}.jsonl.gz")]
L2={'h100':50e6,'h200':60e6}[g]; BW={'h100':3.0e12,'h200':4.26e12}[g]
def feats(r, c, t):
    f=r['features']; a=f['access']; vb=4 if r['precision']=='f32' else 8
    nnz=max(f['nnz'],1); n=max(f['nrows'],1)
    fp=t.get('footprint_bytes') or 0
    ws=fp+(f['nrows']+f['ncols'])*vb
    xs=(a['x_sectors_f32'] if vb==4 else a['x_sectors_f64'])
    ws_x = fp + xs*32 + f['nrows']*vb
    ws_row = fp + a['row_sectors_f64']*32*(vb/8) + f['nrows']*vb
    return [np.log(nnz), np.log(n), np.log(max(f['ncols'],1)), np.log1p(f['max_nnz']), np.log1p(f['mean_nnz']), np.log1p(f['std_nnz']),
            np.log1p(f['mode_nnz']), np.log(ws), np.log(ws_x), np.log(ws_row), ws/L2, np.log(xs/nnz), np.log(a['row_sectors_f64']/nnz),
            *[np.log1p(s) for s in a['warp_steps']], np.log(f['ell_padding_ratio']), f['empty_rows']/n, np.log1p(f['diagonals']), np.log1p(f['bandwidth']/n), vb,
            np.log(max(ws/BW, 1e-9)), np.log(a['cols_used']+1)]
configs=sorted({t['config'] for r in rows for t in r['times']})
fam=lambda r: int(hashlib.md5(r['family'].encode()).hexdigest(),16)%5
allres={}
for prec in ['f32','f64']:
  for c in configs:
    X=[];y=[];grp=[];sp=[]
    for r in rows:
        if r['precision']!=prec: continue
        t=[t for t in r['times'] if t['config']==c][0]
        if t['status']!='ok': continue
        X.append(feats(r,c,t)); y.append(np.log(t['median_s'])); grp.append(fam(r))
    X=np.array(X);y=np.array(y);grp=np.array(grp)
    pred=np.zeros_like(y)
    for k in range(5):
        tr=grp!=k; te=grp==k
        m=HistGradientBoostingRegressor(max_iter=300,learning_rate=0.05,max_leaf_nodes=15,min_samples_leaf=5).fit(X[tr],y[tr])
        pred[te]=m.predict(X[te])
    err=np.abs(np.exp(pred-y)-1)
    allres[(prec,c)]=err
    print(prec,c,len(y),"median %.1f%% mean %.1f%% p90 %.1f%% w10 %.0f%%"%(100*np.median(err),100*err.mean(),100*np.percentile(err,90),100*(err<0.1).mean()))
e=np.concatenate(list(allres.values()))
print("ALL median %.2f%% mean %.2f%% w10 %.1f%%"%(100*np.median(e),100*e.mean(),100*(e<0.1).mean()))
