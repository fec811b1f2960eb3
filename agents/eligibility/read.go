package eligibility

import (
	"path/filepath"

	"github.com/mass-dev/mass/episodefmt"
)

// FromDir reads an episode directory's run_status.json and episode.json
// through their format (episodefmt, docs/formats.md). An episode without
// run_status.json never finished.
func FromDir(dir string) (Episode, error) {
	st, err := episodefmt.ReadOutcome(dir)
	if err != nil {
		return Episode{}, err
	}
	in, err := episodefmt.ReadInfo(dir)
	if err != nil {
		return Episode{}, err
	}
	e := Episode{ID: st.EpisodeID, Completed: st.Exit == episodefmt.ExitCompleted, DryRun: st.DryRun || in.DryRun,
		GraderDeclared: in.Graded || st.Grade != nil}
	if e.ID == "" {
		e.ID = filepath.Base(dir)
	}
	if st.OutputsPresent != nil {
		e.OutputsPresent = *st.OutputsPresent
	}
	if st.Grade != nil {
		e.GraderPassed = st.Grade.Passed
	}
	if g := st.Guards; g != nil {
		e.Violations, e.ShadowCopies, e.GuardsChecked = g.Violations, g.ShadowCopies, g.Checked
	}
	return e, nil
}
