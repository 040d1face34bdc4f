#!/usr/bin/env bash
# The timing-protocol measurements of docs/PERFORMANCE.md, "Measurement", on the device machine.
# Runs from the repository root with stripped release binaries in .dev/bin/ (sparsecast = this
# build, sparsecast-old = the per-launch protocol of commit a000f36, optional) and the SuiteSparse
# matrices in .dev/mats/ and/or .dev/big/ (the device tool carries at most 64 MiB per call, so the
# two largest files travel in a call of their own; every call copies what it carries to $MATS,
# which lasts as long as the machine stays warm). Writes logs and results under $OUT.
#
#   cargo build --release && mkdir -p .dev/bin && strip -o .dev/bin/sparsecast target/release/sparsecast
#   then on the GPU machine (carry .dev/bin and .dev/mats or .dev/big):
#   bash scripts/device_timing.sh check                  # selftest, warm-up traces, graph check
#   bash scripts/device_timing.sh eval new1 eval new2    # two independent evaluate runs
#   bash scripts/device_timing.sh noise pack             # compare the runs, tar the results
#
# Stages (any number, in order):
#   placements     `bench --placements 5` of the two configurations whose time depended on the
#                  process (cusparse-sell on two vsp_* matrices, f64): each placement's median
#   check          selftest; warm-up traces after 2 s idle (--warmup-ms 400); every kernel of cage11
#   eval NAME      `evaluate --no-profile` of $MATS + the default generated set into $EVAL/NAME with
#                  the new binary (NAME starting with "old": the old binary); stopped after LIMIT_S
#                  seconds (resumable: the same stage in a later call continues)
#   noise          `sparsecast noise` for old1/old2 and new1/new2 where both exist
#   instrument     `instrument --backend cuda --precision both` into $OUT/profile.json
#   pack           tar every results.jsonl and report.md into $OUT/evals.tgz
set -u
OUT=${OUT:-$PWD/.dev/out}
MATS=${MATS:-/root/mats}
EVAL=${EVAL:-/root/eval}
NEW=$PWD/.dev/bin/sparsecast
OLD=$PWD/.dev/bin/sparsecast-old
# A gzip-compressed binary (.dev/sparsecast.gz) keeps a call within the 64 MiB the tool carries.
if [ ! -x "$NEW" ] && [ -f .dev/sparsecast.gz ]; then
    NEW=/tmp/sparsecast-bin/sparsecast
    mkdir -p /tmp/sparsecast-bin && gzip -dc .dev/sparsecast.gz > "$NEW" && chmod +x "$NEW"
fi
mkdir -p "$OUT" "$MATS" "$EVAL"
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export SPARSECAST_CACHE=/tmp/sparsecast-cache
for src in .dev/mats .dev/big; do
    [ -d "$src" ] && cp -n "$src"/*.mtx.gz "$MATS"/ 2>/dev/null
done
cp -n data/cage11.mtx.gz "$MATS"/ 2>/dev/null
echo "corpus: $(ls "$MATS" | wc -l) matrices in $MATS; $(nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader)"
step() { local name=$1; shift; local t0=$SECONDS; "$@"; echo "[$name: rc=$? in $((SECONDS - t0)) s]"; }

trace() { # FILE PRECISION FORMAT LABEL
    sleep 2
    "$NEW" bench "$1" --backend cuda --precision "$2" --formats "$3" --warmup-ms 400 --json \
        > "$OUT/trace-$4.json" 2> "$OUT/trace-$4.err"
}

stage_check() {
    step selftest "$NEW" selftest --backend cuda --json "$OUT/selftest.json" > "$OUT/selftest.log" 2>&1
    tail -3 "$OUT/selftest.log"
    "$NEW" generate stencil --points 27 --n 100 -o /tmp/lap27.mtx > /dev/null 2>&1
    trace "$MATS/Roget.mtx.gz" f64 csr-vector roget-csr
    trace "$MATS/Roget.mtx.gz" f64 hyb roget-hyb
    trace "$MATS/cage11.mtx.gz" f32 cusparse-csr-alg1 cage11-cusparse
    trace "$MATS/cage11.mtx.gz" f64 csr-t8 cage11-csr8
    trace /tmp/lap27.mtx f64 csr-t8 lap27-csr8
    for i in 1 2; do
        step "bench cage11 #$i" "$NEW" bench "$MATS/cage11.mtx.gz" --backend cuda --json \
            > "$OUT/bench-cage11-$i.json" 2> /dev/null
        step "bench Roget #$i" "$NEW" bench "$MATS/Roget.mtx.gz" --backend cuda --json \
            > "$OUT/bench-roget-$i.json" 2> /dev/null
    done
    "$NEW" bench "$MATS/cage11.mtx.gz" --backend cuda 2>&1 | tail -25
}

stage_placements() {
    for m in vsp_sctap1-2b_and_seymourl vsp_model1_crew1_cr42_south31; do
        for i in 1 2; do
            "$NEW" bench "$MATS/$m.mtx.gz" --backend cuda --precision f64 --placements 5 \
                --formats cusparse-sell,sell,csr-t4,cusparse-csr-alg1 --json \
                > "$OUT/placements-$m-$i.json" 2> "$OUT/placements-$m-$i.err"
            python3 - "$OUT/placements-$m-$i.json" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    pm = r.get("placement_medians") or []
    print(sys.argv[1].rsplit("/", 1)[-1], r["kernel"], "median %.2f us" % (1e6 * (r["median_s"] or 0)),
          "placements", " ".join("%.2f" % (1e6 * v) for v in pm))
PY
        done
    done
}

stage_eval() { # NAME
    local name=$1 bin=$NEW
    case $name in old*) bin=$OLD ;; esac
    step "evaluate $name" timeout -s INT "${LIMIT_S:-540}" "$bin" evaluate --corpus "$MATS" \
        --generated default --backend cuda --no-profile --out "$EVAL/$name" \
        >> "$OUT/eval-$name.log" 2>&1
    echo "$name: $(wc -l < "$EVAL/$name/results.jsonl") records"
}

stage_noise() {
    for pair in "old1 old2" "new1 new2"; do
        set -- $pair
        if [ -f "$EVAL/$1/results.jsonl" ] && [ -f "$EVAL/$2/results.jsonl" ]; then
            "$NEW" noise "$EVAL/$1" "$EVAL/$2" --per-config > "$OUT/noise-$1-$2.txt" 2>&1
            "$NEW" noise "$EVAL/$1" "$EVAL/$2" --json > "$OUT/noise-$1-$2.json" 2>&1
            echo "== noise $1 vs $2"; head -12 "$OUT/noise-$1-$2.txt"; tail -8 "$OUT/noise-$1-$2.txt"
        fi
    done
}

stage_instrument() {
    step instrument "$NEW" instrument --backend cuda --precision both --out "$OUT/profile.json" \
        > "$OUT/instrument.log" 2>&1
    tail -5 "$OUT/instrument.log"
}

stage_pack() {
    for d in "$EVAL"/*/; do
        [ -f "$d/results.jsonl" ] && "$NEW" evaluate --report-only --out "$d" > /dev/null 2>&1
    done
    (cd "$EVAL" && tar czf "$OUT/evals.tgz" */results.jsonl */report.md */*.svg 2>/dev/null)
    ls -la "$OUT"
}

while [ $# -gt 0 ]; do
    stage=$1; shift
    case $stage in
        check) stage_check ;;
        placements) stage_placements ;;
        eval) stage_eval "$1"; shift ;;
        noise) stage_noise ;;
        instrument) stage_instrument ;;
        pack) stage_pack ;;
        *) echo "unknown stage $stage"; exit 2 ;;
    esac
done
