#!/usr/bin/env bash
# Score the green-context partitions offline (docs/CROSS_ARCH.md, "Partitions"): the output of
# scripts/device_partitions.sh -> one `crossarch --one-way` per partition (reference: the whole
# GPU's committed table and profile; target: the partition's table and its `--cross-from`
# profile), then the per-partition summary of 003 against ours.
#
#   bash scripts/partitions_offline.sh partitions-h200.tar.gz [DOCS_DIR]
#
# GPU is read off the archive's name (partitions-h200 / partitions-h100). Writes DOCS_DIR
# (default docs/cross-arch/partitions-$GPU/): sms$N.md (crossarch's report: every method) and
# summary.md (scripts/crossarch_summary.py: ours-ref and 003, median / mean, per configuration,
# set, precision; a partition per column pair). About 1-1.5 min per partition on 2 cores (our model is trained
# per fold on the reference table).
set -eu
TAR=${1:?usage: partitions_offline.sh PARTITIONS.tar.gz [DOCS_DIR]}
case "$(basename "$TAR")" in
    *h100*) GPU=h100 ;;
    *h200*) GPU=h200 ;;
    *) echo "cannot tell the GPU from $TAR (partitions-h200 / partitions-h100)" >&2; exit 2 ;;
esac
BIN=${BIN:-target/release/sparsecast}
DOCS=${2:-docs/cross-arch/partitions-$GPU}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
tar -xzf "$TAR" -C "$W"
mkdir -p "$DOCS"
ARGS=()
for t in $(ls "$W"/sms*.jsonl.gz | sort -V); do
    N=$(basename "$t" .jsonl.gz)
    N=${N#sms}
    [ -s "$W/cross-sms$N.json" ] || { echo "no cross-sms$N.json beside $t: $N SMs skipped" >&2; continue; }
    echo "== $N SMs"
    "$BIN" crossarch --one-way --reference "data/corpus/$GPU.jsonl.gz" --target "$t" \
        --ref-profile "profiles/$GPU.json.gz" --target-profile "$W/cross-sms$N.json" \
        --report "$DOCS/sms$N.md" --points "$W/points-sms$N.jsonl"
    ARGS+=("$N SMs=$W/points-sms$N.jsonl")
done
[ ${#ARGS[@]} -gt 0 ] || { echo "no partition to score in $TAR" >&2; exit 1; }
python3 scripts/crossarch_summary.py --methods ours-ref,003 "${ARGS[@]}" > "$DOCS/summary.md"
echo "wrote $DOCS/summary.md"
