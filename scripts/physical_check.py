#!/usr/bin/env python3
"""Are a profile's predictions physically possible? (issue 14; docs/ACCURACY.md)

Over the records of `sparsecast train --score … --records R.jsonl`: how many `sparsecast`
predictions fall below the profile's launch floor (the `sparsecast` model's device floor, per
precision), and the bandwidth each prediction implies where the configuration's footprint is at
least twice the L2 (so it must stream from DRAM), against the HBM peak.

    python3 scripts/physical_check.py /tmp/score-h200.jsonl profiles/h200.json.gz 60e6 4.8e12
"""
import gzip
import json
import sys

records, profile, l2, peak = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
prof = json.load(gzip.open(profile) if profile.endswith(".gz") else open(profile))
# The launch floor of the `sparsecast` model's device model, per precision.
floor = {
    p["precision"]: m["model"]["device"]["floor_s"]
    for p in prof["precisions"]
    for m in p["models"]
    if m.get("name") == "sparsecast"
}
n = below = 0
fastest = {}
worst_bw = (0.0, None)
below_list = []
for line in open(records):
    r = json.loads(line)
    pr = r.get("predictions", {}).get("sparsecast")
    if not pr or r.get("status") != "ok":
        continue
    s, prec = pr["seconds"], r["precision"]
    n += 1
    fastest[prec] = min(fastest.get(prec, 1.0), s)
    if s < floor[prec]:
        below += 1
        below_list.append((s / floor[prec], r["config"], r["matrix"][:60], s, r["median_s"]))
    fb = r.get("footprint_bytes")
    if fb and fb >= 2 * l2:
        bw = fb / s
        if bw > worst_bw[0]:
            worst_bw = (bw, (r["config"], r["matrix"][:60], prec, s, r["median_s"]))
print(f"{n} predictions; launch floors {', '.join(f'{k} {v * 1e6:.3f} µs' for k, v in floor.items())}")
print(f"below the floor: {below}; fastest prediction: "
      + ", ".join(f"{k} {v * 1e6:.3f} µs" for k, v in sorted(fastest.items())))
for x in sorted(below_list)[:5]:
    print(f"  {x[0]:.4f} of the floor: {x[1]} on {x[2]} ({x[3] * 1e6:.3f} µs predicted, {x[4] * 1e6:.3f} measured)")
bw, w = worst_bw
print(f"highest implied bandwidth (footprint >= 2x L2): {bw / 1e12:.2f} TB/s against a {peak / 1e12:.2f} TB/s peak"
      + (f" ({w[0]} on {w[1]}, {w[2]}: {w[3] * 1e6:.1f} µs predicted, {w[4] * 1e6:.1f} measured)" if w else ""))
