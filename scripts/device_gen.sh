#!/usr/bin/env bash
# Issue 12's device generation of the statistical benchmark matrices, ONE GPU call: the proof that
# the matrices generated on the device are the host-built ones, and what it saves. Runs from the
# repository root with the binary gzip-compressed in .dev/sparsecast.gz (or stripped in
# .dev/bin/sparsecast); everything comes back as ONE file, $OUT/gen-$GPU.tar.gz.
#
#   cargo build --release && mkdir -p .dev && gzip -9c target/release/sparsecast > .dev/sparsecast.gz
#   on the GPU machine (repo root, carry [".dev"]):   bash scripts/device_gen.sh
#
# Stages:
#   1. `selftest --backend cuda --generation-only --generation-timing`: the "gen …" cases
#      (normal, uniform, constant rows × csr-t16, csr-scalar, ell, jad × f32, f64: every array
#      equal to the host build's, SpMV against the f64 reference with y poisoned) — the line
#      "N cases: N passed, 0 failed" is the proof — then host build + upload against device
#      generation for the largest statistical matrices of the small grid (f64).
#   2. Unless INSTRUMENT=none: `instrument` of statistical-normal and statistical-uniform on the
#      small grid, f64, once with the matrices built on the host (--source host) and once
#      generated on the device (--source auto), each within BUDGET seconds (benchmarks not
#      started by then are skipped: compare the counts too). The analytical constant-row suite
#      (device-generated in both) runs in both and costs the same.
# A summary table ends the output.
#
# Environment: OUT (default .dev/out), BIN, BUDGET (default 150 s per instrument run),
# INSTRUMENT (host,device (default), device, host or none).
set -u
OUT=${OUT:-$PWD/.dev/out}
mkdir -p "$OUT"
if [ -z "${BIN:-}" ]; then
    BIN=$PWD/.dev/bin/sparsecast
    if [ ! -x "$BIN" ]; then
        BIN=/tmp/sparsecast-bin/sparsecast
        mkdir -p /tmp/sparsecast-bin && gzip -dc .dev/sparsecast.gz > "$BIN" && chmod +x "$BIN"
    fi
fi
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export SPARSECAST_CACHE=${SPARSECAST_CACHE:-/tmp/scc}
case "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)" in
    *H200*) GPU=h200 ;;
    *H100*) GPU=h100 ;;
    *) GPU=${GPU:-cpu} ;;
esac
BUDGET=${BUDGET:-150}
INSTRUMENT=${INSTRUMENT:-host,device}
W="$OUT/gen-$GPU"
mkdir -p "$W"
step() { local name=$1; shift; local t0=$SECONDS; "$@"; local rc=$?; echo "[$name: rc=$rc in $((SECONDS - t0)) s]"; }

step selftest "$BIN" selftest --backend cuda --generation-only --generation-timing \
    --json "$W/gen-selftest.json" > "$W/gen-selftest.log" 2> "$W/gen-selftest.err"
grep -E "cases:|FAIL" "$W/gen-selftest.log" | head -20

for where in ${INSTRUMENT//,/ }; do
    [ "$where" = none ] && continue
    src=auto; [ "$where" = host ] && src=host
    t0=$(date +%s.%N)
    "$BIN" instrument --backend cuda --precision f64 --stat-grid small \
        --statistical normal,uniform --csr-threads 16 --budget-s "$BUDGET" --source "$src" \
        --out "$W/instrument-$where.json" > "$W/instrument-$where.log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    python3 -c "print(f'{$t1 - $t0:.1f}')" > "$W/instrument-$where.wall"
    echo "[instrument --source $src: rc=$rc, $(cat "$W/instrument-$where.wall") s]"
    grep -E "wrote|error|not fitted" "$W/instrument-$where.log" | head -5
done

python3 - "$W" <<'PY'
import json, os, sys
w = sys.argv[1]
log = open(os.path.join(w, "gen-selftest.log")).read()
print("\n== device generation: correctness ==")
for line in log.splitlines():
    if " cases: " in line:
        print(line)
print("\n== host build + upload vs device generation (f64, largest small-grid matrices) ==")
rows = []
for line in log.splitlines():
    if line.startswith("GENTIMING "):
        rows = json.loads(line[len("GENTIMING "):])
print(f"{'lengths':8} {'kernel':10} {'R':>9} {'P_NZ':>5} {'nnz':>11} {'host s':>8} {'device s':>9} {'×':>6}")
for r in rows:
    host = r["host_build_s"] + r["host_prepare_s"]
    print(f"{r['dist']:8} {r['kernel']:10} {r['rows']:9} {r['pnz']:5} {r['nnz']:11} "
          f"{host:8.3f} {r['device_s']:9.4f} {host / r['device_s']:6.1f}")
print("\n== instrument, statistical-normal + statistical-uniform, small grid, f64 ==")
print(f"{'source':8} {'wall s':>8} {'measuring s':>12} {'stat. benchmarks':>17} {'budget cut':>11}")
for where in ("host", "device"):
    p = os.path.join(w, f"instrument-{where}.json")
    if not os.path.exists(p):
        continue
    wall = open(os.path.join(w, f"instrument-{where}.wall")).read().strip()
    prof = json.load(open(p))
    for s in prof["precisions"]:
        n = sum(len(m["model"].get("measurements", [])) for m in s["models"]
                if m["model"].get("family") == "statistical")
        cut = sum("time budget" in x for x in s.get("skipped_notes", []))
        print(f"{where:8} {wall:>8} {s['seconds']:12.1f} {n:17} {cut:11}")
PY
tar -C "$OUT" -czf "$OUT/gen-$GPU.tar.gz" "gen-$GPU"
ls "$OUT"
