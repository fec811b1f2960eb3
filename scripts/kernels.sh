#!/usr/bin/env bash
# Compile cuda/*.cu to PTX for compute_80 and compute_90 into cuda/ptx (or $1), which
# go:embed then carries into `go build -tags cuda`; the checked-in PTX needs no nvcc.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-cuda/ptx}
NVCC=${NVCC:-nvcc}
command -v "$NVCC" >/dev/null || { echo "kernels: $NVCC not found (install nvidia-cuda-toolkit)" >&2; exit 1; }
mkdir -p "$out"
for src in cuda/*.cu; do
  name=$(basename "$src" .cu)
  for arch in compute_80 compute_90; do
    "$NVCC" -ptx -O3 -std=c++14 -arch="$arch" -Icuda -o "$out/${name}_${arch}.ptx" "$src"
  done
done
"$NVCC" --version | tail -1 > "$out/NVCC_VERSION"
echo "kernels: $(ls "$out"/*.ptx | wc -l) PTX files in $out"
