package egress

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingListener counts the bytes a stand-in upstream server reads.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: c, n: l.n}, nil
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(b []byte) (int, error) {
	k, err := c.Conn.Read(b)
	c.n.Add(int64(k))
	return k, err
}

// upstreamWorld is a proxy with cap maxBytes in front of one plain-HTTP
// stand-in that counts what reaches it and answers with a response header
// of respHeader bytes.
type upstreamWorld struct {
	*world
	upstream *atomic.Int64
	port     int
}

func newUpstreamWorld(t *testing.T, maxBytes int64, respHeader int) *upstreamWorld {
	t.Helper()
	w := newWorld(t, []string{"data.test.example"}, maxBytes, true)
	n := &atomic.Int64{}
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if respHeader > 0 {
			rw.Header().Set("X-Fill", strings.Repeat("h", respHeader))
		}
		fmt.Fprint(rw, "ok")
	}))
	hs.Config.MaxHeaderBytes = 8 << 20
	hs.Listener = countingListener{Listener: hs.Listener, n: n}
	hs.Start()
	t.Cleanup(hs.Close)
	w.proxy.cfg.HTTPPort = port(t, hs.URL)
	return &upstreamWorld{world: w, upstream: n, port: port(t, hs.URL)}
}

// raw sends one request head on a fresh connection and returns the status
// line of the answer ("" when the connection ended without one) and the
// bytes received.
func raw(t *testing.T, addr, head string) (string, int) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	go func() { _, _ = io.WriteString(c, head) }()
	b, _ := io.ReadAll(c)
	line, _, _ := strings.Cut(string(b), "\r\n")
	return line, len(b)
}

func sum(rs []Record) (out, in int64) {
	for _, r := range rs {
		out += r.BytesOut
		in += r.BytesIn
	}
	return out, in
}

// TestEgressCountsHeadersUpstream: with a 1 MiB cap, requests with big
// (but admissible) headers used to reach upstream without limit while
// the records counted only bodies (on e9e71d1: 27.9 MB of 900 KB headers
// upstream, 600,000 bytes recorded). Now the heads count: the cap stops
// them, and the records hold every byte the proxy read.
func TestEgressCountsHeadersUpstream(t *testing.T) {
	const cap = 1 << 20
	w := newUpstreamWorld(t, cap, 0)
	fill := strings.Repeat("a", 30<<10)
	sent := 0
	for range 60 { // 1.8 MB of headers
		head := fmt.Sprintf("GET http://data.test.example:%d/ HTTP/1.1\r\nHost: data.test.example:%d\r\nX-Fill: %s\r\nConnection: close\r\n\r\n", w.port, w.port, fill)
		sent += len(head)
		raw(t, w.proxyAddr, head)
	}
	if got := w.upstream.Load(); got > cap {
		t.Errorf("%d header bytes reached upstream past a cap of %d", got, cap)
	}
	rs := w.recs(t, 60)
	out, _ := sum(rs)
	if len(rs) != 60 || out != int64(sent) {
		t.Errorf("%d records with %d bytes out; sent %d bytes in 60 requests", len(rs), out, sent)
	}
	t.Logf("60 requests with 30 KiB headers, 1 MiB cap: sent %d, upstream got %d, records sum %d out", sent, w.upstream.Load(), out)
}

// TestEgressHugeHeadersUnderCap is the measured case: 30 requests, each
// with a 900 KB header, to an allowed name under a 1 MiB cap (on e9e71d1
// 27.9 MB reached upstream while the records summed 600,000 bytes out).
func TestEgressHugeHeadersUnderCap(t *testing.T) {
	const cap = 1 << 20
	w := newUpstreamWorld(t, cap, 0)
	head := fmt.Sprintf("GET http://data.test.example:%d/ HTTP/1.1\r\nHost: data.test.example\r\nX-Fill: %s\r\n\r\n", w.port, strings.Repeat("a", 900_000))
	var wg sync.WaitGroup
	for range 30 { // at once: the server lingers half a second on each refused connection
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c, err := net.Dial("tcp", w.proxyAddr); err == nil {
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				go io.WriteString(c, head)
				_, _ = io.Copy(io.Discard, c)
				c.Close()
			}
		}()
	}
	wg.Wait()
	rs := w.recs(t, 30)
	out, in := sum(rs)
	if got := w.upstream.Load(); got != 0 || len(rs) != 30 || out != w.proxy.Meter().Used()-in {
		t.Errorf("upstream got %d bytes; %d records with %d out, %d in; meter %d", got, len(rs), out, in, w.proxy.Meter().Used())
	}
	t.Logf("30 requests with 900 KB headers, 1 MiB cap: upstream got %d bytes, %d records, %d bytes out and %d in recorded (meter %d)",
		w.upstream.Load(), len(rs), out, in, w.proxy.Meter().Used())
}

// TestEgressCountsResponseHeaders: response headers reached the agent
// uncounted (on e9e71d1: 10.8 MB past a 1 MiB cap). They count now; the
// records hold every byte the agent received.
func TestEgressCountsResponseHeaders(t *testing.T) {
	const cap = 1 << 20
	w := newUpstreamWorld(t, cap, 30<<10)
	got := 0
	for range 60 {
		_, n := raw(t, w.proxyAddr, fmt.Sprintf("GET http://data.test.example:%d/ HTTP/1.1\r\nHost: data.test.example:%d\r\nConnection: close\r\n\r\n", w.port, w.port))
		got += n
	}
	rs := w.recs(t, 60)
	_, in := sum(rs)
	if in != int64(got) {
		t.Errorf("records count %d bytes in; the agent received %d", in, got)
	}
	if got > cap+60*1024 { // past the cap only the proxy's short refusals
		t.Errorf("the agent received %d bytes past a cap of %d", got, cap)
	}
}

// TestEgressHeaderLimit: a 900 KB request line, request header or CONNECT
// header was accepted (and forwarded); now each gets 431 and a record.
func TestEgressHeaderLimit(t *testing.T) {
	w := newUpstreamWorld(t, 0, 0)
	big := strings.Repeat("a", 900<<10)
	heads := map[string]string{
		"request line": fmt.Sprintf("GET http://data.test.example:%d/%s HTTP/1.1\r\nHost: data.test.example\r\n\r\n", w.port, big),
		"header":       fmt.Sprintf("GET http://data.test.example:%d/ HTTP/1.1\r\nHost: data.test.example\r\nX-Fill: %s\r\n\r\n", w.port, big),
		"CONNECT":      fmt.Sprintf("CONNECT data.test.example:%d HTTP/1.1\r\nHost: data.test.example\r\nX-Fill: %s\r\n\r\n", w.httpsPort, big),
	}
	for what, head := range heads {
		if line, _ := raw(t, w.proxyAddr, head); !strings.Contains(line, " 431 ") {
			t.Errorf("900 KB %s: answer %q, want 431", what, line)
		}
	}
	if got := w.upstream.Load(); got != 0 {
		t.Errorf("%d bytes of refused heads reached upstream", got)
	}
	rs := w.recs(t, 3)
	for _, r := range rs {
		if r.Status != http.StatusRequestHeaderFieldsTooLarge || r.BytesOut < MaxHeaderBytes || r.Allowed {
			t.Errorf("record %+v: want a refused 431 with the bytes read", r)
		}
	}
	if len(rs) != 3 {
		t.Errorf("%d records for 3 refused heads", len(rs))
	}
}

// TestEgressRecordsParserRefusals: requests Go's HTTP server refuses on
// its own were answered but never recorded.
func TestEgressRecordsParserRefusals(t *testing.T) {
	w := newUpstreamWorld(t, 0, 0)
	target := fmt.Sprintf("http://data.test.example:%d/", w.port)
	cases := []struct{ what, head string }{
		{"duplicate Content-Length", "POST " + target + " HTTP/1.1\r\nHost: data.test.example\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd"},
		{"unknown Transfer-Encoding", "POST " + target + " HTTP/1.1\r\nHost: data.test.example\r\nTransfer-Encoding: gzip\r\n\r\n"},
		{"%-encoded host", fmt.Sprintf("GET http://data.test%%2eexample:%d/ HTTP/1.1\r\nHost: data.test.example\r\n\r\n", w.port)},
	}
	for _, c := range cases {
		line, _ := raw(t, w.proxyAddr, c.head)
		if !strings.HasPrefix(line, "HTTP/1.1 4") && !strings.HasPrefix(line, "HTTP/1.1 5") {
			t.Errorf("%s: answer %q, want a refusal", c.what, line)
		}
	}
	rs := w.recs(t, len(cases))
	if len(rs) != len(cases) {
		t.Fatalf("%d records for %d answered requests: %+v", len(rs), len(cases), rs)
	}
	for _, r := range rs {
		if r.Allowed || r.Status < 400 || r.Method == "" || r.BytesOut == 0 || r.BytesIn == 0 || !strings.Contains(r.Domain, "data.test") {
			t.Errorf("record %+v: want the refused request named, its status and bytes", r)
		}
	}
	if got := w.upstream.Load(); got != 0 {
		t.Errorf("%d bytes of refused requests reached upstream", got)
	}
}

// TestDNSLabelWithDots: a label "data.test" followed by "example" was
// answered as the allowed data.test.example and recorded as it.
func TestDNSLabelWithDots(t *testing.T) {
	p := testProxy(t)
	q := []byte{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0}
	for _, l := range []string{"data.example", "org"} { // testProxy allows data.example.org
		q = append(q, byte(len(l)))
		q = append(q, l...)
	}
	q = append(q, 0, 0, typeA, 0, 1)
	out, rec := p.Answer(q, netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("10.0.0.1"))
	if rec == nil || rec.Allowed || rec.Domain != `data\.example.org` {
		t.Fatalf("record %+v: want the name as asked, refused", rec)
	}
	if rc := int(out[3] & 0xf); rc == rcodeOK || out[7] != 0 {
		t.Errorf("answer rcode %d with %d answers, want a refusal", rc, out[7])
	}
}

// TestPublicRefusesReservedRanges: the reserved, benchmarking,
// documentation and v4-embedding ranges passed as public.
func TestPublicRefusesReservedRanges(t *testing.T) {
	for _, s := range []string{"198.18.0.1", "198.19.255.254", "240.0.0.1", "255.255.255.255", "192.0.2.7", "198.51.100.1",
		"203.0.113.9", "192.0.0.8", "192.88.99.1", "100.64.0.1", "fec0::1", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe",
		"2002:7f00:1::1", "2001:db8::1", "2001::1", "100::1", "::ffff:198.18.0.1"} {
		if Public(netip.MustParseAddr(s)) {
			t.Errorf("%s counts as public", s)
		}
	}
	for _, s := range []string{"93.184.215.14", "1.1.1.1", "2606:4700:4700::1111", "2a00:1450:4001:82b::200e"} {
		if !Public(netip.MustParseAddr(s)) {
			t.Errorf("%s does not count as public", s)
		}
	}
}
