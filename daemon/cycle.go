package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/searchfmt"
)

// CycleKind is the "cycle" job kind on the builtins: each round's searches
// run inside the cycle job (search.Search), one per task, named so that a
// resumed cycle resumes them; their episodes and events are the cycle's.
func (b *Builtins) CycleKind() jobkind.Kind { return generation.NewCycleKind(cycleEnv{genEnv{b}}) }

type cycleEnv struct{ genEnv }

func (e cycleEnv) Searches(_ context.Context, job jobkind.Job, rep jobkind.Reporter) (generation.Searches, error) {
	return cycleSearches{env: searchEnv{e.b}, job: job, rep: rep}, nil
}

type cycleSearches struct {
	env searchEnv
	job jobkind.Job
	rep jobkind.Reporter
}

func (s cycleSearches) Search(ctx context.Context, id, task, model string, seed int64, opts generation.SearchOptions) (generation.Retained, error) {
	p := search.Params{Model: model, Seed: seed, Judgments: opts.Judgments, JudgeMode: opts.JudgeMode}
	if opts.Iterations > 0 {
		p.Iterations = &opts.Iterations
	}
	l := s.job.Layout
	req := search.Request{SearchID: id, TaskID: task, Params: p, JobID: s.job.ID, Attempt: s.job.Attempt, Layout: l,
		WorkDir: filepath.Join(s.job.WorkDir, "search", id)}
	if err := os.MkdirAll(req.WorkDir, 0o750); err != nil {
		return generation.Retained{}, fmt.Errorf("search %s: %w", id, err)
	}
	if _, err := search.Search(ctx, s.env, req, s.rep); err != nil {
		return generation.Retained{}, err
	}
	r, err := searchfmt.ReadRetained(filepath.Join(l.Search(task), id))
	if err != nil {
		return generation.Retained{}, fmt.Errorf("search %s: %w", id, err)
	}
	return retainedWorkflow(filepath.Join(l.Search(task), id), r)
}
