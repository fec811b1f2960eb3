#!/usr/bin/env bash
# trainer-bench.sh: CPU trainer speed and memory (fast backend and reference). Prints the mass-train bench table
# (train/eval tokens per wall second and per CPU second, peak RSS) for the micro and
# tiny presets, then the Go benchmark of one forward+backward.
set -euo pipefail
cd "$(dirname "$0")/.."
mt=${MASS_TRAIN:-bin/mass-train}
"$mt" bench --config micro,tiny --seq 64,256 --iters 3
go test -run '^$' -bench BenchmarkForwardBackward -benchtime 20x ./trainer/refbackend/ ./trainer/fast/
