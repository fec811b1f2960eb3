package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

const testToken = "0123456789abcdef0123"

// serveTCP serves s on loopback TCP as massd does (token server, the TCP
// connection cap) and returns the address.
func serveTCP(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewTokenHTTPServer(s.Handler(), testToken, nil)
	go srv.Serve(LimitListener(ln, MaxConnsTCP))
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// D3: 130 unauthenticated POSTs that declare a body and never send it get
// their 401 and lose their connection at once, so a token holder is
// served right after. On e9e71d1 net/http waited for each declared body
// for a minute, the 128 slots stayed taken and the token holder waited in
// the backlog.
func TestUnauthenticatedPostsFreeTheirSlots(t *testing.T) {
	s, _ := newTestServer(t)
	addr := serveTCP(t, s)
	const n = MaxConnsTCP + 2
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, "POST /v1/jobs HTTP/1.1\r\nHost: massd\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// The liveness bound is half the minute the drain used to take.
	hc := &http.Client{Timeout: 30 * time.Second}
	req, _ := http.NewRequest("GET", "http://"+addr+"/v1/healthz", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("token holder after %d unauthenticated POSTs: %v", n, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("token holder: %s", resp.Status)
	}
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		rest, err := io.ReadAll(bufio.NewReader(c)) // up to EOF: the server closed it
		if err != nil {
			t.Fatalf("socket %d: %v after %q", i, err, rest)
		}
		if !strings.HasPrefix(string(rest), "HTTP/1.1 401 ") {
			t.Fatalf("socket %d got %q, want a 401", i, rest)
		}
	}
}

// D3: the token is checked before any size limit, so a wrong token with a
// huge declared body is 401, not 413 (which would tell the route limit).
func TestTokenCheckedBeforeBodyLimit(t *testing.T) {
	s, _ := newTestServer(t)
	addr := serveTCP(t, s)
	for _, auth := range []string{"", "Authorization: Bearer wrong-token-wrong-token\r\n"} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "POST /v1/tasks HTTP/1.1\r\nHost: massd\r\n%sContent-Length: %d\r\n\r\n", auth, int64(MaxTaskUploadBytes)*4)
		c.SetReadDeadline(time.Now().Add(30 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		c.Close()
		if resp.StatusCode != http.StatusUnauthorized || strings.Contains(string(body), "limit") {
			t.Errorf("auth %q: %s %s, want 401 without the limit", auth, resp.Status, body)
		}
	}
}
