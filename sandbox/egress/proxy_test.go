package egress

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// world is a local stand-in internet: a DNS server that answers every
// name of names with 127.0.0.1 and records its questions, an HTTP and an
// HTTPS server, and a proxy in front of them.
type world struct {
	proxy     *Proxy
	records   *syncBuf
	questions *syncBuf
	client    *http.Client
	httpPort  int
	httpsPort int
	proxyAddr string // host:port of the proxy
}

// serveProxy runs p.Serve on a loopback port until the test ends.
func serveProxy(t testing.TB, p *Proxy) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(l)
	t.Cleanup(func() { l.Close() })
	return l.Addr().String()
}

func newWorld(t testing.TB, allow []string, maxBytes int64, private bool) *world {
	t.Helper()
	w := &world{records: &syncBuf{}, questions: &syncBuf{}}
	dns, err := New(Config{Allow: []string{"data.test.example", "other.test.example"}, Recorder: NewRecorder(w.questions)})
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go dns.ServeDNS(pc)
	res := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
	page := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/bytes/")); err == nil {
			rw.Write(bytes.Repeat([]byte("x"), n))
			return
		}
		fmt.Fprintf(rw, "standin %s tls=%t", r.Host, r.TLS != nil)
	})
	hs := httptest.NewServer(page)
	ts := httptest.NewTLSServer(page)
	t.Cleanup(hs.Close)
	t.Cleanup(ts.Close)
	w.httpPort, w.httpsPort = port(t, hs.URL), port(t, ts.URL)
	w.proxy, err = New(Config{Allow: allow, MaxBytes: maxBytes, AllowPrivate: private, Resolver: res,
		Recorder: NewRecorder(w.records), HTTPPort: w.httpPort, HTTPSPort: w.httpsPort})
	if err != nil {
		t.Fatal(err)
	}
	w.proxyAddr = serveProxy(t, w.proxy)
	pu, _ := url.Parse("http://" + w.proxyAddr)
	w.client = &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu),
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true}}
	return w
}

// syncBuf is a buffer the servers write while the test reads.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func port(t testing.TB, u string) int {
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p.Port())
	return n
}

func (w *world) get(scheme, host, path string) (int, string, error) {
	p := w.httpPort
	if scheme == "https" {
		p = w.httpsPort
	}
	resp, err := w.client.Get(fmt.Sprintf("%s://%s:%d%s", scheme, host, p, path))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// recs waits up to 5 s for n records (a tunnel is recorded when it
// closes) and returns what is there in order of their start.
func (w *world) recs(t *testing.T, n int) []Record {
	t.Helper()
	for i := 0; ; i++ {
		rs, err := ParseRecords(strings.NewReader(w.records.String()))
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) >= n || i == 100 {
			sort.SliceStable(rs, func(a, b int) bool { return rs[a].Time.Before(rs[b].Time) })
			return rs
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestProxyAllowsListedNamesOnly(t *testing.T) {
	w := newWorld(t, []string{"data.test.example"}, 0, true)
	if code, body, err := w.get("http", "data.test.example", "/a"); err != nil || code != 200 || !strings.HasPrefix(body, "standin") {
		t.Errorf("allowed http: %d %q %v", code, body, err)
	}
	if code, body, err := w.get("https", "data.test.example", "/a"); err != nil || code != 200 || !strings.Contains(body, "tls=true") {
		t.Errorf("allowed https: %d %q %v", code, body, err)
	}
	if code, _, err := w.get("http", "other.test.example", "/a"); err != nil || code != http.StatusForbidden {
		t.Errorf("denied http: %d %v, want 403", code, err)
	}
	if _, _, err := w.get("https", "other.test.example", "/a"); err == nil {
		t.Errorf("denied CONNECT succeeded")
	}
	if code, _, err := w.get("http", "127.0.0.1", "/a"); err != nil || code != http.StatusForbidden {
		t.Errorf("IP literal: %d %v, want 403", code, err)
	}
	if _, _, err := w.get("https", "127.0.0.1", "/a"); err == nil {
		t.Errorf("CONNECT to an IP literal succeeded")
	}
	resp, err := w.client.Get(fmt.Sprintf("http://data.test.example:%d/a", w.httpsPort))
	if err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("plain http to the https port: %v %v, want 403", resp, err)
	}
	rs := w.recs(t, 7)
	var got []string
	for _, r := range rs {
		got = append(got, fmt.Sprintf("%s %s %t %d", r.Kind, r.Domain, r.Allowed, r.Status))
		if r.Client == "" {
			t.Errorf("record without client: %+v", r)
		}
	}
	want := []string{"http data.test.example true 200", "connect data.test.example true 200",
		"http other.test.example false 403", "connect other.test.example false 403",
		"http 127.0.0.1 false 403", "connect 127.0.0.1 false 403", "http data.test.example false 403"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(w.questions.String(), "other.test.example") {
		t.Errorf("the proxy looked up a denied name: %s", w.questions)
	}
	if rs[0].BytesIn == 0 || rs[1].BytesIn == 0 || rs[1].BytesOut == 0 {
		t.Errorf("allowed records count no bytes: %+v %+v", rs[0], rs[1])
	}
}

func TestProxyRefusesPrivateAddresses(t *testing.T) {
	w := newWorld(t, []string{"data.test.example"}, 0, false)
	code, body, err := w.get("http", "data.test.example", "/a")
	if err != nil || code != http.StatusBadGateway || !strings.Contains(body, "non-public") {
		t.Errorf("allowed name on 127.0.0.1: %d %q %v, want 502 non-public", code, body, err)
	}
}

func TestProxyByteCap(t *testing.T) {
	const cap = 64 << 10
	w := newWorld(t, []string{"data.test.example"}, cap, true)
	_, body, _ := w.get("http", "data.test.example", fmt.Sprintf("/bytes/%d", 4*cap))
	if len(body) > cap {
		t.Errorf("downloaded %d bytes past a cap of %d", len(body), cap)
	}
	code, _, err := w.get("http", "data.test.example", "/a")
	if err != nil || code != http.StatusForbidden {
		t.Errorf("request after the cap: %d %v, want 403", code, err)
	}
	rs := w.recs(t, 2)
	if len(rs) != 2 || rs[0].Reason != errCap.Error() || rs[1].Reason != errCap.Error() || rs[1].Allowed {
		t.Errorf("records %+v: want the cut download and the refused request, both for the cap", rs)
	}
}

func TestProxyRefusesOriginForm(t *testing.T) {
	w := newWorld(t, []string{"data.test.example"}, 0, true)
	resp, err := http.Get("http://" + w.proxyAddr + "/x")
	if err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("origin-form request: %v %v, want 400", resp, err)
	}
	resp.Body.Close()
}

// TestShutdownRecordsOpenTunnels: a tunnel still open when the proxy is
// told to stop is cut and recorded with its bytes, so KillEpisode loses no
// request.
func TestShutdownRecordsOpenTunnels(t *testing.T) {
	w := newWorld(t, []string{"data.test.example"}, 0, true)
	c, err := net.Dial("tcp", w.proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT data.test.example:%d HTTP/1.1\r\nHost: data.test.example\r\n\r\n", w.httpsPort)
	buf := make([]byte, 64)
	if n, err := c.Read(buf); err != nil || !strings.Contains(string(buf[:n]), "200") {
		t.Fatalf("CONNECT answer %q, %v", buf[:n], err)
	}
	tc := tls.Client(c, &tls.Config{InsecureSkipVerify: true})
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.proxy.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	rs := w.recs(t, 1)
	if len(rs) != 1 || rs[0].Kind != KindConnect || !rs[0].Allowed || rs[0].BytesOut == 0 || rs[0].BytesIn == 0 {
		t.Errorf("records after shutdown: %+v, want the open tunnel with its bytes", rs)
	}
	resp, err := w.client.Get(fmt.Sprintf("http://data.test.example:%d/a", w.httpPort))
	if err == nil && resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("request after shutdown: %d, want 503", resp.StatusCode)
	}
}
