#!/usr/bin/env bash
# Starts the built massd on a temporary socket and data dir and checks the
# spine from the outside: status --json, task validate on every example and
# on a malformed spec, task add, a wait job followed to the end.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin}
tmp=$(mktemp -d)
sock=$tmp/massd.sock
"$BIN/massd" --data-dir "$tmp/data" --socket "$sock" 2>"$tmp/massd.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do "$BIN/massctl" --socket "$sock" status >/dev/null 2>&1 && break; sleep 0.1; done
"$BIN/massctl" --socket "$sock" status --json
"$BIN/massctl" --socket "$sock" task validate examples/tasks/*/task.yaml
printf 'id: broken\nprompt: p\nlimits:\n  episode_wall_time: 10m\n  agent_turns: many\n' >"$tmp/bad.yaml"
if "$BIN/massctl" task validate "$tmp/bad.yaml"; then echo "malformed spec passed" >&2; exit 1; fi
"$BIN/massctl" --socket "$sock" task add examples/tasks/*/task.yaml
job=$("$BIN/massctl" --socket "$sock" job start wait --task sales-analysis --params '{"seconds":2,"interval_ms":250}')
"$BIN/massctl" --socket "$sock" job watch "$job"
"$BIN/massctl" --socket "$sock" job show "$job"
echo "spine smoke test passed"
