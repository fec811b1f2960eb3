package jobs

import (
	"context"
	"fmt"

	"github.com/mass-dev/mass/daemon/api"
)

// attemptBudget is what the interrupted attempt of a job got done and how
// many attempts in a row have now made no progress.
type attemptBudget struct {
	episodes, stages int // finished in the interrupted attempt
	progressed       bool
	stalled          int // attempts in a row without progress, this one included
}

func (b attemptBudget) String() string {
	if b.progressed {
		return fmt.Sprintf("the attempt made progress (%d episodes finished, %d stage changes), so the budget of %d attempts without progress starts again",
			b.episodes, b.stages, MaxAutoAttempts)
	}
	return fmt.Sprintf("the attempt made no progress (%d of %d attempts without progress)", b.stalled, MaxAutoAttempts)
}

// fields adds the budget to an event's fields; the next recovery reads
// "stalled" back from the job's last requeued event.
func (b attemptBudget) fields(f map[string]any) map[string]any {
	if f == nil {
		f = map[string]any{}
	}
	f["progressed"], f["stalled"] = b.progressed, b.stalled
	f["episodes_finished"], f["stage_changes"] = b.episodes, b.stages
	return f
}

// budget measures the interrupted attempt of j (store.AttemptProgress:
// an episode it started reached its own end, or it left a stage for the
// next: a second Kind.StageEvent in the attempt) and
// counts the attempts in a row without progress: those recorded with the
// last automatic requeue, plus this one unless it progressed. An
// operator's retry starts the count afresh.
func (m *Manager) budget(ctx context.Context, j api.Job) attemptBudget {
	var b attemptBudget
	if j.Started != nil {
		eps, stages, err := m.store.AttemptProgress(ctx, j.ID, *j.Started, m.kinds[j.Kind].StageEvent)
		if err != nil {
			m.log.Warn("measure the progress of an interrupted attempt; counting none", "job", j.ID, "err", err)
		}
		b.episodes, b.stages = eps, max(0, stages-1)
		b.progressed = b.episodes > 0 || b.stages > 0
	}
	if b.progressed {
		return b
	}
	prev := 0
	if ev, ok, err := m.store.LastEvent(ctx, j.ID, "requeued"); err == nil && ok && ev.Fields["policy"] != "operator" {
		if n, ok := ev.Fields["stalled"].(float64); ok {
			prev = int(n)
		} else {
			prev = j.Attempt - 1 // requeued before budgets were recorded
		}
	}
	b.stalled = prev + 1
	return b
}
