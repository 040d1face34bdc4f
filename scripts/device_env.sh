# Sourced by the device scripts (scripts/device_s40.sh, scripts/device_s41.sh) from the
# repository root: unpacks the binary ($BINXZ, default $D/sparsecast.xz) to .dev/bin and exports
# BIN, makes $OUT (default .dev/out), sets G to the GPU (h200 or h100) and puts the CUDA
# libraries on LD_LIBRARY_PATH.
mkdir -p .dev/bin && xz -dc ${BINXZ:-$D/sparsecast.xz} > .dev/bin/sparsecast && chmod +x .dev/bin/sparsecast
export BIN=$PWD/.dev/bin/sparsecast
OUT=${OUT:-.dev/out}
mkdir -p "$OUT"
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in *H200*) G=h200;; *) G=h100;; esac
for d in /usr/local/nvidia/lib64 /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && export LD_LIBRARY_PATH="$d${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
done
