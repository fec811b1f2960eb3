#!/usr/bin/env bash
# agents-bench.sh — massd's overhead per tool call (model time excluded,
# p50/p99 per tool) and 16 concurrent dry-run episodes, on the real Docker
# engine with the fake OpenAI endpoint. Prints the tables.
set -euo pipefail
cd "$(dirname "$0")/.."
go test ./agents/episode -run '^$' -bench 'BenchmarkToolCallOverhead' -benchtime "${CALLS:-200}x" -v |
	grep -E 'tool |calls|bookkeeping|sandbox|all|glob|list_directory|read_file|run_shell|write_file|^Benchmark' | grep -v '^=== '
go test ./agents/episode -run '^$' -bench 'BenchmarkConcurrentEpisodes16' -benchtime 1x
