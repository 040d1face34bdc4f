#!/usr/bin/env python3
"""What the shipped profile's picks would do with HYB under programmatic dependent launch
(session 82, docs/ACCURACY.md), replayed on score records — the first stage only (the argmin of
the `sparsecast` predictions, as scripts/stack_breakdown.py counts it):

  none    the predictions as they are (a model of the plain launch sequence);
  corr    HYB's prediction, where HYB has a COO part, times the median new / old ratio of HYB's
          time on the training draws' matrices (seeds 11, 12 and 13 timed again) in the band of
          the predicted time — a correction fitted without seed 14;
  oracle  HYB's prediction times seed 14's own measured new / old ratio (its old relative error
          kept): the most any correction of HYB alone could reach.

    python3 scripts/hyb_pdl_replay.py R_NEW.jsonl R_OLD.jsonl
      R_NEW: `sparsecast train --score --records` on seed 14 with HYB's times replaced by the
      PDL ones (scripts/replace_times.py), R_OLD: on the table as shipped.
Training pairs: data/corpus/h200-s{11,12,13}.jsonl.gz against docs/h200/session82/s{11,12,13}-hyb-pdl.jsonl.gz.
"""
import collections
import gzip
import json
import math
import statistics as st
import sys

EDGES_US = [2.5, 3, 3.5, 4, 5, 6, 8, 10, 15, 20]
VENDOR = ("cusparse-csr-alg1", "cusparse-csr-alg2", "cusparse-coo-alg1", "cusparse-coo-alg2",
          "cusparse-sell")


def band(t):
    return sum(t * 1e6 >= e for e in EDGES_US)


def hyb_times(path):
    d = {}
    for line in gzip.open(path, "rt"):
        r = json.loads(line)
        for t in r["times"]:
            if t["config"] == "hyb" and t["status"] == "ok":
                d[(r["matrix"], r["precision"])] = (t["median_s"], r["features"]["hyb_coo_nnz"])
    return d


def correction():
    """Per precision and band of the old time: the median ln(new / old) where HYB has a COO part."""
    g = collections.defaultdict(list)
    for s in (11, 12, 13):
        old = hyb_times(f"data/corpus/h200-s{s}.jsonl.gz")
        new = hyb_times(f"docs/h200/session82/s{s}-hyb-pdl.jsonl.gz")
        for k, (t, coo) in new.items():
            if k in old and coo > 0:
                g[(k[1], band(old[k][0]))].append(math.log(t / old[k][0]))
    return {k: st.median(v) for k, v in g.items()}


def records(path):
    recs, coo = collections.defaultdict(dict), {}
    for line in open(path):
        r = json.loads(line)
        if r.get("features"):
            coo[r["matrix"]] = r["features"]["hyb_coo_nnz"]
        p = (r.get("predictions") or {}).get("sparsecast")
        if r["status"] == "ok" and r.get("median_s") and p:
            recs[(r["matrix"], r["precision"])][r["config"]] = (r["median_s"], p["seconds"])
    return recs, coo


def main():
    new, coo = records(sys.argv[1])
    old, _ = records(sys.argv[2])
    corr = correction()
    print("precision mode    picks≤5%  fraction  HYB≤10%  all≤10%  vs cuSPARSE  below 0.95×")
    for prec in ("f32", "f64"):
        for mode in ("none", "corr", "oracle"):
            n = w = fr = h10 = hn = a10 = an = below = 0
            logs = []
            for k, v in new.items():
                if k[1] != prec:
                    continue
                preds = {}
                for c, (t, p) in v.items():
                    if c == "hyb" and coo.get(k[0], 1) > 0:
                        if mode == "corr":
                            p *= math.exp(corr.get((prec, band(p)), 0.0))
                        elif mode == "oracle" and "hyb" in old.get(k, {}):
                            p *= t / old[k]["hyb"][0]
                    preds[c] = p
                    if c == "hyb":
                        hn, h10 = hn + 1, h10 + (abs(p / t - 1) <= 0.1)
                    an, a10 = an + 1, a10 + (abs(p / t - 1) <= 0.1)
                best = min(t for t, _ in v.values())
                pick = min(preds, key=preds.get)
                n, w, fr = n + 1, w + (v[pick][0] <= 1.05 * best), fr + best / v[pick][0]
                cu = min(v[c][0] for c in VENDOR if c in v)
                logs.append(math.log(cu / v[pick][0]))
                below += cu / v[pick][0] < 0.95
            print(f"{prec}       {mode:<7} {100 * w / n:6.1f} %  {100 * fr / n:6.2f} %  "
                  f"{100 * h10 / hn:5.1f} %  {100 * a10 / an:5.1f} %  "
                  f"{math.exp(st.mean(logs)):.4f}×     {below}")


if __name__ == "__main__":
    main()
