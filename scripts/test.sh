#!/usr/bin/env bash
# test.sh: every test of the repository, as CI runs it. Needs the packages that
# scripts/setup-host.sh installs and a reachable Docker engine (tests that need
# one say so loudly when it is missing).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! docker info >/dev/null 2>&1; then
	echo "test: WARNING: no Docker engine reachable; sandbox and agent tests will skip" >&2
fi

echo "test: go vet"
go vet ./...

echo "test: go test"
go test -count=1 -timeout 60m ./...

# The race pass repeats the concurrent packages' fast tests under -race; their
# long end-to-end runs (real massd, cycles, kill -9) ran above and skip under
# -short. `make check` runs the full race.
echo "test: go test -race -short (daemon, agents)"
go test -race -short -count=1 -timeout 30m ./daemon/... ./agents/...

echo "test: cuda build, vet and test binaries"
bash scripts/cuda-ci.sh

echo "test: cuda kernels and CPU-vs-CUDA parity on the CPU emulator"
bash scripts/cuda-emu.sh
