#!/usr/bin/env bash
# Session 87's H200 call: the full GPU self-test of main's binary (profiles embedded: HYB in the
# sequence the H200's profile models, programmatic), then seed 40 grown with the time left
# (scripts/device_s86.sh SETS=s40). Kind nvidia-h200, carry [".dev/j87", ".dev/table"]:
#   cargo build --release && strip -o /tmp/sc target/release/sparsecast
#   mkdir -p .dev/j87 .dev/table && xz -6 -c /tmp/sc > .dev/j87/sparsecast.xz
#   cp data/corpus/h200-s40.jsonl.gz .dev/table/corpus-h200-s40.jsonl.gz
#   PROFILES=1 DOCS=1 bash scripts/device_park.sh park   # restore afterwards
# Writes $OUT/selftest-full-GPU.txt and device_s86.sh's seed 40 table and log.
set -u
T0=$SECONDS
LIMIT=${LIMIT:-570}
D=${D:-.dev/j87}
source scripts/device_env.sh
timeout 230 "$BIN" selftest --backend cuda > "$OUT/selftest-full-$G.txt" 2>&1
echo "full self-test rc $? at $((SECONDS - T0)) s"
grep -m1 "selftest on" "$OUT/selftest-full-$G.txt"; tail -1 "$OUT/selftest-full-$G.txt"
grep -i " fail" "$OUT/selftest-full-$G.txt" | grep -v " 0 failed" | head -5
SETS=s40 D=$D LIMIT=$((LIMIT - (SECONDS - T0))) bash scripts/device_s86.sh
