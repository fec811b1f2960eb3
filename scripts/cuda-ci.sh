#!/usr/bin/env bash
# What CI runs for the CUDA backend (no GPU needed): build and vet everything with the
# masscuda tag, compile the GPU test binaries (they cannot run without a GPU), check that no
# untagged command links gorgonia.org/cu, and, when nvcc is present, that the checked-in
# PTX matches the kernel sources; with g++, run the kernels on the CPU emulator against the
# Go references. Needs nvidia-cuda-dev (cuda.h, libcuda.so) for cgo.
#
# The tag is masscuda, not cuda: gorgonia.org/gorgonia uses the `cuda` tag itself (it then
# pulls gorgonia.org/cu/dnn, which needs cudnn.h, and moves the gorgonia reference backend onto its GPU VM).
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "cuda-ci: go build -tags masscuda ./..."
go build -tags masscuda ./...
echo "cuda-ci: go vet -tags masscuda (cuda, trainer/cudabackend, cmd/mass-train)"
go vet -tags masscuda ./cuda/... ./trainer/cudabackend/... ./cmd/mass-train/...
echo "cuda-ci: compile GPU test binaries"
go test -tags masscuda -c -o "$tmp/kernels.test" ./cuda/kernels
go test -tags masscuda -c -o "$tmp/cudabackend.test" ./trainer/cudabackend
echo "cuda-ci: untagged binaries must not link gorgonia.org/cu"
if go list -deps ./cmd/... | grep -x 'gorgonia.org/cu'; then
  echo "cuda-ci: an untagged command imports gorgonia.org/cu (its init exits without a GPU)" >&2
  exit 1
fi
if command -v nvcc >/dev/null; then
  bash scripts/kernels.sh "$tmp/ptx" >/dev/null
  want=$(cat cuda/ptx/NVCC_VERSION)
  have=$(cat "$tmp/ptx/NVCC_VERSION")
  if [[ $want != "$have" ]]; then
    echo "cuda-ci: nvcc is '$have', PTX was made by '$want'; skipping the PTX comparison"
  elif ! diff -r -q cuda/ptx "$tmp/ptx"; then
    echo "cuda-ci: checked-in PTX differs from cuda/*.cu; run 'make kernels' and commit cuda/ptx" >&2
    exit 1
  else
    echo "cuda-ci: checked-in PTX matches the sources"
  fi
else
  echo "cuda-ci: nvcc not found; PTX comparison skipped"
fi
if command -v g++ >/dev/null; then
  echo "cuda-ci: kernels on the CPU emulator vs the Go references (tag masscudaemu)"
  go test -tags masscudaemu -count=1 ./cuda/emu/
fi
echo "cuda-ci: ok"
