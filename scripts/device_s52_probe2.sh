#!/usr/bin/env bash
# Session 52: does one backend per optimize run (the fix) remove the +0.15 µs a launch?
# Same call: collect (new binary), optimize --measure new binary, optimize --measure old binary
# (4e5f97d: a backend per matrix), predict --measure new binary. f32, 8 small shared files.
# Run in session 52 on the H100 (`bash .dev/o52b/probe2.sh`; carry .dev/o52/probe, the old
# binary .dev/o52/sparsecast.xz, the fixed one .dev/o52b/sparsecast.xz, .dev/p100); results
# docs/h100/timing/probe2-s52.tar.gz.
D=.dev/o52b; source scripts/device_env.sh
NEW=$BIN; mkdir -p .dev/old && xz -dc .dev/o52/sparsecast.xz > .dev/old/sparsecast && chmod +x .dev/old/sparsecast; OLD=$PWD/.dev/old/sparsecast
PROF=$(ls .dev/p*/$G.json.gz | head -1); M=.dev/o52/probe
mkdir -p $OUT/probe; P=$OUT/probe
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
t0=$SECONDS
$NEW collect --corpus $M --generated 0 --kron-per-file 0 --precision f32 --backend cuda --out $P/c1.jsonl > $P/c1.log 2>&1; echo "collect rc=$? $((SECONDS - t0)) s"
$NEW optimize $M/*.mtx.gz --precision f32 --measure --backend cuda --profile $PROF --summary-only --json-out $P/onew.json > $P/onew.log 2>&1; echo "optimize new rc=$? $((SECONDS - t0)) s"
$OLD optimize $M/*.mtx.gz --precision f32 --measure --backend cuda --profile $PROF --summary-only --json-out $P/oold.json > $P/oold.log 2>&1; echo "optimize old rc=$? $((SECONDS - t0)) s"
$NEW predict $M/*.mtx.gz --precision f32 --measure --backend cuda --profile $PROF --json > $P/pnew.json 2> $P/pnew.log; echo "predict new rc=$? $((SECONDS - t0)) s"
(cd $OUT && tar -czf probe2-$G.tar.gz probe && rm -rf probe)
