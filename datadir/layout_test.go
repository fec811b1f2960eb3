package datadir

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestLayoutPaths(t *testing.T) {
	l := New("/var/lib/mass")
	for got, want := range map[string]string{
		l.DB():                 "/var/lib/mass/massd.db",
		l.Lock():               "/var/lib/mass/massd.lock",
		l.Task("fizz"):         "/var/lib/mass/tasks/fizz",
		l.Job("job-1"):         "/var/lib/mass/jobs/job-1",
		l.Episode("ep-1"):      "/var/lib/mass/episodes/ep-1",
		l.Run("r1"):            "/var/lib/mass/runs/r1",
		l.Dataset("d1"):        "/var/lib/mass/datasets/d1",
		l.Search("s1"):         "/var/lib/mass/search/s1",
		l.Generation("g1"):     "/var/lib/mass/generations/g1",
		l.Eval("e1"):           "/var/lib/mass/evals/e1",
		l.Resolve("x/y"):       "/var/lib/mass/x/y",
		l.Resolve("/abs/x"):    "/abs/x",
		filepath.Dir(l.Jobs()): "/var/lib/mass",
	} {
		if got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
}

func TestValidID(t *testing.T) {
	for _, id := range []string{"a", "ep-0123456789abcdef", "Worker_1.b", strings.Repeat("x", MaxIDLen)} {
		if !ValidID(id) {
			t.Errorf("ValidID(%q) = false", id)
		}
	}
	for _, id := range []string{"", ".", "..", "a..b", "-a", "_a", "a/b", "a b", "a\x00", strings.Repeat("x", MaxIDLen+1), "é"} {
		if ValidID(id) {
			t.Errorf("ValidID(%q) = true", id)
		}
	}
}

func FuzzValidID(f *testing.F) {
	f.Add("ep-1")
	f.Add("../etc")
	f.Fuzz(func(t *testing.T, id string) {
		if !ValidID(id) {
			return
		}
		if filepath.Base(id) != id || id == "." || id == ".." || strings.Contains(id, "..") || len(id) > MaxIDLen {
			t.Fatalf("ValidID accepted %q, which is not one safe path component", id)
		}
	})
}

func TestSandboxDaemonID(t *testing.T) {
	a, b := New("/var/lib/mass").SandboxDaemonID(), New("/var/lib/mass/").SandboxDaemonID()
	if a != b {
		t.Errorf("ids differ for the same directory: %s, %s", a, b)
	}
	if a == New("/srv/mass").SandboxDaemonID() {
		t.Error("different data dirs share an id")
	}
	if !ValidID(a) {
		t.Errorf("%s is not a valid id", a)
	}
}
