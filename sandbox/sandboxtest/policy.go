package sandboxtest

import (
	"strconv"
	"strings"
	"testing"

	"github.com/mass-dev/mass/sandbox"
)

// testPolicy checks from inside a sandbox that the policy took effect. The
// isolation probes (sandbox/probe) go much further; this is the minimum
// every runtime must show.
func testPolicy(t *testing.T, h Harness) {
	t.Parallel()
	p := h.policy()
	if len(p.Weaknesses()) > 0 {
		t.Skipf("policy is weakened (%v); these checks assume the hardened default", p.Weaknesses())
	}
	ep := h.NewWorkspace(t, sandbox.WorkspaceSpec{DiskBytes: p.DiskBytes}, nil)
	sb := h.NewSandbox(t, ep, "policy")
	// gVisor's /proc/self/status has no NoNewPrivs line, its cgroup files
	// and mount options are its own: under runsc those are checked from the
	// host by the isolation probes (sandbox/probe), not here.
	gvisor := p.Runtime == sandbox.RuntimeRunsc
	status := string(Sh(t, sb, "cat /proc/self/status").Stdout)
	field := func(name string) string {
		for _, l := range strings.Split(status, "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && k == name {
				return strings.TrimSpace(v)
			}
		}
		return ""
	}
	uid, _, _ := sandbox.ParseUser(p.User)
	checks := []struct{ name, got, want string }{
		{"effective caps", field("CapEff"), "0000000000000000"},
		{"permitted caps", field("CapPrm"), "0000000000000000"},
		{"bounding caps", field("CapBnd"), "0000000000000000"},
		{"no_new_privs", field("NoNewPrivs"), "1"},
		{"seccomp mode", field("Seccomp"), "2"},
		{"uid", strings.Fields(field("Uid") + " x")[0], strconv.Itoa(uid)},
		{"write to /", out(t, sb, "touch /x 2>/dev/null && echo yes || echo no"), "no"},
		{"write to /etc", out(t, sb, "touch /etc/x 2>/dev/null && echo yes || echo no"), "no"},
		{"write to /tmp", out(t, sb, "touch /tmp/x && echo yes || echo no"), "yes"},
		{"write to /workspace", out(t, sb, "touch /workspace/x && echo yes || echo no"), "yes"},
		{"network interfaces", out(t, sb, "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\\n' ' '"), "lo"},
		{"nofile", out(t, sb, "ulimit -n"), strconv.FormatInt(p.NoFile, 10)},
		{"pids limit", out(t, sb, "cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max"), strconv.FormatInt(p.PidsLimit, 10)},
		// The limit adds /tmp and the workspace tmpfs, whose pages count (F5).
		{"memory limit", out(t, sb, "cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max"), strconv.FormatInt(p.MemoryBytes+p.TmpfsBytes+p.DiskBytes, 10)},
		{"docker socket", out(t, sb, "ls /var/run/docker.sock /run/docker.sock 2>/dev/null | wc -l"), "0"},
	}
	for _, c := range checks {
		if gvisor && (c.name == "no_new_privs" || c.name == "pids limit" || c.name == "memory limit") {
			continue
		}
		if strings.TrimSpace(c.got) != c.want {
			t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
		}
	}
	mounts := out(t, sb, "cat /proc/mounts")
	for _, m := range strings.Split(mounts, "\n") {
		f := strings.Fields(m)
		if len(f) < 4 {
			continue
		}
		switch f[1] {
		case "/tmp":
			if !gvisor && !hasOpts(f[3], "nosuid", "nodev") {
				t.Errorf("/tmp mounted %s, want nosuid,nodev", f[3])
			}
		case "/":
			if !hasOpts(f[3], "ro") {
				t.Errorf("root mounted %s, want ro", f[3])
			}
		}
		if strings.HasPrefix(f[1], "/.mass") && !hasOpts(f[3], "ro") {
			t.Errorf("helper mounted %s at %s, want ro", f[3], f[1])
		}
	}
}

func out(t *testing.T, sb sandbox.Sandbox, script string) string {
	t.Helper()
	return strings.TrimSpace(string(Sh(t, sb, script).Stdout))
}

func hasOpts(opts string, want ...string) bool {
	have := map[string]bool{}
	for _, o := range strings.Split(opts, ",") {
		have[o] = true
	}
	for _, w := range want {
		if !have[w] {
			return false
		}
	}
	return true
}
