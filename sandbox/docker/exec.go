package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/boxhost"
)

type execOpts struct {
	argv     []string
	user     string
	dir      string
	stdin    io.Reader
	maxBytes int
	// hostTimeout bounds the whole call on the host side; 0 means none.
	hostTimeout time.Duration
	// onHostTimeout runs (with a fresh context) when hostTimeout or ctx ends first.
	onAbort func(context.Context)
	// watch ends the call when the container stops running: under runsc an
	// exec's stream outlives a sandbox that died (a fork or memory bomb).
	watch bool
}

// errBoxDied ends an exec whose container stopped under it.
var errBoxDied = errors.New("the container stopped during the exec")

// watchDeath returns ctx cancelled once the container is seen not running
// (polled each second) when on; stop ends the watch and returns the
// error to report if the container died.
func (r *Runtime) watchDeath(ctx context.Context, id string, on bool) (context.Context, func() error) {
	if !on {
		return ctx, func() error { return nil }
	}
	wctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			in, err := r.cli.ContainerInspect(wctx, id)
			if (err == nil && in.State != nil && !in.State.Running) || isNotFound(err) {
				cancel(errBoxDied)
				return
			}
		}
	}()
	return wctx, func() error {
		close(done)
		cause := context.Cause(wctx)
		cancel(nil)
		if errors.Is(cause, errBoxDied) {
			return fmt.Errorf("exec in %s: %w: %w", short(id), errBoxDied, sandbox.ErrNotFound)
		}
		return nil
	}
}

// execRaw runs argv in a container and collects capped output.
func (r *Runtime) execRaw(ctx context.Context, id string, o execOpts) (sandbox.ExecResult, error) {
	if o.user == "" {
		// The container's own user is its main process's, never the agent's:
		// an exec must say whom it runs as.
		return sandbox.ExecResult{}, fmt.Errorf("exec in %s: no user given: %w", short(id), sandbox.ErrInvalid)
	}
	start := time.Now()
	ec, err := r.execCreate(ctx, id, container.ExecOptions{
		User: o.user, WorkingDir: o.dir, Cmd: o.argv,
		AttachStdin: o.stdin != nil, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return sandbox.ExecResult{}, wrapErr("exec in "+short(id), err)
	}
	hj, err := r.attach(ctx, ec.ID, "attach exec in "+short(id))
	if err != nil {
		return sandbox.ExecResult{}, err
	}
	defer hj.Close()
	wctx, stopWatch := r.watchDeath(ctx, id, o.watch)
	res, abortErr := collect(wctx, hj, o)
	died := stopWatch()
	if died != nil {
		res.Duration = time.Since(start)
		return res, died
	}
	if abortErr != nil {
		res.Duration = time.Since(start)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return res, fmt.Errorf("exec in %s: %w", short(id), errors.Join(abortErr, sandbox.ErrTimeout))
		}
		return res, abortErr
	}
	if err := r.exitCode(ctx, ec.ID, &res); err != nil {
		return res, err
	}
	res.Duration = time.Since(start)
	return res, nil
}

// execCreate creates an exec, waiting (up to 20s) while a sweep has the
// container paused.
func (r *Runtime) execCreate(ctx context.Context, id string, o container.ExecOptions) (container.ExecCreateResponse, error) {
	deadline := time.Now().Add(20 * time.Second)
	for {
		ec, err := r.cli.ContainerExecCreate(ctx, id, o)
		if err == nil || !strings.Contains(err.Error(), "is paused") || time.Now().After(deadline) {
			return ec, err
		}
		select {
		case <-ctx.Done():
			return ec, err
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// collect feeds stdin, reads capped stdout and stderr until the stream
// ends, the host timeout fires (TimedOut) or ctx ends (the error), and
// runs o.onAbort when it did not end by itself.
func collect(ctx context.Context, hj types.HijackedResponse, o execOpts) (sandbox.ExecResult, error) {
	if o.stdin != nil {
		go func() {
			_, _ = io.Copy(hj.Conn, o.stdin)
			_ = hj.CloseWrite()
		}()
	}
	stdout := &boxhost.CapWriter{Max: o.maxBytes}
	stderr := &boxhost.CapWriter{Max: o.maxBytes}
	done := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(stdout, stderr, hj.Reader)
		done <- err
	}()
	end := boxhost.AwaitStream(ctx, done, o.hostTimeout, 5*time.Second, o.onAbort, hj.Close)
	res := sandbox.ExecResult{TimedOut: end.TimedOut, Stdout: stdout.Bytes(), Stderr: stderr.Bytes(),
		Truncated: stdout.Truncated() || stderr.Truncated()}
	switch {
	case end.TimedOut:
		return res, nil
	case end.Aborted:
		return res, ctx.Err()
	case end.Err != nil && !errors.Is(end.Err, io.EOF):
		return res, fmt.Errorf("read exec output: %w", end.Err)
	}
	return res, nil
}

// exitCode waits (at most 10s) until the engine reports the exec ended and
// sets res.ExitCode; a timed-out exec still running gets -1.
func (r *Runtime) exitCode(ctx context.Context, execID string, res *sandbox.ExecResult) error {
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for {
		in, err := r.cli.ContainerExecInspect(ictx, execID)
		if err != nil {
			return wrapErr("inspect exec", err)
		}
		if !in.Running || res.TimedOut {
			res.ExitCode = in.ExitCode
			if in.Running {
				res.ExitCode = -1
			}
			return nil
		}
		select {
		case <-ictx.Done():
			return wrapErr("inspect exec", ictx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
