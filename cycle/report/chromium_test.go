package report_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/cycle/report"
)

// chromium runs headless Chromium with args on a fresh profile.
func chromium(t *testing.T, bin string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
		"--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errb.String())
	}
	return out.String(), errb.String()
}

// TestReportInChromium renders the page in headless Chromium (Debian's
// chromium, scripts/setup-host.sh): no console message, the plots and
// tables in the DOM, and a PNG screenshot (into MASS_SCREENSHOTS too,
// when set, for make demo).
func TestReportInChromium(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("CHROMIUM NOT INSTALLED (scripts/setup-host.sh installs it): report browser test SKIPPED")
	}
	r, _ := build(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var buf bytes.Buffer
	if err := report.Render(&buf, r, report.RenderOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	dom, logs := chromium(t, bin, "--dump-dom", "file://"+page)
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "CONSOLE") || strings.Contains(l, "Content Security Policy") {
			t.Errorf("chromium console: %s", l)
		}
	}
	checkDOM(t, dom, len(r.Runs))
	shot := filepath.Join(dir, "report.png")
	chromium(t, bin, "--window-size=1200,2400", "--screenshot="+shot, "file://"+page)
	png, err := os.ReadFile(shot)
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || len(png) < 10_000 {
		t.Fatalf("screenshot %s: %v, %d bytes", shot, err, len(png))
	}
	if out := os.Getenv("MASS_SCREENSHOTS"); out != "" {
		for name, b := range map[string][]byte{"report.png": png, "report.html": buf.Bytes()} {
			if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
				t.Error(err)
			}
		}
	}
	t.Logf("screenshot %s (%d bytes)", shot, len(png))
}

// checkDOM looks for every plot and table in the DOM Chromium built.
func checkDOM(t *testing.T, dom string, runs int) {
	t.Helper()
	for _, want := range []string{`data-plot="win-rates"`, `data-plot="bt-scores"`, `data-plot="loss"`, `data-plot="tokens"`, `data-plot="supervised"`,
		`id="win-table"`, `id="agreement-table"`, `id="stats-table"`, `id="audit-table"`, `id="token-table"`, `id="blind-table"`, `id="episode-table"`,
		"<polyline", "<circle", "<rect"} {
		if !strings.Contains(dom, want) {
			t.Errorf("DOM has no %s", want)
		}
	}
	if got := strings.Count(dom, `<a href="file://`); got != runs {
		t.Errorf("DOM has %d episode links, want %d", got, runs)
	}
	if strings.Contains(dom, "<script") {
		t.Error("DOM holds a script")
	}
}
