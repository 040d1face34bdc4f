#!/usr/bin/env python3
"""The tables of docs/OPTIMIZER.md from the opt-<set>-<precision>.json files (or .json.gz) of one
GPU's run of scripts/device_optimizer.sh (the script calls it; re-run it offline on the unpacked
tarball):

    python3 scripts/optimizer_tables.py DIR h200 > DIR/optimizer-h200.md
"""
import sys, os, math

from jsonio import jglob, jload

w, gpu = sys.argv[1], sys.argv[2]
us = lambda s: "-" if s is None else f"{s*1e6:.1f}"
print(f"## Optimizer on the {gpu.upper()} (sparsecast model, `scripts/device_optimizer.sh`)\n")
print("| set | prec | matrices | plan adopted | answer ≤ 1.02× best single | answer ≥ 1.15× faster | DP plans ≥ 1.15× | geomean vs best single | worst | geomean vs best cuSPARSE | median pred. error | per-block cost: serial (split plans) / concurrent (DP plans) | tuned: ≤ 1.02× / geomean (worst) / vs cuSPARSE | tuned ≥ 1.15× | tuned vs best single again: ≤ 1.02× / geomean (worst) / ≥ 1.15× |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
rows = []
for f in jglob(os.path.join(w, "opt-*.json")):
    d = jload(f); s = d["summary"]; _, st, p = os.path.basename(f).removesuffix(".gz")[:-5].split("-")
    x = lambda v: "-" if v is None else f"{v:.3f}×"
    err = "-" if s["median_answer_error"] is None else f"{100 * s['median_answer_error']:.1f} %"
    cal = "-" if s["fitted_block_s"] is None else f"{s['fitted_block_s'] * 1e6:.2f} µs ({s['calibration_samples']})"
    if s.get("fitted_concurrent_block_s") is not None:
        cal += f" / {s['fitted_concurrent_block_s'] * 1e6:.2f} µs ({s['concurrent_samples']})"
    t = s.get("tuned")
    tuned = "-" if not t else (f"{t['within_102']}/{t['measured']} / {x(t['geomean_vs_best_single'])} "
                               f"({x(t['worst_vs_best_single'])}) / {x(t['geomean_vs_best_vendor'])}")
    # Tuned answers ≥ 1.15× faster than the best single of the sweep (both sweeps' times).
    fast = sum(1 for r in d["results"] if (m := r.get("measured") or {}).get("best_single")
               and (tu := m.get("tuned")) and tu.get("retimed_seconds")
               and m["best_single"][1] / tu["retimed_seconds"] >= 1.15)
    # The same against the best single timed again beside the answer (the fair ratio; summaries
    # written before session 47 lack the count).
    fast_again = sum(1 for r in d["results"] if (tu := (r.get("measured") or {}).get("tuned"))
                     and tu.get("retimed_seconds") and tu.get("best_single_retimed_seconds")
                     and tu["best_single_retimed_seconds"] / tu["retimed_seconds"] >= 1.15)
    again = "-" if not t or not t.get("retimed") else (
        f"{t['within_102_retimed']}/{t['retimed']} / {x(t['geomean_vs_retimed_best_single'])} "
        f"({x(t['worst_vs_retimed_best_single'])}) / {fast_again}")
    print(f"| {st} | {p} | {s['measured']} | {s['adopted']} | {s['within_102']} | {s['faster_115']} | "
          f"{s['plan_faster_115']}/{s['plans_measured']} | {x(s['geomean_vs_best_single'])} | "
          f"{x(s['worst_vs_best_single'])} | {x(s['geomean_vs_best_vendor'])} | {err} | {cal} | {tuned} | "
          f"{fast if t else '-'} | {again} |")
    rows += [(st, p, r) for r in d["results"]]
print("\n### Per matrix (µs; ratio = best single measured / answer measured)\n")
print("| set | prec | matrix | plan (rows: config) | adopted | answer pred. | answer meas. | DP plan meas. | best single | best cuSPARSE | ratio | tuned answer (meas. again) | tuned ratio | best single again | fair ratio |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for st, p, r in rows:
    m = r.get("measured") or {}
    plan = "; ".join(f"{b['rows'][0]}–{b['rows'][1]}: {b['config']}" for b in r["plan"])
    bs, bv = m.get("best_single"), m.get("best_vendor")
    a = m.get("answer_seconds")
    ratio = f"{bs[1]/a:.2f}" if bs and a else "-"
    print(f"| {st} | {p} | {os.path.basename(r['input'])[:40]} | {plan} | {'yes' if r['adopted'] else 'no'} | "
          f"{us(r['answer_predicted'])} | {us(a)} | {us(m.get('plan_seconds'))} | "
          f"{bs[0]+' '+us(bs[1]) if bs else '-'} | {bv[0]+' '+us(bv[1]) if bv else '-'} | {ratio} | "
          + (f"{tu['answer']} {us(tu.get('retimed_seconds'))} | "
             + (f"{bs[1]/tu['retimed_seconds']:.2f}" if bs and tu.get('retimed_seconds') else "-") + " | "
             + f"{us(tu.get('best_single_retimed_seconds'))} | "
             + (f"{tu['best_single_retimed_seconds']/tu['retimed_seconds']:.2f}"
                if tu.get('best_single_retimed_seconds') and tu.get('retimed_seconds') else "-") + " |"
             if (tu := m.get("tuned")) else "- | - | - | - |"))
