#!/usr/bin/env bash
# data-bench.sh: tokenizer throughput (one core) and a paper-sized dataset build
# (119 synthetic trajectories, ~17M supervised tokens; needs ~5 GB free under $WORK).
set -euo pipefail
cd "$(dirname "$0")/.."
WORK=${WORK:-$(mktemp -d)}
TOK=trainer/tokenizer/testdata
EPISODES=${EPISODES:-119}

go test -run XXX -bench 'Encode|Decode' -benchtime 3x -cpu 1 ./trainer/tokenizer

go build -o "$WORK/massctl" ./cmd/massctl
"$WORK/massctl" data synth --out "$WORK/eps" --episodes "$EPISODES" --tasks 8 --workers 6 --turns 30 \
	--response-words 500 --tool-words 1500
du -sh "$WORK/eps"
/usr/bin/time -v "$WORK/massctl" data build --quiet --tokenizer "$TOK" --episodes "$WORK/eps" --out "$WORK/ds" 2>&1 |
	grep -E 'TOTAL|built|Elapsed|Maximum resident'
rm -rf "$WORK/eps" "$WORK/ds"
