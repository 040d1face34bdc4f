#!/usr/bin/env bash
# The stacks' learning curve (docs/ACCURACY.md, session 63): the `sparsecast` first stage fitted
# without cross-validation on a GPU's training tables less some of the stacks-only seeds, each
# fit scored on the unseen seed 14 (accuracy pooled, by class, the argmin's picks). ≈ 4 min a
# variant on the 2-core build machine.
#
#   GPU=h200 OUT=/tmp/curve bash scripts/stacks_curve.sh "none:" "s15:s15" "all:s15 s16 s17 s18 s19 s20"
#
# Each argument is NAME:SEEDS — the stacks-only seeds (scripts/seed_args.sh's STACKS_ONLY)
# kept; the other tables (as scripts/refit_cv.sh takes them) always are, but the Kronecker-only
# seeds (KRON_ONLY) not in KRON_KEEP when it is set (session 69: `KRON_KEEP="s23 s24 s25"`;
# scripts/training_tables.sh applies it).
# SC= the binary (default target/release/sparsecast), BASE= the profile the fits go into
# (default profiles/$GPU.json.gz).
set -euo pipefail
GPU=${GPU:?set GPU=h200 or h100}
OUT=${OUT:?set OUT, a folder for the results}
SC=${SC:-target/release/sparsecast}
BASE=${BASE:-profiles/$GPU.json.gz}
mkdir -p "$OUT"
source scripts/training_tables.sh
source scripts/seed_args.sh
mapfile -t ALL < <(training_tables "$GPU")
for v in "$@"; do
    name=${v%%:*} keep=" ${v#*:} "
    T=()
    for f in "${ALL[@]}"; do
        s=${f#data/corpus/"$GPU"-} s=${s%.jsonl.gz}
        if is_stacks_only "$s" && [[ $keep != *" $s "* ]]; then continue; fi
        T+=("$f")
    done
    SECONDS=0
    "$SC" train --data "${T[@]}" --base "$BASE" --models sparsecast --folds 0 \
        --out "$OUT/P-$name.json.gz" > "$OUT/train-$name.log" 2>&1
    "$SC" train --score --data data/corpus/"$GPU"-s14.jsonl.gz data/corpus/"$GPU"-seg-s14.jsonl.gz \
        --base "$OUT/P-$name.json.gz" --models sparsecast --report "$OUT/s14-$name.md" \
        --records "$OUT/s14-$name.jsonl.gz" > "$OUT/score-$name.log" 2>&1
    echo "== $name: ${#T[@]} tables, $SECONDS s"
    grep -E '^\| sparsecast \| f(32|64) \| all \|' "$OUT/s14-$name.md" | head -2
    python3 scripts/stack_breakdown.py <(gzip -dc "$OUT/s14-$name.jsonl.gz") | tail -n +2
done
