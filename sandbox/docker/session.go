package docker

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/boxhost"
	"github.com/mass-dev/mass/sandbox/helper"
)

// Caps on what a helper session may buffer on the host.
const (
	// sessionOutBytes bounds the demuxed stdout waiting to be read: one
	// response frame plus slack. More means the helper misbehaves.
	sessionOutBytes = helper.MaxResponseBytes + 64<<10
	sessionErrBytes = 4096
)

var (
	errSessionClosed   = errors.New("helper session closed")
	errSessionOverflow = errors.New("helper session sent more than one response holds")
)

// helperSession is one long-lived `mass-sandbox-helper serve` exec in a
// container: framed requests go to its stdin, the engine's multiplexed
// output is demuxed into out (stdout, bounded) and stderr (capped).
type helperSession struct {
	conn   io.WriteCloser
	out    *streamBuf
	stderr *lockedCap
	done   chan struct{} // closed when the output stream has ended
	execID string        // the engine's exec id, to find the helper's host pid
	pid    int           // host pid of the helper once known (guarded by pidMu)
	pidMu  sync.Mutex
	// seal authenticates the frames (helper.Seal); nil only for the
	// in-process fakes of the unit tests.
	seal *helper.Seal
}

// startSession execs the serve helper as the agent's user in the workspace.
//
// Under gVisor the helper binary must be readable (runsc cannot execute
// it otherwise), so the kernel does not make the helper non-dumpable from
// its exec on; until its own PR_SET_DUMPABLE call an agent process could
// open its /proc/PID/mem or fds (F1). There the session starts only with
// no agent process alive: no command runs (the gate), every agent process
// is killed first, and the gate is held until the helper has answered, by
// which time it is non-dumpable.
func (b *box) startSession(ctx context.Context) (*helperSession, error) {
	if !b.isRunsc() || b.r.cfg.ReadableHelper || !b.hostSweep() {
		// (A weakened policy whose main processes share the agent's uid
		// cannot have its agent processes told apart and swept.)
		return b.execSession(ctx)
	}
	b.gate.Lock()
	defer b.gate.Unlock()
	if err := b.sweepRunsc(ctx, false); err != nil {
		return nil, fmt.Errorf("start file helper in %s: clear agent processes first: %w", short(b.id), err)
	}
	s, err := b.execSession(ctx)
	if err != nil {
		return nil, err
	}
	if _, _, err := s.roundTrip(pingRequest); err != nil {
		s.close()
		return nil, fmt.Errorf("start file helper in %s: first answer: %w%s", short(b.id), err, stderrSuffix(s))
	}
	return s, nil
}

// execSession execs and attaches `mass-sandbox-helper serve`.
func (b *box) execSession(ctx context.Context) (*helperSession, error) {
	ec, err := b.r.execCreate(ctx, b.id, container.ExecOptions{
		User: b.policy.User, WorkingDir: sandbox.WorkspaceMount, Cmd: []string{HelperMount, "serve"},
		AttachStdin: true, AttachStdout: true, AttachStderr: true,
	})
	if err != nil {
		return nil, wrapErr("start file helper in "+short(b.id), err)
	}
	hj, err := b.r.attach(ctx, ec.ID, "attach file helper in "+short(b.id))
	if err != nil {
		return nil, err
	}
	s := newHelperSession(hj)
	s.execID = ec.ID
	key := make([]byte, helper.SealKeyBytes)
	if _, err := rand.Read(key); err != nil {
		s.close()
		return nil, fmt.Errorf("session key: %w", err)
	}
	if err := helper.WriteFrame(s.conn, key); err != nil {
		s.close()
		return nil, fmt.Errorf("send session key to the file helper in %s: %w", short(b.id), err)
	}
	s.seal = helper.HostSeal(key)
	return s, nil
}

// sessionPID is the host pid of the live helper session, 0 if none. The
// engine reports the pid once the exec has started; it is asked (briefly)
// the first time.
func (b *box) sessionPID(ctx context.Context) int {
	s := b.ops.live()
	if s == nil {
		return 0
	}
	s.pidMu.Lock()
	defer s.pidMu.Unlock()
	for i := 0; s.pid == 0 && s.execID != "" && i < 50; i++ {
		in, err := b.r.cli.ContainerExecInspect(ctx, s.execID)
		if err != nil || !in.Running {
			return 0
		}
		if s.pid = in.Pid; s.pid == 0 {
			time.Sleep(2 * time.Millisecond)
		}
	}
	return s.pid
}

// newHelperSession starts demuxing hj's output; it closes the connection
// when the stream ends or misbehaves, so nothing lingers after the helper
// is gone.
func newHelperSession(hj types.HijackedResponse) *helperSession {
	s := &helperSession{
		conn:   hj.Conn,
		out:    newStreamBuf(sessionOutBytes),
		stderr: &lockedCap{c: boxhost.CapWriter{Max: sessionErrBytes}},
		done:   make(chan struct{}),
	}
	go func() {
		defer close(s.done)
		_, err := stdcopy.StdCopy(s.out, s.stderr, hj.Reader)
		if err == nil {
			err = io.EOF
		}
		s.out.closeWithError(err)
		hj.Close()
	}()
	return s
}

// dead reports whether the helper's output has already ended.
func (s *helperSession) dead() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func (s *helperSession) close() {
	_ = s.conn.Close()
	s.out.closeWithError(errSessionClosed)
}

// roundTrip sends one request frame and reads one response frame. sent is
// false only when the request certainly did not reach the helper whole.
func (s *helperSession) roundTrip(body []byte) (resp []byte, sent bool, err error) {
	if s.dead() {
		return nil, false, fmt.Errorf("helper session ended before the request: %w", errSessionClosed)
	}
	w := &countWriter{w: s.conn}
	max := helper.MaxResponseBytes
	if s.seal != nil {
		body = s.seal.Wrap(body)
		max += helper.SealTagBytes
	}
	if err := helper.WriteFrame(w, body); err != nil {
		return nil, w.n == int64(len(body))+4, fmt.Errorf("send request: %w", err)
	}
	resp, err = helper.ReadFrame(s.out, max)
	if err != nil {
		return nil, true, fmt.Errorf("read response: %w", err)
	}
	if s.seal != nil {
		if resp, err = s.seal.Open(resp); err != nil {
			return nil, true, fmt.Errorf("read response: %w", err)
		}
	}
	return resp, true, nil
}

// stderrText is what the helper wrote to stderr, for error messages.
func (s *helperSession) stderrText() string {
	return s.stderr.String()
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// streamBuf is a pipe whose writer never blocks: it buffers up to max
// bytes and fails (closing the stream) beyond that.
type streamBuf struct {
	mu   sync.Mutex
	cond *sync.Cond
	buf  []byte
	max  int
	err  error
}

func newStreamBuf(max int) *streamBuf {
	s := &streamBuf{max: max}
	s.cond = sync.NewCond(&s.mu)
	return s
}

func (s *streamBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return 0, s.err
	}
	if len(s.buf)+len(p) > s.max {
		s.err = errSessionOverflow
		s.buf = nil
		s.cond.Broadcast()
		return 0, s.err
	}
	s.buf = append(s.buf, p...)
	s.cond.Broadcast()
	return len(p), nil
}

// Read blocks until data arrives or the stream ends; buffered data is
// returned before the error unless the stream overflowed.
func (s *streamBuf) Read(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.buf) == 0 && s.err == nil {
		s.cond.Wait()
	}
	if len(s.buf) > 0 {
		n := copy(p, s.buf)
		s.buf = s.buf[n:]
		if len(s.buf) == 0 {
			s.buf = nil
		}
		return n, nil
	}
	return 0, s.err
}

func (s *streamBuf) closeWithError(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
	if errors.Is(err, errSessionClosed) {
		s.buf = nil
	}
	s.cond.Broadcast()
}

// lockedCap is a CapWriter safe for one writer and concurrent readers.
type lockedCap struct {
	mu sync.Mutex
	c  boxhost.CapWriter
}

func (l *lockedCap) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.c.Write(p)
}

func (l *lockedCap) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.c.Bytes())
}
