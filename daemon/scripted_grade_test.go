package daemon_test

import (
	"encoding/json"
	"testing"

	"github.com/mass-dev/mass/cli"
)

// TestScriptedRecipePassesGrader runs the scripted model on the real
// sales-analysis example (its hidden grader included) through massd and
// the real runner on the agent image: the recipe's deliverables pass the
// grader (they did not on the busybox test image, which has no python3).
func TestScriptedRecipePassesGrader(t *testing.T) {
	r := newGradedRig(t)
	out, err := r.massctl("run", "--task", "../examples/tasks/sales-analysis/task.yaml", "--model", "scripted", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var s cli.RunSummary
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if s.Grade == nil || !s.Grade.Ran || !s.Grade.Passed || !s.Success {
		t.Fatalf("scripted sales-analysis not graded a pass: %s", out)
	}
}
