#!/usr/bin/env bash
# sandbox-bench.sh runs the sandbox benchmarks against the real Docker engine
# and prints one table: container create+start, exec round trip (runtime vs
# the raw `docker exec` CLI), helper file read/write of 1 KiB and 1 MiB (over
# the box's long-lived helper session; the first op starts it),
# KillEpisode, and 32 concurrent agents running shell loops.
# Usage: scripts/sandbox-bench.sh [N]   (iterations per benchmark, default 20)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20}
out=$(go test ./sandbox/docker -run '^$' -bench . -benchtime "${n}x" -timeout 20m)
echo "$out" | grep -E '^(goos|goarch|cpu)' || true
printf '\n%-28s %6s %12s %10s %10s\n' benchmark n ms/op p50-ms p95-ms
echo "$out" | awk '/^Benchmark/ {
	name=$1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
	p50="-"; p95="-"
	for (i = 3; i <= NF; i++) { if ($(i+1) == "p50-ms") p50=$i; if ($(i+1) == "p95-ms") p95=$i }
	printf "%-28s %6s %12.1f %10s %10s\n", name, $2, $3/1e6, p50, p95
}'
echo "$out" | grep -q '^ok' && echo "ok: all benchmarks passed without an error"
