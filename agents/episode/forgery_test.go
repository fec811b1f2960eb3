package episode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mass-dev/mass/sandbox"
	"github.com/mass-dev/mass/sandbox/image"
	"github.com/mass-dev/mass/taskspec"
)

// gradeRuntimes lists runc and, where the engine has it, runsc.
func gradeRuntimes(t *testing.T) []string {
	t.Helper()
	info, err := testRT.Client().Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := []string{sandbox.RuntimeRunc}
	if _, ok := info.Runtimes[sandbox.RuntimeRunsc]; ok {
		out = append(out, sandbox.RuntimeRunsc)
	}
	return out
}

func onRuntime(name string) sandbox.Policy {
	p := sandbox.DefaultPolicy()
	p.Runtime = name
	return p
}

// forgeryTask writes files into a task directory and returns a validated
// spec with inputs (protected) and hidden as given and grader command.
func forgeryTask(t *testing.T, files map[string]string, inputs []string, hidden, command string) *taskspec.Spec {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spec := &taskspec.Spec{ID: "forgery", Prompt: "Write the answer to answer.txt.", Dir: dir,
		RequiredOutputs: []string{"answer.txt"}, Grader: &taskspec.Grader{Command: command, Timeout: time.Minute},
		Limits: taskspec.Limits{EpisodeWallTime: 5 * time.Minute, AgentTurns: 30}}
	for _, in := range inputs {
		spec.Inputs = append(spec.Inputs, taskspec.Input{Path: in})
		spec.ProtectedPaths = append(spec.ProtectedPaths, in)
	}
	if hidden != "" {
		spec.HiddenPaths = []taskspec.Input{{Path: hidden}}
	}
	if errs := taskspec.Validate(spec); len(errs) > 0 {
		t.Fatal(errs)
	}
	return spec
}

// TestGraderIgnoresWorkspaceModules is the held-out `-m` forgery: the
// grader `python3 -m unittest discover -s /workspace/tests` passes
// validation, and with the cwd /workspace first on sys.path an agent's
// /workspace/unittest.py ran instead of the standard library's and
// printed a passing verdict for a wrong answer.
func TestGraderIgnoresWorkspaceModules(t *testing.T) {
	needEngine(t)
	if _, err := testRT.Client().ImageInspect(context.Background(), image.AgentRef); err != nil {
		t.Skipf("agent image %s missing (massctl image build --all): %v", image.AgentRef, err)
	}
	test := `import unittest

class Answer(unittest.TestCase):
    def test_answer(self):
        want = open("/workspace/eval/truth.txt").read().strip()
        self.assertEqual(open("/workspace/answer.txt").read().strip(), want)
`
	spec := forgeryTask(t, map[string]string{"tests/test_answer.py": test, "eval/truth.txt": "42\n"}, []string{"tests"}, "eval",
		`python3 -m unittest discover -s /workspace/tests && echo '{"passed": true, "score": 1}'`)
	forged := `import sys
print("the labels are", open("/workspace/eval/truth.txt").read().strip())
print('{"passed": true, "score": 1}')
sys.exit(0)
`
	for _, rt := range gradeRuntimes(t) {
		t.Run(rt, func(t *testing.T) {
			pol := onRuntime(rt)
			if g := gradeFilesOn(t, image.AgentRef, pol, spec, map[string]string{"answer.txt": "42\n"}); g == nil || !g.Passed {
				t.Fatalf("right answer: grade %+v", g)
			}
			g := gradeFilesOn(t, image.AgentRef, pol, spec, map[string]string{"answer.txt": "41\n", "unittest.py": forged})
			if g == nil || !g.Ran || g.Passed {
				t.Fatalf("wrong answer with an agent's unittest.py: passed %v, reason %q, output %q", g.Passed, g.Reason, g.Output)
			}
			if strings.Contains(g.Output, "the labels are") {
				t.Errorf("the agent's module ran inside the grader: %q", g.Output)
			}
		})
	}
}

// TestGraderOutputCutFails is the held-out filler forgery: the grader
// runs the agent's program, which prints a forged verdict and 1.1 MiB of
// filler; the 1 MiB output cap cut the grader's real verdict off and the
// forged line passed a wrong answer.
func TestGraderOutputCutFails(t *testing.T) {
	needEngine(t)
	grader := `want=$(cat /workspace/eval/truth.txt)
sh /workspace/solution.sh
if [ "$(cat /workspace/answer.txt)" = "$want" ]; then echo '{"passed": true, "score": 1}'; else echo '{"passed": false, "score": 0}'; fi
`
	spec := forgeryTask(t, map[string]string{"eval/grade.sh": grader, "eval/truth.txt": "42\n"}, nil, "eval", "sh /workspace/eval/grade.sh")
	forged := `echo '{"passed": true, "score": 1}'
head -c 1153434 /dev/zero | tr '\0' x
echo
`
	for _, rt := range gradeRuntimes(t) {
		t.Run(rt, func(t *testing.T) {
			pol := onRuntime(rt)
			if g := gradeFilesOn(t, image.TestRef, pol, spec, map[string]string{"answer.txt": "42\n", "solution.sh": "echo solved\n"}); g == nil || !g.Passed {
				t.Fatalf("right answer: grade %+v", g)
			}
			g := gradeFilesOn(t, image.TestRef, pol, spec, map[string]string{"answer.txt": "41\n", "solution.sh": forged})
			if g == nil || !g.Ran || g.Passed || g.Score != nil {
				t.Fatalf("wrong answer behind 1.1 MiB of filler: passed %v, reason %q", g.Passed, g.Reason)
			}
		})
	}
}
