package trainjob

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestChildLockOutlivesParentFD: a child that inherited the locked file
// keeps the lock after massd's own descriptor is gone (as after kill -9),
// so the next childLock waits until the child ends.
func TestChildLockOutlivesParentFD(t *testing.T) {
	path := filepath.Join(t.TempDir(), "train.lock")
	log := slog.New(slog.DiscardHandler)
	f, err := childLock(context.Background(), path, log)
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command("sleep", "1")
	child.ExtraFiles = []*os.File{f}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close() // massd's side gone
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if g, err := childLock(ctx, path, log); !errors.Is(err, context.DeadlineExceeded) {
		g.Close()
		t.Fatalf("lock taken while the child holds it: %v", err)
	}
	_ = child.Wait()
	g, err := childLock(context.Background(), path, log)
	if err != nil {
		t.Fatalf("after the child ended: %v", err)
	}
	g.Close()
}
