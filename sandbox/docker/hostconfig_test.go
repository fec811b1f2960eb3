package docker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/sandboxtest"
)

// TestHostConfigFields flips each policy field and checks the engine-side
// setting that carries it.
func TestHostConfigFields(t *testing.T) {
	type check func(*container.HostConfig) any
	massJSON, err := massProfileJSON()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(*sandbox.Policy)
		get    check
		want   any
	}{
		{"default network", nil, func(h *container.HostConfig) any { return string(h.NetworkMode) }, "none"},
		{"bridge network", func(p *sandbox.Policy) { p.NetworkMode = "bridge" }, func(h *container.HostConfig) any { return string(h.NetworkMode) }, "bridge"},
		{"cap drop", nil, func(h *container.HostConfig) any { return []string(h.CapDrop) }, []string{"ALL"}},
		{"no cap add", nil, func(h *container.HostConfig) any { return len(h.CapAdd) }, 0},
		{"cap add", func(p *sandbox.Policy) { p.CapAdd = []string{"NET_RAW"} }, func(h *container.HostConfig) any { return []string(h.CapAdd) }, []string{"NET_RAW"}},
		{"no-new-privileges and mass seccomp", nil, func(h *container.HostConfig) any { return h.SecurityOpt }, []string{"no-new-privileges:true", "seccomp=" + massJSON}},
		{"no-new-privileges off", func(p *sandbox.Policy) { p.NoNewPrivileges = false }, func(h *container.HostConfig) any { return h.SecurityOpt }, []string{"seccomp=" + massJSON}},
		{"engine seccomp", func(p *sandbox.Policy) { p.Seccomp = sandbox.SeccompEngine }, func(h *container.HostConfig) any { return h.SecurityOpt }, []string{"no-new-privileges:true"}},
		{"read-only rootfs", nil, func(h *container.HostConfig) any { return h.ReadonlyRootfs }, true},
		{"writable rootfs", func(p *sandbox.Policy) { p.ReadOnlyRootfs = false }, func(h *container.HostConfig) any { return h.ReadonlyRootfs }, false},
		{"tmpfs", nil, func(h *container.HostConfig) any { return h.Tmpfs["/tmp"] }, "rw,nosuid,nodev,mode=1777,size=268435456"},
		{"pids", nil, func(h *container.HostConfig) any { return *h.PidsLimit }, int64(256)},
		{"no pids limit", func(p *sandbox.Policy) { p.PidsLimit = 0 }, func(h *container.HostConfig) any { return *h.PidsLimit }, int64(0)},
		{"memory", nil, func(h *container.HostConfig) any { return [2]int64{h.Memory, h.MemorySwap} }, [2]int64{2 << 30, 2 << 30}},
		{"cpus", nil, func(h *container.HostConfig) any { return h.NanoCPUs }, int64(1e9)},
		{"nofile", nil, func(h *container.HostConfig) any { return *h.Ulimits[0] }, container.Ulimit{Name: "nofile", Soft: 1024, Hard: 1024}},
		{"ipc", nil, func(h *container.HostConfig) any { return string(h.IpcMode) }, "private"},
		{"init", nil, func(h *container.HostConfig) any { return *h.Init }, true},
		{"runtime", func(p *sandbox.Policy) { p.Runtime = "runsc" }, func(h *container.HostConfig) any { return h.Runtime }, "runsc"},
		{"not privileged", nil, func(h *container.HostConfig) any { return h.Privileged }, false},
		{"no devices", nil, func(h *container.HostConfig) any {
			return len(h.Devices) + len(h.DeviceCgroupRules) + len(h.DeviceRequests)
		}, 0},
		{"no binds", nil, func(h *container.HostConfig) any { return len(h.Binds) + len(h.VolumesFrom) }, 0},
		{"three mounts", nil, func(h *container.HostConfig) any {
			var out []string
			for _, m := range h.Mounts {
				out = append(out, string(m.Type)+":"+m.Source+":"+m.Target+":"+map[bool]string{true: "ro", false: "rw"}[m.ReadOnly])
			}
			return out
		}, []string{"volume:vol:/workspace:rw", "bind:/opt/helper:" + HelperMount + ":ro", "bind:/opt/hostname:/etc/hostname:ro"}},
		{"own cgroup namespace", nil, func(h *container.HostConfig) any { return h.CgroupnsMode }, container.CgroupnsModePrivate},
	}
	for _, tt := range tests {
		p := sandbox.DefaultPolicy()
		if tt.mutate != nil {
			tt.mutate(&p)
		}
		hc, err := hostConfig(p, "vol", "/opt/helper")
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := tt.get(hc); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: got %#v, want %#v", tt.name, got, tt.want)
		}
	}
}

func TestHostConfigRejects(t *testing.T) {
	dir := t.TempDir()
	allow := filepath.Join(dir, "allow.json")
	if err := os.WriteFile(allow, []byte(`{"defaultAction":"SCMP_ACT_ALLOW"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	strict := filepath.Join(dir, "strict.json")
	if err := os.WriteFile(strict, []byte(`{"defaultAction":"SCMP_ACT_ERRNO","syscalls":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(*sandbox.Policy)
		want   error
	}{
		{"unconfined", func(p *sandbox.Policy) { p.Seccomp = "unconfined" }, sandbox.ErrInvalid},
		{"allow-all profile", func(p *sandbox.Policy) { p.Seccomp = allow }, sandbox.ErrDenied},
		{"strict profile", func(p *sandbox.Policy) { p.Seccomp = strict }, nil},
		{"bad user", func(p *sandbox.Policy) { p.User = "nobody" }, sandbox.ErrInvalid},
		{"join container net", func(p *sandbox.Policy) { p.NetworkMode = "container:x" }, sandbox.ErrInvalid},
		{"negative pids", func(p *sandbox.Policy) { p.PidsLimit = -1 }, sandbox.ErrInvalid},
		{"zero policy", func(p *sandbox.Policy) { *p = sandbox.Policy{} }, sandbox.ErrInvalid},
	}
	for _, tt := range tests {
		p := sandbox.DefaultPolicy()
		tt.mutate(&p)
		hc, err := hostConfig(p, "vol", "/opt/helper")
		if tt.want == nil {
			if err != nil || len(hc.SecurityOpt) != 2 {
				t.Errorf("%s: %v, %v", tt.name, hc, err)
			}
			continue
		}
		if !errors.Is(err, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
}

func TestCompareVersions(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"1.1.5+ds1", "1.1.12", -1},
		{"1.1.12", "1.1.12", 0},
		{"1.1.14", "1.1.12", 1},
		{"v1.2.0", "1.1.12", 1},
		{"1.0.0-rc5", "1.0.0-rc6", -1},
		{"1.0.0-rc6", "1.0.0-rc6", 0},
		{"1.0.0", "1.0.0-rc6", 1},
		{"1.0.0-rc92", "1.0.0-rc6", 1},
		{"0.1.1", "1.0.0-rc6", -1},
	}
	for _, tt := range tests {
		if got := compareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("compareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
	if got := len(versionWarnings("1.1.5+ds1")); got != 1 {
		t.Errorf("runc 1.1.5: %d warnings, want 1 (CVE-2024-21626)", got)
	}
	if got := len(versionWarnings("1.0.0-rc6")); got != 2 {
		t.Errorf("runc 1.0.0-rc6: %d warnings, want 2 (rc7 fixed CVE-2019-5736)", got)
	}
	for v, want := range map[string]int{
		"1.1.5+ds1-1+deb12u1": 0, "1.1.5+ds1-1+deb12u3": 0, // Debian's CVE-2024-21626 backport
		"1.1.5+ds1-1": 1, "1.1.5+ds1-1+deb12u0": 1, "1.1.5+ds1-1+deb12u1x": 1,
	} {
		if got := len(versionWarnings(v)); got != want {
			t.Errorf("versionWarnings(%q) = %d warnings, want %d", v, got, want)
		}
	}
	if got := len(versionWarnings("1.2.5")); got != 0 {
		t.Errorf("runc 1.2.5: %d warnings, want 0", got)
	}
}

// TestEngineAppliesPolicy creates a container and reads back what the
// engine recorded, so a field dropped on the way to the engine shows up.
func TestEngineAppliesPolicy(t *testing.T) {
	rt := needEngine(t)
	ctx := context.Background()
	ep := sandboxtest.Episode(t)
	if err := rt.CreateWorkspace(ctx, sandbox.WorkspaceSpec{Episode: ep, DiskBytes: 8 << 20}, nil); err != nil {
		t.Fatal(err)
	}
	defer rt.RemoveWorkspace(ctx, ep)
	pol := testPolicy()
	pol.CapAdd = []string{"NET_RAW"}
	sb, err := rt.Create(ctx, sandbox.Spec{Episode: ep, Agent: "a", Image: testImage, Policy: pol, Env: map[string]string{"TASK": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	in, err := rt.cli.ContainerInspect(ctx, sb.ID())
	if err != nil {
		t.Fatal(err)
	}
	h := in.HostConfig
	got := []any{string(h.NetworkMode), []string(h.CapDrop), []string(h.CapAdd), h.SecurityOpt, h.ReadonlyRootfs,
		*h.PidsLimit, h.Memory, h.MemorySwap, h.NanoCPUs, string(h.IpcMode), *h.Init, h.Runtime, h.Privileged,
		in.Config.User, in.Config.WorkingDir, in.Config.Labels[LabelEpisode], in.Config.Labels[LabelAgent], in.Config.Labels[LabelDaemon]}
	massJSON, err := massProfileJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"none", []string{"ALL"}, []string{"CAP_NET_RAW"}, []string{"no-new-privileges:true", "seccomp=" + massJSON}, true,
		// Memory: 256 MiB for processes + 256 MiB /tmp + the 8 MiB workspace tmpfs (F5).
		int64(256), int64(520 << 20), int64(520 << 20), int64(1e9), "private", true, "runc", false,
		sandbox.MainUser, "/", ep, "a", rt.cfg.DaemonID}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("engine recorded\n%#v\nwant\n%#v", got, want)
	}
	// The workspace is capped by the kernel: writing past it fails.
	res, err := sb.Exec(ctx, sandbox.ExecRequest{Argv: []string{"sh", "-c", "dd if=/dev/zero of=/workspace/fill bs=1M count=16 2>&1; echo rc=$?"}})
	if err != nil {
		t.Fatal(err)
	}
	if !containsAll(string(res.Stdout), "No space left on device", "rc=1") {
		t.Errorf("filling the 8 MiB workspace: %s", res.Stdout)
	}
	if _, err := sb.Files().Write(ctx, "more", make([]byte, 1<<20)); !errors.Is(err, sandbox.ErrTooLarge) {
		t.Errorf("write into a full workspace: %v, want ErrTooLarge", err)
	}
	res, _ = sb.Exec(ctx, sandbox.ExecRequest{Argv: []string{"sh", "-c", "env; mount | grep -c /workspace"}})
	if containsAll(string(res.Stdout), "DOCKER_HOST") || !containsAll(string(res.Stdout), "TASK=x", "OMP_NUM_THREADS=1", "LOKY_MAX_CPU_COUNT=1", "OPENBLAS_NUM_THREADS=1") {
		t.Errorf("environment: %s", res.Stdout)
	}
	if len(h.Devices) != 0 {
		t.Errorf("a box without limits.gpus has devices %+v", h.Devices)
	}
	// massd's cap defaults to 0: a GPU box is refused before it exists.
	pol.GPUs = 1
	if _, err := rt.Create(ctx, sandbox.Spec{Episode: ep, Agent: "g", Image: testImage, Policy: pol}); !errors.Is(err, sandbox.ErrDenied) || !strings.Contains(err.Error(), "sandbox.max_gpus") {
		t.Errorf("GPU box under cap 0: %v", err)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

func TestReport(t *testing.T) {
	rt := needEngine(t)
	rep, err := rt.Report(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.RuncVersion == "" || rep.KernelVersion == "" || len(rep.Runtimes) == 0 || rep.Engine == "" {
		t.Errorf("report lacks engine facts: %+v", rep)
	}
	hasRunc := false
	for _, r := range rep.Runtimes {
		hasRunc = hasRunc || r == "runc"
	}
	if !hasRunc {
		t.Errorf("runtimes %v lack runc", rep.Runtimes)
	}
	if got, want := len(versionWarnings(rep.RuncVersion)) > 0, compareVersions(rep.RuncVersion, "1.1.12") < 0 && !backported(rep.RuncVersion, cve202421626Backports); got != want {
		t.Errorf("runc %s: warnings %v", rep.RuncVersion, rep.Warnings)
	}
	if rep.RuntimeChoice == "" || (rep.Policy.Runtime != "runc" && rep.Policy.Runtime != "runsc") {
		t.Errorf("report policy runtime %q (choice %q), want runc or runsc resolved", rep.Policy.Runtime, rep.RuntimeChoice)
	}
	if !rep.GVisor && !slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, "gVisor") }) && rep.RuntimeChoice == "auto: runsc is not registered, runc" {
		t.Errorf("auto fell back to runc without a warning: %v", rep.Warnings)
	}
	if rep.DiskCapEnforced == "" {
		t.Errorf("report does not say how the disk cap is enforced")
	}
	if !rep.GVisor {
		_, err := rt.Create(context.Background(), sandbox.Spec{Episode: "x", Agent: "a", Policy: func() sandbox.Policy {
			p := sandbox.DefaultPolicy()
			p.Runtime = "runsc"
			return p
		}()})
		if !errors.Is(err, sandbox.ErrUnavailable) {
			t.Errorf("runsc without gVisor registered: %v, want ErrUnavailable", err)
		}
	}
}
