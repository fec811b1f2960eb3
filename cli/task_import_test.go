package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/taskspec"
	"github.com/mass-dev/mass/taskspec/refimport"
)

func TestTaskImportReference(t *testing.T) {
	out := filepath.Join(t.TempDir(), "specs")
	app := App("test")
	var b, errb bytes.Buffer
	app.Writer, app.ErrWriter = &b, &errb
	src := "../taskspec/refimport/testdata/reference/tasks"
	if err := app.Run([]string{"massctl", "task", "import-reference", src, "--out", out, "--agent-turns", "50", "--image", "research", "--json"}); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	var rep refimport.Report
	if err := json.Unmarshal(b.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Tasks) != 4 || len(rep.NoEquivalent) == 0 {
		t.Fatalf("report: %+v", rep)
	}
	for _, tr := range rep.Tasks {
		s, err := taskspec.Load(tr.Spec)
		if err != nil {
			t.Fatal(err)
		}
		if s.Limits.AgentTurns != 50 || !tr.JudgedOnly || s.Image != "research" {
			t.Errorf("%s: agent_turns %d judged_only %v image %q", tr.ID, s.Limits.AgentTurns, tr.JudgedOnly, s.Image)
		}
	}
	b.Reset()
	if err := app.Run([]string{"massctl", "task", "validate", filepath.Join(out, "query240", "task.yaml")}); err != nil || !strings.Contains(b.String(), "ok ") {
		t.Errorf("task validate of an imported spec: %v %s", err, b.String())
	}
	bad := filepath.Join(t.TempDir(), "bad")
	err := app.Run([]string{"massctl", "task", "import-reference", src, "--out", bad, "--image", "agent"})
	if err == nil || !strings.Contains(err.Error(), "image") {
		t.Errorf("--image agent: %v, want an image error", err)
	}
}
