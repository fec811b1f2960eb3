package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mass-dev/mass/cli/console"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/client"
	"github.com/mass-dev/mass/jobkind"
)

const hostile = "<script>document.title='pwned'</script><img src=x onerror=alert(1)>\x1b[31mred\x1b[0m \xff\xfe bad utf-8 \u202e"

// hostileKind records a finished episode whose files and summary hold what
// a model could write: tags, an event handler, ANSI, invalid UTF-8 and a
// line larger than the console shows.
func hostileKind() jobkind.Kind {
	return jobkind.Kind{Name: "hostile", Run: func(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) error {
		id := "e-hostile-" + job.ID
		dir := job.Layout.Episode(id)
		if err := os.MkdirAll(filepath.Join(dir, "manifests"), 0o750); err != nil {
			return err
		}
		huge := strings.Repeat("A", console.MaxFileView+1000)
		msg := map[string]any{"role": "user", "content": hostile}
		call := map[string]any{"seq": 1, "agent": "orchestrator", "thread": "orchestrator", "role": "orchestrator",
			"request": map[string]any{"messages": []any{msg}},
			"response": map[string]any{"content": hostile + huge, "reasoning_content": hostile,
				"tool_calls": []any{map[string]any{"id": "c1", "function": map[string]any{"name": "<b>x</b>", "arguments": hostile}}}}}
		line, _ := json.Marshal(call)
		for name, body := range map[string]string{"ledger.jsonl": hostile + "\n", "api_requests.jsonl": string(line) + "\n",
			"manifests/orchestrator.json": `{"note":"` + hostile + `"}`} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o640); err != nil {
				return err
			}
		}
		if err := hostileWorkspace(dir); err != nil {
			return err
		}
		if err := hostileSearch(job.Layout, job.ID); err != nil {
			return err
		}
		if err := hostileGeneration(job.Layout); err != nil {
			return err
		}
		rep.Event("note", hostile, nil)
		rep.Episode(jobkind.EpisodeRecord{ID: id, JobID: job.ID, Status: "completed", Dir: dir,
			Summary: map[string]any{"exit": "completed", "reason": hostile}})
		return nil
	}}
}

func TestConsoleRendersInert(t *testing.T) {
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
	con, err := console.New(cl, nil)
	if err != nil {
		t.Fatal(err)
	}
	site := gatedConsole(t, con)
	ep := "e-hostile-" + j.ID
	pages := []string{"/", "/jobs/" + j.ID, "/episodes", "/episodes/" + ep,
		"/episodes/" + ep + "/files/ledger.jsonl", "/episodes/" + ep + "/files/manifests/orchestrator.json",
		"/episodes/" + ep + "/audit", "/episodes/" + ep + "/workspace", "/episodes/" + ep + "/workspace/notes/%3Cscript%3Ex.md",
		"/searches", "/searches/hostile-task/" + j.ID, "/searches/hostile-task/" + j.ID + "/v/1",
		"/generations", "/generations/1", "/reports",
		"/episodes/" + ep + "/transcript", "/episodes/" + ep + "/files/api_requests.jsonl"}
	for _, p := range pages {
		resp, err := site.Get(p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		body := string(b)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d\n%s", p, resp.StatusCode, body)
		}
		if strings.Contains(body, "<script") || strings.Contains(body, "<img") || strings.Contains(body, "<b>x") || strings.ContainsRune(body, 0x1b) || !utf8.ValidString(body) {
			t.Errorf("%s: hostile content not inert:\n%.2000s", p, body)
		}
		if !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Errorf("%s: no strict CSP", p)
		}
		if strings.HasSuffix(p, "/transcript") {
			for _, want := range []string{"call #1", "orchestrator", "&lt;script&gt;", "\u241b[31m", "→ &lt;b&gt;x&lt;/b&gt;(", "reasoning"} {
				if !strings.Contains(body, want) {
					t.Errorf("transcript lacks %q", want)
				}
			}
		}
		if (strings.Contains(p, "api_requests") || strings.Contains(p, "/workspace/")) && (!strings.Contains(body, "bytes only") || len(body) > console.MaxFileView+10000) {
			t.Errorf("%s: a huge file is not capped (%d bytes)", p, len(body))
		}
	}
	checkConsoleContent(t, site, ep, j.ID)
	if resp, err := site.cl.Post(site.base+"/", "text/plain", nil); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST to the console: %v %v, want 405", resp, err)
	}
	out, err := run(t, "--socket", sock, "episode", "transcript", ep, "--reasoning")
	if err != nil {
		t.Fatalf("episode transcript: %v\n%s", err, out)
	}
	for _, want := range []string{"== orchestrator (orchestrator): 1 calls", "[user] <script>", "<reasoning>", "-> <b>x</b>("} {
		if !strings.Contains(out, want) {
			t.Errorf("transcript lacks %q:\n%.1500s", want, out)
		}
	}
	if strings.ContainsRune(out, 0x1b) || !utf8.ValidString(out) || strings.Count(out, "\n") != 6 {
		t.Errorf("transcript not plain one-line-per-item text:\n%.1500s", out)
	}
	browserCheck(t, site, pages)
}

// browserCheck loads each page in headless Chromium: the DOM must hold no
// element the episode wrote and the console must log nothing.
func browserCheck(t *testing.T, site *consoleSite, pages []string) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("CHROMIUM NOT INSTALLED (scripts/setup-host.sh installs it): console browser test SKIPPED")
	}
	for _, p := range pages[:len(pages)-1] {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
			"--user-data-dir="+t.TempDir(), "--enable-logging=stderr", "--v=0", "--dump-dom", site.Entry(p))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		dom, err := cmd.Output()
		cancel()
		if err != nil {
			t.Fatalf("chromium %s: %v\n%s", p, err, stderr.String())
		}
		d := string(dom)
		if !strings.Contains(d, "</nav>") || strings.Contains(d, "<script") || strings.Contains(d, "<img") || strings.Contains(d, "<title>pwned") {
			t.Errorf("chromium %s: DOM not as rendered:\n%.2000s", p, d)
		}
		for _, l := range strings.Split(stderr.String(), "\n") {
			if strings.Contains(l, "CONSOLE") {
				t.Errorf("chromium %s: console message: %s", p, l)
			}
		}
	}
	if dir := os.Getenv("MASS_SCREENSHOTS"); dir != "" {
		screenshots(t, bin, dir, site, pages)
	}
}

// screenshots writes PNGs of the pages into dir (for make demo).
func screenshots(t *testing.T, bin, dir string, site *consoleSite, pages []string) {
	for i, p := range pages {
		out := filepath.Join(dir, fmt.Sprintf("console-%02d%s.png", i, slug(p)))
		cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
			"--user-data-dir="+t.TempDir(), "--window-size=1280,1500", "--screenshot="+out, site.Entry(p))
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("screenshot %s: %v\n%s", p, err, b)
		}
	}
}

// checkConsoleContent checks what the new page kinds must show: a link in
// the workspace is listed and never followed, the search's verdicts and
// champion change, the generation's ranking bars and loss curve.
func checkConsoleContent(t *testing.T, site *consoleSite, ep, job string) {
	t.Helper()
	get := func(p string) (int, string) {
		resp, err := site.Get(p)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("/episodes/" + ep + "/workspace/passwd")
	if code != http.StatusNotFound || strings.Contains(body, "root:x:0:0") || !strings.Contains(body, "never followed") {
		t.Errorf("a link in the workspace: %d\n%.600s", code, body)
	}
	for p, wants := range map[string][]string{
		"/episodes/" + ep + "/workspace": {"passwd", "symlink", "&lt;script&gt;x.md", "notes/%3Cscript%3Ex.md"},
		"/searches":                      {"hostile-task", "v1"},
		"/searches/hostile-task/" + job: {"became champion", "the champion beats the reference", "win", "champion arbitrations",
			"warning: neither the reference nor the champion v1 has the task", `href="/episodes/ep-ref"`, "reference (bare task)",
			`<span class="s-failed">missing</span>`, `<span class="s-succeeded">present</span>`, "dry run"},
		"/searches/hostile-task/" + job + "/v/1": {`class="add">&#43;and one more`, "optimizer's account", "why_it_should_improve", "free-text design: the orchestrator reads it as text"},
		"/generations/1":                         {"<polyline", "validation loss", "<rect", "train", "excluded t2", "stored supervised"},
		"/episodes/" + ep + "/audit":             {"handoff graph", "<svg", "chain NOT verified"},
	} {
		code, body := get(p)
		for _, w := range wants {
			if code != http.StatusOK || !strings.Contains(body, w) {
				t.Errorf("%s (%d) lacks %q:\n%.3000s", p, code, w, body)
				break
			}
		}
	}
}

// slug makes a page path a file-name suffix: "/episodes/e-1/audit" → "-episodes-e-1-audit".
func slug(p string) string {
	s := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, strings.ToLower(p))
	return strings.TrimRight(s[:min(len(s), 80)], "-")
}
