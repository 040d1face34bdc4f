#!/usr/bin/env bash
# Park the training tables outside the working tree for device calls, and bring them back.
#
# A device call carries the whole working tree (tracked files included) and refuses more than
# 64 MiB; the training tables data/corpus/*.jsonl.gz (26 MiB of the 65 MiB tree by session 25)
# are not needed on the device (collect, selftest, bench and instrument read matrices, not
# tables), so they wait in $PARK while the device works:
#
#   bash scripts/device_park.sh park      # before the device calls (git status shows them deleted)
#   …  device run calls, carry [".dev/ne", ".dev/table"] …
#   bash scripts/device_park.sh restore   # after them, before any commit
#   bash scripts/device_park.sh status    # what is parked, and the tree's size as a call sees it
#
# PROFILES=1 park also parks the shipped profiles (profiles/*.json.gz, 24 MiB by session 38) for
# calls whose binary embeds none (SPARSECAST_NO_EMBED=1) and whose carry is large (the 70 shared
# matrix files as .mtx.xz, 16 MiB); restore brings back whatever is parked.
# DOCS=1 park also parks the device runs' raw records under docs/ (docs/h100, docs/h200,
# docs/cross-arch: 25 MiB by session 49), for calls that carry many matrices (the whole shared
# set is 61 MiB as .mtx.gz); restore merges them back without overwriting a file written meanwhile.
#
# Never commits anything; refuses to overwrite a file on either side, so a table collected
# meanwhile (e.g. a new data/corpus/h200-s12.jsonl.gz) is never clobbered.
set -eu
cd "$(git rev-parse --show-toplevel)"
PARK=${PARK:-/tmp/sparsecast-park}
what=${1:-status}
tree_mib() {
    # Tracked files present plus untracked ones git does not ignore: what a call carries
    # besides its `carry` paths.
    { git ls-files -z; git ls-files -z --others --exclude-standard; } |
        xargs -0 -r stat -c %s 2>/dev/null | awk '{s += $1} END {printf "%.1f MiB\n", s / 1048576}'
}
case "$what" in
park)
    mkdir -p "$PARK"
    n=0
    mkdir -p "$PARK/profiles"
    files=(data/corpus/*.jsonl.gz)
    [ "${PROFILES:-0}" = 1 ] && files+=(profiles/*.json.gz)
    for f in "${files[@]}"; do
        [ -f "$f" ] || continue
        to="$PARK/$(basename "$f")"
        [ "${f%%/*}" = profiles ] && to="$PARK/profiles/$(basename "$f")"
        if [ -e "$to" ]; then
            echo "error: $to exists already (restore first?)" >&2
            exit 1
        fi
        mv "$f" "$to" && n=$((n + 1))
    done
    if [ "${DOCS:-0}" = 1 ]; then
        mkdir -p "$PARK/docs"
        for d in docs/h100 docs/h200 docs/cross-arch; do
            [ -d "$d" ] || continue
            if [ -e "$PARK/$d" ]; then
                echo "error: $PARK/$d exists already (restore first?)" >&2
                exit 1
            fi
            mv "$d" "$PARK/$d" && n=$((n + 1))
        done
    fi
    echo "parked $n files in $PARK; the tree a device call carries: $(tree_mib)"
    ;;
restore)
    n=0
    for f in "$PARK"/*.jsonl.gz "$PARK"/profiles/*.json.gz; do
        [ -f "$f" ] || continue
        dir=data/corpus
        [ "$(basename "$(dirname "$f")")" = profiles ] && dir=profiles
        if [ -e "$dir/$(basename "$f")" ]; then
            echo "error: $dir/$(basename "$f") exists in the tree; left $f parked" >&2
            continue
        fi
        mv "$f" "$dir/" && n=$((n + 1))
    done
    for d in "$PARK"/docs/*; do
        [ -d "$d" ] || continue
        to="docs/$(basename "$d")"
        if [ -e "$to" ]; then
            # Written meanwhile: merge, never overwriting what is there.
            cp -a -n "$d/." "$to/" && rm -rf "$d"
        else
            mv "$d" "$to"
        fi
        n=$((n + 1))
    done
    echo "restored $n files; the tree: $(tree_mib)"
    git status --short data/corpus profiles docs | head -20
    ;;
status)
    echo "parked in $PARK: $(ls "$PARK" 2>/dev/null | wc -l) files, docs: $(ls "$PARK/docs" 2>/dev/null | tr '\n' ' ')"
    echo "the tree a device call carries (without its carry paths): $(tree_mib)"
    ;;
*)
    echo "usage: $0 park|restore|status" >&2
    exit 2
    ;;
esac
