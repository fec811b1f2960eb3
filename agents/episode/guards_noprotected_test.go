package episode

import (
	"testing"
	"time"

	"github.com/mass-dev/mass/agents/eligibility"
)

// Issue 32: a task with no protected files (an imported reference task:
// prompt only, no inputs) has its integrity checked all the same (there
// is nothing to change), so its episodes are eligible for training. Before
// the fix, guards.json said integrity unchecked and every such episode
// was "the record has no guard check".
func TestGuardsCheckedWithoutProtectedFiles(t *testing.T) {
	d, _ := fakeModel(t, script(calls(sh("echo hi > /workspace/out.txt"))), nil)
	spec := testTask(t, time.Minute)
	spec.Inputs, spec.ProtectedPaths = nil, nil
	st, dir := runEpisode(t, d, spec, "")
	if !st.Success {
		t.Fatalf("episode failed: %s: %s", st.Failure, st.Reason)
	}
	if st.Guards == nil || !st.Guards.IntegrityChecked {
		t.Fatalf("guards = %+v, want integrity checked", st.Guards)
	}
	e, err := eligibility.FromDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if why := eligibility.Check(e, eligibility.Dataset{}); why != "" {
		t.Errorf("episode not eligible: %s", why)
	}
}
