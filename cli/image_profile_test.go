package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestImageProfileShow(t *testing.T) {
	out, err := run(t, "image", "profile", "research")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"image:    mass-research:latest", "python3-torch", "PIP_DISABLE_PIP_VERSION_CHECK=1", "state:"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, err = run(t, "image", "profile", "../examples/profiles/research-chem.yaml")
	if err != nil || !strings.Contains(out, "mass-research-chem:latest") || !strings.Contains(out, "python3-rdkit") {
		t.Errorf("profile file: %v\n%s", err, out)
	}
}

// A bad --profile is refused before anything is built, with what to do.
func TestImageBuildBadProfile(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x1\npackages: [\"git,openssh-server\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for arg, want := range map[string]string{
		"researh":                 "unknown image profile \"researh\": use base, research or the path of a profile file",
		bad:                       "not a Debian package name",
		filepath.Join(bad, "..x"): "profile file",
	} {
		out, err := run(t, "image", "build", "--profile", arg)
		if err == nil || !strings.Contains(err.Error()+out, want) {
			t.Errorf("--profile %s: %v %s, want %q", arg, err, out, want)
		}
	}
}
