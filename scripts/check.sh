#!/usr/bin/env bash
# check.sh: gofmt, go vet (plain and -tags masscuda), staticcheck, and -race on
# the packages that run concurrent code.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "check: gofmt"
bad=$(gofmt -l $(git ls-files '*.go'))
if [[ -n $bad ]]; then
	echo "gofmt needed on:"; echo "$bad"; exit 1
fi

echo "check: go vet"
go vet ./...
go vet -tags masscuda ./...  # gorgonia owns the plain "cuda" tag; see scripts/cuda-ci.sh

echo "check: staticcheck"
sc=$(go env GOPATH)/bin/staticcheck
if [[ ! -x $sc ]]; then
	GOFLAGS= go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
fi
"$sc" ./...

echo "check: go test -race (concurrent packages)"
go test -race -count=1 -timeout 30m ./daemon/... ./agents/... ./sandbox/...
echo "check: ok"
