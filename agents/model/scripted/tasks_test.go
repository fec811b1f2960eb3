package scripted

import (
	"encoding/json"
	"path"
	"strings"
	"testing"

	"github.com/mass-dev/mass/agents/model/fakeopenai"
)

type staticTasks []Task

func (s staticTasks) ByPrompt(teacher string) (Task, bool) {
	for _, t := range s {
		if strings.Contains(teacher, t.Prompt) {
			return t, true
		}
	}
	return Task{}, false
}

func (s staticTasks) ByID(id string) (Task, bool) {
	for _, t := range s {
		if t.ID == id {
			return t, true
		}
	}
	return Task{}, false
}

func TestConcrete(t *testing.T) {
	for g, want := range map[string]string{
		"report.md": "report.md", "results/*.json": "results/dry-run.json", "out/[ab].txt": "out/a.txt",
		"data/run?.csv": "data/runx.csv", "[^a].txt": "", "a/**/b.md": "a/dry-run/b.md",
	} {
		got := concrete(g)
		if got != want {
			t.Errorf("concrete(%q) = %q, want %q", g, got, want)
		}
		if ok, _ := path.Match(g, got); got != "" && !ok {
			t.Errorf("%q does not match %q", got, g)
		}
	}
}

// writesOf plays a bare episode's first worker on a task and returns the
// files it writes.
func writesOf(t *testing.T, tasks Tasks, prompt string) map[string]string {
	t.Helper()
	p := PolicyWith(tasks)
	var agent fakeopenai.Tool
	agent.Function.Name = "agent"
	orch := p(&fakeopenai.Request{Messages: []fakeopenai.Message{{Role: "user", Content: prompt}}, Tools: []fakeopenai.Tool{agent}})
	if len(orch.Calls) != 1 || orch.Calls[0].Name != "agent" {
		t.Fatalf("orchestrator: %+v", orch)
	}
	var args struct{ Prompt string }
	_ = json.Unmarshal([]byte(orch.Calls[0].Arguments), &args)
	w := p(&fakeopenai.Request{Messages: []fakeopenai.Message{{Role: "user", Content: args.Prompt}}})
	files := map[string]string{}
	for _, c := range w.Calls {
		var a struct {
			FilePath string `json:"file_path"`
			Content  string `json:"content"`
		}
		_ = json.Unmarshal([]byte(c.Arguments), &a)
		files[strings.TrimPrefix(a.FilePath, "/workspace/")] = a.Content
	}
	return files
}

func TestDryRunWritesRequiredOutputs(t *testing.T) {
	tasks := staticTasks{{ID: "new-task", Prompt: "Summarise the logs.", Required: []string{"report.md", "results/*.json"}}}
	files := writesOf(t, tasks, "Summarise the logs.")
	for _, name := range []string{"report.md", "results/dry-run.json"} {
		if !strings.Contains(files[name], Label) {
			t.Errorf("%s: %q, want a labelled dry-run file", name, files[name])
		}
	}
	if !json.Valid([]byte(files["results/dry-run.json"])) {
		t.Errorf("results/dry-run.json is not JSON: %q", files["results/dry-run.json"])
	}
	own := &Recipe{TaskID: "new-task", Files: map[string]string{"report.md": "the answer"}}
	tasks[0].Recipe = own
	if got := writesOf(t, tasks, "Summarise the logs.")["report.md"]; got != "the answer" {
		t.Errorf("own recipe: report.md %q", got)
	}
}

func TestParseRecipe(t *testing.T) {
	if _, err := ParseRecipe([]byte(`{"files": {"a.md": "x"}}`), "t"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`{}`, `{"files": {"../x": "y"}}`, `{"files": {"/etc/x": "y"}}`, `{"files": {"a//b": "y"}}`, `[`} {
		if _, err := ParseRecipe([]byte(bad), "t"); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func FuzzParseRecipe(f *testing.F) {
	f.Add([]byte(`{"files": {"answer.json": "{}"}, "verify": "ls"}`))
	f.Add([]byte(`{"files": {"../x": ""}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := ParseRecipe(b, "t")
		if err != nil {
			return
		}
		for name := range r.Files {
			if strings.HasPrefix(name, "/") || strings.HasPrefix(path.Clean(name), "..") {
				t.Fatalf("accepted %q", name)
			}
		}
	})
}

// TestDryRunTeamWritesRequiredOutputs: with a workflow the first design
// agent writes the stored task's required outputs.
func TestDryRunTeamWritesRequiredOutputs(t *testing.T) {
	tasks := staticTasks{{ID: "new-task", Prompt: "Summarise the logs.", Required: []string{"report.md", "results/*.json"}}}
	teacher := "Summarise the logs.\n\n" + workflowHeader + "\n" + `[{"agent_id": "analyst", "role": "analyst", "instruction": "analyse"}, {"agent_id": "writer", "role": "writer", "instruction": "write"}]`
	files := writesOf(t, tasks, teacher)
	for _, name := range []string{"report.md", "results/dry-run.json"} {
		if !strings.Contains(files[name], Label) {
			t.Errorf("%s: %q, want a labelled dry-run file (wrote %v)", name, files[name], files)
		}
	}
}
