#!/usr/bin/env bash
# bench.sh: run the project's benchmarks briefly and print one table: daemon API
# latency, sandbox latencies, massd's per-tool-call overhead, ledger appends,
# tokenizer throughput, dataset build and trainer tokens/s. Raw outputs are
# kept in out/bench/. Needs Docker with the mass-test image (make image) and
# bin/mass-train (make build). About 5-10 minutes on two cores.
#
# Knobs (environment): BENCH_OUT (out/bench), BENCH_N (iterations for the
# sandbox latencies, 10), BENCH_CALLS (tool calls for the overhead, 100),
# BENCH_GETS (GET /v1/jobs/{id} requests, 10000), BENCH_SKIP (space-separated
# sections to skip: daemon sandbox agents ledger tokenizer data trainer torch), BENCH_TORCH_SHAPES
# (the side-by-side's shapes, scripts/torch_bench.py; default all, about 15 minutes more).
set -uo pipefail
cd "$(dirname "$0")/.."

OUT=${BENCH_OUT:-out/bench}
N=${BENCH_N:-10}
CALLS=${BENCH_CALLS:-100}
GETS=${BENCH_GETS:-10000}
MT=${MASS_TRAIN:-bin/mass-train}
SKIP=" ${BENCH_SKIP:-} "
mkdir -p "$OUT"
rows=$OUT/table.tsv
: >"$rows"
failed=()

log() { printf 'bench: %s\n' "$*" >&2; }

# gobench NAME PKG REGEX BENCHTIME [extra go test args...]: runs one go test
# benchmark set, keeps its output in $OUT/NAME.txt and its parsed metrics
# ("benchmark unit value" lines) in $OUT/NAME.metrics.
gobench() {
	local name=$1 pkg=$2 re=$3 bt=$4 t0
	shift 4
	t0=$(date +%s)
	log "$name: go test $pkg -bench '$re' -benchtime $bt $*"
	go test "$pkg" -run '^$' -bench "$re" -benchtime "$bt" -count 1 -timeout 15m "$@" >"$OUT/$name.txt" 2>&1
	local rc=$?
	awk '/^Benchmark/ && NF >= 4 {
		name = $1; sub(/-[0-9]+$/, "", name); sub(/^Benchmark/, "", name)
		print name, "iters", $2
		for (i = 3; i < NF; i += 2) print name, $(i+1), $i
	}' "$OUT/$name.txt" >"$OUT/$name.metrics"
	log "$name: done in $(($(date +%s) - t0))s (exit $rc)"
	if [ "$rc" -ne 0 ]; then
		failed+=("$name")
		tail -5 "$OUT/$name.txt" | sed 's/^/    /' >&2
	fi
	return 0
}

# metric NAME BENCH UNIT: one value from a gobench run, or empty.
metric() { awk -v b="$2" -v u="$3" '$1 == b && $2 == u { print $3; exit }' "$OUT/$1.metrics" 2>/dev/null; }

# row AREA MEASUREMENT VALUE UNIT [SCALE]: a table row; VALUE is multiplied by SCALE.
row() {
	local v=$3
	if [ -z "$v" ]; then
		v="n/a"
	elif [ -n "${5:-}" ]; then
		v=$(awk -v x="$v" -v s="$5" 'BEGIN { y = x * s; printf (y >= 100 ? "%.0f" : (y >= 1 ? "%.2f" : "%.3g")), y }')
	fi
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$v" "$4" >>"$rows"
}

skip() { case $SKIP in *" $1 "*) log "$1: skipped"; return 0 ;; esac; return 1; }

if ! skip daemon; then
	gobench daemon ./daemon/ 'BenchmarkGetJob$' "${GETS}x"
	row daemon "GET /v1/jobs/{id} over the unix socket, p50 ($GETS requests)" "$(metric daemon GetJob p50-us)" µs
	row daemon "GET /v1/jobs/{id} over the unix socket, p99" "$(metric daemon GetJob p99-us)" µs
fi

if ! skip sandbox; then
	gobench sandbox ./sandbox/docker 'CreateStart|ExecEmpty|ExecDockerCLI|Files|KillEpisode' "${N}x"
	gobench sandbox32 ./sandbox/docker 'Concurrent32' 1x
	row sandbox "container create+start, p50 ($N)" "$(metric sandbox CreateStart p50-ms)" ms
	row sandbox "container create+start, p95" "$(metric sandbox CreateStart p95-ms)" ms
	row sandbox "exec empty command via runtime, p50" "$(metric sandbox ExecEmpty p50-ms)" ms
	row sandbox "exec empty command via docker exec CLI, p50" "$(metric sandbox ExecDockerCLI p50-ms)" ms
	for op in Write Read; do
		for sz in 1KiB 1024KiB; do
			row sandbox "file $(tr '[:upper:]' '[:lower:]' <<<"$op") $sz (helper in container), p50" "$(metric sandbox "Files/$op/$sz" p50-ms)" ms
		done
	done
	row sandbox "kill an episode of 4 busy agents, p50" "$(metric sandbox KillEpisode p50-ms)" ms
	row sandbox "32 agents running shell loops at once (no error)" "$(metric sandbox32 Concurrent32 ns/op)" s 1e-9
fi

if ! skip agents; then
	gobench agents ./agents/episode 'BenchmarkToolCallOverhead' "${CALLS}x" -v
	gobench agents16 ./agents/episode 'BenchmarkConcurrentEpisodes16' 1x
	row agents "massd per tool call, model time excluded, p50 ($CALLS calls)" "$(metric agents ToolCallOverhead p50-ms/call)" ms
	row agents "massd per tool call, model time excluded, p99" "$(metric agents ToolCallOverhead p99-ms/call)" ms
	book=$(awk '{ for (i = 1; i < NF; i++) if ($i == "(bookkeeping" && $(i+1) == "only)") { print $(i+3), "/", $(i+4); exit } }' "$OUT/agents.txt")
	row agents "  of which massd bookkeeping (ledger, record, loop checks), p50 / p99" "${book:-}" ""
	row agents "16 concurrent dry-run episodes on the fake model (wall)" "$(metric agents16 ConcurrentEpisodes16 ns/op)" s 1e-9
fi

if ! skip ledger; then
	gobench ledger ./agents/ledger 'BenchmarkAppend|BenchmarkHashRecord|BenchmarkVerify' 1s
	row ledger "append, one fsync each" "$(metric ledger Append ns/op)" µs/append 1e-3
	row ledger "append, 16 goroutines (group commit)" "$(metric ledger AppendParallel ns/op)" µs/append 1e-3
	row ledger "hash one record (no I/O)" "$(metric ledger HashRecord ns/op)" µs 1e-3
	row ledger "verify a 1000-record chain" "$(metric ledger Verify ns/op)" ms 1e-6
fi

if ! skip tokenizer; then
	gobench tokenizer ./trainer/tokenizer 'Encode$|Decode' 3x -cpu 1
	row tokenizer "encode ~4 MB chat+code text, one core (wall)" "$(metric tokenizer Encode MB/s)" MB/s
	row tokenizer "encode, per CPU second" "$(metric tokenizer Encode MB/cpu-s)" MB/cpu-s
	row tokenizer "encode tokens/s (wall)" "$(metric tokenizer Encode tokens/s)" tokens/s
	row tokenizer "encode tokens per CPU second" "$(metric tokenizer Encode tokens/cpu-s)" tokens/cpu-s
	row tokenizer "decode" "$(metric tokenizer Decode MB/s)" MB/s
fi

if ! skip data; then
	MASS_BENCH_EPISODES=${BENCH_EPISODES:-2} gobench data ./trainer/sft 'BenchmarkBuild' 1x
	row data "dataset build, ${BENCH_EPISODES:-2} paper-shaped episodes: supervised tokens" "$(metric data Build supervised-tokens)" tokens
	row data "dataset build throughput" "$(metric data Build supervised-tokens/s)" "supervised tokens/s"
	row data "dataset build peak RSS (whole test process)" "$(metric data Build peak-RSS-MiB)" MiB
fi

if ! skip trainer; then
	if [ -x "$MT" ]; then
		log "trainer: $MT bench --config micro,tiny --seq 256 --iters 2"
		t0=$(date +%s)
		if "$MT" bench --config micro,tiny --seq 256 --iters 2 >"$OUT/trainer.txt" 2>&1; then
			log "trainer: done in $(($(date +%s) - t0))s"
		else
			failed+=(trainer)
			tail -5 "$OUT/trainer.txt" >&2
		fi
		# Columns: model params lora seq train-tok/s train-tok/cpu-s eval-tok/s eval-tok/cpu-s peak-RSS-MiB
		while read -r model _ _ seq tr trc ev evc rss; do
			row trainer "CPU LoRA train, $model preset, seq $seq (wall / per CPU second)" "$tr / $trc" tokens/s
			row trainer "CPU eval forward, $model preset, seq $seq (wall / per CPU second)" "$ev / $evc" tokens/s
			row trainer "peak RSS, $model preset" "$rss" MiB
		done < <(awk '$1 == "micro" || $1 == "tiny"' "$OUT/trainer.txt")
	else
		log "trainer: $MT missing (make build)"
		failed+=(trainer)
	fi
fi

if ! skip torch; then
	log "torch: scripts/torch_bench.py (mass-train --backend cpu against plain PyTorch, interleaved)"
	t0=$(date +%s)
	if MASS_TRAIN=$MT BENCH_OUT=$OUT/torch BENCH_SHAPES=${BENCH_TORCH_SHAPES:-} /usr/bin/python3 scripts/torch_bench.py >"$OUT/torch.txt" 2>"$OUT/torch.log"; then
		log "torch: done in $(($(date +%s) - t0))s"
	else
		failed+=(torch)
		tail -5 "$OUT/torch.log" >&2
	fi
fi

echo
printf '%-10s  %-72s  %16s  %s\n' AREA MEASUREMENT VALUE UNIT
printf '%-10s  %-72s  %16s  %s\n' ---------- "$(printf '%.0s-' {1..72})" ---------------- ----------
while IFS=$'\t' read -r area what val unit; do
	printf '%-10s  %-72s  %16s  %s\n' "$area" "$what" "$val" "$unit"
done <"$rows"
echo
echo "machine: $(nproc) cores, $(awk '/model name/ { $1 = $2 = $3 = ""; print; exit }' /proc/cpuinfo | sed 's/^ *//'), load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -s "$OUT/torch.txt" ]; then
	echo
	echo "CPU LoRA step, mass-train --backend cpu against plain PyTorch (CPU-seconds per step, medians):"
	cat "$OUT/torch.txt"
fi
echo "raw outputs: $OUT/*.txt"
echo "GPU (CUDA backend tokens/s, MFU, parity): make gpu-check on a GPU host"
if [ "${#failed[@]}" -gt 0 ]; then
	echo "bench: FAILED: ${failed[*]} (see $OUT/<name>.txt)" >&2
	exit 1
fi
