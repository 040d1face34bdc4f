#!/usr/bin/env python3
"""A stack predicted from its parts (docs/ACCURACY.md, session 70).

    sparsecast train --score --data data/corpus/h200-s14.jsonl.gz data/corpus/h200-seg-s14.jsonl.gz \\
        --base profiles/h200.json.gz --models sparsecast --records /tmp/s14.jsonl.gz
    python3 scripts/stack_parts_probe.py /tmp/s14.jsonl.gz [target/release/sparsecast] [N]

Takes N (default 150; a fixed random sample) of seed 14's stacks of at most 600,000 non-zeros,
regenerates each of their parts alone (`sparsecast generate spec`, a temporary file), predicts
every configuration of each part with the embedded H200 profile (`predict --json`, f64), and
prints per configuration the share of the stack's f64 measurements within 10 % of: the stack's
own prediction (`own`), the largest of its parts' predictions (`max of parts`: the parts run side
by side, the slowest decides) and the geometric mean of the two (`blend`). Session 45 tried the
sum of the parts (worse). ≈ 2 min on the 2-core build machine. With CHAIN_BOUND=1: every such
stack whose `csr-scalar` time the longest row rules (0.16 µs a step × the longest row ≥ 10× its
footprint at 4.0 TB/s; scripts/heavy_rows_probe.py's set), not a sample. With SEGMENT=1 the
parts are not taken from the recorded spec but found blind, as a real matrix would need: the whole
stack regenerated and its rows cut where the warps' longest row changes level (a factor of 2 in
`log2`) and the new level holds at least 8 warps (`segments`); each segment predicted alone.
"""
import collections
import json
import math
import os
import random
import subprocess
import sys
import tempfile

from heavy_rows_probe import SMALL_NNZ, is_chain_bound, load_records, read_rows, within10


def segments(lens, warp=32, hold=8):
    """Row offsets where the level (`floor(log2)` of each warp's longest row) changes by at least
    one and the new level holds `hold` warps (or runs to the end): [0, …, len(lens)]."""
    level = []
    for i in range(0, len(lens), warp):
        top = max(lens[i:i + warp])
        level.append(int(math.log2(top)) if top > 0 else -1)
    cuts, cur, i = [0], level[0], 1
    while i < len(level):
        if level[i] != cur:
            j = i
            while j < len(level) and level[j] == level[i] and j - i < hold:
                j += 1
            if j - i >= hold or j == len(level):
                cuts.append(i * warp)
                cur, i = level[i], j
                continue
        i += 1
    return cuts + [len(lens)]


def blind_parts(sc, spec, d):
    """The stack of `spec` regenerated, cut by [`segments`], each segment written as its own
    Matrix Market file (same columns): the paths."""
    whole = os.path.join(d, "whole.mtx")
    subprocess.run([sc, "generate", "spec", json.dumps(spec), "--out", whole], check=True,
                   capture_output=True)
    header, nrows, ncols, rows = read_rows(whole)
    cuts = segments([len(rows.get(i, ())) for i in range(nrows)])
    paths = []
    for k, (a, b) in enumerate(zip(cuts, cuts[1:])):
        entries = [(i - a + 1, rest) for i in range(a, b) for rest in rows.get(i, ())]
        if entries:
            path = os.path.join(d, f"segment{k}.mtx")
            with open(path, "w") as fh:
                fh.write(header)
                fh.write(f"{b - a} {ncols} {len(entries)}\n")
                fh.writelines(f"{i} {rest}" for i, rest in entries)
            paths.append(path)
    return paths


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sc = sys.argv[2] if len(sys.argv) > 2 else "target/release/sparsecast"
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 150
    recs, features = load_records(sys.argv[1])
    chain_bound = {r["matrix"] for r in recs if r["config"] == "csr-scalar" and r["precision"] == "f64"
                   and r["matrix"] in features
                   and is_chain_bound(features[r["matrix"]], r["footprint_bytes"])}
    only_chain = os.environ.get("CHAIN_BOUND") == "1"
    stacks, spec_of = collections.defaultdict(dict), {}
    for r in recs:
        p = (r.get("predictions") or {}).get("sparsecast")
        if (r.get("status") != "ok" or not r.get("median_s") or r["precision"] != "f64"
                or "-stack-" not in r["matrix"] or not p
                or features.get(r["matrix"], {}).get("nnz", math.inf) > SMALL_NNZ
                or (only_chain and r["matrix"] not in chain_bound)):
            continue
        stacks[r["matrix"]][r["config"]] = (r["median_s"], p["seconds"])
        spec_of[r["matrix"]] = r["source"]["generated"]
    random.seed(70)
    sample = sorted(stacks) if only_chain else random.sample(sorted(stacks), min(count, len(stacks)))
    errs = collections.defaultdict(lambda: ([], [], []))
    blind = os.environ.get("SEGMENT") == "1"
    with tempfile.TemporaryDirectory() as d:
        for m in sample:
            if blind:
                files = blind_parts(sc, spec_of[m], d)
            else:
                files = []
                for k, part in enumerate(spec_of[m]["parts"]):
                    files.append(os.path.join(d, f"part{k}.mtx"))
                    subprocess.run([sc, "generate", "spec", json.dumps(part), "--out", files[-1]],
                                   check=True, capture_output=True)
            parts = []
            for path in files:
                out = subprocess.run([sc, "predict", path, "--gpu", "h200", "--precision", "f64",
                                      "--json"], check=True, capture_output=True, text=True).stdout
                kernels = json.loads(out)["results"][0]["kernels"]
                parts.append({k["variant"]: k["seconds"] for k in kernels
                              if k["model"] == "sparsecast" and k.get("seconds")})
            for c, (meas, pred) in stacks[m].items():
                if not all(c in p for p in parts):
                    continue
                own = math.log(pred / meas)
                most = math.log(max(p[c] for p in parts) / meas)
                for key in ("every configuration", c.split("@")[0]):
                    for lst, e in zip(errs[key], (own, most, (own + most) / 2)):
                        lst.append(e)
    which = ("chain-bound " if only_chain else "") + ("(parts found blind) " if blind else "")
    print(f"{len(sample)} {which}stacks of seed 14 (f64, <= 600,000 non-zeros), within 10 % of the measurement:")
    print(f"{'configuration':20s} {'n':>5s} {'own':>6s} {'max of parts':>13s} {'blend':>6s}")
    for key in sorted(errs, key=lambda k: (k != "every configuration", k)):
        own, most, blend = errs[key]
        print(f"{key:20s} {len(own):5d} {within10(own):6.1f} {within10(most):13.1f} {within10(blend):6.1f}")


if __name__ == "__main__":
    main()
