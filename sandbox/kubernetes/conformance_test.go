package kubernetes

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

// The cluster tests run against the cluster $MASS_K8S_KUBECONFIG names
// (scripts/k8s-local.sh up; make k8s-test sets it). Without one they skip
// loudly: nothing here fakes an API server.
func clusterRuntime(t *testing.T, pol sandbox.Policy) *Runtime {
	t.Helper()
	kc := os.Getenv("MASS_K8S_KUBECONFIG")
	if kc == "" {
		t.Skip("NO CLUSTER: $MASS_K8S_KUBECONFIG is unset (scripts/k8s-local.sh up; make k8s-test): the kubernetes conformance run is SKIPPED")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rt, err := New(ctx, Config{Kubeconfig: kc, DaemonID: fmt.Sprintf("t%d", time.Now().UnixNano()%1e9),
		Image: envOr("MASS_K8S_IMAGE", DefaultImage), Policy: pol, SeccompLocalhost: os.Getenv("MASS_K8S_SECCOMP")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n, err := rt.ReapOrphans(context.Background(), func(string) bool { return false })
		if err != nil {
			t.Errorf("reap: %v", err)
		}
		if n > 0 {
			t.Logf("reaped %d objects the tests left", n)
		}
	})
	return rt
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

func testPolicy(runtime string) sandbox.Policy {
	p := sandbox.DefaultPolicy()
	p.Runtime = runtime
	p.MemoryBytes = 256 << 20
	p.DiskBytes = 64 << 20
	return p
}

func TestConformanceGVisor(t *testing.T) {
	p := testPolicy(sandbox.RuntimeRunsc)
	rt := clusterRuntime(t, p)
	sandboxtest.Run(t, sandboxtest.Harness{Runtime: rt, Image: envOr("MASS_K8S_TEST_IMAGE", "mass-test-k8s:latest"), Policy: p})
}

func TestConformanceRunc(t *testing.T) {
	p := testPolicy(sandbox.RuntimeRunc)
	rt := clusterRuntime(t, p)
	sandboxtest.Run(t, sandboxtest.Harness{Runtime: rt, Image: envOr("MASS_K8S_TEST_IMAGE", "mass-test-k8s:latest"), Policy: p})
}
