#!/usr/bin/env bash
# Run on the device with carry [".dev/s40t"]: .dev/s40t/old.xz (a build without profiles of the
# shipped kernel), .dev/s40t/sparsecast.xz (the same with scripts/prototype/segtile_flat.patch
# applied), the lists of scripts/segtile-only/ and only-s21-seg-GPU.txt (see
# scripts/device_s40.sh). Compare: scripts/prototype/segtile_flat_compare.py.
# Session 40 trial: SEG-TILE's old kernel, flat chunks in the shared-memory path (v2), and v2 with
# flat chunks in the L1 path too, on seeds 14, 12 and 21, in one call.
export D=.dev/s40t SELFTEST=0 OUT=${OUT:-.dev/out}
T0=$SECONDS
BINXZ=$D/old.xz KERNELS=1 SUFFIX=-old SEEDS="s14 s12 s21" LIMIT=200 bash scripts/device_s40.sh 2>&1 | grep -v "^-\|^d\|^total"
BINXZ=$D/sparsecast.xz KERNELS=1 SEEDS="s14 s12 s21" LIMIT=190 bash scripts/device_s40.sh 2>&1 | grep -v "^-\|^d\|^total"
SPARSECAST_NVRTC_OPTIONS="-DSC_SEG_L1_FLAT=1" BINXZ=$D/sparsecast.xz KERNELS=1 SUFFIX=-l1flat SEEDS="s14 s12 s21" LIMIT=$((575 - (SECONDS - T0))) bash scripts/device_s40.sh 2>&1 | grep -v "^-\|^d\|^total"
ls -la $OUT
