#!/usr/bin/env python3
"""The fixed subsets of the seed-1 corpus that smaller targets measure (`collect --only FILE`),
made from the committed full tables: only matrices measured on both GPUs
(data/corpus/h200.jsonl.gz and h100.jsonl.gz), so that either is a reference.

  partitions  (scripts/device_partitions.sh, green-context partitions of 8/16/32/72 SMs):
              6 generated matrices of 1-4 x 10^6 non-zeros (nearest to 6 log-spaced sizes),
              then every SuiteSparse file, then 6 generated of 10^3-3.2 x 10^5 (nearest to
              10^3, 10^3.5 ... 10^5.5) -- the large ones first, so that a time budget cuts
              the cheap end;
  cpu         (the CPU backend as a target): every SuiteSparse file, then every generated
              matrix and Kronecker expansion of at most 2 x 10^6 non-zeros, by size.

  python3 scripts/make_subsets.py      # writes data/corpus/subset-{partitions,cpu}.txt
"""
import gzip, json, math

def nnz_of(gpu):
    out = {}
    for line in gzip.open(f"data/corpus/{gpu}.jsonl.gz"):
        r = json.loads(line)
        if r["precision"] == "f64":
            out[r["matrix"]] = r["features"]["nnz"]
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
cpu = files + [m for n, m in sorted(gen + kron) if n <= 2e6]
with open("data/corpus/subset-cpu.txt", "w") as f:
    f.write(header + "# the CPU backend: files, then generated and Kronecker <= 2e6 non-zeros\n")
    for m in cpu:
        f.write(f"{m}  # {both[m]} non-zeros\n")
print(f"partitions: {len(large)} large + {len(files)} files + {len(small)} small; cpu: {len(cpu)}")
