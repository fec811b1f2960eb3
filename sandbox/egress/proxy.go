package egress

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Config configures a Proxy.
type Config struct {
	Allow    []string // boxspec.CheckDomain entries
	MaxBytes int64    // cap of one episode, both directions; 0: DefaultMaxBytes
	// AllowPrivate lets an allowed name resolve to a loopback, private or
	// link-local address (the local stand-in servers of the tests). Off,
	// such a name is refused, so no allowlist entry reaches the host, its
	// Docker networks or a cloud metadata service.
	AllowPrivate bool
	Resolver     *net.Resolver // nil: net.DefaultResolver
	Recorder     *Recorder     // required
	DialTimeout  time.Duration // 0: 10 s
	Logger       *slog.Logger
	// HTTPPort and HTTPSPort are the only upstream ports (plain HTTP and
	// CONNECT); 0 means 80 and 443. Tests move them.
	HTTPPort, HTTPSPort int
}

// Proxy is the HTTP(S) proxy and DNS responder of one episode. It is safe
// for concurrent use.
type Proxy struct {
	cfg   Config
	allow *Allowlist
	meter *Meter
	log   *slog.Logger
	// upstream forwards plain-HTTP requests through the checked dialer;
	// it never uses a proxy of its own.
	upstream *http.Transport

	// Shutdown ends what is in flight so that every request is recorded.
	ctx      context.Context
	cancel   context.CancelFunc
	inflight sync.WaitGroup
	mu       sync.Mutex
	tunnels  map[net.Conn]bool
	conns    map[*meterConn]bool // the agents' connections, under Serve
}

// New checks the allowlist and builds the proxy.
func New(cfg Config) (*Proxy, error) {
	if cfg.Recorder == nil {
		return nil, errors.New("egress proxy: no recorder")
	}
	a, err := NewAllowlist(cfg.Allow)
	if err != nil {
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.HTTPPort == 0 {
		cfg.HTTPPort = 80
	}
	if cfg.HTTPSPort == 0 {
		cfg.HTTPSPort = 443
	}
	p := &Proxy{cfg: cfg, allow: a, meter: NewMeter(cfg.MaxBytes), log: cfg.Logger, tunnels: map[net.Conn]bool{}, conns: map[*meterConn]bool{}}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.upstream = &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			n, _ := strconv.Atoi(port)
			return p.dial(ctx, host, n)
		},
		DisableCompression:     true,
		MaxResponseHeaderBytes: MaxHeaderBytes,
		MaxIdleConns:           16,
		IdleConnTimeout:        30 * time.Second,
		ResponseHeaderTimeout:  time.Minute,
	}
	return p, nil
}

// Meter exposes the episode's byte count.
func (p *Proxy) Meter() *Meter { return p.meter }

// serveHTTP handles CONNECT host:443 and absolute-form http:// requests
// to allowed names; everything else is refused and recorded. Its record
// carries the bytes its connection carried since the last request.
func (p *Proxy) serveHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	mc, _ := r.Context().Value(connKey{}).(*meterConn)
	if mc != nil {
		mc.begin()
	}
	rec := Record{Time: start.UTC(), Client: clientIP(r.RemoteAddr), Kind: KindHTTP, Method: r.Method}
	if r.Method == http.MethodConnect {
		rec.Kind = KindConnect
	} else if r.URL != nil {
		rec.Path = cutPath(r.URL.Path)
	}
	p.mu.Lock()
	stopping := p.ctx.Err() != nil
	if !stopping {
		p.inflight.Add(1) // under mu: Shutdown's Wait never races an Add
	}
	p.mu.Unlock()
	if stopping {
		rec.Domain = r.Host
		deny(w, &rec, http.StatusServiceUnavailable, "shutting down")
		p.finish(mc, &rec, start)
		return
	}
	defer p.inflight.Done()
	if p.cfg.Recorder.Full() {
		http.Error(w, "mass egress proxy: record cap reached", http.StatusForbidden)
		if mc != nil {
			mc.settle(nil) // refused unrecorded: the recorder is full
		}
		return
	}
	cut := false
	if r.Method == http.MethodConnect {
		p.connect(w, r, &rec)
	} else {
		ctx, stop := context.WithCancel(r.Context())
		defer stop()
		go func() {
			select {
			case <-p.ctx.Done():
				stop()
			case <-ctx.Done():
			}
		}()
		cut = p.forward(w, r.WithContext(ctx), &rec)
	}
	p.finish(mc, &rec, start)
	if cut {
		panic(http.ErrAbortHandler) // cut the response so the agent sees it incomplete
	}
}

// finish hands rec to the connection, which adds it with its bytes once
// the response is complete; without one (never under Serve) it is added
// as it is.
func (p *Proxy) finish(mc *meterConn, rec *Record, start time.Time) {
	rec.Duration = time.Since(start).Seconds()
	if mc != nil {
		mc.settle(rec)
		return
	}
	p.cfg.Recorder.Add(*rec)
}

// cutPath is path cut to MaxRecordPath bytes on a rune boundary.
func cutPath(path string) string {
	if len(path) <= MaxRecordPath {
		return path
	}
	n := MaxRecordPath
	for n > 0 && !utf8.RuneStart(path[n]) {
		n--
	}
	return path[:n]
}

// deny answers the agent and fills the record.
func deny(w http.ResponseWriter, rec *Record, status int, reason string) {
	rec.Status, rec.Reason = status, reason
	http.Error(w, "mass egress proxy: "+reason, status)
}

// admit decides whether host:port may be reached; "" means yes.
func (p *Proxy) admit(host string, port, want int) string {
	switch {
	case p.cfg.Recorder.Full():
		return "record cap reached"
	case isIPLiteral(host):
		return "IP literal " + host + " refused; use a domain name"
	case !p.allow.Allows(host):
		return host + " is not on this task's allowlist"
	case port != want:
		return fmt.Sprintf("port %d refused; only %d here", port, want)
	case p.meter.Spent():
		return "episode byte cap reached"
	}
	return ""
}

// connect tunnels to an allowed host:443.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request, rec *Record) {
	host, port, err := splitHostPort(r.Host, 0)
	rec.Domain, rec.Port = host, port
	if err != nil {
		deny(w, rec, http.StatusBadRequest, "CONNECT target "+strconv.Quote(r.Host)+": "+err.Error())
		return
	}
	if why := p.admit(host, port, p.cfg.HTTPSPort); why != "" {
		deny(w, rec, http.StatusForbidden, why)
		return
	}
	up, err := p.dial(r.Context(), host, port)
	if err != nil {
		deny(w, rec, http.StatusBadGateway, err.Error())
		return
	}
	defer up.Close()
	hj, ok := w.(http.Hijacker)
	if !ok {
		deny(w, rec, http.StatusInternalServerError, "connection cannot be hijacked")
		return
	}
	down, buf, err := hj.Hijack()
	if err != nil {
		rec.Status, rec.Reason = http.StatusInternalServerError, "hijack: "+err.Error()
		return
	}
	defer down.Close()
	if !p.track(down, up) {
		rec.Status, rec.Reason = http.StatusServiceUnavailable, "proxy shutting down"
		return
	}
	defer p.untrack(down, up)
	rec.Allowed, rec.Status = true, http.StatusOK
	if _, err := down.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		rec.Reason = "write to agent: " + err.Error()
		return
	}
	// Bytes the client sent after its CONNECT line are already buffered.
	var client io.Reader = down
	if n := buf.Reader.Buffered(); n > 0 {
		client = io.MultiReader(io.LimitReader(buf.Reader, int64(n)), down)
	}
	forwarding(r, true)
	rec.Reason = p.splice(down, up, client)
	forwarding(r, false)
}

// track registers an open tunnel; false once Shutdown has begun.
func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ctx.Err() != nil {
		return false
	}
	for _, c := range cs {
		p.tunnels[c] = true
	}
	return true
}

func (p *Proxy) untrack(cs ...net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range cs {
		delete(p.tunnels, c)
	}
}

// trackConn adds (or removes) an agent connection; adding fails once
// Shutdown has begun.
func (p *Proxy) trackConn(c *meterConn, add bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !add {
		delete(p.conns, c)
		return true
	}
	if p.ctx.Err() != nil {
		return false
	}
	p.conns[c] = true
	return true
}

// Shutdown refuses new requests, cuts open tunnels and plain-HTTP
// transfers, waits (until ctx ends) for their handlers, then closes every
// agent connection so that each record is written. massd's KillEpisode
// stops the proxy with SIGTERM for this.
func (p *Proxy) Shutdown(ctx context.Context) error {
	p.mu.Lock()
	p.cancel()
	tunnels := make([]net.Conn, 0, len(p.tunnels))
	for c := range p.tunnels {
		tunnels = append(tunnels, c)
	}
	p.mu.Unlock()
	for _, c := range tunnels {
		c.Close() // outside mu: an agent's connection untracks itself
	}
	done := make(chan struct{})
	go func() { p.inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return ctx.Err()
	}
	p.mu.Lock()
	conns := make([]*meterConn, 0, len(p.conns))
	for c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
	return nil
}
