package kubernetes

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/docker"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

// Run with (a cluster up; make k8s-test does):
//
//	go test ./sandbox/kubernetes -run '^$' -bench CreateExec -benchtime 20x
//
// Both backends run in one process, one after the other, on the same
// machine: box create (to running) plus one empty command, removal not timed.

func reportQuantiles(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	q := func(p float64) float64 { return float64(ds[int(p*float64(len(ds)-1)+0.5)].Microseconds()) / 1000 }
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.95), "p95-ms")
}

func benchCreateExec(b *testing.B, rt sandbox.Runtime, image string, pol sandbox.Policy) {
	ctx := context.Background()
	ep := sandboxtest.Episode(b)
	if err := rt.CreateWorkspace(ctx, sandbox.WorkspaceSpec{Episode: ep}, nil); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.RemoveWorkspace(context.Background(), ep) })
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		sb, err := rt.Create(ctx, sandbox.Spec{Episode: ep, Agent: fmt.Sprintf("a%d", i), Image: image, Policy: pol})
		if err != nil {
			b.Fatal(err)
		}
		res, err := sb.Exec(ctx, sandbox.ExecRequest{Argv: []string{"true"}})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("exec: %+v %v", res, err)
		}
		ds = append(ds, time.Since(start))
		b.StopTimer()
		if err := sb.Remove(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.StopTimer()
	reportQuantiles(b, ds)
}

func BenchmarkCreateExec(b *testing.B) {
	for _, runtime := range []string{sandbox.RuntimeRunsc, sandbox.RuntimeRunc} {
		pol := testPolicy(runtime)
		b.Run("kubernetes-"+runtime, func(b *testing.B) {
			rt := benchK8s(b, pol)
			benchCreateExec(b, rt, envOr("MASS_K8S_TEST_IMAGE", "mass-test-k8s:latest"), pol)
		})
		b.Run("docker-"+runtime, func(b *testing.B) {
			rt := benchDocker(b, pol)
			benchCreateExec(b, rt, "mass-test:latest", pol)
		})
	}
}

func benchK8s(b *testing.B, pol sandbox.Policy) *Runtime {
	kc := envOr("MASS_K8S_KUBECONFIG", "")
	if kc == "" {
		b.Skip("NO CLUSTER: $MASS_K8S_KUBECONFIG is unset: the kubernetes benchmark is SKIPPED")
	}
	rt, err := New(context.Background(), Config{Kubeconfig: kc, DaemonID: fmt.Sprintf("b%d", time.Now().UnixNano()%1e9),
		Image: envOr("MASS_K8S_IMAGE", DefaultImage), Policy: pol, SeccompLocalhost: envOr("MASS_K8S_SECCOMP", "")})
	if err != nil {
		b.Fatal(err)
	}
	return rt
}

func benchDocker(b *testing.B, pol sandbox.Policy) *docker.Runtime {
	helper, err := sandboxtest.BuildHelper(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	rt, err := docker.New(context.Background(), docker.Config{DaemonID: fmt.Sprintf("kbench-%d", time.Now().UnixNano()%1e9),
		HelperPath: helper, Image: "mass-test:latest", Policy: pol})
	if err != nil {
		b.Skipf("NO DOCKER ENGINE (%v): the docker half of the comparison is SKIPPED", err)
	}
	b.Cleanup(func() { _ = rt.Close() })
	return rt
}
