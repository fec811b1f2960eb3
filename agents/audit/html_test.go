package audit

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestHTMLGolden(t *testing.T) {
	r := audit(t, teamEpisode(t), "ep-team")
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "team.html")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./agents/audit -run TestHTMLGolden -update)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("HTML differs from %s; rerun with -update if the change is intended", golden)
	}
}

// TestHTMLSelfContained checks the page loads nothing from elsewhere and
// escapes what agents control.
func TestHTMLSelfContained(t *testing.T) {
	b := newEpisode(t, "ep-x")
	evil := `<script>alert(1)</script>`
	b.start("worker-1", RoleWorker, "orchestrator")
	b.write("worker-1", "write_file", "/workspace/"+evil+".py", "", "1")
	b.finish("worker-1", "final", nil, nil)
	b.start("worker-2", RoleWorker, "orchestrator")
	b.read("worker-2", "/workspace/"+evil+".py", true)
	r := audit(t, b.done(), "ep-x")
	if r.CodeHandoff != 1 {
		t.Fatalf("code_handoff = %d, want 1", r.CodeHandoff)
	}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, bad := range []string{"<script", "src=", "href=\"http", "@import", "url(http"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	if !strings.Contains(page, "<svg") || !strings.Contains(page, "&lt;script&gt;") {
		t.Error("page lacks the graph or the escaped file name")
	}
}
