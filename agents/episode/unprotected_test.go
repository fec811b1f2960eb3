package episode

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/eligibility"
	"github.com/mass-dev/mass/taskspec"
)

// TestUnprotectedTaskEligible is the defect a first cycle on a new task
// hit: a task that protects no path (only a hidden grader) never had its
// integrity marked checked, so every passing episode was ineligible ("the
// record has no guard check") and collection could never succeed.
func TestUnprotectedTaskEligible(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "hidden"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hidden", "grade.sh"), []byte(`grep -q 42 /workspace/answer.txt && echo '{"passed": true}' || echo '{"passed": false}'`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	spec := &taskspec.Spec{ID: "unprotected", Prompt: "Write 42 to answer.txt.", Dir: dir,
		HiddenPaths:     []taskspec.Input{{Path: "hidden", Dest: "eval"}},
		RequiredOutputs: []string{"answer.txt"},
		Grader:          &taskspec.Grader{Command: "sh /workspace/eval/grade.sh", Timeout: time.Minute},
		Limits:          taskspec.Limits{EpisodeWallTime: 5 * time.Minute, AgentTurns: 30}}
	if errs := taskspec.Validate(spec); len(errs) > 0 {
		t.Fatal(errs)
	}
	d, _ := fakeModel(t, steps(tool("write_file", map[string]string{"file_path": "answer.txt", "content": "42\n"})), nil)
	st, edir := runEpisode(t, d, spec, "")
	if !st.Success || st.Grade == nil || !st.Grade.Passed {
		t.Fatalf("right answer: success %v %q, grade %+v", st.Success, st.Reason, st.Grade)
	}
	e, err := eligibility.FromDir(edir)
	if err != nil {
		t.Fatal(err)
	}
	if why := eligibility.Check(e, eligibility.Dataset{}); why != "" {
		t.Errorf("a clean passing episode of a task without protected paths is not eligible: %s (%+v)", why, e)
	}
}
