#!/usr/bin/env bash
# Issue 16's one missing measurement: the H100's SuiteSparse set under `optimize --tune` with the
# fair pair raced again (docs/OPTIMIZER.md, session 53; the H200 ran it as `.dev/o53/runA.sh`,
# which did not survive). Two steps, from the repository root:
#
#   bash scripts/device_issue16_h100.sh prep   # here: binary without profiles, the H100 profile and
#                                              # the 70 shared files (all but G3_circuit, conf5; as
#                                              # .mtx.xz, ≈ 25 MB; 41 MB in all) into .dev/i16, then parks the tables,
#                                              # profiles and docs (restore: device_park.sh restore)
#   # device call, kind H100, carry [".dev/i16"], timeout 600 (≈ 450 s):
#   bash scripts/device_issue16_h100.sh run
#
# `run` writes $OUT/optimizer-h100.tar.gz (device_optimizer.sh's tables and JSON); score it with
# `python3 scripts/tuned_fair.py opt-real-f*.json.gz` after unpacking. GPU=h200 runs the same on
# the H200 (prep then copies profiles/h200.json.gz).
set -eu
G=${GPU:-h100}
D=${D:-.dev/i16}   # D=.dev/j77 (session 77): another folder prepared the same way
case "${1:-}" in
prep)
    mkdir -p "$D/mats"
    SPARSECAST_NO_EMBED=1 CARGO_TARGET_DIR=${TGT:-/tmp/tgt-ne} cargo build --release
    strip -o "$D/sparsecast" "${TGT:-/tmp/tgt-ne}/release/sparsecast"
    xz -9 -T2 -f "$D/sparsecast"
    cp "profiles/$G.json.gz" "$D/"
    # The files travel as .mtx.xz (the carry's 64 MiB: with the H200's 17.8 MB profile of
    # session 72 the .mtx.gz made it 69 MiB); `run` gzips them back on the device.
    mkdir -p "$D/mx"
    rm -rf "$D/mats"
    for f in ../shared/matrices/suitesparse/*.mtx.gz; do
        b=$(basename "$f" .gz)
        case "$f" in *G3_circuit* | *conf5*) ;; *) [ -f "$D/mx/$b.xz" ] || gzip -dc "$f" | xz -6 -T2 > "$D/mx/$b.xz" ;; esac
    done
    PROFILES=1 DOCS=1 bash scripts/device_park.sh park
    du -sh "$D"
    ;;
run)
    mkdir -p "$D/mats"
    ls "$D"/mx/*.xz | xargs -P 16 -I{} sh -c 'b=$(basename {} .xz); xz -dc {} | gzip -1 > '"$D"'/mats/$b.gz'
    WANT=$G
    BINXZ=$D/sparsecast.xz source scripts/device_env.sh   # sets G from nvidia-smi
    [ "$G" = "$WANT" ] || { echo "this is an $G, the profile prepared is $WANT's" >&2; exit 1; }
    TUNE=1 TAIL=8 SETS=real SUBSET=all BREAL=${BREAL:-245} MATS=$PWD/$D/mats BIN=$BIN \
        PROFILE=$PWD/$D/$G.json.gz GPU=$G bash scripts/device_optimizer.sh
    ;;
*)
    echo "usage: [GPU=h100|h200] bash scripts/device_issue16_h100.sh prep|run" >&2
    exit 2
    ;;
esac
