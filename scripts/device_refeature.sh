#!/usr/bin/env bash
# Refeature the training tables on the device machine's CPUs (session 71): the stubs of
# scripts/refeature_stubs.py (one row per matrix, in shards), J shards at a time, each
# `sparsecast refeature` with nproc / J threads, until DEADLINE s after the start; the
# refeatured shards come back as tars under $OUT (at most 8 files).
#
#   SPARSECAST_NO_EMBED=1 cargo build --release && xz -T2 -c target/release/sparsecast > .dev/rf/sparsecast.xz
#   python3 scripts/refeature_stubs.py stubs .dev/rf/stubs 16 $(cat .dev/rf/tables.txt)
#   cp -r .dev/k23/mats-xz .dev/rf/            # the shared matrices, .mtx.xz (Kronecker bases, files)
#   PROFILES=1 DOCS=1 bash scripts/device_park.sh park
#   device call (carry [".dev/rf"], timeout 600): DEADLINE=540 bash scripts/device_refeature.sh
#   bash scripts/device_park.sh restore
#   tar -xf each returned rf-*.tar into .dev/rf/done; the next call skips the shards done: SKIP="stub-0|stub-5"
#   python3 scripts/refeature_stubs.py merge .dev/rf/done/out OUT_DIR $(cat .dev/rf/tables.txt)
set -u
T0=$(date +%s)
DEADLINE=${DEADLINE:-540}
J=${J:-8}
mkdir -p /tmp/rf && xz -dc .dev/rf/sparsecast.xz > /tmp/rf/sparsecast && chmod +x /tmp/rf/sparsecast
mkdir -p /root/mats
for f in .dev/rf/mats-xz/*.mtx.xz; do xz -dc "$f" | gzip -1 > /root/mats/$(basename "$f" .xz).gz & done; wait
echo "$(nproc) cores; unpacked in $(( $(date +%s) - T0 )) s"
export T0 DEADLINE THREADS=$(( $(nproc) / J ))
run_shard() {
    local s=$1 name left
    name=$(basename "$s" .jsonl.gz)
    left=$(( DEADLINE - 20 - ($(date +%s) - T0) ))
    [ $left -lt 30 ] && { echo "$name: no time"; return; }
    mkdir -p /tmp/rf/out/"$name"
    local t=$(date +%s)
    if RAYON_NUM_THREADS=$THREADS timeout $left /tmp/rf/sparsecast refeature "$s" --mats /root/mats \
        --out-dir /tmp/rf/out/"$name" > /tmp/rf/out/"$name".log 2>&1; then
        echo "$name: done in $(( $(date +%s) - t )) s: $(tail -1 /tmp/rf/out/$name.log)"
    else
        echo "$name: NOT done ($(( $(date +%s) - t )) s): $(tail -2 /tmp/rf/out/$name.log | tr '\n' ' ')"
        rm -rf /tmp/rf/out/"$name"
    fi
}
export -f run_shard
ls .dev/rf/stubs/stub-*.jsonl.gz | grep -v -E "/(${SKIP:-none}).jsonl.gz" | tr ' ' '\n' |
    xargs -P "$J" -I{} bash -c 'run_shard {}'
cd /tmp/rf/out
ls -d stub-* 2>/dev/null | grep -v log | split -l 3 - /tmp/rf/grp-
for g in /tmp/rf/grp-*; do tar -cf "$OUT/rf-$(basename $g).tar" $(cat "$g") *.log 2>/dev/null; done
ls -la "$OUT"
echo "total $(( $(date +%s) - T0 )) s"
