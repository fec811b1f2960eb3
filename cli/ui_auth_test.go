package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
)

// lockedBuf is a buffer one goroutine writes while another reads.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// hostileEpisode runs the hostile kind to its end and returns massd's
// socket and the episode id.
func hostileEpisode(t *testing.T) (string, string) {
	t.Helper()
	sock := startDaemon(t, hostileKind()).Socket
	cl := client.New(sock)
	ctx := context.Background()
	j, err := cl.SubmitJob(ctx, api.JobRequest{Kind: "hostile"})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); !api.Terminal(j.State); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("job never finished: %+v", j)
		}
		if j, err = cl.Job(ctx, j.ID); err != nil {
			t.Fatal(err)
		}
	}
	return sock, "e-hostile-" + j.ID
}

var consoleLine = regexp.MustCompile(`console at (http://[^/ ]+)/(\?token=([^ ]+))?`)

// startUI runs `massctl ui --listen 127.0.0.1:0` until the test ends and
// returns the base URL and the token it printed ("" if none).
func startUI(t *testing.T, sock string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &lockedBuf{}
	done := make(chan error, 1)
	go func() {
		app := App("test")
		app.Writer, app.ErrWriter = out, out
		done <- app.RunContext(ctx, []string{"massctl", "--socket", sock, "ui", "--listen", "127.0.0.1:0"})
	}()
	t.Cleanup(func() { cancel(); <-done })
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := consoleLine.FindStringSubmatch(out.String()); m != nil {
			return m[1], m[3]
		}
		select {
		case err := <-done:
			t.Fatalf("massctl ui ended: %v\n%s", err, out.String())
		default:
		}
	}
	t.Fatalf("massctl ui printed no URL:\n%s", out.String())
	return "", ""
}

// TestConsoleNeedsTokenAndOwnHost is the console read: `massctl ui`
// answered any local user without a token and any Host header (DNS
// rebinding), so a transcript was one GET away.
func TestConsoleNeedsTokenAndOwnHost(t *testing.T) {
	sock, ep := hostileEpisode(t)
	base, token := startUI(t, sock)
	page := base + "/episodes/" + ep + "/transcript"
	get := func(host, origin string, cookie *http.Cookie) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, page, nil)
		if host != "" {
			req.Host = host
		}
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if cookie != nil {
			req.AddCookie(cookie)
		}
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	u, _ := url.Parse(base)
	good := &http.Cookie{Name: "mass_console", Value: token}
	for _, c := range []struct {
		what         string
		host, origin string
		cookie       *http.Cookie
		want         int
	}{
		{"no token", "", "", nil, http.StatusUnauthorized},
		{"wrong token", "", "", &http.Cookie{Name: "mass_console", Value: strings.Repeat("x", 43)}, http.StatusUnauthorized},
		{"a rebound name", "rebind.attacker.example:" + u.Port(), "", good, http.StatusMisdirectedRequest},
		{"another port", "127.0.0.1:1", "", good, http.StatusMisdirectedRequest},
		{"a foreign origin", "", "http://attacker.example", good, http.StatusForbidden},
	} {
		resp, body := get(c.host, c.origin, c.cookie)
		if resp.StatusCode != c.want || strings.Contains(body, "call #1") {
			t.Errorf("%s: status %d, want %d:\n%.300s", c.what, resp.StatusCode, c.want, body)
		}
		if !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Errorf("%s: no CSP", c.what)
		}
	}
	if token == "" {
		t.Fatal("massctl ui printed no token")
	}
	// The printed URL: the token becomes an HttpOnly SameSite=Strict
	// cookie and the page is served without the token in its URL.
	jar, _ := cookiejar.New(nil)
	var hops []*http.Response
	cl := &http.Client{Jar: jar, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		hops = append(hops, req.Response)
		return nil
	}}
	resp, err := cl.Get(page + "?token=" + url.QueryEscape(token))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "call #1") || resp.Request.URL.RawQuery != "" {
		t.Fatalf("first visit: %d at %s:\n%.300s", resp.StatusCode, resp.Request.URL, body)
	}
	if len(hops) != 1 || !strings.Contains(hops[0].Header.Get("Set-Cookie"), "HttpOnly") || !strings.Contains(hops[0].Header.Get("Set-Cookie"), "SameSite=Strict") {
		t.Errorf("first visit set no HttpOnly SameSite=Strict cookie: %v", hops)
	}
	if resp, body := get("", "", good); resp.StatusCode != http.StatusOK || !strings.Contains(body, "call #1") {
		t.Errorf("with the cookie: %d", resp.StatusCode)
	}
	if resp, _ := get("localhost:"+u.Port(), "http://localhost:"+u.Port(), good); resp.StatusCode != http.StatusOK {
		t.Errorf("localhost with its own origin: %d", resp.StatusCode)
	}
}
