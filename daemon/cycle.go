package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/searchfmt"
)

// CycleKind is the "cycle" job kind on the builtins: each round's searches
// are the search kind run inside the cycle job, one per task, named so
// that a resumed cycle resumes them.
func (b *Builtins) CycleKind() jobkind.Kind { return generation.NewCycleKind(cycleEnv{genEnv{b}}) }

type cycleEnv struct{ genEnv }

func (e cycleEnv) Searches(_ context.Context, job jobkind.Job, rep jobkind.Reporter) (generation.Searches, error) {
	return cycleSearches{kind: e.b.SearchKind(), job: job, rep: rep}, nil
}

type cycleSearches struct {
	kind jobkind.Kind
	job  jobkind.Job
	rep  jobkind.Reporter
}

func (s cycleSearches) Search(ctx context.Context, id, task, model string, seed int64, opts generation.SearchOptions) (generation.Retained, error) {
	sp := search.Params{Model: model, Seed: seed, Judgments: opts.Judgments, JudgeMode: opts.JudgeMode}
	if opts.Iterations > 0 {
		sp.Iterations = &opts.Iterations
	}
	params, err := json.Marshal(sp)
	if err != nil {
		return generation.Retained{}, err
	}
	l := s.job.Layout
	sj := jobkind.Job{ID: id, Kind: search.KindName, TaskID: task, TaskDir: l.Task(task), Params: params,
		Attempt: s.job.Attempt, Layout: l, WorkDir: filepath.Join(s.job.WorkDir, "search", id)}
	if err := os.MkdirAll(sj.WorkDir, 0o750); err != nil {
		return generation.Retained{}, fmt.Errorf("search %s: %w", id, err)
	}
	if err := s.kind.Run(ctx, sj, s.rep); err != nil {
		return generation.Retained{}, err
	}
	r, err := searchfmt.ReadRetained(filepath.Join(l.Search(task), id))
	if err != nil {
		return generation.Retained{}, fmt.Errorf("search %s: %w", id, err)
	}
	return retainedWorkflow(filepath.Join(l.Search(task), id), r)
}
