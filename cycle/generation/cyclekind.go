package generation

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/mass-dev/mass/daemon/jobs"
)

// CycleKindName is the job kind of the whole loop over generations.
const CycleKindName = "cycle"

// CycleFile is the cycle job's record in its work directory.
const CycleFile = "cycle.json"

// CycleParams are a "cycle" job's parameters: a generation's, and how many.
type CycleParams struct {
	Params
	Generations      int `json:"generations"`
	SearchIterations int `json:"search_iterations,omitempty"` // per search; 0: the search kind's default (11)
}

// ParseCycleParams decodes and checks a cycle job's params.
func ParseCycleParams(raw json.RawMessage) (CycleParams, error) {
	var p CycleParams
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("cycle params: %w", err)
	}
	if p.Generations < 1 {
		return p, fmt.Errorf("cycle params: generations %d must be at least 1", p.Generations)
	}
	if p.SearchIterations < 0 {
		return p, fmt.Errorf("cycle params: search_iterations %d must not be negative", p.SearchIterations)
	}
	b, _ := json.Marshal(p.Params)
	_, err := ParseParams(b)
	return p, err
}

// Searches runs workflow searches for the cycle.
type Searches interface {
	// Search runs, or resumes, the search named id on task with model
	// (iterations 0: the search's default) and returns its retained workflow.
	Search(ctx context.Context, id, task, model string, seed int64, iterations int) (Retained, error)
}

// CycleEnv is massd's side of the cycle kind.
type CycleEnv interface {
	Env
	Searches(ctx context.Context, job jobs.Job, rep jobs.Reporter) (Searches, error)
}

// CycleStep is one generation of a cycle: its searches and its outcome.
type CycleStep struct {
	G        int                 `json:"generation"`
	Parent   string              `json:"parent"`
	Searches map[string]Retained `json:"searches"` // task → retained workflow, filled as searches finish
	Failed   map[string]string   `json:"failed,omitempty"`
	// SearchSeconds is each finished search's wall time in this job.
	SearchSeconds map[string]float64 `json:"search_seconds,omitempty"`
	Model         string             `json:"model,omitempty"` // set when the generation is done
	Dir           string             `json:"dir,omitempty"`
}

// NewCycleKind is the "cycle" job kind: for g = 1..G, a search on every
// task with model g−1, then generation g. Resumable like its parts.
func NewCycleKind(env CycleEnv) jobs.Kind {
	return jobs.Kind{
		Name:        CycleKindName,
		StageEvent:  StageEvent,
		Description: "MASS cycle: for each of `generations` rounds, a workflow search on every task with the current model, then a generation trained from it (params: a generation's, plus generations)",
		OnInterrupt: jobs.Resume,
		Validate:    func(raw json.RawMessage) error { _, err := ParseCycleParams(raw); return err },
		Run:         func(ctx context.Context, job jobs.Job, rep jobs.Reporter) error { return runCycle(ctx, env, job, rep) },
	}
}

func runCycle(ctx context.Context, env CycleEnv, job jobs.Job, rep jobs.Reporter) error {
	p, err := ParseCycleParams(job.Params)
	if err != nil {
		return err
	}
	s, err := env.Searches(ctx, job, rep)
	if err != nil {
		return err
	}
	path := filepath.Join(job.WorkDir, CycleFile)
	var steps []CycleStep
	if _, err := readJSON(path, &steps); err != nil {
		return err
	}
	model := p.Model
	for i := 0; i < p.Generations; i++ {
		if i < len(steps) && steps[i].Model != "" {
			model = steps[i].Model
			continue
		}
		parts, err := env.Parts(ctx, job, rep, model)
		if err != nil {
			return err
		}
		if i == len(steps) {
			steps = append(steps, CycleStep{G: parts.Parent.G + 1, Parent: parts.Parent.Name, Searches: map[string]Retained{}, Failed: map[string]string{}})
		}
		st := &steps[i]
		if err := cycleSearches(ctx, s, job, rep, p, st, path, steps); err != nil {
			return err
		}
		parts.Workflows = stepWorkflows{st}
		sum, err := runOwned(ctx, job, rep, p.config(parts, ""))
		if err != nil {
			return fmt.Errorf("generation %d: %w", st.G, err)
		}
		st.Model, st.Dir, model = sum.Model, sum.Dir, sum.Model
		if err := writeJSON(path, steps); err != nil {
			return err
		}
	}
	rep.SetResult(map[string]any{"generations": steps})
	return nil
}

// cycleSearches runs the step's searches not yet recorded, one per task.
func cycleSearches(ctx context.Context, s Searches, job jobs.Job, rep jobs.Reporter, p CycleParams, st *CycleStep, path string, steps []CycleStep) error {
	for i, task := range p.Tasks {
		if _, ok := st.Searches[task]; ok {
			continue
		}
		if _, ok := st.Failed[task]; ok {
			continue
		}
		rep.Progress(jobs.Progress{Stage: fmt.Sprintf("search g%d", st.G), Message: task})
		start := time.Now()
		r, err := s.Search(ctx, fmt.Sprintf("%s-g%d-%d", job.ID, st.G, i), task, st.Parent, p.Seed, p.SearchIterations)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			st.Failed[task] = err.Error()
		} else {
			st.Searches[task] = r
		}
		if st.SearchSeconds == nil {
			st.SearchSeconds = map[string]float64{}
		}
		st.SearchSeconds[task] = time.Since(start).Seconds()
		if err := writeJSON(path, steps); err != nil {
			return err
		}
	}
	return nil
}

// stepWorkflows answers stage eligible from a cycle step's searches.
type stepWorkflows struct{ st *CycleStep }

func (w stepWorkflows) Retained(_ context.Context, task string) (Retained, error) {
	if r, ok := w.st.Searches[task]; ok {
		return r, nil
	}
	if e, ok := w.st.Failed[task]; ok {
		return Retained{}, fmt.Errorf("search failed: %s", e)
	}
	return Retained{}, fmt.Errorf("no search of %s in generation %d", task, w.st.G)
}
