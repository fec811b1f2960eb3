#!/usr/bin/env bash
# agents-demo.sh — start a throwaway massd, run one dry-run episode of an
# example task with `massctl run --model scripted`, and print its audit.
# Needs Docker and the mass-test:latest image (massctl image build --test).
# Usage: scripts/agents-demo.sh [TASK_YAML]
set -euo pipefail
cd "$(dirname "$0")/.."
task=${1:-examples/tasks/projectile-sim/task.yaml}
bin=${BIN:-bin}
mkdir -p "$bin"
[ -x "$bin/massd" ] && [ -x "$bin/massctl" ] || go build -o "$bin/" ./cmd/massd ./cmd/massctl
[ -x "$bin/mass-sandbox-helper" ] || CGO_ENABLED=0 go build -o "$bin/" ./sandbox/helper/cmd/mass-sandbox-helper
work=$(mktemp -d)
cat >"$work/massd.yaml" <<YAML
socket: $work/massd.sock
data_dir: $work/data
sandbox:
  image: ${MASS_DEMO_IMAGE:-mass-test:latest}
  helper: $(realpath "$bin/mass-sandbox-helper")
YAML
"$bin/massd" --config "$work/massd.yaml" >"$work/massd.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; echo "massd log and data: $work"' EXIT
for _ in $(seq 100); do [ -S "$work/massd.sock" ] && break; sleep 0.1; done
export MASS_SOCKET=$work/massd.sock
"$bin/massctl" run --task "$task" --model scripted
ep=$("$bin/massctl" run --task "$task" --model scripted --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["episode_id"])')
"$bin/massctl" audit "$ep"
"$bin/massctl" audit verify "$ep"
