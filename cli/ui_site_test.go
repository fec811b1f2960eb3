package cli

import (
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/mass-dev/mass/cli/console"
)

// consoleSite is the console behind its gate, as massctl ui serves it.
type consoleSite struct {
	base, token string
	cl          *http.Client // carries the cookie of the first visit
}

// gatedConsole serves con behind a gate with a fresh token and makes the
// first visit.
func gatedConsole(t *testing.T, con http.Handler) *consoleSite {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	token, err := console.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	gate, err := console.NewGate(con, token, srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv.Config.Handler = gate
	srv.Start()
	t.Cleanup(srv.Close)
	jar, _ := cookiejar.New(nil)
	site := &consoleSite{base: srv.URL, token: token, cl: &http.Client{Jar: jar}}
	resp, err := site.cl.Get(site.Entry("/"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("first visit: %d", resp.StatusCode)
	}
	return site
}

// Get fetches page p with the cookie.
func (s *consoleSite) Get(p string) (*http.Response, error) { return s.cl.Get(s.base + p) }

// Entry is page p's URL with the token, for a browser without the cookie.
func (s *consoleSite) Entry(p string) string {
	return s.base + p + "?token=" + url.QueryEscape(s.token)
}
