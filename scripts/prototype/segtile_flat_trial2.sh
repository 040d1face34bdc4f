#!/usr/bin/env bash
# Run on the device with carry [".dev/s40t"]: .dev/s40t/old.xz (a build without profiles of the
# shipped kernel), .dev/s40t/sparsecast.xz (the same with scripts/prototype/segtile_flat.patch
# applied), the lists of scripts/segtile-only/ and only-s21-seg-GPU.txt (see
# scripts/device_s40.sh). Compare: scripts/prototype/segtile_flat_compare.py.
# Session 40 trial 2: the register budget. Old kernel and flat-chunk v2, each at the default
# SC_MIN_BLOCKS=2 (32 registers) and at SC_MIN_BLOCKS=1 (64), on seeds 14, 12 and 21.
export D=.dev/s40t SELFTEST=0 OUT=${OUT:-.dev/out}
T0=$SECONDS
BINXZ=$D/old.xz KERNELS=1 SUFFIX=-old SEEDS="s14 s12 s21" LIMIT=150 bash scripts/device_s40.sh 2>&1 | grep -v "^-\|^d\|^total"
SPARSECAST_NVRTC_OPTIONS="-DSC_MIN_BLOCKS=1" BINXZ=$D/old.xz KERNELS=1 SUFFIX=-old-mb1 SEEDS="s14 s12 s21" LIMIT=150 bash scripts/device_s40.sh 2>&1 | grep -v "^-\|^d\|^total"
BINXZ=$D/sparsecast.xz KERNELS=1 SEEDS="s14 s12 s21" LIMIT=150 bash scripts/device_s40.sh 2>&1 | grep -v "^-\|^d\|^total"
SPARSECAST_NVRTC_OPTIONS="-DSC_MIN_BLOCKS=1" BINXZ=$D/sparsecast.xz KERNELS=1 SUFFIX=-mb1 SEEDS="s14 s12 s21" LIMIT=$((585 - (SECONDS - T0))) bash scripts/device_s40.sh 2>&1 | grep -v "^-\|^d\|^total"
ls -la $OUT
