#!/usr/bin/env bash
# One GPU call of several stages, with what comes back packed in few files (the device tool
# returns at most 8 files from $OUT). Runs from the repository root with the binary gzip-compressed
# in .dev/sparsecast.gz (or stripped in .dev/bin/sparsecast) and the shared SuiteSparse files in
# .dev/mats/ (carry [".dev"]: repository + binary + files stay within the 64 MiB a call carries).
#
#   bash scripts/device_session.sh selftest optimizer          # on the H100 or the H200
#   bash scripts/device_session.sh eval r1 eval r2 noise r1 r2  # issue 10's two evaluate runs
#
# Stages, in the order given:
#   selftest     `selftest --backend cuda` -> $OUT/selftest-$GPU.tar.gz (JSON + log)
#   optimizer    scripts/device_optimizer.sh -> $OUT/optimizer-$GPU.tar.gz
#   partitions   scripts/device_partitions.sh -> $OUT/partitions-$GPU.tar.gz
#   spread S     scripts/device_statistical.sh with --stat-spread S, normal and uniform only, into
#                $OUT/statistical-spread-$GPU.tar.gz (the spread's effect; not an embedded profile)
#   eval NAME    scripts/device_timing.sh eval NAME (resumable within one lease, LIMIT_S each);
#                its records come back as $OUT/eval-$GPU-NAME.jsonl.gz after every call
#   noise A B    `sparsecast noise` of two eval runs + their records -> $OUT/noise-$GPU-A-B.tar.gz
set -u
OUT=${OUT:-$PWD/.dev/out}
mkdir -p "$OUT"
BIN=$PWD/.dev/bin/sparsecast
if [ ! -x "$BIN" ]; then
    BIN=/tmp/sparsecast-bin/sparsecast
    mkdir -p /tmp/sparsecast-bin && gzip -dc .dev/sparsecast.gz > "$BIN" && chmod +x "$BIN"
fi
export BIN
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
case "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" in
    *H200*) GPU=h200 ;;
    *H100*) GPU=h100 ;;
    *) GPU=${GPU:-cpu} ;;
esac
export GPU
EVAL=${EVAL:-/root/eval}
step() { local name=$1; shift; local t0=$SECONDS; "$@"; echo "[$name: rc=$? in $((SECONDS - t0)) s]"; }
while [ $# -gt 0 ]; do
    stage=$1; shift
    case $stage in
        selftest)
            W=$(mktemp -d)
            step selftest "$BIN" selftest --backend cuda --json "$W/selftest.json" > "$W/selftest.log" 2>&1
            tail -3 "$W/selftest.log"
            tar -C "$W" -czf "$OUT/selftest-$GPU.tar.gz" . ;;
        optimizer)
            step optimizer env OUT=/tmp/opt-out bash scripts/device_optimizer.sh 2>&1 | tail -25
            cp /tmp/opt-out/optimizer-*.tar.gz "$OUT"/ ;;
        partitions)
            step partitions env OUT=/tmp/part-out bash scripts/device_partitions.sh 2>&1 | tail -25
            cp /tmp/part-out/partitions-*.tar.gz "$OUT"/ ;;
        spread)
            s=$1; shift
            step spread env OUT=/tmp/spread-out STATS=normal,uniform SPREAD="$s" BUDGET=${BUDGET:-150} \
                bash scripts/device_statistical.sh 2>&1 | grep -E "fitted|rc=|error" | head
            cp /tmp/spread-out/statistical-*.tar.gz "$OUT/statistical-spread-$GPU.tar.gz" ;;
        eval)
            n=$1; shift
            env OUT=/tmp/eval-out MATS=/root/mats EVAL="$EVAL" bash scripts/device_timing.sh eval "$n" 2>&1 | tail -2
            # Bring the records back after every call: a lease that goes cold keeps nothing, and
            # `sparsecast noise` runs as well here on two unpacked runs.
            gzip -c "$EVAL/$n/results.jsonl" > "$OUT/eval-$GPU-$n.jsonl.gz" ;;
        noise)
            a=$1 b=$2; shift 2
            W=$(mktemp -d)
            "$BIN" noise "$EVAL/$a" "$EVAL/$b" --per-config > "$W/noise.txt" 2>&1
            "$BIN" noise "$EVAL/$a" "$EVAL/$b" --json > "$W/noise.json" 2>&1
            head -9 "$W/noise.txt" | cut -c1-160
            for r in "$a" "$b"; do gzip -c "$EVAL/$r/results.jsonl" > "$W/$r.jsonl.gz"; done
            tar -C "$W" -czf "$OUT/noise-$GPU-$a-$b.tar.gz" . ;;
        *) echo "unknown stage $stage"; exit 2 ;;
    esac
done
ls "$OUT"
