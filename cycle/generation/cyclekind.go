package generation

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mass-dev/mass/generationfmt"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/jobwire"
)

// CycleKindName is the job kind of the whole loop over generations.
const CycleKindName = jobwire.CycleKind

// CycleFile is the cycle job's record in its work directory.
const CycleFile = generationfmt.CycleFile

// CycleParams are a "cycle" job's parameters (jobwire.CycleParams).
type CycleParams = jobwire.CycleParams

// ParseCycleParams decodes and checks a cycle job's params.
func ParseCycleParams(raw json.RawMessage) (CycleParams, error) {
	var p CycleParams
	if err := jobkind.DecodeParams(raw, &p); err != nil {
		return p, fmt.Errorf("cycle params: %w", err)
	}
	if p.Generations < 1 {
		return p, fmt.Errorf("cycle params: generations %d must be at least 1", p.Generations)
	}
	if p.SearchIterations < 0 || p.SearchJudgments < 0 {
		return p, fmt.Errorf("cycle params: search_iterations %d and search_judgments %d must not be negative", p.SearchIterations, p.SearchJudgments)
	}
	if p.Generations > 1 && p.ServedName != "" && !strings.Contains(p.ServedName, "{g}") {
		return p, fmt.Errorf("cycle params: served_name %q names every generation alike; put {g} in it (L{g})", p.ServedName)
	}
	if err := CheckParams(p.GenerationParams); err != nil {
		return p, err
	}
	for k := range p.PerGeneration {
		g, err := strconv.Atoi(k)
		if err != nil || g < 1 || g > p.Generations {
			return p, fmt.Errorf("cycle params: per_generation key %q must be a generation 1..%d", k, p.Generations)
		}
		if _, err := ForGeneration(p, g); err != nil {
			return p, err
		}
	}
	return p, nil
}

// ForGeneration is generation g's params: the cycle's, with g's overrides.
func ForGeneration(p CycleParams, g int) (Params, error) {
	raw, ok := p.PerGeneration[strconv.Itoa(g)]
	if !ok {
		return p.GenerationParams, nil
	}
	var over map[string]json.RawMessage
	if err := json.Unmarshal(raw, &over); err != nil {
		return p.GenerationParams, fmt.Errorf("per_generation %d: %w", g, err)
	}
	for _, k := range []string{"tasks", "model"} {
		if _, ok := over[k]; ok {
			return p.GenerationParams, fmt.Errorf("per_generation %d: %s is the cycle's and cannot change per generation", g, k)
		}
	}
	var base map[string]json.RawMessage
	b, _ := json.Marshal(p.GenerationParams)
	_ = json.Unmarshal(b, &base)
	for k, v := range over {
		if k == "training" && base[k] != nil {
			v = mergeObjects(base[k], v)
		}
		base[k] = v
	}
	b, _ = json.Marshal(base)
	out, err := ParseParams(b)
	if err != nil {
		return p.GenerationParams, fmt.Errorf("per_generation %d: %w", g, err)
	}
	return out, nil
}

// mergeObjects overlays JSON object b's keys on a's.
func mergeObjects(a, b json.RawMessage) json.RawMessage {
	var ma, mb map[string]json.RawMessage
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil {
		return b
	}
	for k, v := range mb {
		ma[k] = v
	}
	out, _ := json.Marshal(ma)
	return out
}

// Searches runs workflow searches for the cycle.
type Searches interface {
	// Search runs, or resumes, the search named id on task with model
	// and returns its retained workflow.
	Search(ctx context.Context, id, task, model string, seed int64, opts SearchOptions) (Retained, error)
}

// SearchOptions are a cycle's search settings; zero values: the search's defaults.
type SearchOptions struct {
	Iterations int    // optimizer iterations (default 11)
	Judgments  int    // judgments per comparison (default 1)
	JudgeMode  string // bundle (default) or agent
}

// CycleEnv is massd's side of the cycle kind.
type CycleEnv interface {
	Env
	Searches(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) (Searches, error)
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

// NewCycleKind is the "cycle" job kind on env: for g = 1..G, a search on
// every task with model g−1, then generation g. Resumable like its parts.
// massd's is CycleKind(svc).
func NewCycleKind(env CycleEnv) jobkind.Kind { return newCycleKind(env, nil) }

// newCycleKind is the "cycle" kind on env; check, if set, runs on the
// parsed params (the generation's part) before the job is queued and again
// when it runs.
func newCycleKind(env CycleEnv, check func(Params) error) jobkind.Kind {
	var checkCycle func(CycleParams) error
	if check != nil {
		checkCycle = func(p CycleParams) error { return check(p.GenerationParams) }
	}
	parse := jobkind.Checked(ParseCycleParams, checkCycle)
	return jobkind.Kind{
		Name:        CycleKindName,
		StageEvent:  StageEvent,
		Description: "MASS cycle: for each of `generations` rounds, a workflow search on every task with the current model, then a generation trained from it (params: a generation's, plus generations)",
		OnInterrupt: jobkind.Resume,
		Validate: func(raw json.RawMessage) error {
			p, err := parse(raw)
			if err != nil {
				return err
			}
			return CheckSplits(context.Background(), env.Splits(), p.Tasks)
		},
		Run: func(ctx context.Context, job jobkind.Job, rep jobkind.Reporter) error {
			p, err := parse(job.Params)
			if err != nil {
				return err
			}
			return runCycle(ctx, env, p, job, rep)
		},
	}
}

func runCycle(ctx context.Context, env CycleEnv, p CycleParams, job jobkind.Job, rep jobkind.Reporter) error {
	s, err := env.Searches(ctx, job, rep)
	if err != nil {
		return err
	}
	if err := CheckSplits(ctx, env.Splits(), p.Tasks); err != nil {
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
		gp, err := ForGeneration(p, st.G)
		if err != nil {
			return err
		}
		cfg := configOf(gp, parts)
		cfg.Splits = env.Splits()
		sum, err := runOwned(ctx, job, rep, cfg)
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
func cycleSearches(ctx context.Context, s Searches, job jobkind.Job, rep jobkind.Reporter, p CycleParams, st *CycleStep, path string, steps []CycleStep) error {
	for i, task := range p.Tasks {
		if _, ok := st.Searches[task]; ok {
			continue
		}
		if _, ok := st.Failed[task]; ok {
			continue
		}
		rep.Progress(jobkind.Progress{Stage: fmt.Sprintf("search g%d", st.G), Message: fmt.Sprintf("%s  task %d/%d", task, i+1, len(p.Tasks)),
			Counters: map[string]int64{"task": int64(i + 1), "tasks": int64(len(p.Tasks)), "generation": int64(st.G)}})
		start := time.Now()
		r, err := s.Search(ctx, fmt.Sprintf("%s-g%d-%d", job.ID, st.G, i), task, st.Parent, searchSeed(p, st.G, i),
			SearchOptions{Iterations: p.SearchIterations, Judgments: p.SearchJudgments, JudgeMode: p.SearchJudgeMode})
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

// searchSeed is the seed of generation g's search on the i-th task: the
// search base moved to generation g, plus i (the reference adds the task).
func searchSeed(p CycleParams, g, i int) int64 {
	base := p.SearchSeed
	if base == 0 {
		base = p.Seed
	}
	return GenerationSeed(base, g) + int64(i)
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
