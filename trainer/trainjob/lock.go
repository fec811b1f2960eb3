package trainjob

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// childLock takes an exclusive flock on path for a mass-train child that
// writes next to it. The child inherits the locked file (cmd.ExtraFiles),
// so the lock lasts until massd and the child have both ended: when massd
// is killed, the mass-train it started (told to stop by its parent-death
// signal) finishes before a resumed stage starts another on the same
// folder. It waits while another holds the lock, until ctx ends.
func childLock(ctx context.Context, path string, log *slog.Logger) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock %s: %w", path, err)
	}
	logged := false
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !logged {
			log.Info("waiting for an earlier mass-train to end", "lock", path)
			logged = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// Command is the one way massd runs mass-train (the train kind and the
// generation's train and export stages): binary with args, for a run that
// writes out. The child holds out's lock (out.lock beside it, childLock)
// while it runs, so a resumed attempt waits for a mass-train a killed massd
// left; massd's death stops it (SIGTERM as the parent-death signal);
// cancelling ctx asks it to checkpoint and stop (SIGTERM), and it is killed
// if it has not within StopGrace. It waits for the lock until ctx ends.
// The caller sets the output streams, runs cmd and then calls release.
func Command(ctx context.Context, binary, out string, log *slog.Logger, args ...string) (cmd *exec.Cmd, release func(), err error) {
	lock, err := childLock(ctx, strings.TrimSuffix(out, "/")+".lock", log)
	if err != nil {
		return nil, nil, err
	}
	cmd = exec.CommandContext(ctx, binary, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = StopGrace
	cmd.ExtraFiles = []*os.File{lock}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	return cmd, func() { lock.Close() }, nil
}
