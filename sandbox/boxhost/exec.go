package boxhost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"time"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/helper"
)

// CapWriter keeps the first Max bytes and drops the rest, still reporting
// every write as complete so the stream keeps draining.
type CapWriter struct {
	Max       int
	buf       []byte
	truncated bool
}

func (c *CapWriter) Write(p []byte) (int, error) {
	room := c.Max - len(c.buf)
	if room >= len(p) {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	if room > 0 {
		c.buf = append(c.buf, p[:room]...)
	}
	c.truncated = true
	return len(p), nil
}

// Bytes is what was kept.
func (c *CapWriter) Bytes() []byte { return c.buf }

// Truncated reports whether anything was dropped.
func (c *CapWriter) Truncated() bool { return c.truncated }

// HostGrace is how much longer than the wrapper's timeout the host waits
// for an exec before it kills the agent's processes itself.
const HostGrace = 5 * time.Second

// Command is an ExecRequest with the box policy's defaults applied.
type Command struct {
	Argv     []string
	Timeout  time.Duration // the exec wrapper's
	MaxBytes int
	Dir      string // absolute
}

// NewCommand resolves req against the box's policy: its exec timeout
// (else the default policy's), its output cap and a working directory
// relative to the workspace.
func NewCommand(req sandbox.ExecRequest, pol sandbox.Policy) (Command, error) {
	if len(req.Argv) == 0 || req.Argv[0] == "" {
		return Command{}, fmt.Errorf("exec: empty argv: %w", sandbox.ErrInvalid)
	}
	c := Command{Argv: req.Argv, Timeout: req.Timeout, MaxBytes: req.MaxBytes, Dir: WorkDir(req.Dir)}
	if c.Timeout <= 0 {
		c.Timeout = pol.ExecTimeout
	}
	if c.Timeout <= 0 {
		c.Timeout = sandbox.DefaultPolicy().ExecTimeout
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = pol.OutputBytes
	}
	return c, nil
}

// WorkDir is a request's working directory: the workspace when empty,
// relative names below it.
func WorkDir(dir string) string {
	switch {
	case dir == "":
		return sandbox.WorkspaceMount
	case !path.IsAbs(dir):
		return path.Join(sandbox.WorkspaceMount, dir)
	}
	return dir
}

// Wrapped is the command under the helper's exec wrapper, which kills the
// whole process tree at the timeout; flags go to the wrapper.
func (c Command) Wrapped(flags ...string) []string {
	argv := append([]string{sandbox.HelperMount, "exec", "-timeout", c.Timeout.String()}, flags...)
	return append(append(argv, "--"), c.Argv...)
}

// HostTimeout bounds the whole call on the host.
func (c Command) HostTimeout() time.Duration { return c.Timeout + HostGrace }

// Result marks res timed out when the wrapper ended the command at its
// timeout.
func (c Command) Result(res sandbox.ExecResult) sandbox.ExecResult {
	if res.ExitCode == helper.ExitTimedOut && res.Duration >= c.Timeout {
		res.TimedOut = true
	}
	return res
}

// StreamEnd says how an exec's output stream ended.
type StreamEnd struct {
	Err      error // the stream's own result when it ended by itself
	TimedOut bool  // the host timeout passed first
	Aborted  bool  // the host timeout or ctx ended it; onAbort ran
}

// AwaitStream waits until done yields the stream's result, hostTimeout
// passes (0: no limit) or ctx ends. Unless the stream ended by itself
// (cleanly, or while ctx still held), onAbort runs (Detached, within grace) to kill what
// the exec left running, then stop closes the stream and its end is
// awaited.
func AwaitStream(ctx context.Context, done <-chan error, hostTimeout, grace time.Duration, onAbort func(context.Context), stop func()) StreamEnd {
	var expire <-chan time.Time
	if hostTimeout > 0 {
		t := time.NewTimer(hostTimeout)
		defer t.Stop()
		expire = t.C
	}
	var e StreamEnd
	ended := false
	select {
	case e.Err = <-done:
		ended = true
		// A stream that failed as ctx ended may have left the command running.
		e.Aborted = e.Err != nil && !errors.Is(e.Err, io.EOF) && ctx.Err() != nil
	case <-expire:
		e.TimedOut, e.Aborted = true, true
	case <-ctx.Done():
		e.Aborted = true
	}
	if !e.Aborted {
		return e
	}
	if onAbort != nil {
		Detached(ctx, grace, onAbort)
	}
	stop()
	if !ended {
		e.Err = <-done
	}
	return e
}

// Detached runs fn with a context that outlives ctx's cancellation,
// bounded by grace: the clean-up after a call that was cancelled.
func Detached(ctx context.Context, grace time.Duration, fn func(context.Context)) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	fn(dctx)
}
