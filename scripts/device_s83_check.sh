#!/usr/bin/env bash
# Session 83's device check (H200): the binary with the profile that models HYB's programmatic
# dependent launch embedded runs HYB so by default. In one call, from the repository root:
#   1. `selftest --backend cuda --formats hyb,coo,ell --block-sizes 64,256,1024` without
#      SPARSECAST_PDL (the sequence the embedded profile models; the first line names it);
#   2. `predict --measure --backend cuda --json` on the files of $D/mats, alternating the default
#      and SPARSECAST_PDL=0 (the plain sequence) in the same run, PASSES times each;
#   3. `predict --tune --backend cuda --json` on the same files.
#
#   cargo build --release && strip -o /tmp/sc target/release/sparsecast
#   mkdir -p .dev/s83c/mats && xz -9 -T2 -c /tmp/sc > .dev/s83c/sparsecast.xz
#   cp ../shared/matrices/suitesparse/{G38,adder_dcop_05,...}.mtx.gz .dev/s83c/mats/
#   PROFILES=1 DOCS=1 bash scripts/device_park.sh park
#   bash scripts/device_s83_check.sh      # carry [".dev/s83c"]; $OUT/s83-check-GPU.tar
#   python3 scripts/hyb_sequence_check.py DIR   # on the returned files
set -u
D=${D:-.dev/s83c}
BINXZ=$D/sparsecast.xz
source scripts/device_env.sh
export SPARSECAST_CACHE=/tmp/sparsecast-cache
T0=$SECONDS
timeout 200 "$BIN" selftest --backend cuda --formats hyb,coo,ell --block-sizes 64,256,1024 \
    > "$OUT/selftest-default-$G.txt" 2>&1
echo "selftest rc $? at $((SECONDS - T0)) s"
grep -m1 "selftest on" "$OUT/selftest-default-$G.txt"
tail -1 "$OUT/selftest-default-$G.txt"
for pass in $(seq 1 "${PASSES:-2}"); do
    for pdl in default 0; do
        env $([ $pdl = 0 ] && echo SPARSECAST_PDL=0) timeout 120 "$BIN" predict --backend cuda \
            --measure --json "$D"/mats/*.mtx.gz > "$OUT/measure-$pdl-$pass.json" 2> "$OUT/measure-$pdl-$pass.log"
        echo "measure $pdl pass $pass: rc $? at $((SECONDS - T0)) s"
    done
done
timeout 120 "$BIN" predict --backend cuda --tune --json "$D"/mats/*.mtx.gz > "$OUT/tune.json" 2> "$OUT/tune.log"
echo "tune rc $? at $((SECONDS - T0)) s"
(cd "$OUT" && tar cf "s83-check-$G.tar" selftest-* measure-* tune.* && rm -f selftest-* measure-* tune.*)
ls -la "$OUT"
