#!/usr/bin/env python3
"""The serial-vs-concurrent table of scripts/device_concurrent.sh from its conc-*.json files
(or .json.gz; `optimize --measure --overlap-splits`): one row per plan timed both ways. Re-run it
offline on the unpacked tarball:

    python3 scripts/concurrent_table.py DIR h200 > DIR/concurrent-h200.md

Columns: set, precision, the rule the DP costed with (serial/concurrent), matrix, plan (dp = the
DP's plan under that rule; split-K = the best single configuration of ours cut into K blocks of
equal non-zeros), blocks, measured serial and concurrent µs (warm mean), serial/concurrent, best
single configuration measured µs, predicted µs by the serial and the concurrent rule, whether the
concurrent run overlapped (a fork/join graph), and the largest error of y against the f64
reference over both runs (poisoned y first)."""
import sys, os, math

from jsonio import jglob, jload

short = "--short" in sys.argv  # compact fixed-width rows, summary last (the device script's output)
args = [a for a in sys.argv[1:] if a != "--short"]
w, gpu = args[0], args[1]
us = lambda s: "-" if s is None or (isinstance(s, float) and math.isnan(s)) else f"{s*1e6:.1f}"
rows, fits = [], []
for f in jglob(os.path.join(w, "conc-*.json")):
    d = jload(f)
    _, st, rule, p = os.path.basename(f).removesuffix(".gz")[:-5].split("-")
    s = d.get("summary", {})
    if s.get("fitted_concurrent_block_s") is not None:
        fits.append((st, rule, p, s["fitted_concurrent_block_s"], s["concurrent_samples"]))
    for r in d.get("results", []):
        m = r.get("measured") or {}
        bs = m.get("best_single")
        for o in m.get("overlap", []):
            rows.append((st, p, rule, os.path.basename(r["input"]), o, bs))
if short:
    print(f"{'set/prec/rule':<22} {'matrix':<28} {'plan':<8} {'blk':>3} {'serial':>8} {'conc':>8} "
          f"{'ser/conc':>8} {'best1':>8} {'pred s':>8} {'pred c':>8} ovl err")
else:
    print(f"## Serial vs concurrent plans on the {gpu.upper()} (`scripts/device_concurrent.sh`)\n")
    print("| set | prec | rule | matrix | plan | blocks | serial µs | concurrent µs | ser/conc | best single µs | pred. serial | pred. concurrent | overlapped | max error |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
gains = []
for st, p, rule, name, o, bs in rows:
    s, c = o.get("serial_seconds"), o.get("concurrent_seconds")
    g = f"{s/c:.2f}×" if s and c else "-"
    if s and c:
        gains.append(s / c)
    err = o.get("max_relative_error")
    err = "-" if err is None or (isinstance(err, float) and math.isnan(err)) else f"{err:.1e}"
    note = f" ({o['error'][:60]})" if o.get("error") else ""
    if short:
        print(f"{st + '/' + p + '/' + rule[:4]:<22} {name[:28]:<28} {o['plan']:<8} {o['blocks']:>3} "
              f"{us(s):>8} {us(c):>8} {g:>8} {us(bs[1]) if bs else '-':>8} "
              f"{us(o.get('predicted_serial_seconds')):>8} {us(o.get('predicted_concurrent_seconds')):>8} "
              f"{'yes' if o.get('overlapped') else 'no':>3} {err}{' ERROR' + note if note else ''}")
        continue
    print(f"| {st} | {p} | {rule} | {name[:38]} | {o['plan']}{note} | {o['blocks']} | {us(s)} | {us(c)} | {g} | "
          f"{us(bs[1]) if bs else '-'} | {us(o.get('predicted_serial_seconds'))} | "
          f"{us(o.get('predicted_concurrent_seconds'))} | {'yes' if o.get('overlapped') else 'no'} | {err} |")
if gains:
    gm = math.exp(sum(map(math.log, gains)) / len(gains))
    print(f"\nserial / concurrent over {len(gains)} plans: geomean {gm:.3f}×, "
          f"min {min(gains):.3f}×, max {max(gains):.3f}×; concurrent faster on "
          f"{sum(g > 1 for g in gains)}")
for st, rule, p, b, n in fits:
    print(f"concurrent per-branch cost ({st}, {p}, {rule} rule): {b*1e6:.2f} µs from {n} plans (DP plans since session 9; forced splits before)")
