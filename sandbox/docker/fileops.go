package docker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/boxhost"
	"github.com/mass-dev/mass/sandbox/helper"
)

// fileOpTimeout bounds one helper call, waiting for the previous one included.
const fileOpTimeout = 2 * time.Minute

// Files runs file operations through the helper inside the container, as
// the agent's user (boxhost.Files), over the box's helper session.
func (b *box) Files() sandbox.Files {
	return boxhost.NewFiles(func(ctx context.Context, op string, body []byte) ([]byte, error) {
		return b.ops.do(ctx, op, body, b.opTimeout)
	})
}

// fileOps keeps one helper session per box and runs file operations
// through it one at a time. A dead session (the agent may kill the helper,
// which runs under its uid) is replaced; an op is retried on a fresh
// session only when repeating it is harmless or it certainly was not sent.
type fileOps struct {
	// start opens a new session; abort runs (with a fresh context) when an
	// op times out or its context ends, before the session is dropped.
	start func(ctx context.Context) (*helperSession, error)
	abort func(ctx context.Context)

	turn chan struct{} // holds a token while an op runs

	mu     sync.Mutex
	cur    *helperSession
	closed bool

	started atomic.Int64 // sessions started, for tests and metrics
}

func newFileOps(start func(context.Context) (*helperSession, error), abort func(context.Context)) *fileOps {
	return &fileOps{start: start, abort: abort, turn: make(chan struct{}, 1)}
}

// live is the current helper session, nil if none is alive.
func (f *fileOps) live() *helperSession {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cur == nil || f.cur.dead() {
		return nil
	}
	return f.cur
}

// idempotent ops may be sent twice without changing the workspace.
func idempotent(op string) bool {
	switch op {
	case helper.OpRead, helper.OpList, helper.OpGlob, helper.OpGrep, helper.OpStat, helper.OpManifest:
		return true
	}
	return false
}

// do runs one encoded request within timeout (waiting for the previous op
// counts against it).
func (f *fileOps) do(ctx context.Context, op string, body []byte, timeout time.Duration) ([]byte, error) {
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case f.turn <- struct{}{}:
	case <-t.C:
		return nil, fmt.Errorf("waiting for the previous file op: %w", sandbox.ErrTimeout)
	case <-ctx.Done():
		return nil, ctxErr(ctx)
	}
	defer func() { <-f.turn }()
	var last error
	for attempt := 0; attempt < 2; attempt++ {
		s, fresh, err := f.session(ctx)
		if err != nil {
			return nil, errors.Join(last, err)
		}
		if !fresh && !idempotent(op) && attempt == 0 {
			// The agent may have killed the helper since the last op, and
			// the engine may not have reported it yet; a write sent to such
			// a session could not be retried. A cheap probe finds out first.
			if _, err := f.roundTrip(ctx, t, s, pingRequest); err != nil {
				if errors.Is(err, sandbox.ErrTimeout) || ctx.Err() != nil {
					return nil, err
				}
				last = err
				continue
			}
		}
		resp, err := f.roundTrip(ctx, t, s, body)
		if err == nil {
			return resp, nil
		}
		if errors.Is(err, sandbox.ErrTimeout) || ctx.Err() != nil {
			return nil, err
		}
		var se *sessionError
		if errors.As(err, &se) && se.sent && !idempotent(op) {
			return nil, fmt.Errorf("%w; the helper may or may not have applied the %s, check before repeating it: %w", err, op, sandbox.ErrUnavailable)
		}
		last = err
	}
	return nil, fmt.Errorf("%w: %w", last, sandbox.ErrUnavailable)
}

// pingRequest is a cheap, harmless op that shows a session is alive.
var pingRequest = []byte(`{"op":"stat","path":"."}`)

// sessionError is a failed round trip on a session that is now dropped.
type sessionError struct {
	sent bool // the request may have reached the helper whole
	err  error
}

func (e *sessionError) Error() string { return e.err.Error() }
func (e *sessionError) Unwrap() error { return e.err }

// roundTrip runs one exchange on s, bounded by t and ctx. On timeout or
// cancellation the agent's processes are killed (abort); on any failure
// the session is dropped.
func (f *fileOps) roundTrip(ctx context.Context, t *time.Timer, s *helperSession, body []byte) ([]byte, error) {
	type result struct {
		resp []byte
		sent bool
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		resp, sent, err := s.roundTrip(body)
		ch <- result{resp, sent, err}
	}()
	var r result
	select {
	case r = <-ch:
	case <-t.C:
		f.abortSession(ctx, s)
		<-ch
		return nil, fmt.Errorf("helper gave no answer in time: %w", sandbox.ErrTimeout)
	case <-ctx.Done():
		f.abortSession(ctx, s)
		<-ch
		return nil, ctxErr(ctx)
	}
	if r.err == nil {
		return r.resp, nil
	}
	f.drop(s)
	return nil, &sessionError{sent: r.sent, err: fmt.Errorf("helper session: %w%s", r.err, stderrSuffix(s))}
}

func stderrSuffix(s *helperSession) string {
	if e := strings.TrimSpace(s.stderrText()); e != "" {
		return " (helper stderr: " + e + ")"
	}
	return ""
}

func ctxErr(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errors.Join(ctx.Err(), sandbox.ErrTimeout)
	}
	return ctx.Err()
}

// session returns the live session, starting one (fresh) if there is none.
func (f *fileOps) session(ctx context.Context) (s *helperSession, fresh bool, err error) {
	f.mu.Lock()
	if f.cur != nil && f.cur.dead() {
		f.cur.close()
		f.cur = nil
	}
	s, closed := f.cur, f.closed
	f.mu.Unlock()
	if closed {
		return nil, false, fmt.Errorf("file helper: sandbox removed: %w", sandbox.ErrNotFound)
	}
	if s != nil {
		return s, false, nil
	}
	if s, err = f.start(ctx); err != nil {
		return nil, false, err
	}
	f.started.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		s.close()
		return nil, false, fmt.Errorf("file helper: sandbox removed: %w", sandbox.ErrNotFound)
	}
	f.cur = s
	return s, true, nil
}

// abortSession kills the agent's processes (the hung helper among them),
// as a timed-out op did before sessions, and drops the session.
func (f *fileOps) abortSession(ctx context.Context, s *helperSession) {
	if f.abort != nil {
		boxhost.Detached(ctx, 5*time.Second, f.abort)
	}
	f.drop(s)
}

func (f *fileOps) drop(s *helperSession) {
	f.mu.Lock()
	if f.cur == s {
		f.cur = nil
	}
	f.mu.Unlock()
	s.close()
}

// reset drops the current session (the next op starts a fresh one); with
// closed set no session starts again.
func (f *fileOps) reset(closed bool) {
	f.mu.Lock()
	s := f.cur
	f.cur = nil
	f.closed = f.closed || closed
	f.mu.Unlock()
	if s != nil {
		s.close()
	}
}
