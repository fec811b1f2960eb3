#!/usr/bin/env bash
# ledger-bench.sh: durable ledger append throughput (one fsync per append, and
# group-committed from 16 goroutines) and chain verification speed, as a table.
set -euo pipefail
cd "$(dirname "$0")/.."

out=$(go test -run '^$' -bench 'BenchmarkAppend|BenchmarkHashRecord|BenchmarkVerify' -benchtime "${BENCHTIME:-2s}" ./agents/ledger)
echo "$out" | awk '
/^Benchmark/ {
	name=$1; sub(/-[0-9]+$/, "", name); ns=$3
	rate = (ns > 0) ? 1e9/ns : 0
	unit = (name ~ /Verify/) ? "ledgers/s (1000 records)" : (name ~ /Hash/) ? "records/s (no I/O)" : "appends/s"
	rows[++n] = sprintf("%-26s %14.0f ns/op %12.0f %s", name, ns, rate, unit)
}
END {
	printf "%-26s %20s %12s\n", "benchmark", "time", "rate"
	for (i = 1; i <= n; i++) print rows[i]
}'
