package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.json")
	for _, s := range []string{"first", "second"} {
		if err := Write(p, []byte(s), 0o640); err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(p); string(got) != s {
			t.Fatalf("got %q, want %q", got, s)
		}
	}
	if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", fi.Mode().Perm())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d entries in the directory, want only the file", len(ents))
	}
}

func TestWriteIntoMissingDirFailsCleanly(t *testing.T) {
	p := filepath.Join(t.TempDir(), "no", "a.json")
	if err := Write(p, []byte("x"), 0o640); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
}
