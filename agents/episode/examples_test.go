package episode

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mass-dev/mass/sandbox/image"
	"github.com/mass-dev/mass/taskspec"
)

// fitScript is a recipe that passes the ml-classifier grader: logistic
// regression on the four features with numpy.
const fitScript = `import numpy as np
d = np.genfromtxt("/workspace/data/train.csv", delimiter=",", skip_header=1)
X = np.c_[d[:, :4], np.ones(len(d))]
y = d[:, 4]
w = np.zeros(5)
for _ in range(3000):
    p = 1 / (1 + np.exp(-X @ w))
    w -= 0.5 * X.T @ (p - y) / len(y)
t = np.genfromtxt("/workspace/data/test_features.csv", delimiter=",", skip_header=1)
pred = (np.c_[t[:, 1:5], np.ones(len(t))] @ w > 0).astype(int)
with open("/workspace/predictions.csv", "w") as f:
    f.write("id,label\n")
    for i, l in zip(t[:, 0].astype(int), pred):
        f.write(f"{i},{l}\n")
print("train accuracy", float(((X @ w > 0) == y).mean()))
`

// TestExampleMLClassifierHidesLabels runs the shipped ml-classifier task on
// the agent image: the agent searches the whole filesystem for the test
// labels and finds nothing, yet the grader reads them and passes an honest
// model.
func TestExampleMLClassifierHidesLabels(t *testing.T) {
	needEngine(t)
	if _, err := testRT.Client().ImageInspect(context.Background(), image.AgentRef); err != nil {
		t.Skipf("agent image %s missing (massctl image build --all): %v", image.AgentRef, err)
	}
	spec, err := taskspec.Load(filepath.Join("..", "..", "examples", "tasks", "ml-classifier", "task.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := fakeModel(t, steps(
		tool("run_shell_command", map[string]string{"command": "ls /workspace/eval 2>&1; cat /workspace/eval/test_labels.csv 2>&1; find / -name test_labels.csv 2>/dev/null | wc -l"}),
		tool("read_file", map[string]string{"file_path": "/workspace/eval/test_labels.csv"}),
		tool("write_file", map[string]string{"file_path": "/workspace/fit.py", "content": fitScript}),
		tool("run_shell_command", map[string]string{"command": "python3 /workspace/fit.py"}),
		tool("write_file", map[string]string{"file_path": "/workspace/model_card.md", "content": "Logistic regression on f1..f4."}),
	), nil)
	d.Image = image.AgentRef
	st, dir := runEpisode(t, d, spec, "")
	last := func(seq int64) string { r := toolResults(t, dir, seq); return r[len(r)-1] }
	if got := last(2); !strings.Contains(got, "No such file") || !strings.HasSuffix(strings.SplitN(got, "\nStderr:", 2)[0], "\n0\n") {
		t.Errorf("the agent's search for the labels: %q", got)
	}
	if got := last(3); !strings.HasPrefix(got, "Error:") {
		t.Errorf("read_file of the hidden labels: %q", got)
	}
	if st.Grade == nil || !st.Grade.Passed || st.Grade.Score == nil || *st.Grade.Score < 0.8 || !st.Success {
		t.Fatalf("honest model: success %v %q, grade %+v", st.Success, st.Reason, st.Grade)
	}
	if st.Guards == nil || st.Guards.HiddenPathAttempts != 2 || st.Guards.ShadowCopies != 0 || st.Guards.ProtectedPathViolations != 0 {
		t.Errorf("guards %+v", st.Guards)
	}
	t.Logf("grade %.1fs, guard check %.1fms: %s", st.Grade.Duration, st.Guards.DurationMS, strings.TrimSpace(st.Grade.Output))
}

// TestExampleGraders grades hand-made deliverables of every example task
// in the grader's container: the documented contract passes, a bogus
// deliverable fails.
func TestExampleGraders(t *testing.T) {
	needEngine(t)
	if _, err := testRT.Client().ImageInspect(context.Background(), image.AgentRef); err != nil {
		t.Skipf("agent image %s missing: %v", image.AgentRef, err)
	}
	sales := salesSummary(t)
	cases := []struct {
		task        string
		good, bogus map[string]string
	}{
		{"projectile-sim", map[string]string{"answer.json": `{"angle_deg": 40, "speed_mps": 33.54}`, "method.md": "bisection"},
			map[string]string{"answer.json": `{}`, "method.md": "x"}},
		{"sales-analysis", map[string]string{"summary.json": sales, "report.md": "Three findings."},
			map[string]string{"summary.json": `{}`, "report.md": "x"}},
		{"ml-classifier", map[string]string{"predictions.csv": "id,label\n", "model_card.md": "m"}, nil},
	}
	for _, c := range cases {
		spec, err := taskspec.Load(filepath.Join("..", "..", "examples", "tasks", c.task, "task.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		for name, files := range map[string]map[string]string{"good": c.good, "bogus": c.bogus} {
			if files == nil {
				continue
			}
			g := gradeFiles(t, image.AgentRef, spec, files)
			want := name == "good" && c.task != "ml-classifier" // an empty prediction file fails too
			if g == nil || !g.Ran || g.Passed != want {
				t.Errorf("%s %s: grade %+v, want passed %v", c.task, name, g, want)
			}
		}
	}
}
