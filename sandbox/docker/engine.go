package docker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"github.com/mass-dev/mass/sandbox"
)

// DefaultEngineTimeout is how long any engine call waits for the engine's
// answer (its response headers, or an exec attach's upgrade) when
// Config.EngineTimeout is 0. A call the engine never answers (a wedged
// dockerd, a lost reply) fails after it with sandbox.ErrUnavailable
// instead of holding its episode until the wall clock. It is generous: a
// loaded engine can take tens of seconds to start or remove a container.
const DefaultEngineTimeout = 2 * time.Minute

// NewClient returns an engine client from the environment (DOCKER_HOST or
// the default socket; host, when set, overrides it) with the API version
// negotiated and a deadline on every call: the engine must answer each
// request within timeout (0 means DefaultEngineTimeout), and an exec attach
// handshake, which the Docker client does not bound by its context, gets
// one through the dialer (Runtime.attach). Streams already answered
// (exec output, copies, logs) are bounded by their callers.
func NewClient(host string, timeout time.Duration) (*client.Client, error) {
	if timeout <= 0 {
		timeout = DefaultEngineTimeout
	}
	opts := []client.Opt{client.FromEnv, client.WithAPIVersionNegotiation()}
	if host != "" {
		opts = append(opts, client.WithHost(host))
	}
	opts = append(opts, withDeadlines(timeout))
	return client.NewClientWithOpts(opts...)
}

// withDeadlines sets the transport's answer timeout and wraps its dialer
// with the handshake deadline; it must run before the client wraps the
// transport for tracing (the last option does).
func withDeadlines(timeout time.Duration) client.Opt {
	return func(c *client.Client) error {
		tr, ok := c.HTTPClient().Transport.(*http.Transport)
		if !ok || tr.DialContext == nil {
			return fmt.Errorf("docker client transport %T: cannot set deadlines", c.HTTPClient().Transport)
		}
		tr.ResponseHeaderTimeout = timeout
		dial := tr.DialContext
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			if dl, ok := ctx.Value(handshakeKey{}).(time.Time); ok {
				return newHandshakeConn(ctx, conn, dl), nil
			}
			return conn, nil
		}
		return nil
	}
}

// handshakeKey marks the context of a hijacking call (exec attach) with
// the deadline of its handshake.
type handshakeKey struct{}

// handshakeConn is a hijacked connection whose handshake has a deadline
// and ends when the call's context does; SetDeadline(time.Time{}), which
// attach calls once the engine answered, lifts both.
type handshakeConn struct {
	net.Conn
	once sync.Once
	stop func() bool
}

func newHandshakeConn(ctx context.Context, c net.Conn, dl time.Time) *handshakeConn {
	c.SetDeadline(dl)
	h := &handshakeConn{Conn: c}
	h.stop = context.AfterFunc(ctx, func() { c.SetDeadline(time.Unix(1, 0)) })
	return h
}

// CloseWrite half-closes the connection (an exec's stdin is done), as the
// Docker client expects of a hijacked connection.
func (h *handshakeConn) CloseWrite() error {
	if cw, ok := h.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (h *handshakeConn) SetDeadline(t time.Time) error {
	if t.IsZero() {
		h.once.Do(func() { h.stop() })
	}
	return h.Conn.SetDeadline(t)
}

// errNoAnswer marks an engine call that got no answer within its deadline.
var errNoAnswer = errors.New("the docker engine did not answer")

// isNoAnswer reports the transport's answer deadline (ResponseHeaderTimeout)
// passing; net/http has no exported type for it, only this message.
func isNoAnswer(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() && strings.Contains(err.Error(), "timeout awaiting response headers")
}

// engineTimeout is the configured answer deadline.
func (r *Runtime) engineTimeout() time.Duration {
	if r.cfg.EngineTimeout > 0 {
		return r.cfg.EngineTimeout
	}
	return DefaultEngineTimeout
}

// attach starts and attaches exec execID with a deadline on the handshake
// (the engine timeout, or ctx's if sooner). When the engine does not
// answer, the wedge is logged and, if the engine then reports the exec
// never started, the attach is tried once more; otherwise the call fails
// with sandbox.ErrUnavailable, which the episode counts as infrastructure.
func (r *Runtime) attach(ctx context.Context, execID, what string) (types.HijackedResponse, error) {
	for try := 1; ; try++ {
		start := time.Now()
		hctx := context.WithValue(ctx, handshakeKey{}, start.Add(r.engineTimeout()))
		hj, err := r.cli.ContainerExecAttach(hctx, execID, container.ExecAttachOptions{})
		if err == nil {
			hj.Conn.SetDeadline(time.Time{})
			return hj, nil
		}
		var ne net.Error
		if ctx.Err() != nil || !errors.As(err, &ne) || !ne.Timeout() {
			return hj, wrapErr(what, err)
		}
		r.log.Warn("docker engine did not answer an exec attach; the engine may be wedged",
			"exec", short(execID), "waited", time.Since(start).Round(time.Millisecond), "try", try, "what", what)
		ictx, cancel := context.WithTimeout(ctx, r.engineTimeout())
		in, ierr := r.cli.ContainerExecInspect(ictx, execID)
		cancel()
		if try >= 2 || ierr != nil || in.Running || in.Pid != 0 {
			return hj, fmt.Errorf("%s: %w after %s: %w", what, errNoAnswer, r.engineTimeout(), errors.Join(err, ierr, sandbox.ErrUnavailable))
		}
	}
}

// Ping asks the engine for its version ping and reports how long the
// answer took (healthz: engine reachability and latency).
func (r *Runtime) Ping(ctx context.Context) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, r.engineTimeout())
	defer cancel()
	start := time.Now()
	if _, err := r.cli.Ping(ctx); err != nil {
		return time.Since(start), wrapErr("ping docker engine", err)
	}
	return time.Since(start), nil
}
