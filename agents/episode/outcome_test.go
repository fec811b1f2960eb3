package episode

import (
	"path/filepath"
	"testing"

	"github.com/mass-dev/mass/agents/grade"
	"github.com/mass-dev/mass/agents/guard"
	"github.com/mass-dev/mass/episodefmt"
)

// TestStatusReadsAsOutcome pins that run_status.json as the runner writes
// it reads back through episodefmt, the readers' format.
func TestStatusReadsAsOutcome(t *testing.T) {
	dir := t.TempDir()
	st := Status{EpisodeID: "e-1", Exit: ExitCompleted, Success: true, DryRun: true, OutputsPresent: true,
		Grade:  &grade.Grade{Ran: true, Passed: true},
		Guards: &guard.Summary{ProtectedPathViolations: 2, ShadowCopies: 3, IntegrityChecked: true}}
	if err := writeJSON(filepath.Join(dir, StatusFile), st); err != nil {
		t.Fatal(err)
	}
	o, err := episodefmt.ReadOutcome(dir)
	if err != nil {
		t.Fatal(err)
	}
	if o.EpisodeID != "e-1" || o.Exit != episodefmt.ExitCompleted || !o.Success || !o.DryRun ||
		o.OutputsPresent == nil || !*o.OutputsPresent || o.Grade == nil || !o.Grade.Passed {
		t.Errorf("outcome = %+v, want the status's exit, success, dry run, outputs and grade", o)
	}
	if g := o.Guards; g == nil || g.Violations != 2 || g.ShadowCopies != 3 || !g.Checked {
		t.Errorf("guards = %+v, want 2 violations, 3 shadow copies, checked", o.Guards)
	}
}
