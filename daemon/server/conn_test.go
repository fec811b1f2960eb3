package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// readCounter fails the test if the handler reads the body.
type readCounter struct{ n int }

func (r *readCounter) Read(p []byte) (int, error) { r.n += len(p); return 0, io.EOF }

// Defect 2: body limits apply from the headers, before anything is read,
// and the token is checked before the body and before the limits.
func TestGuardRefusesBeforeReading(t *testing.T) {
	s, _ := newTestServer(t)
	h := RequireToken("0123456789abcdef0123", guard(s.Handler())) // as NewTokenHTTPServer
	body := &readCounter{}
	req, _ := http.NewRequest("POST", "/v1/jobs", body)
	req.ContentLength = MaxJSONBody + 1
	req.Header.Set("Authorization", "Bearer 0123456789abcdef0123")
	rec := do413(h, req)
	if rec.Code != http.StatusRequestEntityTooLarge || body.n != 0 || rec.Header().Get("Connection") != "close" {
		t.Errorf("oversized declared body: %d, read %d bytes, Connection %q; want 413, 0, close", rec.Code, body.n, rec.Header().Get("Connection"))
	}
	body = &readCounter{}
	req, _ = http.NewRequest("POST", "/v1/jobs", body)
	req.ContentLength = 100_000
	rec = do413(h, req)
	if rec.Code != http.StatusUnauthorized || body.n != 0 || rec.Header().Get("Connection") != "close" {
		t.Errorf("no token: %d, read %d bytes, Connection %q; want 401, 0, close", rec.Code, body.n, rec.Header().Get("Connection"))
	}
	req, _ = http.NewRequest("POST", "/v1/jobs", &readCounter{})
	req.ContentLength = MaxJSONBody + 1
	if rec = do413(h, req); rec.Code != http.StatusUnauthorized {
		t.Errorf("no token, oversized declared body: %d, want 401 (the token comes before the limits)", rec.Code)
	}
}

func TestLimitListenerCaps(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := LimitListener(inner, 2)
	defer l.Close()
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	for range 4 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	time.Sleep(200 * time.Millisecond)
	if got := len(accepted); got != 2 {
		t.Fatalf("accepted %d connections with a cap of 2", got)
	}
	(<-accepted).Close() // a slot frees
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for len(accepted) < 2 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	if got := len(accepted); got != 2 {
		t.Errorf("after one close: %d waiting accepted, want 2", got)
	}
}

func do413(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}
