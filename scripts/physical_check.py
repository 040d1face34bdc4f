#!/usr/bin/env python3
"""Are a profile's predictions physically possible? (issue 14; docs/ACCURACY.md)

Over the records of `sparsecast train --score … --records R.jsonl`: how many `sparsecast`
predictions fall below the profile's launch floor (the `sparsecast` model's device floor, per
precision), and the bandwidth each prediction implies where the configuration's footprint is at
least twice the L2 (so it must stream from DRAM), against the HBM peak. The bytes are those the
kernel moves (session 54): the footprint less the padding that the ELL, HYB, SELL-C-σ and
(session 56) DIA kernels may skip (`Summary::moved` in the tool), from the record's features.

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


def skipped_bytes(r, f, vb):
    """Bytes of padding the configuration's kernel may skip (0 where it reads all it stores):
    ELL's and HYB's padding values, SELL's padding slots, DIA's slots outside the columns
    (`FormatKind::skipped_bytes`)."""
    if not f:
        return 0
    base = r["config"].split("@")[0]
    if base == "ell":
        return max(f["max_nnz"] * f["nrows"] - f["nnz"], 0) * vb
    if base == "hyb":
        return max(f["hyb_width"] * f["nrows"] - (f["nnz"] - f["hyb_coo_nnz"]), 0) * vb
    if base == "dia":
        # Slots outside the columns (session 56; absent in rows featured before it).
        return (((f.get("access") or {}).get("dia") or {}).get("outside") or 0) * vb
    if base.startswith("sell"):
        c, sigma = (512, 2048) if base == "sell-c512-s2048" else (32, 256)
        for cnt in (f.get("access") or {}).get("sell") or []:
            if cnt["c"] == c and cnt["sigma"] == sigma:
                return max(cnt["slots"] - f["nnz"], 0) * (4 + vb)
    return 0


n = below = 0
fastest = {}
features = {}
worst_bw = (0.0, None)
below_list = []
for line in (gzip.open(records, "rt") if records.endswith(".gz") else open(records)):
    r = json.loads(line)
    if r.get("features"):
        features[r["matrix"]] = r["features"]
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
    if fb:
        fb -= skipped_bytes(r, features.get(r["matrix"]), 4 if prec == "f32" else 8)
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
