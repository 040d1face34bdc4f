# The training tables of a GPU, one per line, in the glob's order (sourced by scripts/refit_cv.sh and
# scripts/stacks_curve.sh from the repository root): data/corpus/$1*.jsonl.gz but seed 14's
# (-s14, -seg-s14: kept unseen for scoring) and the repeated measurements (-repeat,
# -s12-repeat: the noise floor).
training_tables() {
    local f
    for f in data/corpus/"$1".jsonl.gz data/corpus/"$1"-*.jsonl.gz; do
        case $f in *-s14.jsonl.gz | *-repeat.jsonl.gz) continue ;; esac
        echo "$f"
    done
}
