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

// shortLimits makes every body timeout 300ms for the test.
func shortLimits(t *testing.T) {
	t.Helper()
	old := limits
	limits = func(r *http.Request) (int64, time.Duration) { n, _ := old(r); return n, 300 * time.Millisecond }
	t.Cleanup(func() { limits = old })
}

// A response that lasts longer than the body timeout (an event stream, a
// long download) is not cut: the read deadline bounds the body only.
// Before the fix net/http cancelled the request when the connection's read
// deadline passed, so massctl job watch and massctl search lost their
// stream after a minute.
func TestStreamOutlivesBodyTimeout(t *testing.T) {
	shortLimits(t)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			io.ReadAll(r.Body)
		}
		for i := range 15 {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			fmt.Fprintf(w, "line %d\n", i)
			w.(http.Flusher).Flush()
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewHTTPServer(h, nil)
	go srv.Serve(ln)
	defer srv.Close()
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		req, _ := http.NewRequest(method, "http://"+ln.Addr().String()+"/v1/jobs/j/events?follow=1", strings.NewReader("{}"))
		if method == http.MethodGet {
			req.Body, req.ContentLength = nil, 0
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for sc := bufio.NewScanner(resp.Body); sc.Scan(); n++ {
		}
		resp.Body.Close()
		if n != 15 {
			t.Errorf("%s: %d of 15 lines arrived; the stream was cut at the body timeout", method, n)
		}
	}
	// The body itself is still bounded: a client that declares a body and
	// never sends it is cut off.
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	io.ReadAll(c)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("a stalled body held the connection %s", d)
	}
}
