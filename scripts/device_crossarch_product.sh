#!/usr/bin/env bash
# Cross-architecture prediction through the product (docs/CROSS_ARCH.md, session 16), on the
# device machine from the repository root: `instrument --cross-from $REF` on this GPU (or on
# green-context partitions of it, SMS="8 16 32 72"), then an unseen draw (seed 16: 24 generated
# + 8 stacked matrices of 1e4-3e7 non-zeros) collected on the same target as the truth.
# Binary: .dev/ne/sparsecast.xz (`SPARSECAST_NO_EMBED=1 cargo build --release`, stripped, xz);
# the reference profile carried in .dev/ref/. Scoring, on any machine: predict --json with the
# target profile (with and without --measured-on the reference's table of the same draw) and
# scripts/crossarch_product.py.
#
#   GPU=h100 REF=.dev/ref/h200.json.gz bash scripts/device_crossarch_product.sh
#   GPU=h100 REF=.dev/ref/h100.json.gz SMS="8 32" bash scripts/device_crossarch_product.sh
# SKIP_COLLECT=1 instruments only (the unseen draw's truth tables of docs/cross-arch/product-s16/
# serve again: the draw is the same for a seed).
set -u
OUT=${OUT:-$PWD/.dev/out}
REF=${REF:?set REF to the reference profile}
mkdir -p /tmp/scbin /tmp/none "$OUT"
xz -dc .dev/ne/sparsecast.xz > /tmp/scbin/sparsecast && chmod +x /tmp/scbin/sparsecast
B=/tmp/scbin/sparsecast
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
export SPARSECAST_CACHE=/tmp/sparsecast-cache
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu --format=csv,noheader
for S in ${SMS:-all}; do
    part=(); tag=${GPU:?set GPU}
    [ "$S" != all ] && part=(--sms "$S") && tag=sms$S
    t0=$SECONDS
    $B instrument --backend cuda "${part[@]}" --cross-from "$REF" --out "$OUT/target-$tag.json.gz" 2>&1 | tail -4
    echo "[$tag instrument --cross-from: $((SECONDS - t0)) s]"
    [ "${SKIP_COLLECT:-0}" = 1 ] && continue
    t0=$SECONDS
    $B collect --backend cuda "${part[@]}" --corpus /tmp/none --generated 24 --mixtures 8 --kron-per-file 0 \
        --seed 16 --min-nnz 10000 --max-nnz 30000000 --out "/root/unseen-$tag.jsonl" \
        --budget-s "${BUDGET:-380}" 2>&1 | tail -2
    echo "[$tag collect unseen: $((SECONDS - t0)) s]"
    gzip -9 -c "/root/unseen-$tag.jsonl" > "$OUT/unseen-$tag.jsonl.gz"
done
ls -la "$OUT"
