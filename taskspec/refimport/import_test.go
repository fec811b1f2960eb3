package refimport

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/agents/prompts"
	"github.com/mass-dev/mass/cycle/workflow"
	"github.com/mass-dev/mass/taskspec"
)

const fixture = "testdata/reference/tasks"

func TestImportFixture(t *testing.T) {
	out := filepath.Join(t.TempDir(), "specs")
	// The checkout above tasks/ is accepted too.
	rep, err := Import(filepath.Dir(fixture), out, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ split, domain string }{
		"query12": {"train", "quant"}, "query77": {"test", "quant"},
		"query240": {"excluded", "pharmacy"}, "query318": {"train", "robotics"},
	}
	if len(rep.Tasks) != len(want) {
		t.Fatalf("imported %d tasks, want %d", len(rep.Tasks), len(want))
	}
	directive, err := os.ReadFile(filepath.Join(fixture, "teacher_directive.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range rep.Tasks {
		w, ok := want[tr.ID]
		if !ok {
			t.Fatalf("unexpected task %s", tr.ID)
		}
		s, err := taskspec.Load(tr.Spec)
		if err != nil {
			t.Fatalf("%s: %v", tr.ID, err)
		}
		if s.Split != w.split || s.Domain != w.domain || s.ReferenceID != strings.TrimPrefix(tr.ID, "query") {
			t.Errorf("%s: split %q domain %q reference_id %q; want %q %q", tr.ID, s.Split, s.Domain, s.ReferenceID, w.split, w.domain)
		}
		bare, err := os.ReadFile(filepath.Join(fixture, "bare", tr.ID+".txt"))
		if err != nil {
			t.Fatal(err)
		}
		if s.Prompt != string(bare) {
			t.Errorf("%s: prompt is not the bare query byte for byte:\n%q\n%q", tr.ID, s.Prompt, bare)
		}
		if p := readFile(t, s.Dir, PromptFile); p != string(bare) {
			t.Errorf("%s: prompt.txt differs from the bare query", tr.ID)
		}
		initial := readFile(t, fixture, "initial/"+tr.ID+"_ourTeam.txt")
		wf, err := workflow.Parse(readFile(t, s.Dir, s.Workflow))
		if err != nil || len(wf.Agents) != 2 || wf.Agents[0].AgentID != "agent_orchestrator" {
			t.Errorf("%s: workflow %v, %+v", tr.ID, err, wf)
		}
		before, after, _ := strings.Cut(initial, workflow.Header)
		if !strings.HasPrefix(string(bare), strings.TrimSpace(before)) || !strings.HasSuffix(after, tr.AfterDesign) || !strings.Contains(tr.AfterDesign, LogMarker) {
			t.Errorf("%s: the design split is off: after_design %q", tr.ID, tr.AfterDesign)
		}
		// These initial files lack the reference's end marker: the
		// reference could not split them, so no query template is set.
		if s.QueryTemplate != "" {
			t.Errorf("%s: query_template %q for an initial file without the end marker", tr.ID, s.QueryTemplate)
		}
		if d := readFile(t, s.Dir, s.Directive); d != string(directive) || prompts.CheckDirective(d) != nil {
			t.Errorf("%s: directive is not the teacher directive verbatim", tr.ID)
		}
		if !tr.JudgedOnly || !strings.Contains(strings.Join(tr.Notes, "\n"), "no grader") {
			t.Errorf("%s: report does not say judged only: %v", tr.ID, tr.Notes)
		}
	}
	if _, err := Import(fixture, out, DefaultLimits); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second import into the same folder: %v, want already exists", err)
	}
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestImportRefusesBrokenSets(t *testing.T) {
	cases := []struct {
		name, file, text, want string
	}{
		{"no design", "initial/query12_ourTeam.txt", "just a task\n", "has no design"},
		{"bad agents", "initial/query12_ourTeam.txt", workflow.Header + "\n[{\"agent_id\":\"a\"}]", "role"},
		{"design in bare", "bare/query77.txt", "task\n\n" + workflow.Header + "\n[]", "holds a design"},
		{"empty bare", "bare/query77.txt", " \n", "is empty"},
		{"bad splits", "splits.json", `{"test":[0]}`, "not a positive query number"},
		{"escaping pattern", "splits.json", `{"test":[1],"task_prompt_pattern":"../q{task_id}.txt"}`, "clean relative path"},
		{"test and train", "splits.json", `{"test":[1],"sft_train":[1]}`, "in test and in a training list"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := copyFixture(t)
			if err := os.WriteFile(filepath.Join(src, filepath.FromSlash(c.file)), []byte(c.text), 0o644); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "out")
			_, err := Import(src, out, DefaultLimits)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a refused import wrote %s", out)
			}
		})
	}
}

func TestImportRefusesBadLimits(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	lim := DefaultLimits
	lim.EpisodeWallTime = "soon"
	if _, err := Import(fixture, out, lim); err == nil || !strings.Contains(err.Error(), "limits.episode_wall_time") {
		t.Errorf("bad episode wall time: %v", err)
	}
	lim = DefaultLimits
	lim.AgentTurns = 0
	if _, err := Import(fixture, out, lim); err == nil || !strings.Contains(err.Error(), "limits.agent_turns") {
		t.Errorf("zero turns: %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused import wrote %s", out)
	}
}

func copyFixture(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(fixture, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(fixture, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// An initial file with the reference's end marker becomes the task's
// query template, byte for byte.
func TestImportQueryTemplate(t *testing.T) {
	src := filepath.Join(t.TempDir(), "tasks")
	if err := os.CopyFS(src, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(src, "initial", "query12_ourTeam.txt")
	initial := strings.Replace(readFile(t, src, "initial/query12_ourTeam.txt"), "Use uv for every Python step", EndMarker+"—run code with uv run", 1)
	if err := os.WriteFile(p, []byte(initial), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Import(src, filepath.Join(t.TempDir(), "out"), DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	for _, tr := range rep.Tasks {
		s, err := taskspec.Load(tr.Spec)
		if err != nil {
			t.Fatal(err)
		}
		if tr.ID == "query12" && (s.QueryTemplate != QueryFile || readFile(t, s.Dir, s.QueryTemplate) != initial) {
			t.Errorf("query12: query_template %q is not the initial file byte for byte", s.QueryTemplate)
		}
		if tr.ID != "query12" && s.QueryTemplate != "" {
			t.Errorf("%s: query_template set", tr.ID)
		}
	}
}
