# The draw of each seed of the training and scoring tables, as scripts/device_collect.sh's
# variables (docs/ACCURACY.md; sourced by scripts/segtile_collect_all.sh and
# scripts/device_s40.sh from the repository root): `env $(seed_args s4) … bash
# scripts/device_collect.sh`. Seeds 1-9 were measured with the 70 shared files in the corpus
# directory (the Kronecker expansions need them), seeds 10-15 and 21 without. Seeds 15 and 16
# (session 56), 17 (session 59), 18 (session 60), 19 (session 62), 20 (session 63) and 22 (the
# next; s21 is the long-blocks seed), 36 and 37 (session 69, begun on the H200-x2; 898 and 768
# of 1,200 in session 70), 38 and 39 (drawn for the sessions after 70) are stacks only
# (session 48: the stacks are where the unseen draw's misses are, docs/ACCURACY.md session 45):
# STACKS_ONLY, the one list of them (refit_cv.sh leaves their rows out of the sets,
# stacks_curve.sh varies them).
STACKS_ONLY="s15 s16 s17 s18 s19 s20 s22 s36 s37 s38 s39"
# Seeds 23-27 (session 68) are Kronecker expansions only, six a training file (the 69 files of
# seed 1, measured as files there; `collect --list` on the draw less its files gives ONLY): the
# class the large set misses most after the stacks (docs/ACCURACY.md session 68).
# KRON_ONLY train and are left out of the sets like STACKS_ONLY. Seed 28 (session 68)
# aims the expansions up to 10^8 non-zeros, the large set's top (collect's default 3*10^7);
# 281 of its 414 measured in session 68. Seeds 29-35 (session 69) likewise: KRON_BIG, the one
# list of the seeds drawn with `--max-kron-nnz 10^8`.
KRON_ONLY="s23 s24 s25 s26 s27 s28 s29 s30 s31 s32 s33 s34 s35"
KRON_BIG="s28 s29 s30 s31 s32 s33 s34 s35"

# Whether seed $2 is one of the space-separated list $1.
in_list() {
    [[ " $1 " == *" $2 "* ]]
}

# Whether seed $1 is one of KRON_ONLY.
is_kron_only() {
    in_list "$KRON_ONLY" "$1"
}

# Whether seed $1 is one of STACKS_ONLY.
is_stacks_only() {
    in_list "$STACKS_ONLY" "$1"
}

seed_args() {
    if is_kron_only "$1"; then
        local big=
        in_list "$KRON_BIG" "$1" && big="MAX_KRON=100000000 "
        echo "KRON=6 ${big}GENERATED=0 MIXTURES=0 MIN_NNZ=1000 MAX_NNZ=100000000"
        return
    fi
    if is_stacks_only "$1"; then
        echo "KRON=0 GENERATED=0 MIXTURES=1200 MIN_NNZ=30000 MAX_NNZ=100000000"
        return
    fi
    case $1 in
    s1) echo "KRON=1 GENERATED=400 MIXTURES=0 MIN_NNZ=1000 MAX_NNZ=100000000";;
    s2) echo "KRON=1 GENERATED=0 MIXTURES=0 MIN_NNZ=1000 MAX_NNZ=100000000";;
    s3) echo "KRON=1 GENERATED=0 MIXTURES=120 MIN_NNZ=1000 MAX_NNZ=30000000";;
    s4) echo "KRON=0 GENERATED=800 MIXTURES=200 MIN_NNZ=1000 MAX_NNZ=1000000";;
    s5) echo "KRON=1 GENERATED=0 MIXTURES=0 MIN_NNZ=1000 MAX_NNZ=30000000";;
    s6) echo "KRON=0 GENERATED=110 MIXTURES=60 MIN_NNZ=1000000 MAX_NNZ=40000000";;
    s7) echo "KRON=0 GENERATED=60 MIXTURES=60 MIN_NNZ=1000000 MAX_NNZ=60000000";;
    s8) echo "KRON=0 GENERATED=300 MIXTURES=100 MIN_NNZ=1000 MAX_NNZ=100000000";;
    s9) echo "KRON=0 GENERATED=100 MIXTURES=300 MIN_NNZ=10000 MAX_NNZ=100000000";;
    s10) echo "KRON=0 GENERATED=1500 MIXTURES=500 MIN_NNZ=1000 MAX_NNZ=100000000";;
    s11|s12|s13|s14|s40|s41) echo "KRON=0 GENERATED=400 MIXTURES=800 MIN_NNZ=30000 MAX_NNZ=100000000";;
    s21) echo "KRON=0 GENERATED=0 MIXTURES=0 LONG_BLOCKS=300 MIN_NNZ=10000 MAX_NNZ=15000000";;
    esac
}
