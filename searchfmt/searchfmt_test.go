package searchfmt

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVersionFileRoundTrip(t *testing.T) {
	for _, k := range []int{0, 1, 11, 999999} {
		if got, ok := ParseVersionFile(VersionFile(k)); !ok || got != k {
			t.Errorf("ParseVersionFile(VersionFile(%d)) = %d, %v", k, got, ok)
		}
	}
	for _, name := range []string{"multi_agent_design_v.txt", "multi_agent_design_v1.txt.bak", "x_v1.txt", "multi_agent_design_v1234567.txt", "multi_agent_design_v-1.txt"} {
		if k, ok := ParseVersionFile(name); ok {
			t.Errorf("ParseVersionFile(%q) = %d, want not a version", name, k)
		}
	}
}

func TestReadRetained(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadRetained(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: %v, want fs.ErrNotExist", err)
	}
	write := func(body string) {
		if err := os.WriteFile(filepath.Join(dir, RetainedFile), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"version":2,"beats_reference":true,"champion":2,"design":"versions/multi_agent_design_v2.txt","finished":true}`)
	r, err := ReadRetained(dir)
	if err != nil || r.Version == nil || *r.Version != 2 || !r.Finished || r.Design != "versions/"+VersionFile(2) {
		t.Errorf("ReadRetained = %+v, %v", r, err)
	}
	write(`{"version":`)
	if _, err := ReadRetained(dir); err == nil || !strings.Contains(err.Error(), "parse") {
		t.Errorf("truncated file: %v, want a parse error", err)
	}
	write(`{"design":"` + strings.Repeat("a", MaxRetainedBytes) + `"}`)
	if _, err := ReadRetained(dir); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("huge file: %v, want the cap", err)
	}
}

func FuzzParseVersionFile(f *testing.F) {
	f.Add("multi_agent_design_v3.txt")
	f.Add("multi_agent_design_v03.txt")
	f.Fuzz(func(t *testing.T, name string) {
		k, ok := ParseVersionFile(name)
		if ok && (k < 0 || !strings.HasPrefix(name, "multi_agent_design_v")) {
			t.Errorf("ParseVersionFile(%q) = %d", name, k)
		}
	})
}
