package daemon_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/daemon"
)

func TestListenUnix(t *testing.T) {
	dir := t.TempDir()

	// A fresh path in a new directory: created 0600.
	fresh := filepath.Join(dir, "sub", "a.sock")
	ln, err := daemon.ListenUnix(fresh)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fi.Mode().Perm(), os.FileMode(0o600); got != want {
		t.Errorf("socket mode = %v, want %v", got, want)
	}

	// A live socket is never taken over.
	if _, err := daemon.ListenUnix(fresh); err == nil || !strings.Contains(err.Error(), "another massd") {
		t.Errorf("listen on a live socket: %v, want 'another massd'", err)
	}
	ln.Close()

	// A dead socket (nobody accepts) is replaced.
	l2, err := daemon.ListenUnix(fresh)
	if err != nil {
		t.Fatalf("listen over a stale socket: %v", err)
	}
	l2.Close()

	// A regular file is never removed.
	plain := filepath.Join(dir, "plain.sock")
	if err := os.WriteFile(plain, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := daemon.ListenUnix(plain); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("listen over a regular file: %v, want 'not a socket'", err)
	}
	if b, _ := os.ReadFile(plain); string(b) != "keep" {
		t.Error("regular file was touched")
	}
}
