#!/usr/bin/env bash
# How much of two refits' difference on the large set's ranking counts is turnover (docs/ACCURACY.md,
# session 63): the matrices × precisions flagged beyond 1.2x the best or below 0.95x the best
# cuSPARSE in each refit's pairs.txt (scripts/refit_cv.sh), how many both flag, how many left
# the list and joined it. A difference in a count well inside √(left + joined) is a refit's noise.
#
#   bash scripts/pairs_turnover.sh docs/h200/refit-s62-pairs.txt /tmp/refit/pairs.txt
set -euo pipefail
OLD=${1:?the pairs.txt of the older refit}
NEW=${2:?the pairs.txt of the newer refit}
for tag in beyond below; do
    a=$(grep -c "^$tag " "$OLD" || true)
    b=$(grep -c "^$tag " "$NEW" || true)
    c=$(comm -12 <(grep "^$tag " "$OLD" | sort) <(grep "^$tag " "$NEW" | sort) | wc -l)
    awk -v t="$tag" -v a="$a" -v b="$b" -v c="$c" 'BEGIN {
        printf "%-6s %4d -> %4d (%+d): %d in both, %d left, %d joined; turnover s.d. ~ %.0f\n",
            t, a, b, b - a, c, a - c, b - c, sqrt(a + b - 2 * c) }'
done
