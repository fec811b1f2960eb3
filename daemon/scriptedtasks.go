package daemon

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/daemon/api"
	"github.com/mass-dev/mass/daemon/store"
)

// storeTasks is the scripted model's view of massd's stored tasks, read on
// every request: the task whose prompt a teacher prompt holds, with its
// required outputs and the scripted-recipe.json kept beside its spec in
// the stored task directory (never in a workspace).
type storeTasks struct {
	st  *store.Store
	log *slog.Logger
}

// lookupTimeout bounds one store read of the scripted model.
const lookupTimeout = 10 * time.Second

func (s storeTasks) ByPrompt(teacher string) (scripted.Task, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	ts, err := s.st.Tasks(ctx)
	if err != nil {
		s.log.Warn("scripted model: list tasks", "err", err)
		return scripted.Task{}, false
	}
	best, n := -1, 0 // the longest prompt wins: it is the most specific
	for i, t := range ts {
		p := strings.TrimSpace(t.Spec.Prompt)
		if p != "" && len(p) > n && strings.Contains(teacher, p) {
			best, n = i, len(p)
		}
	}
	if best < 0 {
		return scripted.Task{}, false
	}
	return s.task(ts[best]), true
}

func (s storeTasks) ByID(id string) (scripted.Task, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	t, err := s.st.Task(ctx, id)
	if err != nil {
		return scripted.Task{}, false
	}
	return s.task(t), true
}

func (s storeTasks) task(t api.Task) scripted.Task {
	rc, err := scripted.ReadRecipe(t.Dir, t.ID)
	if err != nil {
		s.log.Warn("scripted model: the task's recipe is unusable; writing its required outputs as dry-run files", "task", t.ID, "err", err)
	}
	return scripted.Task{ID: t.ID, Prompt: strings.TrimSpace(t.Spec.Prompt), Required: t.Spec.RequiredOutputs, Recipe: rc}
}
