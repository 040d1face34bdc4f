#!/usr/bin/env python3
"""The fixed subsets of the seed-1 corpus that smaller targets measure (`collect --only FILE`),
made from the committed full tables: only matrices measured on both GPUs
(data/corpus/h200.jsonl.gz and h100.jsonl.gz), so that either is a reference.

  partitions  (scripts/device_partitions.sh, green-context partitions of 8/16/32/72 SMs):
              6 generated matrices of 1-4 x 10^6 non-zeros (nearest to 6 log-spaced sizes),
              then every SuiteSparse file, then 6 generated of 10^3-3.2 x 10^5 (nearest to
              10^3, 10^3.5 ... 10^5.5) -- the large ones first, so that a time budget cuts
              the cheap end;
  cpu         (the CPU backend as a target): every SuiteSparse file, the generated matrices
              of 1-2 x 10^6 non-zeros (the large set), then every other generated matrix
              and Kronecker expansion of at most 2 x 10^6 non-zeros, by size; none whose
              largest format (ELL of a skewed matrix) exceeds 256 MB on either GPU.

  python3 scripts/make_subsets.py      # writes data/corpus/subset-{partitions,cpu}.txt
"""
import gzip, json, math

FOOTPRINT = {}  # the largest format's arrays (bytes, f64) of each matrix on either GPU


def nnz_of(gpu):
    out = {}
    for line in gzip.open(f"data/corpus/{gpu}.jsonl.gz"):
        r = json.loads(line)
        if r["precision"] == "f64":
            out[r["matrix"]] = r["features"]["nnz"]
            fp = max((t.get("footprint_bytes") or 0) for t in r["times"])
            FOOTPRINT[r["matrix"]] = max(FOOTPRINT.get(r["matrix"], 0), fp)
    return out

a, b = nnz_of("h200"), nnz_of("h100")
both = {m: n for m, n in a.items() if m in b}
files = sorted(m for m in both if m.startswith("mats/"))
gen = sorted((n, m) for m, n in both.items() if m.startswith("gen/"))
kron = sorted((n, m) for m, n in both.items() if m.startswith("kron/"))

def nearest(targets, pool):
    chosen = []
    for t in targets:
        left = [(abs(math.log(n / t)), n, m) for n, m in pool if m not in chosen]
        chosen.append(min(left)[2])
    return chosen

large = nearest([1e6 * 4 ** (k / 5) for k in range(6)], [g for g in gen if 1e6 <= g[0] <= 4.2e6])
small = nearest([10 ** (3 + k / 2) for k in range(6)], [g for g in gen if g[0] < 1e6])
header = "# made by scripts/make_subsets.py from data/corpus/h200.jsonl.gz and h100.jsonl.gz\n"
with open("data/corpus/subset-partitions.txt", "w") as f:
    f.write(header + "# green-context partitions: large generated, files, small generated\n")
    for m in large + files + small:
        f.write(f"{m}  # {both[m]} non-zeros\n")
# Files, then the generated matrices of the large set (>= 10^6 non-zeros) before the rest, so
# that a time budget cuts the unscored end (the rest only widens the calibration's choice).
small_cpu = sorted(gen + kron)
# Left out: matrices whose largest format (ELL padded to a skewed row: up to 38 GB) exceeds
# 256 MB -- minutes of the shared host's memory bandwidth for one configuration.
fits = lambda m: FOOTPRINT[m] <= 256e6
cpu = [m for m in files + [m for n, m in gen if 1e6 <= n <= 2e6]
       + [m for n, m in small_cpu if n < 1e6 or (m.startswith("kron/") and n <= 2e6)] if fits(m)]
with open("data/corpus/subset-cpu.txt", "w") as f:
    f.write(header + "# the CPU backend: files, generated of 1-2e6 non-zeros, then the rest <= 2e6 by size;\n"
            "# none whose largest format exceeds 256 MB on the GPUs\n")
    for m in cpu:
        f.write(f"{m}  # {both[m]} non-zeros\n")
print(f"partitions: {len(large)} large + {len(files)} files + {len(small)} small; cpu: {len(cpu)}")
