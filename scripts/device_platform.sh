#!/usr/bin/env bash
# The model-platform GPU session (issue 11 §2–4): re-instrument one GPU with the schema-2 suite
# (sub-strip benchmarks, COO 1–9 strips, micro-benchmarks of the launch floor and L2 / DRAM
# bandwidth), measure the analytical model's accuracy on the SuiteSparse corpus and the generated
# large set, replay the recorded H200 measurements with the new profile (before / after on the
# same times), and check the papers' column-count claim. Runs on the device machine from the
# repository root with the stripped release binary in .dev/; writes under $OUT/platform-$GPU.
#
#   cargo build --release && mkdir -p .dev && strip -o .dev/sparsecast target/release/sparsecast
#   then on the GPU machine (carry .dev):  GPU=h200 bash scripts/device_platform.sh
#                                          GPU=h100 bash scripts/device_platform.sh
#   afterwards, here: gzip -9n < <files_at>/platform-$GPU/$GPU.json > profiles/$GPU.json.gz and rebuild (the
#   H100 profile is embedded as soon as profiles/h100.json.gz exists, see build.rs).
#
# Environment:
#   GPU      h200 or h100 (names the output; the profile is measured on whatever GPU is present)
#   CORPUS   SuiteSparse folder (default: the first of shared/, ../shared/, /work/shared/)
#   SKIP_INSTRUMENT=1  reuse $OUT/platform-$GPU/$GPU.json from an earlier session
set -u
GPU=${GPU:?set GPU=h200 or GPU=h100}
OUT=${OUT:-$PWD/.dev/out}
BIN=${BIN:-$PWD/.dev/sparsecast}
DIR="$OUT/platform-$GPU"
mkdir -p "$DIR"
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export SPARSECAST_CACHE=/tmp/sparsecast-cache
if [ -z "${CORPUS:-}" ]; then
    for c in shared/matrices/suitesparse ../shared/matrices/suitesparse /work/shared/matrices/suitesparse; do
        if [ -d "$c" ]; then CORPUS=$c; break; fi
    done
fi
[ -d "${CORPUS:-}" ] || { echo "no SuiteSparse corpus found: set CORPUS"; exit 1; }
step() { local name=$1; shift; local t0=$SECONDS; "$@"; echo "[$name: rc=$? in $((SECONDS - t0)) s]"; }
P="$DIR/$GPU.json"
if [ -z "${SKIP_INSTRUMENT:-}" ]; then
    # 1. The profile: bounds (launch floor, L2, DRAM), suite, fits; notes on what did not fit.
    step instrument "$BIN" instrument --backend cuda --precision both --out "$P" > "$DIR/instrument.log" 2>&1
    tail -40 "$DIR/instrument.log"
fi
"$BIN" profiles > "$DIR/profiles.txt" 2>&1
# 2. Accuracy after the fixes, measured: real matrices (two halves: the device tool's transfer
#    limit) and the generated large set.
ls "$CORPUS"/*.mtx.gz | sort > "$DIR/corpus.txt"
N=$(wc -l < "$DIR/corpus.txt"); H=$(( (N + 1) / 2 ))
step real1 "$BIN" predict --profile "$P" --measure --backend cuda --json $(head -n "$H" "$DIR/corpus.txt") > "$DIR/acc_real1.json" 2> "$DIR/acc_real1.log"
step real2 "$BIN" predict --profile "$P" --measure --backend cuda --json $(tail -n +"$((H + 1))" "$DIR/corpus.txt") > "$DIR/acc_real2.json" 2> "$DIR/acc_real2.log"
step gen "$BIN" predict --profile "$P" --measure --backend cuda --json docs/accuracy-generated.json > "$DIR/acc_gen.json" 2> "$DIR/acc_gen.log"
# 3. The summaries (the "before" columns of these replays are the same new model: read "after").
for f in acc_real1 acc_real2 acc_gen; do
    echo "== $f (measured with the new profile)"
    "$BIN" accuracy --profile "$P" "$DIR/$f.json" 2>&1 | tee "$DIR/$f.summary.txt"
done
# 4. H200 only: before (old model, recorded in docs/h200) vs after (new profile) on the same times.
if [ "$GPU" = h200 ]; then
    for f in acc_real.json.gz acc_big.json acc_gen.json.gz; do
        echo "== docs/h200/$f replayed with the new profile"
        "$BIN" accuracy --profile "$P" "docs/h200/$f" 2>&1 | tee "$DIR/replay_${f%%.*}.txt"
    done
fi
# 5. The papers' claim that the column count does not matter (000 §III-C): same rows and P_NZ,
#    5 column counts (docs/column-check.json).
step columns "$BIN" predict --profile "$P" --measure --backend cuda --json docs/column-check.json > "$DIR/columns.json" 2> "$DIR/columns.log"
python3 - "$DIR/columns.json" <<'PY' | tee "$DIR/columns.txt"
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    ms = {k["variant"]: k["measured_seconds"] for k in r["kernels"] if k.get("model", "analytical") == "analytical"}
    print(r["precision"], r["input"], r["ncols"], " ".join(f"{v}={t*1e6:.1f}us" for v, t in sorted(ms.items()) if t))
PY
