#!/usr/bin/env python3
"""The `sparsecast` model's error on our SELL configurations, where the session-41 kernel splits
the matrix's slices and where it does not (docs/ACCURACY.md, session 41).

    python3 scripts/sell_split_set.py --list data/corpus/h200-s14.jsonl.gz > /tmp/split.txt
    python3 scripts/sell_split_accuracy.py score.jsonl /tmp/split.txt

score.jsonl: the records of `train --score … --records`. Per precision: the SELL
matrix-configurations (`sell`, `sell@128`, `sell@512`, `sell-c512-s2048`) of the split and the
unsplit matrices, their median |predicted − measured| / measured and the share within 10 %.
"""
import collections
import json
import sys


def main():
    split = set(open(sys.argv[2]).read().split())
    err = collections.defaultdict(list)
    with open(sys.argv[1]) as fh:
        for line in fh:
            r = json.loads(line)
            if r["status"] != "ok" or not r.get("median_s") or not r["config"].startswith("sell"):
                continue
            p = r["predictions"].get("sparsecast")
            if p:
                err[(r["precision"], r["matrix"] in split)].append(
                    abs(p["seconds"] - r["median_s"]) / r["median_s"])
    for (prec, is_split), e in sorted(err.items()):
        e.sort()
        print(f"{prec} {'split' if is_split else 'unsplit'}: {len(e)} matrix-configurations, "
              f"median {100 * e[len(e) // 2]:.1f} %, within 10 % {100 * sum(x <= 0.1 for x in e) / len(e):.1f} %")


if __name__ == "__main__":
    main()
