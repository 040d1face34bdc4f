#!/usr/bin/env python3
"""Per-target summary of `sparsecast crossarch --points` files: for each target (one points file,
labelled), set (SuiteSparse files, generated >= 10^6 non-zeros) and precision, the difference rate
|predicted - measured| / measured of each method per configuration of 003 (its nine), over 003's
nine and over every configuration: "median / mean" in percent, and the number of predictions.

  python3 scripts/crossarch_summary.py [--methods ours-ref,003] LABEL=POINTS.jsonl ...
  e.g. python3 scripts/crossarch_summary.py "8 SMs=p8.jsonl" "16 SMs=p16.jsonl" > summary.md

The configuration list and the sets are those of `crossarch`'s report (src/evaluate/crossarch.rs).
"""
import json, statistics, sys

CROSS = ["csr-scalar", "csr-t2", "csr-t4", "csr-t8", "csr-t16", "csr-vector", "ell", "coo", "hyb"]
SETS = [("files", "SuiteSparse files"), ("large", "generated, >= 10^6 non-zeros")]


def load(path):
    return [json.loads(l) for l in open(path) if l.strip()]


def rates(points, method):
    v = sorted(abs(p["predicted"][method] - p["measured"]) / p["measured"]
               for p in points if method in p["predicted"])
    if not v:
        return None
    # The upper median, as crossarch's report takes it (v[n / 2]).
    return v[len(v) // 2], statistics.fmean(v), len(v)


def cell(r):
    return "–" if r is None else f"{100 * r[0]:.1f} / {100 * r[1]:.1f}"


def main(argv):
    methods = ["ours-ref", "003"]
    if argv and argv[0].startswith("--methods"):
        methods = (argv[0].split("=", 1)[1] if "=" in argv[0] else argv[1]).split(",")
        argv = argv[1:] if "=" in argv[0] else argv[2:]
    if not argv:
        sys.exit(__doc__)
    targets = []
    for a in argv:
        label, _, path = a.rpartition("=")
        targets.append((label or path, load(path)))
    print("Difference rate, median / mean %, per target and method; n = predictions of the "
          f"first method.\n")
    for set_, what in SETS:
        for prec in ["f32", "f64"]:
            sel = [(l, [p for p in pts if p["set"] == set_ and p["precision"] == prec])
                   for l, pts in targets]
            if not any(p for _, p in sel):
                continue
            print(f"### {prec}, {what}\n")
            head = [f"{l} {m}" for l, _ in sel for m in methods]
            print("| configuration | " + " | ".join(head) + " | n |")
            print("|---|" + "---:|" * (len(head) + 1))
            groups = [(c, lambda p, c=c: p["config"] == c) for c in CROSS]
            groups.append(("003's nine", lambda p: p["config"] in CROSS))
            groups.append(("every configuration", lambda p: True))
            for name, keep in groups:
                cells, n = [], []
                for _, pts in sel:
                    g = [p for p in pts if keep(p)]
                    for m in methods:
                        r = rates(g, m)
                        cells.append(cell(r))
                    r0 = rates(g, methods[0])
                    n.append(str(r0[2]) if r0 else "0")
                print(f"| {name} | " + " | ".join(cells) + f" | {'/'.join(n)} |")
            print()


if __name__ == "__main__":
    main(sys.argv[1:])
