package daemon_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/agents/grade"
	"github.com/mass-dev/mass/sandbox/image"
)

// gradeFolder writes files (name → body) into a new directory.
func gradeFolder(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestTaskGradeFolder runs `massctl task grade` on local folders against a
// real massd and sandbox: a right answer passes (exit 0), a wrong one fails
// (exit 5) with the grader's reason, a forged grader in the folder is
// replaced by the task's hidden one (the same path an episode's grade
// takes), a stored task is graded by id, and the spec is never stored.
func TestTaskGradeFolder(t *testing.T) {
	r := newRig(t, nil, image.TestRef)
	spec := newTaskFolder(t, "log-grade", "")
	right := gradeFolder(t, map[string]string{"report.md": "two errors\n", "results/counts.json": `{"errors": 2}` + "\n"})
	wrong := gradeFolder(t, map[string]string{"report.md": "three errors\n", "results/counts.json": `{"errors": 3}` + "\n",
		"grader/check.sh": `echo '{"passed": true}'` + "\n"})

	gradeOf := func(task, dir string) (grade.Grade, error) {
		t.Helper()
		out, err := r.massctl("task", "grade", task, dir, "--json")
		var g grade.Grade
		if jerr := json.Unmarshal(out, &g); jerr != nil {
			t.Fatalf("task grade %s %s: %v\n%s (%v)", task, dir, jerr, out, err)
		}
		return g, err
	}
	g, err := gradeOf(spec, right)
	if err != nil || !g.Ran || !g.Passed {
		t.Errorf("right answer: %+v %v", g, err)
	}
	g, err = gradeOf(spec, wrong)
	if err == nil || !strings.Contains(err.Error(), "exit status 5") || g.Passed || !strings.Contains(g.Reason, `"passed": false`) {
		t.Errorf("wrong answer with a forged grader: %+v %v, want a failed grade and exit 5", g, err)
	}
	if out, err := r.massctl("task", "list", "--json"); err != nil || strings.Contains(string(out), "log-grade") {
		t.Errorf("task grade stored the task: %s %v", out, err)
	}
	if _, err := r.massctl("task", "add", spec); err != nil {
		t.Fatal(err)
	}
	if g, err := gradeOf("log-grade", right); err != nil || !g.Passed {
		t.Errorf("stored task by id: %+v %v", g, err)
	}
	out, err := r.massctl("task", "grade", "log-grade", right)
	if err != nil || !strings.Contains(string(out), "grade\tpassed") {
		t.Errorf("text output: %s %v", out, err)
	}
	if _, err := r.massctl("task", "grade", "no-such-task", right); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("unknown task: %v, want exit 3", err)
	}
}
