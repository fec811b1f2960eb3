package daemon_test

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/mass-dev/mass/cycle/search"
)

// TestSearchJudgingRules runs the scripted two-iteration search under each
// judging rule and checks the comparisons each asks for (the scripted
// evaluator prefers the design with more checks, so every version beats
// the baseline and its predecessor): paper and reference judge v(k)
// against the baseline and arbitrate against the champion (reference only
// because the champion holds a baseline win), adjacent judges v(k-1) vs
// v(k) alone and needs no arbitration. The judgments per iteration are
// logged as the measurement of each rule's judge calls.
func TestSearchJudgingRules(t *testing.T) {
	r := newSearchRig(t, nil)
	want := map[string][]int{search.RulePaper: {1, 2, 2}, search.RuleReference: {1, 2, 2}, search.RuleAdjacent: {0, 1, 1}}
	for _, rule := range []string{search.RulePaper, search.RuleReference, search.RuleAdjacent} {
		out, err := r.massctl("search", "--task", "../examples/tasks/sales-analysis/task.yaml", "--iterations", "2", "--seed", "0",
			"--model", "scripted", "--judging", rule, "--judge-retries", "0", "--json")
		if err != nil {
			t.Fatal(err)
		}
		var sum search.Summary
		if err := json.Unmarshal(out, &sum); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		got := sum.Calls.JudgmentsPerIteration
		retained := -1
		if sum.RetainedVersion != nil {
			retained = *sum.RetainedVersion
		}
		t.Logf("%s: judgments per iteration %v, retained v%d, beats reference %v", rule, got, retained, sum.BeatsReference)
		if len(got) != len(want[rule]) || got[0] != want[rule][0] || got[1] != want[rule][1] || got[2] != want[rule][2] {
			t.Errorf("%s: judgments per iteration %v, want %v", rule, got, want[rule])
		}
		if sum.Judging != rule || sum.RetainedVersion == nil || *sum.RetainedVersion != 2 || !sum.BeatsReference {
			t.Errorf("%s: summary %+v", rule, sum)
		}
		rep, err := search.Replay(sum.Dir, "")
		if err != nil || rep.RetainedVersion == nil || *rep.RetainedVersion != 2 || rep.NeedsArbitration {
			t.Errorf("%s: replay %+v %v", rule, rep, err)
		}
		hist := readJSONL[search.Comparison](t, filepath.Join(sum.Dir, search.ComparisonHistoryFile))
		if rule == search.RuleAdjacent && (len(hist) != 2 || hist[0].Key != "v0_vs_v1" || hist[1].Key != "v1_vs_v2") {
			t.Errorf("adjacent history %+v", hist)
		}
	}
}
