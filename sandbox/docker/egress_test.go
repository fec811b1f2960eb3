package docker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/network"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

var (
	proxyOnce sync.Once
	proxyPath string
	proxyErr  error
)

// egressRuntime is a runtime whose egress proxies reach the world through
// an internal network of the test's own (nothing leaves the machine).
func egressRuntime(t testing.TB) (*Runtime, string) {
	t.Helper()
	base := needEngine(t)
	proxyOnce.Do(func() {
		dir, err := os.MkdirTemp("", "mass-egress-test-")
		if err != nil {
			proxyErr = err
			return
		}
		proxyPath, proxyErr = sandboxtest.BuildStatic(dir, "github.com/mass-dev/mass/sandbox/egress/cmd/mass-egress-proxy")
	})
	if proxyErr != nil {
		t.Fatal(proxyErr)
	}
	ctx := context.Background()
	outer := fmt.Sprintf("mass-test-outer-%d-%d", os.Getpid(), time.Now().UnixNano()%1e6)
	if _, err := base.cli.NetworkCreate(ctx, outer, network.CreateOptions{Driver: "bridge", Internal: true}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = base.cli.NetworkRemove(context.Background(), outer) })
	rt, err := New(ctx, Config{DaemonID: base.cfg.DaemonID, HelperPath: testHelper, Image: testImage, Logger: base.log,
		Client: base.cli, Egress: EgressConfig{ProxyPath: proxyPath, Network: outer}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt, outer
}

func egressPolicy() sandbox.Policy {
	p := testPolicy()
	p.Egress = &sandbox.Egress{Allow: []string{"data.example.org"}}
	return p
}

func egressBox(t testing.TB, rt *Runtime, ep string, env map[string]string) sandbox.Sandbox {
	t.Helper()
	ctx := context.Background()
	if err := rt.CreateWorkspace(ctx, sandbox.WorkspaceSpec{Episode: ep}, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.RemoveWorkspace(context.Background(), ep) })
	sb, err := rt.Create(ctx, sandbox.Spec{Episode: ep, Agent: "orchestrator", Policy: egressPolicy(), Env: env})
	if err != nil {
		t.Fatal(err)
	}
	return sb
}

// TestEgressBoxCannotReachHost: an egress box reaches no address of the
// host (the episode network's bridge has none, and there is no route
// out), although a listener there accepts everyone else.
func TestEgressBoxCannotReachHost(t *testing.T) {
	rt, _ := egressRuntime(t)
	sb := egressBox(t, rt, "egress-host-"+randID(), nil)
	l, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HOST\n"))
			c.Close()
		}
	}()
	port := l.Addr().(*net.TCPAddr).Port
	addrs, _ := net.InterfaceAddrs()
	var targets []string
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			targets = append(targets, n.IP.String())
		}
	}
	gw := sh(t, sb, "ip route | awk '/default/ {print $3}'")
	targets = append(targets, gw)
	for _, h := range targets {
		if got := sh(t, sb, fmt.Sprintf("nc -w 2 %s %d </dev/null 2>/dev/null; true", h, port)); strings.Contains(got, "HOST") {
			t.Errorf("egress box reached the host at %s:%d", h, port)
		}
	}
	t.Logf("tried host addresses %v", targets)
}

// TestEgressLifecycle: the box gets the proxy in its environment and no
// other network; the proxy gets no environment from the agents; networks
// and proxy carry the mass labels; KillEpisode stops the proxy but keeps
// its records, RemoveWorkspace and ReapOrphans remove network and proxy.
func TestEgressLifecycle(t *testing.T) {
	rt, _ := egressRuntime(t)
	ctx := context.Background()
	ep := "egress-life-" + randID()
	sb := egressBox(t, rt, ep, map[string]string{"OPENAI_API_KEY": "sk-egress-test-secret", "HTTPS_PROXY": "http://evil:1"})
	env := sh(t, sb, "env | sort")
	if !strings.Contains(env, "HTTPS_PROXY=http://") || strings.Contains(env, "evil") {
		t.Errorf("box env lacks the proxy or kept the spec's: %s", env)
	}
	if got := sh(t, sb, "nslookup data.example.org >/dev/null 2>&1 && echo RESOLVED; nslookup leak.attacker.example >/dev/null 2>&1 && echo LEAKED; true"); got != "RESOLVED" {
		t.Errorf("lookups: %q, want only the allowed name resolved", got)
	}
	pc, err := rt.cli.ContainerInspect(ctx, egressName(ep))
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(pc.Config.Env, " "); strings.Contains(s, "sk-egress") || strings.Contains(s, "OPENAI") {
		t.Errorf("proxy env leaks the agent's: %s", s)
	}
	if pc.Config.Labels[LabelEpisode] != ep || pc.Config.Labels[LabelKind] != kindEgress || pc.HostConfig.Privileged || !pc.HostConfig.ReadonlyRootfs {
		t.Errorf("proxy labels %v / hardening", pc.Config.Labels)
	}
	infos, err := rt.List(ctx, ep)
	if err != nil {
		t.Fatal(err)
	}
	kinds := []string{}
	for _, in := range infos {
		kinds = append(kinds, in.Kind+":"+in.Agent)
	}
	if !slices.Contains(kinds, "network:"+egressAgent) || !slices.Contains(kinds, "container:"+egressAgent) {
		t.Errorf("List(%s) = %v, want the egress network and proxy", ep, kinds)
	}
	if err := rt.KillEpisode(ctx, ep); err != nil {
		t.Fatal(err)
	}
	if c, err := rt.cli.ContainerInspect(ctx, egressName(ep)); err != nil || c.State.Running || c.State.ExitCode != 0 {
		t.Errorf("proxy after KillEpisode: %+v %v, want stopped cleanly by SIGTERM (exit 0: open transfers recorded)", c.State, err)
	}
	recs, err := rt.EgressLog(ctx, ep)
	if err != nil || len(recs) < 2 || recs[0].Agent != "orchestrator" {
		t.Errorf("EgressLog after KillEpisode = %+v, %v; want the lookups by orchestrator", recs, err)
	}
	if _, err := rt.ReapOrphans(ctx, func(string) bool { return false }); err != nil {
		t.Fatal(err)
	}
	if infos, err := rt.List(ctx, ep); err != nil || len(infos) != 0 {
		t.Errorf("after ReapOrphans List = %+v, %v; want nothing", infos, err)
	}
	if _, err := rt.cli.NetworkInspect(ctx, egressName(ep), network.InspectOptions{}); err == nil {
		t.Errorf("egress network %s still exists", egressName(ep))
	}
}

// TestEgressPolicyMismatch: every box of an episode must ask for the same
// allowlist, and a box without egress stays without network beside one.
func TestEgressPolicyMismatch(t *testing.T) {
	rt, _ := egressRuntime(t)
	ctx := context.Background()
	ep := "egress-mix-" + randID()
	egressBox(t, rt, ep, nil)
	p := egressPolicy()
	p.Egress = &sandbox.Egress{Allow: []string{"other.example.org"}}
	if _, err := rt.Create(ctx, sandbox.Spec{Episode: ep, Agent: "worker-1", Policy: p}); err == nil {
		t.Errorf("a second allowlist in one episode was accepted")
	}
	plain, err := rt.Create(ctx, sandbox.Spec{Episode: ep, Agent: "worker-2", Policy: testPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	if got := sh(t, plain, "ls /sys/class/net | tr '\\n' ' '; env | grep -ci proxy; true"); got != "lo 0" {
		t.Errorf("box without egress: %q, want only lo and no proxy env", got)
	}
}

func randID() string { return fmt.Sprintf("%x", time.Now().UnixNano()&0xffffffffff) }

// TestEgressRefusesNetworklessRuntime: an egress box on a runtime
// registered with --network=none fails at once, saying why.
func TestEgressRefusesNetworklessRuntime(t *testing.T) {
	rt, _ := egressRuntime(t)
	info, err := rt.cli.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	name := ""
	for n, r := range info.Runtimes {
		if slices.Contains(r.Args, "--network=none") {
			name = n
		}
	}
	if name == "" {
		t.Skip("no OCI runtime registered with --network=none on this engine: SKIPPED")
	}
	ep := "egress-rt-" + randID()
	if err := rt.CreateWorkspace(context.Background(), sandbox.WorkspaceSpec{Episode: ep}, nil); err != nil {
		t.Fatal(err)
	}
	defer rt.RemoveWorkspace(context.Background(), ep)
	p := egressPolicy()
	p.Runtime = name
	_, err = rt.Create(context.Background(), sandbox.Spec{Episode: ep, Agent: "a", Policy: p})
	if !errors.Is(err, sandbox.ErrInvalid) || !strings.Contains(err.Error(), "--network=none") {
		t.Errorf("Create on %s = %v, want ErrInvalid naming --network=none", name, err)
	}
	// Left to auto, an egress box that auto put on that runtime runs on
	// runc instead; a box without egress keeps it.
	auto := egressPolicy()
	auto.Runtime = sandbox.RuntimeAuto
	if got := rt.egressRuntime(context.Background(), sandbox.Spec{Episode: ep, Agent: "a", Policy: auto}, name); got != sandbox.RuntimeRunc {
		t.Errorf("auto egress box on %s runs on %q, want runc", name, got)
	}
	auto.Egress = nil
	if got := rt.egressRuntime(context.Background(), sandbox.Spec{Episode: ep, Agent: "a", Policy: auto}, name); got != name {
		t.Errorf("auto box without egress runs on %q, want %s", got, name)
	}
}

// TestEgressWeaknessesReported: the egress weakenings show in the policy
// report, so strict mode refuses them.
func TestEgressWeaknessesReported(t *testing.T) {
	if got := (EgressConfig{}).weaknesses(); len(got) != 0 {
		t.Errorf("default egress config reports %v", got)
	}
	if got := (EgressConfig{AllowPrivate: true, HostAddress: true}).weaknesses(); len(got) != 2 {
		t.Errorf("weakened egress config reports %v, want 2 warnings", got)
	}
}

// BenchmarkEgressCreate measures what egress adds to Create: the first box
// of an episode (its network and proxy too) and a further box.
// Run with: go test ./sandbox/docker -run '^$' -bench EgressCreate -benchtime 5x
func BenchmarkEgressCreate(b *testing.B) {
	rt, _ := egressRuntime(b)
	ctx := context.Background()
	var first, next []time.Duration
	for i := range b.N {
		ep := fmt.Sprintf("egress-bench-%s-%d", randID(), i)
		if err := rt.CreateWorkspace(ctx, sandbox.WorkspaceSpec{Episode: ep}, nil); err != nil {
			b.Fatal(err)
		}
		t0 := time.Now()
		if _, err := rt.Create(ctx, sandbox.Spec{Episode: ep, Agent: "orchestrator", Policy: egressPolicy()}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := rt.Create(ctx, sandbox.Spec{Episode: ep, Agent: "worker-1", Policy: egressPolicy()}); err != nil {
			b.Fatal(err)
		}
		first, next = append(first, t1.Sub(t0)), append(next, time.Since(t1))
		_ = rt.RemoveWorkspace(ctx, ep)
	}
	for name, ds := range map[string][]time.Duration{"first": first, "next": next} {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		b.ReportMetric(float64(ds[len(ds)/2].Milliseconds()), name+"-p50-ms")
		b.ReportMetric(float64(ds[len(ds)-1].Milliseconds()), name+"-max-ms")
	}
}
