package sandbox

import (
	"errors"
	"strings"
	"testing"
)

func TestValidID(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{"ep-1", true}, {"worker_2.a", true}, {"", false}, {"-x", false}, {"a/b", false},
		{"..", false}, {"a b", false}, {strings.Repeat("a", 64), true}, {strings.Repeat("a", 65), false},
	}
	for _, tt := range tests {
		if got := ValidID(tt.id); got != tt.want {
			t.Errorf("ValidID(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
}

func TestPolicyValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Policy)
		ok     bool
		weak   string
	}{
		{"default", func(*Policy) {}, true, ""},
		{"root", func(p *Policy) { p.User = "0:0" }, true, "runs as root"},
		{"network", func(p *Policy) { p.NetworkMode = "bridge" }, true, "network bridge"},
		{"cap add", func(p *Policy) { p.CapAdd = []string{"SYS_ADMIN"} }, true, "adds capabilities SYS_ADMIN"},
		{"no pids", func(p *Policy) { p.PidsLimit = 0 }, true, "no pids limit"},
		{"writable root", func(p *Policy) { p.ReadOnlyRootfs = false }, true, "root filesystem writable"},
		{"unconfined", func(p *Policy) { p.Seccomp = "Unconfined" }, false, ""},
		{"engine seccomp", func(p *Policy) { p.Seccomp = SeccompEngine }, true, "engine default seccomp profile (allows ptrace)"},
		{"seccomp profile path", func(p *Policy) { p.Seccomp = "/etc/mass/seccomp.json" }, true, ""},
		{"no seccomp", func(p *Policy) { p.Seccomp = "" }, false, ""},
		{"named user", func(p *Policy) { p.User = "nobody" }, false, ""},
		{"main uid", func(p *Policy) { p.User = MainUser }, false, ""},
		{"main uid, other gid", func(p *Policy) { p.User = "65532:100" }, false, ""},
		{"main gid only", func(p *Policy) { p.User = "1000:65532" }, true, ""},
		{"tiny memory", func(p *Policy) { p.MemoryBytes = 1 << 20 }, false, ""},
		{"negative", func(p *Policy) { p.NoFile = -1 }, false, ""},
		{"no runtime", func(p *Policy) { p.Runtime = "" }, false, ""},
	}
	for _, tt := range tests {
		p := DefaultPolicy()
		tt.mutate(&p)
		err := p.Validate()
		if got := err == nil; got != tt.ok {
			t.Errorf("%s: Validate() = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v does not wrap ErrInvalid", tt.name, err)
		}
		if !tt.ok {
			continue
		}
		if got, want := strings.Join(p.Weaknesses(), ";"), tt.weak; got != want {
			t.Errorf("%s: Weaknesses() = %q, want %q", tt.name, got, want)
		}
	}
}

func FuzzParseUser(f *testing.F) {
	for _, s := range []string{"65534:65534", "0:0", ":", "a:b", "-1:2", "1:2:3", "99999999999999999999:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		uid, gid, err := ParseUser(s)
		if err == nil && (uid < 0 || gid < 0) {
			t.Fatalf("ParseUser(%q) = %d:%d", s, uid, gid)
		}
	})
}

func TestContainerUser(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Policy)
		want   string
	}{
		{"default", func(*Policy) {}, MainUser},
		{"other agent uid", func(p *Policy) { p.User = "1000:1000" }, MainUser},
		{"root without capabilities", func(p *Policy) { p.User = "0:0" }, MainUser},
		{"non-root with capabilities", func(p *Policy) { p.CapAdd = []string{"SYS_PTRACE"} }, MainUser},
		{"root with an added capability", func(p *Policy) { p.User, p.CapAdd = "0:0", []string{"SYS_PTRACE"} }, "0:0"},
		{"root keeping the engine's capabilities", func(p *Policy) { p.User, p.CapDrop = "0:0", nil }, "0:0"},
	}
	for _, tt := range tests {
		p := DefaultPolicy()
		tt.mutate(&p)
		if got := p.ContainerUser(); got != tt.want {
			t.Errorf("%s: ContainerUser() = %q, want %q", tt.name, got, tt.want)
		}
	}
}
