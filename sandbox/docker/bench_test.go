package docker

import (
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

// Run with: go test ./sandbox/docker -run '^$' -bench . -benchtime 20x

func benchWorkspace(b *testing.B) (*Runtime, string) {
	b.Helper()
	rt := needEngine(b)
	ep := sandboxtest.Episode(b)
	if err := rt.CreateWorkspace(context.Background(), sandbox.WorkspaceSpec{Episode: ep}, nil); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = rt.RemoveWorkspace(context.Background(), ep) })
	return rt, ep
}

func benchSandbox(b *testing.B, rt *Runtime, ep, agent string) sandbox.Sandbox {
	b.Helper()
	sb, err := rt.Create(context.Background(), sandbox.Spec{Episode: ep, Agent: agent, Image: testImage, Policy: testPolicy()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sb.Remove(context.Background()) })
	return sb
}

// reportQuantiles adds p50 and p95 in milliseconds.
func reportQuantiles(b *testing.B, ds []time.Duration) {
	if len(ds) == 0 {
		return
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	q := func(p float64) float64 {
		return float64(ds[int(p*float64(len(ds)-1)+0.5)].Microseconds()) / 1000
	}
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.95), "p95-ms")
}

// BenchmarkCreateStart measures agent container create+start (removal is
// outside the timed part).
func BenchmarkCreateStart(b *testing.B) {
	rt, ep := benchWorkspace(b)
	ctx := context.Background()
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		sb, err := rt.Create(ctx, sandbox.Spec{Episode: ep, Agent: fmt.Sprintf("a%d", i), Image: testImage, Policy: testPolicy()})
		if err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
		b.StopTimer()
		if err := sb.Remove(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	reportQuantiles(b, ds)
}

// BenchmarkExecEmpty is the round trip of an empty command through the
// runtime (exec wrapper included).
func BenchmarkExecEmpty(b *testing.B) {
	rt, ep := benchWorkspace(b)
	sb := benchSandbox(b, rt, ep, "exec")
	ctx := context.Background()
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res, err := sb.Exec(ctx, sandbox.ExecRequest{Argv: []string{"true"}})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("exec: %+v %v", res, err)
		}
		ds = append(ds, time.Since(start))
	}
	reportQuantiles(b, ds)
}

// BenchmarkExecDockerCLI is the same empty command through `docker exec`.
func BenchmarkExecDockerCLI(b *testing.B) {
	rt, ep := benchWorkspace(b)
	sb := benchSandbox(b, rt, ep, "cli")
	if _, err := exec.LookPath("docker"); err != nil {
		b.Skip("no docker CLI")
	}
	var ds []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		if out, err := exec.Command("docker", "exec", sb.ID(), "true").CombinedOutput(); err != nil {
			b.Fatalf("docker exec: %v %s", err, out)
		}
		ds = append(ds, time.Since(start))
	}
	reportQuantiles(b, ds)
}

func BenchmarkFiles(b *testing.B) {
	rt, ep := benchWorkspace(b)
	sb := benchSandbox(b, rt, ep, "files")
	ctx := context.Background()
	for _, size := range []int{1 << 10, 1 << 20} {
		body := []byte(strings.Repeat("0123456789abcde\n", size/16))
		name := fmt.Sprintf("f%d.txt", size)
		b.Run(fmt.Sprintf("Write/%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(size))
			var ds []time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if _, err := sb.Files().Write(ctx, name, body); err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(start))
			}
			reportQuantiles(b, ds)
		})
		b.Run(fmt.Sprintf("Read/%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(size))
			var ds []time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				r, err := sb.Files().Read(ctx, name, 0, 1<<20)
				if err != nil || len(r.Content) != size {
					b.Fatalf("read: %d bytes, %v", len(r.Content), err)
				}
				ds = append(ds, time.Since(start))
			}
			reportQuantiles(b, ds)
		})
	}
}

// BenchmarkConcurrent32 starts 32 agent containers on one workspace and has
// each run a shell loop at once; any error fails the benchmark.
func BenchmarkConcurrent32(b *testing.B) {
	const n = 32
	rt, ep := benchWorkspace(b)
	ctx := context.Background()
	boxes := make([]sandbox.Sandbox, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range boxes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sb, err := rt.Create(ctx, sandbox.Spec{Episode: ep, Agent: fmt.Sprintf("c%d", i), Image: testImage, Policy: testPolicy()})
			if err != nil {
				errs <- err
				return
			}
			boxes[i] = sb
		}()
	}
	wg.Wait()
	b.Cleanup(func() { _ = rt.KillEpisode(context.Background(), ep) })
	select {
	case err := <-errs:
		b.Fatalf("create: %v", err)
	default:
	}
	script := `i=0; while [ $i -lt 500 ]; do i=$((i+1)); echo $i > /tmp/n; done; cat /tmp/n; echo $HOSTNAME >> /workspace/log-$HOSTNAME`
	b.ResetTimer()
	for it := 0; it < b.N; it++ {
		for i, sb := range boxes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := sb.Exec(ctx, sandbox.ExecRequest{Argv: []string{"sh", "-c", script}})
				if err != nil {
					errs <- fmt.Errorf("agent %d: %w", i, err)
				} else if string(res.Stdout) != "500\n" || res.ExitCode != 0 {
					errs <- fmt.Errorf("agent %d: exit %d, out %q, err %q", i, res.ExitCode, res.Stdout, res.Stderr)
				}
			}()
		}
		wg.Wait()
		select {
		case err := <-errs:
			b.Fatal(err)
		default:
		}
	}
	b.ReportMetric(n, "containers")
}

// BenchmarkKillEpisode times KillEpisode on 4 agents that each run a
// command (the contract: an episode's containers are gone within 2 s).
func BenchmarkKillEpisode(b *testing.B) {
	rt, ep := benchWorkspace(b)
	ctx := context.Background()
	var ds []time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for j := 0; j < 4; j++ {
			sb, err := rt.Create(ctx, sandbox.Spec{Episode: ep, Agent: fmt.Sprintf("k%d-%d", i, j), Image: testImage, Policy: testPolicy()})
			if err != nil {
				b.Fatal(err)
			}
			go func() { _, _ = sb.Exec(ctx, sandbox.ExecRequest{Argv: []string{"sleep", "600"}}) }()
		}
		time.Sleep(300 * time.Millisecond)
		b.StartTimer()
		start := time.Now()
		if err := rt.KillEpisode(ctx, ep); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
	}
	reportQuantiles(b, ds)
}
