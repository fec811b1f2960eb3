package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/agents/prompts"
	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/cycle/workflow"
	"github.com/mass-dev/mass/taskspec"
)

// A collection episode of a task with a query template gets the
// reference's teacher prompt: the design's query with trailing white
// space removed, a blank line, the directive verbatim (the task's, else
// mass's); the template's own design gets the template file itself.
func TestTemplateTeacher(t *testing.T) {
	dir := t.TempDir()
	after := search.EndMarker + "—run code with uv run.\nIn logs.txt, Document all agents. \n"
	tmpl := "Do the task.\\n\\nDeliverables: report.md\n\n" + workflow.Header + " \n[]\n\n" + after
	if err := os.WriteFile(filepath.Join(dir, "query.txt"), []byte(tmpl), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := &taskspec.Spec{ID: "q", Dir: dir, QueryTemplate: "query.txt"}
	design := workflow.Header + "\n" + `[{"agent_id":"a","role":"r","instruction":"i"}]` + "\n"
	got, err := templateTeacher(spec, design, "## Directive\n1. Run the team.\n")
	want := "Do the task.\\n\\nDeliverables: report.md\n\n" + strings.TrimSpace(design) + "\n\n" + strings.TrimRight(after, " \n") + "\n\n## Directive\n1. Run the team.\n"
	if err != nil || got != want {
		t.Fatalf("teacher:\n got %q\nwant %q (%v)", got, want, err)
	}
	own, err := templateTeacher(spec, workflow.Header+" \n[]\n", "")
	if err != nil || own != strings.TrimRight(tmpl, " \n")+"\n\n"+prompts.Directive() {
		t.Fatalf("own design: %q %v", own, err)
	}
	if _, err := templateTeacher(&taskspec.Spec{ID: "q", Dir: dir, QueryTemplate: "missing.txt"}, design, ""); err == nil {
		t.Fatal("a missing template was accepted")
	}
}
