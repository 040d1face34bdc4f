#!/usr/bin/env python3
"""A profile's untuned `optimize` answers scored offline against a device run's measured single
configurations (session 76): for each input of OFFLINE (an `optimize --json-out` run on the CPU,
no --measure, with the profile to test) that MEASURED (an `optimize --measure` run of
scripts/device_optimizer.sh, e.g. docs/h200/optimizer/session75/opt-real-f32.json.gz) also
holds, the answer's configuration is looked up among MEASURED's timed singles and divided by the
fastest of them. Answers that are plans (adopted) are counted, not scored: their time was not
measured. The figure compares profiles on the same timings; it is not a device measurement
(the device run also times the answer again, which adds its noise).

    sparsecast optimize FILES… --precision f32 --profile P --summary-only --json-out off.json
    python3 scripts/untuned_replay.py docs/h200/optimizer/session75/opt-real-f32.json.gz off.json
"""
import gzip
import json
import math
import os
import sys


def results(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return {os.path.basename(r["input"]): r for r in json.load(f)["results"]}


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    measured = results(sys.argv[1])
    for off_path in sys.argv[2:]:
        ratios, adopted, untimed, worst = [], 0, 0, (0.0, "")
        for name, r in results(off_path).items():
            m = (measured.get(name) or {}).get("measured")
            if not m:
                continue
            singles = {c: t for c, t, *_ in m["singles"] if t}
            if r["adopted"]:
                adopted += 1
                continue
            config = r["best_single"][0]
            if config not in singles:
                untimed += 1
                continue
            ratio = singles[config] / min(singles.values())
            ratios.append(ratio)
            worst = max(worst, (ratio, f"{name} {config}"))
        if not ratios:
            print(f"{off_path}: no input in common with {sys.argv[1]}")
            continue
        geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print(f"{off_path}: {len(ratios)} single answers, ≤ 1.02× the best measured single on "
              f"{sum(x <= 1.02 for x in ratios)}, geomean {geo:.4f}×, worst {worst[0]:.3f}× "
              f"({worst[1]}); plans adopted (not scored) {adopted}; answer not timed {untimed}")


if __name__ == "__main__":
    main()
