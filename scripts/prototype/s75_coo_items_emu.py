#!/usr/bin/env python3
"""The logic of scripts/prototype/s75_coo_items.patch (the coarsened COO kernel, session 75)
emulated on the CPU, warp by warp and shuffle by shuffle, against y = A·x on random sorted COO
matrices (short, long, one-entry, mostly empty rows), for every interval length and K = 0 (the
shipped chunks only), 4 and 8, with y zero (COO) and pre-filled (HYB's tail adds to ELL's y).
Integer values, so the sums are exact. Prints "bad 0" when every case agrees.

    python3 scripts/prototype/s75_coo_items_emu.py
"""
import random
PAD=0xffffffff
def shfl_up(vals,d): return [vals[l-d] if l>=d else vals[l] for l in range(32)]
def shfl_down(vals,d): return [vals[l+d] if l+d<32 else vals[l] for l in range(32)]
def chunk(base,end,rows,cols,val,x,y,carry):
    r=[rows[base+l] if base+l<end else PAD for l in range(32)]
    v=[val[base+l]*x[cols[base+l]] if base+l<end else 0.0 for l in range(32)]
    cr,cv=carry
    if cr!=PAD:
        if r[0]==cr: v[0]+=cv
        else: y[cr]+=cv
    d=1
    while d<32:
        vo=shfl_up(v,d); ro=shfl_up(r,d)
        v=[v[l]+vo[l] if (l>=d and ro[l]==r[l]) else v[l] for l in range(32)]
        d*=2
    rn=shfl_down(r,1)
    for l in range(32):
        tail= l==31 or rn[l]!=r[l]
        if tail and l!=31 and r[l]!=PAD: y[r[l]]+=v[l]
    return (r[31],v[31])
def tile(base,K,rows,cols,val,x,y,carry):
    R=[[rows[base+l*K+i] for i in range(K)] for l in range(32)]
    P=[[val[base+l*K+i]*x[cols[base+l*K+i]] for i in range(K)] for l in range(32)]
    cr,cv=carry
    if cr!=PAD:
        if R[0][0]==cr: P[0][0]+=cv
        else: y[cr]+=cv
    key=[0]*32; v=[0.0]*32; first=[0.0]*32; split=[False]*32
    for l in range(32):
        k=R[l][0]; s=P[l][0]; f=0.0; sp=False
        for i in range(1,K):
            if R[l][i]==k: s+=P[l][i]
            else:
                if sp: y[k]+=s
                else: f=s; sp=True
                k=R[l][i]; s=P[l][i]
        key[l]=k; v[l]=s; first[l]=f; split[l]=sp
    d=1
    while d<32:
        vo=shfl_up(v,d); ko=shfl_up(key,d)
        v=[v[l]+vo[l] if (l>=d and ko[l]==key[l]) else v[l] for l in range(32)]
        d*=2
    pv=shfl_up(v,1); pk=shfl_up(key,1); nf=shfl_down([R[l][0] for l in range(32)],1)
    for l in range(32):
        if split[l]:
            f=first[l]
            if l>0 and pk[l]==R[l][0]: f+=pv[l]
            y[R[l][0]]+=f
        if l!=31 and nf[l]!=key[l]: y[key[l]]+=v[l]
    return (key[31],v[31])
def spmv(nrows,rows,cols,val,x,chunks,K,y):
    nnz=len(rows)
    nw=(nnz+32*chunks-1)//(32*chunks)
    for w in range(nw):
        begin=w*chunks*32; end=min(begin+chunks*32,nnz)
        carry=(PAD,0.0); base=begin
        if K:
            while base+32*K<=end:
                carry=tile(base,K,rows,cols,val,x,y,carry); base+=32*K
        while base<end:
            carry=chunk(base,end,rows,cols,val,x,y,carry); base+=32
        if carry[0]!=PAD: y[carry[0]]+=carry[1]
def test(trials=300):
    rnd=random.Random(1)
    bad=0
    for t in range(trials):
        nrows=rnd.randint(1,300); ncols=rnd.randint(1,50)
        kind=rnd.choice(["short","long","mixed","one","empty"])
        lens=[]
        for i in range(nrows):
            if kind=="short": L=rnd.randint(0,3)
            elif kind=="long": L=rnd.randint(0,200)
            elif kind=="one": L=1
            elif kind=="empty": L=rnd.choice([0,0,0,5,70])
            else: L=rnd.choice([0,1,2,3,5,9,31,32,33,64,129])
            lens.append(L)
        rows=[i for i in range(nrows) for _ in range(lens[i])]
        cols=[rnd.randrange(ncols) for _ in rows]
        val=[float(rnd.randint(-4,4)) for _ in rows]
        x=[float(rnd.randint(-3,3)) for _ in range(ncols)]
        ref=[0.0]*nrows
        for r,c,v in zip(rows,cols,val): ref[r]+=v*x[c]
        for chunks in (1,2,3,4,5,8,13):
            for K in (0,4,8):
                for hyb in (False,True):
                    y0=[float(rnd.randint(-2,2)) if hyb else 0.0 for _ in range(nrows)]
                    y=list(y0)
                    spmv(nrows,rows,cols,val,x,chunks,K,y)
                    if any(abs(a-(b+c))>1e-9 for a,b,c in zip(y,ref,y0)):
                        bad+=1
                        if bad<5: print("mismatch",kind,nrows,len(rows),chunks,K,hyb)
    print("trials",trials,"bad",bad)
test()
