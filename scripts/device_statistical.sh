#!/usr/bin/env bash
# The statistical models' GPU session (issue 12): instrument one GPU with the analytical model and
# both statistical models of Wang, Gu & Li (statistical-normal, statistical-uniform: CSR-V =
# csr-t16, CSR-S = csr-scalar, ELL, JAD), write the profile and the timing under $OUT, print the
# wall time. Then the three-way comparison of docs/ACCURACY.md on the SuiteSparse corpus.
# Runs on the device machine from the repository root.
#
#   cargo build --release && mkdir -p .dev && strip -o .dev/sparsecast target/release/sparsecast
#   then on the GPU machine (carry .dev):  GPU=h200 bash scripts/device_statistical.sh
#                                          GPU=h100 bash scripts/device_statistical.sh
#   afterwards, here: cp <files_at>/statistical-$GPU/$GPU.json profiles/$GPU.json and rebuild.
#
# Size (both precisions, both distributions; the statistical matrices are built on the host and
# uploaded, see src/instrument/rowdist.rs): on 132 SMs (H200, H100) the default reduced grid is
# 4 × 197 = 788 benchmark matrices, 1.6e11 non-zeros in all; the paper's grid (GRID=paper) is
# 4 × 624 = 2,496 matrices, 6.1e11 non-zeros. Neither has been run yet: the wall time this
# prints is the measurement.
#
# Environment:
#   GPU        h200 or h100 (names the output; the profile is measured on whatever GPU is present)
#   BIN        the sparsecast binary (default .dev/sparsecast)
#   OUT        output folder (default .dev/out)
#   GRID       reduced (default) or paper: --stat-grid
#   SPREAD     sqrt (default) or a coefficient of variation: --stat-spread
#   PRECISION  f32, f64 or both (default)
#   CORPUS     SuiteSparse folder (default: the first of shared/, ../shared/, /work/shared/);
#              NO_EVAL=1 skips the comparison
set -u
GPU=${GPU:?set GPU=h200 or GPU=h100}
OUT=${OUT:-$PWD/.dev/out}
BIN=${BIN:-$PWD/.dev/sparsecast}
GRID=${GRID:-reduced}
SPREAD=${SPREAD:-sqrt}
PRECISION=${PRECISION:-both}
DIR="$OUT/statistical-$GPU"
mkdir -p "$DIR"
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export SPARSECAST_CACHE=/tmp/sparsecast-cache
P="$DIR/$GPU.json"
t0=$(date +%s.%N)
"$BIN" instrument --backend cuda --precision "$PRECISION" --stat-grid "$GRID" \
    --stat-spread "$SPREAD" --out "$P" > "$DIR/instrument.log" 2>&1
rc=$?
t1=$(date +%s.%N)
wall=$(python3 -c "print(f'{$t1 - $t0:.1f}')")
tail -40 "$DIR/instrument.log"
python3 - "$P" "$wall" "$GRID" "$SPREAD" > "$DIR/timing.json" <<'PY'
import json, sys
path, wall, grid, spread = sys.argv[1:]
out = {"wall_s": float(wall), "grid": grid, "spread": spread, "sections": []}
try:
    p = json.load(open(path))
    for s in p["precisions"]:
        models = {m["name"]: len(m["model"].get("measurements", [])) for m in s["models"]}
        out["sections"].append({"precision": s["precision"], "measuring_s": s["seconds"],
                                "constant_row_benchmarks": len(s["measurements"]),
                                "statistical_benchmarks": models, "skipped": s["skipped"]})
except Exception as e:  # the instrument log says why
    out["error"] = str(e)
print(json.dumps(out, indent=1))
PY
cat "$DIR/timing.json"
echo "[instrument: rc=$rc, wall time $wall s, grid $GRID, spread $SPREAD]"
[ "$rc" = 0 ] || exit "$rc"
[ -n "${NO_EVAL:-}" ] && exit 0
# The three-way comparison (analytical = Guo's constant rows, normal, uniform) on the same four
# kernels: csr-t16, csr-scalar, ell, jad are measured once and predicted by every model.
if [ -z "${CORPUS:-}" ]; then
    for c in shared/matrices/suitesparse ../shared/matrices/suitesparse /work/shared/matrices/suitesparse; do
        if [ -d "$c" ]; then CORPUS=$c; break; fi
    done
fi
[ -d "${CORPUS:-}" ] || { echo "no SuiteSparse corpus found: set CORPUS (or NO_EVAL=1)"; exit 1; }
ls "$CORPUS"/*.mtx.gz | sort > "$DIR/corpus.txt"
t0=$SECONDS
"$BIN" predict --profile "$P" --measure --backend cuda --json $(cat "$DIR/corpus.txt") \
    > "$DIR/acc_real.json" 2> "$DIR/acc_real.log"
echo "[predict --measure: rc=$? in $((SECONDS - t0)) s]"
"$BIN" accuracy --profile "$P" "$DIR/acc_real.json" 2>&1 | tee "$DIR/acc_real.summary.txt"
