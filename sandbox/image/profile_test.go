package image

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	dimage "github.com/docker/docker/api/types/image"

	"github.com/mass-dev/mass/sandbox"
)

func TestBuiltinProfiles(t *testing.T) {
	base, research := BaseProfile(), ResearchProfile()
	if got, want := base.Hash(), AgentHash(AgentOptions{}); got != want {
		t.Errorf("base profile hash %s, want the agent image's %s (an existing mass-agent must not rebuild)", got[:12], want[:12])
	}
	if got, want := base.Ref(), AgentRef; got != want {
		t.Errorf("base ref = %s, want %s", got, want)
	}
	if got, want := research.Ref(), "mass-research:latest"; got != want {
		t.Errorf("research ref = %s, want %s", got, want)
	}
	if research.Hash() == base.Hash() {
		t.Error("research and base hash alike")
	}
	for _, pkg := range []string{"python3-pip", "python3-venv", "git", "build-essential", "python3-torch", "python3-networkx", "python3-sympy", "python3-statsmodels", "python3-biopython"} {
		if !slices.Contains(research.Packages, pkg) {
			t.Errorf("research profile lacks %s", pkg)
		}
	}
	for _, pkg := range DefaultPackages {
		if !slices.Contains(research.Packages, pkg) {
			t.Errorf("research profile lacks the base package %s", pkg)
		}
	}
	if got, want := research.recipe(), "profile:research"; got != want {
		t.Errorf("recipe = %s, want %s", got, want)
	}
	// The built-ins are copies: changing one changes no other.
	research.Packages[0] = "changed"
	if BaseProfile().Packages[0] == "changed" || ResearchProfile().Packages[0] == "changed" {
		t.Error("a built-in profile shares its package slice")
	}
}

func TestParseProfile(t *testing.T) {
	p, err := ParseProfile([]byte("name: research-chem\nfrom: research\npackages: [python3-rdkit, git]\nenv: {RDKIT_QUIET: \"1\", HOME: /home/agent}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Ref(), "mass-research-chem:latest"; got != want {
		t.Errorf("ref = %s, want %s", got, want)
	}
	if got, want := len(p.Packages), len(ResearchProfile().Packages)+1; got != want {
		t.Errorf("%d packages, want %d (git deduplicated)", got, want)
	}
	if !slices.Contains(p.Env, "RDKIT_QUIET=1") || !slices.Contains(p.Env, "HOME=/home/agent") || slices.Contains(p.Env, "HOME=/tmp") {
		t.Errorf("env = %v, want RDKIT_QUIET added and HOME replaced", p.Env)
	}
	if p.Hash() == ResearchProfile().Hash() {
		t.Error("a file profile hashes like research")
	}
}

func TestParseProfileErrors(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"empty", "", "empty"},
		{"unknown field", "name: x1\npackage: [git]\n", "field package not found"},
		{"bad name", "name: Big\n", "lower-case"},
		{"reserved", "name: agent\n", "reserved"},
		{"builtin", "name: research\n", "built-in"},
		{"bad from", "name: x1\nfrom: ubuntu\n", "from \"ubuntu\""},
		{"package injection", "name: x1\npackages: [\"git,openssh-server\"]\n", "not a Debian package"},
		{"package option", "name: x1\npackages: [\"--foreign\"]\n", "not a Debian package"},
		{"env space", "name: x1\nenv: {A: \"a b\"}\n", "without spaces"},
		{"env dollar", "name: x1\nenv: {A: \"$HOME\"}\n", "without spaces"},
		{"env key", "name: x1\nenv: {\"1A\": b}\n", "env key"},
		{"env proxy", "name: x1\nenv: {https_proxy: http://x}\n", "egress proxy"},
		{"two docs", "name: x1\n---\nname: x2\n", "one YAML document"},
	}
	for _, tt := range tests {
		_, err := ParseProfile([]byte(tt.doc))
		if err == nil {
			t.Errorf("%s: no error", tt.name)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || !errors.Is(err, sandbox.ErrInvalid) {
			t.Errorf("%s: error %q, want it to say %q and wrap ErrInvalid", tt.name, err, tt.want)
		}
	}
}

func FuzzParseProfile(f *testing.F) {
	f.Add([]byte("name: research-chem\nfrom: research\npackages: [python3-rdkit]\nenv: {A: b}\n"))
	f.Add([]byte("name: x\npackages: [\"a,b\"]\n"))
	f.Add([]byte("{name: y, env: {K: \"v v\"}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProfile(data)
		if err != nil {
			return
		}
		if sandbox.CheckProfile(p.Name) != nil {
			t.Fatalf("accepted name %q", p.Name)
		}
		for _, pkg := range p.Packages {
			if !debPackageRE.MatchString(pkg) {
				t.Fatalf("accepted package %q", pkg)
			}
		}
		for _, kv := range p.Env {
			k, v, _ := strings.Cut(kv, "=")
			if checkEnv(k, v) != nil && !slices.Contains(agentEnv, kv) && !slices.Contains(researchEnv, kv) {
				t.Fatalf("accepted env %q", kv)
			}
		}
	})
}

// Inspect tells a missing image, one built from this recipe and one built
// from another, on the real engine.
func TestInspectProfile(t *testing.T) {
	c := engine(t)
	ctx := context.Background()
	p := Profile{Name: fmt.Sprintf("inspecttest-%d", time.Now().UnixNano()%1e9), Packages: []string{"python3"}, Env: []string{"A=b"}}
	st, err := Inspect(ctx, c, p)
	if err != nil || st.ID != "" || st.Current || st.Ref != "mass-"+p.Name+":latest" {
		t.Fatalf("missing image: %+v %v", st, err)
	}
	rootfs, err := TestRootfs(DefaultBusybox)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		hash    string
		current bool
	}{{"0123456789abcdef", false}, {p.Hash(), true}} {
		id, err := importTar(ctx, c, bytes.NewReader(rootfs), p.Ref(), labelChanges([][2]string{{LabelHash, tt.hash}}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.ImageRemove(context.Background(), id, dimage.RemoveOptions{Force: true}) })
		st, err := Inspect(ctx, c, p)
		if err != nil || st.ID != id || st.Current != tt.current || st.Have != tt.hash {
			t.Errorf("image labelled %s: %+v %v, want current=%v", tt.hash, st, err, tt.current)
		}
	}
}
