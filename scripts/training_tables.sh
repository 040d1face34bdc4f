# The training tables of a GPU, one per line, in the glob's order (sourced by scripts/refit_cv.sh and
# scripts/stacks_curve.sh from the repository root): data/corpus/$1*.jsonl.gz but seed 14's
# (-s14, -seg-s14: kept unseen for scoring), seed 40's (-s40: a second unseen draw, session 84,
# never used to choose anything before it was scored), seed 41's (-s41: a third, session 89, drawn
# as seed 40 and scored only after the version-12 model was chosen) and the repeated measurements (-repeat,
# -s12-repeat: the noise floor). With KRON_KEEP set (session 70), the Kronecker-only seeds
# (scripts/seed_args.sh's KRON_ONLY) but those it lists are left out too:
# `KRON_KEEP="s23 s24 s25"` was the H200 profile's choice of them in sessions 68-71; since
# session 72 it trains on every one (KRON_KEEP unset).
training_tables() {
    local f s
    source scripts/seed_args.sh
    for f in data/corpus/"$1".jsonl.gz data/corpus/"$1"-*.jsonl.gz; do
        case $f in *-s14.jsonl.gz | *-s40.jsonl.gz | *-s41.jsonl.gz | *-repeat.jsonl.gz) continue ;; esac
        s=${f#data/corpus/"$1"-} s=${s%.jsonl.gz}
        if [ -n "${KRON_KEEP+set}" ] && is_kron_only "$s" && ! in_list "$KRON_KEEP" "$s"; then
            continue
        fi
        echo "$f"
    done
}
