#!/usr/bin/env bash
# k8s-test.sh (make k8s-test): the kubernetes sandbox backend on a real
# local cluster. Not part of `make test` or CI: a cold build of the cluster
# binaries takes tens of minutes on 2 cores (the build is cached after).
#   1. scripts/k8s-local.sh up (build cached), images loaded into its containerd
#   2. the sandboxtest conformance suite on gVisor pods and on runc pods, and the
#      teardown probe (no process of a deleted pod stays on the node)
#   3. massctl sandbox verify --backend kubernetes --json (static, host, usability; and
#      resources on its own), and each weakening failing exactly its probes
#   4. massd on the cluster: a 2-iteration scripted search, kill -9 mid-episode, the
#      audit and ledger shapes of a scripted episode against the Docker backend's
#   5. create+exec latency, kubernetes vs docker, in one run
#   6. the node's runsc-sandbox/runsc-gofer processes left by all of the above (0)
# Results in out/k8s/ (gitignored).
set -euo pipefail
cd "$(dirname "$0")/.."
out=out/k8s
mkdir -p "$out"
t0=$(date +%s)
bash scripts/k8s-local.sh up 2>&1 | tee "$out/up.log"
kc=$(bash scripts/k8s-local.sh kubeconfig)
bash scripts/k8s-local.sh load mass-test:latest mass-test-k8s:latest
bash scripts/k8s-local.sh load mass-agent:latest mass-agent-k8s:latest
export MASS_K8S_KUBECONFIG=$kc MASS_K8S_SECCOMP=mass.json MASS_SANDBOX_RUNTIME= MASS_K8S_NODE_PROC=1
echo "k8s-test: cluster and images ready in $(($(date +%s) - t0))s"
go test -count=1 -v -timeout 40m -run 'TestConformance|TestDeletedPodLeavesNoSandbox' ./sandbox/kubernetes 2>&1 | tee "$out/conformance.log" | grep -E '^(=== RUN|--- |ok|FAIL|PASS)' | grep -v '=== RUN' || true
grep -q "^ok" "$out/conformance.log" || echo "k8s-test: conformance FAILED (see $out/conformance.log)"
for rt in runsc runc; do
	./bin/massctl sandbox verify --backend kubernetes --kubeconfig "$kc" --runtime "$rt" --groups static,host,usability --race-ops 500 --json \
		>"$out/verify-$rt.json" || echo "k8s-test: verify on $rt had failures (see $out/verify-$rt.json)"
	./bin/massctl sandbox verify --backend kubernetes --kubeconfig "$kc" --runtime "$rt" --groups resources --json \
		>"$out/verify-resources-$rt.json" 2>"$out/verify-resources-$rt.err" || echo "k8s-test: resources on $rt had failures (see $out/verify-resources-$rt.*)"
done
go test -count=1 -v -timeout 60m -run 'TestWeakenedPoliciesFailExactly' ./sandbox/kubernetes 2>&1 | tee "$out/weaken.log" | grep -E '^\s*(--- |ok|FAIL)' || true
grep -q '^ok' "$out/weaken.log" || echo "k8s-test: weakenings FAILED (see $out/weaken.log)"
go test -count=1 -v -timeout 30m -run 'TestKubernetes' ./daemon 2>&1 | tee "$out/e2e.log" | grep -E '^(--- |ok|FAIL)' || true
grep -q '^ok' "$out/e2e.log" || echo "k8s-test: the massd end-to-end tests FAILED (see $out/e2e.log)"
go test -count=1 -run '^$' -bench CreateExec -benchtime 10x ./sandbox/kubernetes | tee "$out/bench.txt"
# Every pod is gone from the API by now; none may have left a sandbox behind.
sleep 30
left=$(pgrep -fc "runsc-(sandbox|gofer) .*/run/mass-k8s/" || true)
echo "k8s-test: runsc-sandbox/runsc-gofer processes left on the node: ${left:-0}" | tee "$out/leftover.txt"
echo "k8s-test: done in $(($(date +%s) - t0))s"
