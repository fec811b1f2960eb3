package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/errclass"
	"github.com/mass-dev/mass/taskspec"
)

// Connection and request limits (docs/formats.md, Caps). Each listener has
// its own connection cap, so a flood on the TCP listener cannot take the
// unix socket's slots (or the process's file descriptors) away.
const (
	ReadHeaderTimeout = 10 * time.Second
	// BodyTimeout bounds reading a request body; UploadTimeout that of a
	// task upload (POST /v1/tasks).
	BodyTimeout   = time.Minute
	UploadTimeout = 30 * time.Minute
	// WriteTimeout bounds writing a response other than an event stream
	// (?follow=1), which lasts as long as its job.
	WriteTimeout   = 10 * time.Minute
	IdleTimeout    = time.Minute
	MaxHeaderBytes = 64 << 10
	MaxConnsUnix   = 256
	MaxConnsTCP    = 128
)

// NewHTTPServer returns the http.Server for one listener: timeouts on
// headers, bodies, responses and idle connections, and body-size limits
// applied from the headers before anything is read. Serve it on a
// LimitListener.
func NewHTTPServer(h http.Handler, base func(net.Listener) context.Context) *http.Server {
	return newHTTPServer(guard(h), base)
}

// NewTokenHTTPServer is NewHTTPServer for the TCP listener: the bearer
// token is checked first (RequireToken), before any body limit, so a
// client without it learns nothing of the routes and holds no slot.
func NewTokenHTTPServer(h http.Handler, token string, base func(net.Listener) context.Context) *http.Server {
	return newHTTPServer(RequireToken(token, guard(h)), base)
}

func newHTTPServer(h http.Handler, base func(net.Listener) context.Context) *http.Server {
	return &http.Server{
		Handler: h, ReadHeaderTimeout: ReadHeaderTimeout, IdleTimeout: IdleTimeout,
		MaxHeaderBytes: MaxHeaderBytes, BaseContext: base,
	}
}

// bodyLimit is the largest body the route takes, and how long reading it
// may take.
func bodyLimit(r *http.Request) (int64, time.Duration) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/tasks":
		return MaxTaskUploadBytes, UploadTimeout
	case r.Method == http.MethodPost && r.URL.Path == "/v1/tasks/validate":
		return taskspec.MaxSpecBytes + 1, BodyTimeout
	}
	return MaxJSONBody, BodyTimeout
}

// limits is bodyLimit; tests shorten its timeouts.
var limits = bodyLimit

// bodyClass classes a failure to read a request body: a body over the
// route's cap (guard's http.MaxBytesReader) is ErrTooLarge, so a chunked
// upload past the cap is 413 as a declared one is; anything else is the
// client's malformed request.
func bodyClass(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return api.ErrTooLarge
	}
	return api.ErrInvalid
}

// guard refuses a declared body over the route's limit (413, connection
// closed, nothing read), caps the body actually read, and sets the read
// and write deadlines of the request. The read deadline bounds reading the
// body only: it is cleared once the body is read (at once for a request
// without one), because net/http cancels a request whose connection read
// times out — which would cut an event stream or a long download.
func guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit, timeout := limits(r)
		if r.ContentLength > limit {
			w.Header().Set("Connection", "close")
			writeError(w, errclass.New(fmt.Sprintf("request body of %d bytes is over the %d-byte limit of %s %s", r.ContentLength, limit, r.Method, r.URL.Path), api.ErrTooLarge))
			return
		}
		rc := http.NewResponseController(w)
		now := time.Now()
		if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
			rc.SetReadDeadline(time.Time{})
		} else {
			rc.SetReadDeadline(now.Add(timeout))
			r.Body = &clearOnEOF{ReadCloser: r.Body, clear: func() { rc.SetReadDeadline(time.Time{}) }}
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		if f := r.URL.Query().Get("follow"); f != "1" && f != "true" {
			rc.SetWriteDeadline(now.Add(WriteTimeout))
		} else {
			// An event stream lasts as long as its job. A GET has no body,
			// and net/http cancels the request's context when the read
			// deadline passes, which would end the stream after BodyTimeout.
			rc.SetWriteDeadline(time.Time{})
			rc.SetReadDeadline(time.Time{})
		}
		next.ServeHTTP(w, r)
	})
}

// clearOnEOF calls clear once its body has been read to the end.
type clearOnEOF struct {
	io.ReadCloser
	clear func()
	done  bool
}

func (b *clearOnEOF) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		b.clear()
	}
	return n, err
}

// LimitListener accepts at most n connections at a time from l; further
// clients wait in the kernel's backlog, holding no descriptor of ours.
func LimitListener(l net.Listener, n int) net.Listener {
	return &limitListener{Listener: l, sem: make(chan struct{}, n), done: make(chan struct{})}
}

type limitListener struct {
	net.Listener
	sem       chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.sem <- struct{}{}:
	case <-l.done:
		return nil, net.ErrClosed
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.sem
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
}

func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
