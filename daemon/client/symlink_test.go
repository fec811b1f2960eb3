package client

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Defect 3, the upload side: a parent directory swapped for a symbolic
// link after the spec was validated must not send the host's file.
func TestWriteTaskTarRefusesSymlinkSwappedIn(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "l"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "l", "passwd"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(dir, "task.yaml")
	if err := os.WriteFile(spec, []byte("id: t\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeTaskTar(io.Discard, spec, dir, []string{"l/passwd"}); err != nil {
		t.Fatalf("a plain directory: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	err := writeTaskTar(io.Discard, spec, dir, []string{"l/passwd"})
	if err == nil || !strings.Contains(err.Error(), "no symbolic links") {
		t.Fatalf("writeTaskTar through l -> /etc = %v, want a refusal", err)
	}
}
