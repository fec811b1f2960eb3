package search

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/cycle/workflow"
)

// A task with a query template: the judge reads the task as the
// reference's judge does (task_text_for_eval: the text before the
// design, escaped newlines turned into newlines, trimmed), not the spec's
// bare prompt, in every comparison the search asks for.
func TestSearchJudgeTaskIsTemplateText(t *testing.T) {
	raw, err := os.ReadFile("testdata/template/query7_ourTeam.txt")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := ParseQueryTemplate(string(raw))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := roleServer(t, nil)
	eps := &fakeEpisodes{dir: t.TempDir(), refFiles: map[string]string{"notes.txt": "draft"},
		verFiles: map[string]string{"report.md": "# report", "results/metrics.json": `{"mae": 1.5}`}}
	cfg := loopConfig(t, eps, m, 1)
	cfg.Task.Prompt = "A bare prompt unlike the template."
	v0, err := workflow.ParseDesign(tmpl.Design)
	if err != nil {
		t.Fatal(err)
	}
	v0.Text = tmpl.Design
	cfg.V0, cfg.Template, cfg.ReferenceID = v0, &tmpl, "7"
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	dumps, err := filepath.Glob(filepath.Join(cfg.Dir, ComparisonsDir, "*", "full_prompt.txt"))
	if err != nil || len(dumps) == 0 {
		t.Fatalf("no judge prompts recorded: %v", err)
	}
	want := "## Task\n" + tmpl.TaskText() + "\n"
	if !strings.Contains(tmpl.TaskText(), "\n\nDeliverables:\n1)") {
		t.Fatalf("fixture: task text kept its escaped newlines: %q", tmpl.TaskText())
	}
	for _, d := range dumps {
		b, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s: judge task is not the template's task text", d)
		}
		if strings.Contains(string(b), cfg.Task.Prompt) {
			t.Errorf("%s: judge got the bare prompt", d)
		}
	}
}
