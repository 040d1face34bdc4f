#!/usr/bin/env bash
# Session 52 probe (prepared in 51): does `optimize --measure` time a single configuration
# ≈ 0.15 µs slower than `collect` (the training tables' path)? Seen in every optimizer run since
# session 11, both GPUs (docs/ACCURACY.md, session 51). Same binary, same call, same 8 small
# shared files, f32: collect (shared arrays), optimize --measure, collect --fresh-arrays,
# predict --measure, collect again, collect with the profile's protocol
# (runs 20, warm-up 30 ms, batches 0.5 ms, 3 placements; the tables: 10, 2 ms, 0.2 ms, 1). ≈ 2-3 minutes.
# Run in session 52 on the H200 (`bash .dev/o52/probe.sh`; carry .dev/o52/probe — 4elt, cage11,
# delaunay_n15, laser, Pd, rajat19, vsp_model1_crew1_cr42_south31, wing from
# ../shared/matrices/suitesparse — .dev/o52/sparsecast.xz, built at 4e5f97d with
# SPARSECAST_NO_EMBED=1, and .dev/p200); results docs/h200/timing/probe-s52.tar.gz.
D=.dev/o52; source scripts/device_env.sh
PROF=$(ls .dev/p*/$G.json.gz | head -1); M=.dev/o52/probe
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,clocks.max.sm --format=csv,noheader
t0=$SECONDS
C="$BIN collect --corpus $M --generated 0 --kron-per-file 0 --precision f32 --backend cuda"
$C --out $OUT/c1.jsonl > $OUT/c1.log 2>&1; echo "collect 1 rc=$? $((SECONDS - t0)) s"
$BIN optimize $M/*.mtx.gz --precision f32 --measure --backend cuda --profile $PROF --summary-only \
  --json-out $OUT/o1.json > $OUT/o1.log 2>&1; echo "optimize rc=$? $((SECONDS - t0)) s"
nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader
$C --fresh-arrays --out $OUT/c2.jsonl > $OUT/c2.log 2>&1; echo "collect fresh rc=$? $((SECONDS - t0)) s"
$BIN predict $M/*.mtx.gz --precision f32 --measure --backend cuda --profile $PROF --json > $OUT/p1.json 2> $OUT/p1.log; echo "predict rc=$? $((SECONDS - t0)) s"
$C --out $OUT/c3.jsonl > $OUT/c3.log 2>&1; echo "collect 3 rc=$? $((SECONDS - t0)) s"
# collect with the profile's protocol (what optimize and predict --measure use)
$C --runs 20 --warmup-ms 30 --batch-ms 0.5 --placements 3 --out $OUT/c4.jsonl > $OUT/c4.log 2>&1; echo "collect (profile protocol) rc=$? $((SECONDS - t0)) s"
cd $OUT && tar -czf probe-$G.tar.gz c*.jsonl o1.json p1.json *.log && rm -f c*.jsonl o1.json p1.json *.log; ls -la
