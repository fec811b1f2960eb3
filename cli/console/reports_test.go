package console

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
)

// TestReportPage: without a renderer the reports page says how to get a
// report; with one, /report passes the query through, links episodes to
// the console's own pages and keeps the console's CSP; a renderer's error
// is a page with its status.
func TestReportPage(t *testing.T) {
	c, err := New(client.New("/nonexistent/massd.sock"), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(c)
	defer srv.Close()
	get := func(p string) (int, string, string) {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header.Get("Content-Security-Policy")
	}
	if code, body, _ := get("/report"); code != 200 || !strings.Contains(body, "no evaluation report built in") {
		t.Errorf("/report without a renderer: %d\n%s", code, body)
	}
	c.SetReport(func(ctx context.Context, w io.Writer, eval string, gens []string, link func(string) string) error {
		if eval == "bad" {
			return fmt.Errorf("evaluation bad: %w", api.ErrNotFound)
		}
		fmt.Fprintf(w, "<html>eval=%s gens=%s link=%s</html>", eval, strings.Join(gens, ","), link("ep-1"))
		return nil
	})
	code, body, csp := get("/report?eval=ev&gen=1&gen=gen-2")
	if code != 200 || body != "<html>eval=ev gens=1,gen-2 link=/episodes/ep-1</html>" || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("/report: %d %q csp %q", code, body, csp)
	}
	if code, body, _ := get("/reports"); code != 200 || !strings.Contains(body, `href="/report"`) {
		t.Errorf("/reports: %d\n%s", code, body)
	}
	if code, body, _ := get("/report?eval=bad"); code != http.StatusNotFound || !strings.Contains(body, "evaluation bad") {
		t.Errorf("/report?eval=bad: %d\n%s", code, body)
	}
}
