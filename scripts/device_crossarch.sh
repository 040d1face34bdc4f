#!/usr/bin/env bash
# Cross-architecture prediction on the device (issue 15, docs/CROSS_ARCH.md): on the TARGET GPU,
#  1. time `instrument --cross-from` (003's 17 benchmark matrices) against a full `instrument`
#     (the analytical suite without the statistical models: what `--cross-from` replaces);
#  2. predict the 70 SuiteSparse files on this GPU from the REFERENCE GPU's measured times
#     (its corpus table, `predict --measured-on`) and measure them here (`--measure`): the
#     difference rate of 003's model on the device, end to end.
# Green-context partitions (8/16/32/72 SMs): scripts/device_partitions.sh.
#
#   TARGET=h100 bash scripts/device_crossarch.sh      # on the H100, reference = the H200
#   TARGET=h200 bash scripts/device_crossarch.sh      # on the H200, reference = the H100
#
# Needs .dev/bin/sparsecast (stripped release build) and .dev/mats/*.mtx.gz. About 3–5 minutes.
# Writes $OUT/crossarch-$TARGET.tar.gz: cross-$TARGET.json (the target profile), full-$TARGET.json
# (the full instrument), predict-$TARGET.json (predictions and measurements), the log.
# CPU dry run: BACKEND=cpu QUICK=--quick TARGET=h100 bash scripts/device_crossarch.sh
set -u
OUT=${OUT:-$PWD/.dev/out}
BIN=${BIN:-$PWD/.dev/bin/sparsecast}
BACKEND=${BACKEND:-cuda}
QUICK=${QUICK:-}
TARGET=${TARGET:?set TARGET=h100 or h200 (the GPU this runs on)}
case "$TARGET" in
    h100) REF=h200 ;;
    h200) REF=h100 ;;
    *) echo "TARGET must be h100 or h200" >&2; exit 2 ;;
esac
export LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export SPARSECAST_CACHE=${SPARSECAST_CACHE:-/tmp/scc}
W=$(mktemp -d)
mkdir -p "$OUT"
LOG=$W/log-$TARGET.txt
exec > >(tee "$LOG") 2>&1
[ "$BACKEND" = cuda ] && nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
REFPROF=profiles/$REF.json.gz
if [ "$BACKEND" = cpu ]; then
    # The dry run needs a CPU reference profile of the same suite.
    REFPROF=$W/ref-cpu.json
    "$BIN" instrument --backend cpu $QUICK --no-statistical --out "$REFPROF" > /dev/null
fi

echo "== 1. instrument --cross-from $REFPROF (003's benchmark matrices only)"
t0=$(date +%s%N)
"$BIN" instrument --backend "$BACKEND" $QUICK --statistic median --cross-from "$REFPROF" \
    --out "$W/cross-$TARGET.json"
rc=$?; echo "[cross instrument: rc $rc in $(( ($(date +%s%N) - t0) / 1000000 )) ms wall]"

echo "== 1b. full instrument for comparison (analytical suite, no statistical models)"
t0=$(date +%s%N)
"$BIN" instrument --backend "$BACKEND" $QUICK --statistic median --no-statistical \
    --out "$W/full-$TARGET.json" | tail -3
rc=${PIPESTATUS[0]}; echo "[full instrument: rc $rc in $(( ($(date +%s%N) - t0) / 1000000 )) ms wall]"

echo "== 2. predict the SuiteSparse files from the $REF's measured times, measured here"
MATS=$(ls .dev/mats/*.mtx.gz 2>/dev/null | head -${NMATS:-70})
[ -z "$MATS" ] && MATS="data/bcsstk09.mtx.gz data/west2021.mtx.gz"
"$BIN" predict --profile "$W/cross-$TARGET.json" --models cross \
    --measured-on "data/corpus/$REF.jsonl.gz" --measure --backend "$BACKEND" \
    --json $MATS > "$W/predict-$TARGET.json"
echo "[predict: rc $?]"
python3 - "$W/predict-$TARGET.json" <<'EOF'
import json, sys, statistics as st
r = json.load(open(sys.argv[1]))
by = {}
for m in r["results"]:
    for k in m["kernels"]:
        if k.get("difference_rate") is not None:
            by.setdefault((m["precision"], k["variant"]), []).append(k["difference_rate"])
print("precision kernel      n   mean %  median %  (003 on the device, reference = measured times)")
for (p, v), d in sorted(by.items()):
    print(f"{p:9} {v:11} {len(d):3} {100*st.mean(d):7.1f} {100*st.median(d):8.1f}")
EOF
for p in cross full; do
    python3 -c "import json,sys; p=json.load(open(sys.argv[1])); print(sys.argv[2], [(s['precision'], len(s['measurements']), round(s['seconds'],1)) for s in p['precisions']], '(precision, benchmark matrices, s)')" "$W/$p-$TARGET.json" "$p"
done
tar -czf "$OUT/crossarch-$TARGET.tar.gz" -C "$W" cross-$TARGET.json full-$TARGET.json predict-$TARGET.json log-$TARGET.txt
ls -la "$OUT"
