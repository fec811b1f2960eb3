package egress

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// MaxHeaderBytes caps a request's line and headers on the proxy (and an
// upstream response's headers): far above what a download tool sends,
// far below what would carry data past the allowlist's byte accounting.
// A longer head gets 431 and is recorded.
const MaxHeaderBytes = 32 << 10

// sniffBytes is how much of a request head and of a response a
// connection keeps to name a request that no handler saw.
const sniffBytes = 1 << 10

// Serve runs the HTTP proxy on l until l is closed. Every byte an agent's
// connection carries, each way, counts against the episode's cap and
// lands in a record: a request's record gets what its connection carried
// from the end of the previous response to the end of its own (request
// line, headers and body; response head and body), and bytes no request
// claimed (a request the HTTP parser refused, a cut head) get a record of
// their own when the connection closes. Shutdown closes the connections,
// so no record waits on an idle one.
func (p *Proxy) Serve(l net.Listener) error {
	srv := &http.Server{
		Handler:           http.HandlerFunc(p.serveHTTP),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       time.Minute,
		MaxHeaderBytes:    MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(p.log.Handler(), slog.LevelWarn),
		// Idle: the last response is complete, its record too.
		ConnState: func(c net.Conn, st http.ConnState) {
			if mc, ok := c.(*meterConn); ok && st == http.StateIdle {
				mc.idle()
			}
		},
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if mc, ok := c.(*meterConn); ok {
				return context.WithValue(ctx, connKey{}, mc)
			}
			return ctx
		},
	}
	return srv.Serve(&meterListener{Listener: l, p: p})
}

type connKey struct{}

// meterListener wraps every accepted connection in a meterConn.
type meterListener struct {
	net.Listener
	p *Proxy
}

func (l *meterListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	mc := &meterConn{Conn: c, p: l.p}
	if !l.p.trackConn(mc, true) {
		c.Close()
		return nil, net.ErrClosed
	}
	return mc, nil
}

// meterConn is one agent connection. Reads are bytes out (agent to
// upstream), writes bytes in; all count against the meter. While a
// handler forwards (an admitted request's body and response, a tunnel),
// the cap is enforced: a read past it fails (the bytes go nowhere) and a
// write that would pass it is refused. Outside, the connection carries
// only request heads (at most MaxHeaderBytes each) and the proxy's own
// answers, refusals for the cap among them: counted, never forwarded.
type meterConn struct {
	net.Conn
	p *Proxy

	mu      sync.Mutex
	out, in int64 // bytes since the last record
	head    []byte
	reply   []byte
	started time.Time // first byte since the last record
	active  bool      // a handler owns the bytes
	pending *Record   // the last request's record, open until the next read
	capped  bool
	closed  bool
	fwd     bool // a handler forwards: the cap is enforced
}

// forwarding turns the cap's enforcement on or off for r's connection.
func forwarding(r *http.Request, on bool) {
	if c, ok := r.Context().Value(connKey{}).(*meterConn); ok {
		c.mu.Lock()
		c.fwd = on
		c.mu.Unlock()
	}
}

func (c *meterConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n <= 0 {
		return n, err
	}
	ok := c.p.meter.Take(int64(n))
	c.mu.Lock()
	c.mark()
	c.out += int64(n)
	if len(c.head) < sniffBytes {
		c.head = append(c.head, b[:min(n, sniffBytes-len(c.head))]...)
	}
	refuse := !ok && c.fwd
	c.capped = c.capped || refuse
	c.mu.Unlock()
	if refuse {
		return 0, errCap
	}
	return n, err
}

func (c *meterConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	fwd := c.fwd
	c.mu.Unlock()
	switch {
	case !fwd:
		c.p.meter.Take(int64(len(b)))
	case !c.p.meter.TakeWithin(int64(len(b))):
		c.p.meter.Exhaust()
		c.mu.Lock()
		c.capped = true
		c.mu.Unlock()
		return 0, errCap
	}
	n, err := c.Conn.Write(b)
	c.mu.Lock()
	c.mark()
	c.in += int64(n)
	if len(c.reply) < sniffBytes {
		c.reply = append(c.reply, b[:min(n, sniffBytes-len(c.reply))]...)
	}
	c.mu.Unlock()
	if n < len(b) {
		c.p.meter.Give(int64(len(b) - n))
	}
	return n, err
}

// mark notes the time of the first byte since the last record; c.mu held.
func (c *meterConn) mark() {
	if c.out == 0 && c.in == 0 {
		c.started = time.Now()
	}
}

// begin marks a handler as the owner of the connection's bytes.
func (c *meterConn) begin() {
	c.mu.Lock()
	done := c.takePending()
	c.active = true
	c.mu.Unlock()
	c.add(done)
}

// idle adds the pending record: the server has written all of its response.
func (c *meterConn) idle() {
	c.mu.Lock()
	done := c.takePending()
	c.mu.Unlock()
	c.add(done)
}

// settle ends the handler's ownership; rec gets the bytes so far and
// those of the rest of its response, and is added when the connection
// goes idle or closes.
func (c *meterConn) settle(rec *Record) {
	c.mu.Lock()
	c.active = false
	c.pending = rec
	var done *Record
	if c.closed {
		done = c.takePending()
	}
	c.mu.Unlock()
	c.add(done)
}

// takePending closes the pending record with the bytes since the last
// one; c.mu held.
func (c *meterConn) takePending() *Record {
	rec := c.pending
	if rec == nil {
		return nil
	}
	rec.BytesOut, rec.BytesIn = c.out, c.in
	if c.capped && rec.Reason == "" {
		rec.Reason = errCap.Error()
	}
	c.pending = nil
	c.reset()
	return rec
}

// reset forgets the bytes since the last record; c.mu held.
func (c *meterConn) reset() {
	c.out, c.in, c.head, c.reply, c.capped = 0, 0, nil, nil, false
}

func (c *meterConn) add(rec *Record) {
	if rec != nil {
		c.p.cfg.Recorder.Add(*rec)
	}
}

// Close adds the pending record, or one for bytes no request claimed.
func (c *meterConn) Close() error {
	c.mu.Lock()
	done := c.takePending()
	var orphan *Record
	if done == nil && !c.closed && !c.active && (c.out > 0 || c.in > 0) {
		orphan = c.orphan()
		c.reset()
	}
	c.closed = true
	c.mu.Unlock()
	c.add(done)
	c.add(orphan)
	c.p.trackConn(c, false)
	return c.Conn.Close()
}

// orphan is the record of bytes no handler claimed: named by the request
// line and Host header the agent sent and the status the HTTP server
// answered on its own.
func (c *meterConn) orphan() *Record {
	if c.started.IsZero() {
		c.started = time.Now()
	}
	rec := &Record{Time: c.started.UTC(), Client: clientIP(c.RemoteAddr().String()), Kind: KindHTTP,
		BytesOut: c.out, BytesIn: c.in, Duration: time.Since(c.started).Seconds()}
	line, rest, _ := bytes.Cut(c.head, []byte("\n"))
	fields := strings.Fields(string(line))
	if len(fields) > 0 {
		rec.Method = clip(fields[0], 32)
		if rec.Method == http.MethodConnect {
			rec.Kind = KindConnect
		}
	}
	if len(fields) > 1 {
		rec.Domain = targetHost(fields[1], rest)
	}
	if st := strings.Fields(string(firstLine(c.reply))); len(st) > 1 && strings.HasPrefix(st[0], "HTTP/") {
		rec.Status, _ = strconv.Atoi(st[1])
		rec.Reason = "refused by the proxy's HTTP parser: " + clip(strings.Join(st[1:], " "), 80)
	} else {
		rec.Reason = "connection bytes outside any answered request"
	}
	if c.capped {
		rec.Reason = errCap.Error()
	}
	return rec
}

// targetHost is the host a request line's target names (absolute form or
// CONNECT authority), else the Host header in rest, as sent.
func targetHost(target string, rest []byte) string {
	if _, after, ok := strings.Cut(target, "://"); ok {
		h, _, _ := strings.Cut(after, "/")
		return clip(h, 253)
	}
	if !strings.HasPrefix(target, "/") {
		return clip(target, 253)
	}
	for _, l := range bytes.Split(rest, []byte("\n")) {
		if k, v, ok := bytes.Cut(l, []byte(":")); ok && strings.EqualFold(string(bytes.TrimSpace(k)), "host") {
			return clip(string(bytes.TrimSpace(v)), 253)
		}
	}
	return ""
}

func firstLine(b []byte) []byte {
	l, _, _ := bytes.Cut(b, []byte("\n"))
	return bytes.TrimSpace(l)
}

// clip makes s valid UTF-8 for the record and cuts it to at most n bytes
// on a rune boundary.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
