#!/usr/bin/env bash
# The statistical models' GPU session (issue 12), ONE call per GPU: instrument the analytical
# model (constant rows, csr-t16 and csr-vector, ELL, COO) and the three 001 families on 001's
# kernels (CSR-V = csr-t16, CSR-S = csr-scalar, ELL, JAD): statistical-constant (Guo & Wang's
# constant-row benchmarks with 001's forms: the comparison's first column), statistical-normal,
# statistical-uniform; f32 and f64. The profile keeps the learned models of profiles/$GPU.json.gz
# (--base). The three-way comparison needs no GPU afterwards: `sparsecast score` on the corpus
# table (data/corpus/$GPU.jsonl.gz), printed at the end (on the GPU machine, from the same
# binary) and reproducible here.
#
#   cargo build --release && mkdir -p .dev/bin && strip -o .dev/bin/sparsecast target/release/sparsecast
#   on the GPU machine (repo root):   GPU=h200 bash scripts/device_statistical.sh   (and GPU=h100)
#   afterwards, here:   gzip -9n < <files_at>/statistical-$GPU/$GPU.json > profiles/$GPU.json.gz, rebuild,
#                       and the table of docs/ACCURACY.md:
#     sparsecast score --profile profiles/$GPU.json.gz --data data/corpus/$GPU.jsonl.gz \
#       --models analytical,statistical-constant,statistical-normal,statistical-uniform \
#       --configs csr-t16,csr-scalar,ell,jad --markdown
#
# Estimated cost on 132 SMs (`instrument --plan-only profiles/h200.json.gz ...`, assumed rates of
# src/instrument/cost.rs, not a measurement; the H100's limits give the same plan):
#   analytical, constant rows (device-generated), csr-t16 + csr-vector + ell + coo:
#       315 benchmarks per precision, ≈ 23 s (f32) + 27 s (f64) on the device, not budgeted
#   --stat-grid small, per distribution and precision: 97 benchmarks, 1.0e10 non-zeros (largest
#       8.7e8); ≈ 7–8 s on the device each; host (build, ELL/JAD conversion, upload)
#       ≈ 36–39 s normal / uniform, ≈ 16 s constant (its JAD only)
#   total ≈ 274 s (93 s device + 181 s host) + CUDA start-up and NVRTC compilation, within
#   BUDGET (default 300 s) and the 6-minute goal; the call is killed at 600 s.
#   --stat-grid reduced (normal + uniform only) would be ≈ 726 s: not one session.
# Since issue 12's device generation (scripts/device_gen.sh measures it) the normal and uniform
# matrices are generated on the device: the host figures above apply to --source host (EXTRA).
# Graceful stop: the statistical benchmarks run cheapest first; those not started within
# --budget-s are skipped (each precision gets an equal share of what is left), a model that then
# lacks a fit's points is left out with a note, and the profile is written in every case.
#
# Environment:
#   GPU        h200 or h100 (names the output and the --base profile; measured on whatever GPU
#              is present)
#   BIN        the sparsecast binary (default .dev/bin/sparsecast, else .dev/sparsecast)
#   OUT        output folder (default .dev/out)
#   GRID       small (default), reduced or paper: --stat-grid
#   SPREAD     sqrt (default) or a coefficient of variation: --stat-spread
#   BUDGET     seconds for the instrument (default 300)
#   BACKEND    cuda (default); cpu for a local dry run (then no --base unless BASE is set)
#   BASE       profile whose other models are kept (default profiles/$GPU.json.gz when BACKEND=cuda)
#   STATS      the statistical families to fit (default constant,normal,uniform; the others are
#              kept from BASE)
#   EXTRA      more instrument arguments (e.g. "--quick" for a dry run)
set -u
GPU=${GPU:?set GPU=h200 or GPU=h100}
OUT=${OUT:-$PWD/.dev/out}
if [ -z "${BIN:-}" ]; then
    BIN=$PWD/.dev/bin/sparsecast
    [ -x "$BIN" ] || BIN=$PWD/.dev/sparsecast
    if [ ! -x "$BIN" ] && [ -f .dev/sparsecast.gz ]; then   # compressed: the 64 MiB carry
        BIN=/tmp/sparsecast-bin/sparsecast
        mkdir -p /tmp/sparsecast-bin && gzip -dc .dev/sparsecast.gz > "$BIN" && chmod +x "$BIN"
    fi
fi
GRID=${GRID:-small}
SPREAD=${SPREAD:-sqrt}
BUDGET=${BUDGET:-300}
BACKEND=${BACKEND:-cuda}
# The GPU actually present names the base profile and the table (a lease may give an H200 for an
# H100 request).
if [ "$BACKEND" = cuda ] && command -v nvidia-smi > /dev/null; then
    NAME=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
    case "$NAME" in *H200*) DET=h200 ;; *H100*) DET=h100 ;; *) DET= ;; esac
    if [ -n "$DET" ] && [ "$DET" != "$GPU" ]; then
        echo "warning: GPU=$GPU but the device is $NAME: writing statistical-$DET"
        GPU=$DET
    fi
fi
if [ "$BACKEND" = cuda ]; then BASE=${BASE-profiles/$GPU.json.gz}; else BASE=${BASE-}; fi
DIR="$OUT/statistical-$GPU"
mkdir -p "$DIR"
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export SPARSECAST_CACHE=${SPARSECAST_CACHE:-/tmp/scc}
P="$DIR/$GPU.json"
ARGS=(--backend "$BACKEND" --precision both --stat-grid "$GRID" --stat-spread "$SPREAD"
      --statistical "${STATS:-constant,normal,uniform}" --csr-threads 16,32 --budget-s "$BUDGET")
[ -n "$BASE" ] && ARGS+=(--base "$BASE")
# shellcheck disable=SC2206
[ -n "${EXTRA:-}" ] && ARGS+=($EXTRA)
if [ -n "$BASE" ]; then
    "$BIN" instrument "${ARGS[@]}" --plan-only "$BASE" > "$DIR/plan.txt" 2>&1
    tail -4 "$DIR/plan.txt"
fi
t0=$(date +%s.%N)
"$BIN" instrument "${ARGS[@]}" --out "$P" > "$DIR/instrument.log" 2>&1
rc=$?
t1=$(date +%s.%N)
wall=$(python3 -c "print(f'{$t1 - $t0:.1f}')")
grep -E "statistical|skipped|not fitted|budget|wrote|kept|error" "$DIR/instrument.log" | head -30
python3 - "$P" "$wall" "$GRID" "$SPREAD" "$BUDGET" > "$DIR/timing.json" <<'PY'
import json, sys
path, wall, grid, spread, budget = sys.argv[1:]
out = {"wall_s": float(wall), "grid": grid, "spread": spread, "budget_s": float(budget),
       "sections": []}
try:
    p = json.load(open(path))
    for s in p["precisions"]:
        models = {m["name"]: len(m["model"].get("measurements", [])) for m in s["models"]
                  if m["model"].get("family") == "statistical"}
        out["sections"].append({"precision": s["precision"], "measuring_s": s["seconds"],
                                "constant_row_benchmarks": len(s["measurements"]),
                                "statistical_benchmarks": models,
                                "models": [m["name"] for m in s["models"]],
                                "skipped": s["skipped"],
                                "budget_cut": sum("time budget" in n for n in s.get("skipped_notes", []))})
except Exception as e:  # the instrument log says why
    out["error"] = str(e)
print(json.dumps(out, indent=1))
PY
cat "$DIR/timing.json"
echo "[instrument: rc=$rc, wall time $wall s, grid $GRID, spread $SPREAD, budget $BUDGET s]"
[ "$rc" = 0 ] || exit "$rc"
# 001's three-way comparison on the corpus table's measured times (no GPU needed).
TABLE=${TABLE:-data/corpus/$GPU.jsonl.gz}
if [ -f "$TABLE" ]; then
    "$BIN" score --profile "$P" --data "$TABLE" \
        --models analytical,statistical-constant,statistical-normal,statistical-uniform \
        --configs csr-t16,csr-scalar,csr-vector,ell,jad --markdown ${SCORE_ARGS:-} \
        > "$DIR/score.md" 2> "$DIR/score.log"
    echo "[score: rc=$?]"
    cat "$DIR/score.md"
fi
tar -C "$OUT" -czf "$OUT/statistical-$GPU.tar.gz" "statistical-$GPU"
