package docker

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

// TestWeakenedPolicyTakesEffect flips one policy field at a time and reads
// the effect from inside the container, so that the isolation probes can
// fail when a field is weakened.
func TestWeakenedPolicyTakesEffect(t *testing.T) {
	rt := needEngine(t)
	ctx := context.Background()
	ep := sandboxtest.Episode(t)
	if err := rt.CreateWorkspace(ctx, sandbox.WorkspaceSpec{Episode: ep}, nil); err != nil {
		t.Fatal(err)
	}
	defer rt.RemoveWorkspace(ctx, ep)
	const (
		netDev = "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | sort | tr '\\n' ' '"
		capBnd = "grep CapBnd /proc/self/status | cut -f2"
		nnp    = "grep NoNewPrivs /proc/self/status | cut -f2"
		pids   = "cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max"
		rootRW = "grep ' / ' /proc/mounts | cut -d' ' -f4 | cut -d, -f1"
		pid1   = "cat /proc/1/cmdline | tr '\\000' ' '"
		tmp    = "grep ' /tmp ' /proc/mounts | cut -d' ' -f4"
	)
	tests := []struct {
		name       string
		mutate     func(*sandbox.Policy)
		script     string
		hard, weak string // output under the default and the weakened policy
		match      string // how weak is compared: "eq", "has" or "lacks"
	}{
		{"network", func(p *sandbox.Policy) { p.NetworkMode = "bridge" }, netDev, "lo", "eth0 lo", "eq"},
		{"capabilities", func(p *sandbox.Policy) { p.CapAdd = []string{"NET_RAW"} }, capBnd, "0000000000000000", "0000000000002000", "eq"},
		{"no-new-privileges", func(p *sandbox.Policy) { p.NoNewPrivileges = false }, nnp, "1", "0", "eq"},
		{"pids", func(p *sandbox.Policy) { p.PidsLimit = 0 }, pids, "256", "max", "eq"},
		{"rootfs", func(p *sandbox.Policy) { p.ReadOnlyRootfs = false }, rootRW, "ro", "rw", "eq"},
		{"init", func(p *sandbox.Policy) { p.Init = false }, pid1, "/sbin/docker-init", HelperMount + " pause", "has"},
		{"tmpfs size", func(p *sandbox.Policy) { p.TmpfsBytes = 0 }, tmp, "size=262144k", "size=", "lacks"},
	}
	run := func(agent string, p sandbox.Policy, script string) string {
		sb, err := rt.Create(ctx, sandbox.Spec{Episode: ep, Agent: agent, Image: testImage, Policy: p})
		if err != nil {
			t.Fatalf("create %s: %v", agent, err)
		}
		defer sb.Remove(ctx)
		res, err := sb.Exec(ctx, sandbox.ExecRequest{Argv: []string{"sh", "-c", script}})
		if err != nil {
			t.Fatalf("%s: %v", agent, err)
		}
		return strings.TrimSpace(string(res.Stdout))
	}
	for i, tt := range tests {
		hard := testPolicy()
		hard.TmpfsBytes = 256 << 20
		weak := hard
		weak.CapAdd = nil
		tt.mutate(&weak)
		gotHard := run(fmt.Sprintf("hard%d", i), hard, tt.script)
		gotWeak := run(fmt.Sprintf("weak%d", i), weak, tt.script)
		if !strings.Contains(gotHard, tt.hard) {
			t.Errorf("%s, default policy: %q, want %q", tt.name, gotHard, tt.hard)
		}
		ok := map[string]bool{
			"eq":    gotWeak == tt.weak,
			"has":   strings.Contains(gotWeak, tt.weak),
			"lacks": !strings.Contains(gotWeak, tt.weak),
		}[tt.match]
		if !ok {
			t.Errorf("%s, weakened: %q, want %s %q", tt.name, gotWeak, tt.match, tt.weak)
		}
	}
}
