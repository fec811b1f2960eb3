package report

import (
	"context"
	"fmt"

	"github.com/mass-dev/mass/agents/audit"
	"github.com/mass-dev/mass/cycle/rollout"
	"github.com/mass-dev/mass/datadir"
)

// audit aggregates the behavioural audit of every rollout episode per
// model: a behaviour counts once per episode that shows it (k of N).
func (r *Report) audit(ctx context.Context, l datadir.Layout, ro rollout.Summary) []AuditRow {
	rows := []AuditRow{}
	for _, m := range append([]string{r.Baseline}, r.Models...) {
		row := AuditRow{Model: m}
		for _, g := range r.Generations {
			if g.Model == m {
				row.G = &g.G
			}
		}
		for _, x := range ro.Runs {
			if x.Model != m {
				continue
			}
			row.N++
			if x.Graded && x.Error == "" {
				row.Graded++
				if x.Passed {
					row.Passed++
				}
			}
			if err := row.add(ctx, l, x); err != nil {
				row.AuditErrors = append(row.AuditErrors, err.Error())
			}
		}
		if row.Graded > 0 {
			row.PassRate = ratio(row.Passed, row.Graded)
		}
		for _, w := range r.WinRates {
			if w.Model == m {
				row.JudgePreference = w.Overall.Rate
			}
		}
		if row.DryRun {
			r.DryRun = append(r.DryRun, m)
		}
		rows = append(rows, row)
	}
	return rows
}

func (row *AuditRow) add(ctx context.Context, l datadir.Layout, x rollout.Run) error {
	if x.Error != "" || !datadir.ValidID(x.EpisodeID) {
		return fmt.Errorf("%s episode %02d: no episode (%s)", x.Task, x.Index, x.Error)
	}
	in, err := audit.Load(ctx, audit.DirSource{Dir: l.Episode(x.EpisodeID)}, x.EpisodeID)
	if err != nil {
		return fmt.Errorf("audit %s: %w", x.EpisodeID, err)
	}
	a := audit.Compute(in)
	row.Audited++
	row.DryRun = row.DryRun || in.DryRun
	for _, c := range []struct {
		n   int
		dst *int
	}{{a.Delegation, &row.Delegation}, {a.CodeHandoff, &row.CodeHandoff}, {a.WorkerRevision, &row.WorkerRevision},
		{a.OrchestratorRevision, &row.OrchestratorRevision}} {
		if c.n > 0 {
			*c.dst++
		}
	}
	g := &row.Guards
	g.ProtectedAttempts += a.ProtectedPathAttempts
	g.ProtectedViolations += a.ProtectedPathViolations
	g.HiddenAttempts += a.HiddenPathAttempts
	g.ShadowCopies += a.ShadowCopies
	g.LoopHalts += a.LoopHalts
	g.ShellChangedFiles += a.ShellChangedFiles
	return nil
}

func ratio(a, b int) *float64 {
	if b == 0 {
		return nil
	}
	f := float64(a) / float64(b)
	return &f
}

func itoa(i int) string { return fmt.Sprint(i) }
