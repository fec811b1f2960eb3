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
	if err := app.Run([]string{"massctl", "task", "import-reference", src, "--out", out, "--agent-turns", "50", "--json"}); err != nil {
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
		if s.Limits.AgentTurns != 50 || !tr.JudgedOnly {
			t.Errorf("%s: agent_turns %d judged_only %v", tr.ID, s.Limits.AgentTurns, tr.JudgedOnly)
		}
	}
	b.Reset()
	if err := app.Run([]string{"massctl", "task", "validate", filepath.Join(out, "query240", "task.yaml")}); err != nil || !strings.Contains(b.String(), "ok ") {
		t.Errorf("task validate of an imported spec: %v %s", err, b.String())
	}
}
