#!/usr/bin/env bash
# Session 53: the session's final binary on the device — `selftest --backend cuda`, then
# `predict --measure` and `predict --tune 5` on two shipped matrices with a carried profile (read by
# the single-parse path of that session). Binary: $D/sparsecast.xz (SPARSECAST_NO_EMBED build);
# profile: .dev/p200/$G.json.gz (or .dev/p100); carry both.
#   D=.dev/o53b bash scripts/device_s53_check.sh
D=${D:-.dev/o53b}; source scripts/device_env.sh
nvidia-smi --query-gpu=name --format=csv,noheader
t0=$SECONDS
timeout ${STO:-200} "$BIN" selftest --backend cuda --json "$OUT/selftest-$G.json" > "$OUT/selftest-$G.log" 2>&1
echo "selftest rc=$? in $((SECONDS - t0)) s"; grep -E "FAIL|cases:|passed|failed" "$OUT/selftest-$G.log" | tail -6
PROF=$(ls .dev/p*/$G.json.gz | head -1)
for m in "--measure" "--tune 5"; do
  /usr/bin/time -f "predict $m: %e s %M KB" "$BIN" predict --profile "$PROF" --backend cuda $m \
    data/cage11.mtx.gz data/bcsstk09.mtx.gz > "$OUT/predict-$G-${m:2:4}.txt" 2>&1
  echo "rc=$?"; grep -E "^recommendation|^tuned|time sparsecast|predict " "$OUT/predict-$G-${m:2:4}.txt" | cut -c1-260
done
echo "[call in $((SECONDS - t0)) s]"
