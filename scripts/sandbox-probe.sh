#!/usr/bin/env bash
# Isolation self-test demo: build the static binaries, run every probe on the
# default policy (must pass), then on a weakened one (must fail, naming the
# probes). Usage: scripts/sandbox-probe.sh [--quick]
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin}
mkdir -p "$BIN"
go build -o "$BIN/" ./cmd/massctl
CGO_ENABLED=0 go build -trimpath -o "$BIN/" ./sandbox/helper/cmd/mass-sandbox-helper ./sandbox/probe/cmd/mass-probe

args=()
if [[ "${1:-}" == "--quick" ]]; then
	args=(--race-ops 500)
fi

echo "== massctl sandbox policy"
"$BIN/massctl" sandbox policy

echo "== massctl sandbox verify --json (default policy: every probe must pass)"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! "$BIN/massctl" sandbox verify --json "${args[@]}" >"$out"; then
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); [print("FAIL", p["name"], "|", p["observed"]) for p in r["probes"] if not p["ok"]]' "$out" || true
	echo "sandbox verify failed on the default policy" >&2
	exit 1
fi
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("passed", r["passed"], "failed", r["failed"])' "$out"

echo "== massctl sandbox verify --weaken network,cap-sys-admin (must fail)"
if "$BIN/massctl" sandbox verify --json --groups static --weaken network,cap-sys-admin >"$out"; then
	echo "the weakened policy passed: the probes cannot fail" >&2
	exit 1
fi
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("failed as expected:", ", ".join(p["name"] for p in r["probes"] if not p["ok"]))' "$out"
