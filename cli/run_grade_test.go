package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestRunSummaryGrade: the job result's grade and guards reach `massctl run
// --json` and the text summary, and a dry run never reads as a bare success.
func TestRunSummaryGrade(t *testing.T) {
	res := `{"episode_id":"ep-1","exit":"completed","success":false,"reason":"grader did not pass: x","dry_run":false,
		"outputs_present":true,"grade":{"ran":true,"passed":false,"score":0.25,"output":"o","duration":1.5,"exit_code":0},
		"guards":{"protected_path_violations":0,"protected_path_attempts":3,"shadow_copies":1,"hidden_path_attempts":0,"integrity_checked":true}}`
	var s RunSummary
	applyResult(&s, json.RawMessage(res))
	if s.Grade == nil || s.Grade.Passed || *s.Grade.Score != 0.25 || s.Guards == nil || s.Guards.ShadowCopies != 1 || !s.OutputsPresent {
		t.Fatalf("summary %+v", s)
	}
	b, _ := json.Marshal(s)
	if !strings.Contains(string(b), `"grade":{"ran":true,"passed":false,"score":0.25`) {
		t.Errorf("--json lacks the grade: %s", b)
	}
	var out bytes.Buffer
	printSummary(&out, s)
	for _, want := range []string{"completed, not a success", "grade", "failed, score 0.25", "3 attempts, 1 shadow copies"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("text summary lacks %q:\n%s", want, out.String())
		}
	}
	for _, c := range []struct {
		s    RunSummary
		want string
	}{
		{RunSummary{Exit: "completed", Success: true, DryRun: true}, "completed, success (dry run: scripted policy)"},
		{RunSummary{Exit: "completed", DryRun: true}, "completed, not a success (dry run: scripted policy)"},
		{RunSummary{Exit: "failed", Failure: "timeout"}, "failed, failure: timeout"},
	} {
		if got := outcomeLine(c.s); got != c.want {
			t.Errorf("outcome %q, want %q", got, c.want)
		}
	}
}
