#!/usr/bin/env bash
# p50/p99 latency of 10,000 GET /v1/jobs/{id} over massd's unix socket.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(go test -run '^$' -bench 'BenchmarkGetJob$' -benchtime 10000x -count 1 ./daemon/)
line=$(grep -E '^BenchmarkGetJob' <<<"$out")
metric() { awk -v m="$1" '{for (i = 2; i <= NF; i++) if ($i == m) print $(i-1)}' <<<"$line"; }
printf '%-44s %10s %10s %10s %10s\n' "benchmark" "requests" "p50 (us)" "p99 (us)" "max (us)"
printf '%-44s %10s %10s %10s %10s\n' "GET /v1/jobs/{id} over unix socket" "$(awk '{print $2}' <<<"$line")" "$(metric p50-us)" "$(metric p99-us)" "$(metric max-us)"
