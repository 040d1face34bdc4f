#!/usr/bin/env bash
# Session 54: `predict --measure` on two large stacks whose ELL / SELL-C-σ (C = 512) predictions
# the bandwidth ceiling used to raise (it counted padding the kernels skip): each matrix
# generated on the device from its corpus spec ($D/*.json), then every configuration predicted
# and timed, f32 and f64, with a carried profile. Binary: $D/sparsecast.xz (SPARSECAST_NO_EMBED
# build); profile .dev/p200/$G.json.gz (or .dev/p100); carry both.
#   D=.dev/o54 bash scripts/device_s54_check.sh
D=${D:-.dev/o54}; source scripts/device_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$SECONDS
PROF=$(ls .dev/p*/$G.json.gz | head -1)
for spec in "$D"/*.json; do
  name=$(basename "$spec" .json)
  "$BIN" generate spec "@$spec" --out "/tmp/$name.mtx" > /dev/null || { echo "generate $name failed"; continue; }
  /usr/bin/time -f "$name: %e s" "$BIN" predict --profile "$PROF" --backend cuda --measure --json \
    "/tmp/$name.mtx" > "$OUT/predict-$name-$G.json" 2> "$OUT/predict-$name-$G.err"
  echo "rc=$?"; tail -2 "$OUT/predict-$name-$G.err"
  rm -f "/tmp/$name.mtx"
done
echo "[call in $((SECONDS - t0)) s]"
