package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/mass-dev/mass/agents/eligibility"
	"github.com/mass-dev/mass/agents/episode"
	"github.com/mass-dev/mass/agents/model/scripted"
	"github.com/mass-dev/mass/cycle/generation"
	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/searchfmt"
	"github.com/mass-dev/mass/taskspec"
)

// GenerationKind is the "generation" job kind on the builtins: episodes are
// real episodes recorded with the job, judgments go through the model
// registry, and the new model is registered in the store and served.
func (b *Builtins) GenerationKind() jobkind.Kind { return generation.NewKind(genEnv{b}) }

type genEnv struct{ b *Builtins }

func (e genEnv) Parts(ctx context.Context, job jobkind.Job, rep jobkind.Reporter, parent string) (generation.Parts, error) {
	eps, err := e.b.episodes(ctx, job.ID, job.TaskID, job.Layout, job.WorkDir, rep)
	if err != nil {
		return generation.Parts{}, err
	}
	if parent == "" {
		parent = e.b.Env.DefaultModel
	}
	pm, err := e.b.parentModel(ctx, parent)
	if err != nil {
		return generation.Parts{}, err
	}
	dry := e.b.Models.DryRun(parent)
	return generation.Parts{Parent: pm, Workflows: searchWorkflows{job.Layout},
		Runner:   &genEpisodes{childEpisodes: eps, dry: dry},
		Judge:    genJudge{m: judge.Clients(eps.d.Models), l: job.Layout, specs: eps.specs},
		Datasets: genDatasets{l: job.Layout, dry: dry}, Trainer: genTrainer{b: e.b, rep: rep},
		Exporter: genExporter(e), Models: e.b.ModelRegistrar(job.ID)}, nil
}

// parentModel is model g−1: a registered generation, or a configured
// entry or the scripted model (g = 0).
func (b *Builtins) parentModel(ctx context.Context, name string) (generation.Model, error) {
	if row, err := b.gens.st.GetModel(ctx, name); err == nil {
		return generation.Model{Name: row.Name, G: row.G, Parent: row.Parent, Weights: row.Weights, Tokenizer: row.Tokenizer}, nil
	}
	if m, ok := b.cfg.Models[name]; ok {
		return generation.Model{Name: name, Weights: m.Weights, Tokenizer: m.Tokenizer}, nil
	}
	if name == scripted.Name {
		dir, err := b.tinyModel(ctx)
		return generation.Model{Name: name, Weights: dir, Tokenizer: dir}, err
	}
	if b.Models.Has(name) {
		return generation.Model{Name: name}, nil
	}
	return generation.Model{}, fmt.Errorf("no model named %q", name)
}

// specCache loads each task's stored spec once per job.
type specCache struct {
	l  datadir.Layout
	mu sync.Mutex
	m  map[string]*taskspec.Spec
}

func newSpecCache(l datadir.Layout) *specCache {
	return &specCache{l: l, m: map[string]*taskspec.Spec{}}
}

func (c *specCache) get(task string) (*taskspec.Spec, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := c.m[task]; ok {
		return s, nil
	}
	s, err := taskspec.Load(filepath.Join(c.l.Task(task), taskspec.FileName))
	if err != nil {
		return nil, fmt.Errorf("load task %s: %w", task, err)
	}
	c.m[task] = s
	return s, nil
}

// searchWorkflows finds a task's newest finished search.
type searchWorkflows struct{ l datadir.Layout }

func (w searchWorkflows) Retained(_ context.Context, task string) (generation.Retained, error) {
	paths, _ := filepath.Glob(filepath.Join(w.l.Search(task), "*", searchfmt.RetainedFile))
	var best *searchfmt.Retained
	var bestTime int64
	var bestDir string
	for _, p := range paths {
		r, err := searchfmt.ReadRetained(filepath.Dir(p))
		fi, _ := os.Stat(p)
		if err != nil || !r.Finished || fi == nil {
			continue
		}
		if best == nil || fi.ModTime().UnixNano() > bestTime {
			best, bestTime, bestDir = &r, fi.ModTime().UnixNano(), filepath.Dir(p)
		}
	}
	if best == nil {
		return generation.Retained{}, errors.New("no finished search")
	}
	return retainedWorkflow(bestDir, *best)
}

// retainedWorkflow reads the champion design a search's retained record
// names (Design is a path relative to the search folder) into the text a
// teacher prompt appends to the task.
func retainedWorkflow(dir string, r searchfmt.Retained) (generation.Retained, error) {
	if !filepath.IsLocal(r.Design) {
		return generation.Retained{}, fmt.Errorf("search %s: design path %q leaves the search folder", r.SearchID, r.Design)
	}
	b, err := os.ReadFile(filepath.Join(dir, r.Design))
	if err != nil {
		return generation.Retained{}, fmt.Errorf("search %s: read champion design: %w", r.SearchID, err)
	}
	if strings.TrimSpace(string(b)) == "" {
		return generation.Retained{}, fmt.Errorf("search %s: champion design %s is empty", r.SearchID, r.Design)
	}
	return generation.Retained{Workflow: string(b), BeatsReference: r.BeatsReference}, nil
}

// genEpisodes runs teacher episodes as child episodes of the job and
// applies the eligibility predicate once, to each finished one.
type genEpisodes struct {
	*childEpisodes
	dry bool
}

func (g *genEpisodes) Run(ctx context.Context, r generation.EpisodeRequest) (generation.EpisodeResult, error) {
	seed := int(r.Seed)
	st, err := g.run(ctx, episode.Options{ID: r.ID, TaskID: r.Task, Workflow: r.Workflow, Directive: r.Directive, Model: r.Model, Seed: &seed})
	if err != nil {
		return generation.EpisodeResult{}, err
	}
	res := generation.EpisodeResult{EpisodeID: r.ID, Tokens: st.Tokens.Prompt + st.Tokens.Completion}
	e, err := eligibility.FromDir(g.l.Episode(r.ID))
	if err != nil {
		res.Reason = fmt.Sprintf("unreadable record: %v", err)
	} else {
		res.Reason = eligibility.Check(e, eligibility.Dataset{DryRun: g.dry})
	}
	return res, nil
}

// genJudge compares two episodes' workspace exports with the evaluator.
type genJudge struct {
	m     judge.Model
	l     datadir.Layout
	specs *specCache
}

func (j genJudge) Judge(ctx context.Context, r generation.JudgeRequest) (generation.Verdict, error) {
	spec, err := j.specs.get(r.Task)
	if err != nil {
		return generation.Verdict{}, err
	}
	req := judge.Request{Key: r.Key, Model: r.Model, Seed: r.Seed,
		Task:   judgeTask(r.Task, spec),
		First:  judge.Side{Label: r.A, Tar: filepath.Join(j.l.Episode(r.A), "workspace.tar")},
		Second: judge.Side{Label: r.B, Tar: filepath.Join(j.l.Episode(r.B), "workspace.tar")}}
	res, _, err := judge.Run(ctx, j.m, req)
	if err != nil {
		return generation.Verdict{}, err
	}
	v := generation.Verdict{Winner: "invalid", Rationale: res.Rationale, Tokens: res.PromptTokens + res.CompletionTokens}
	switch {
	case res.Status != judge.StatusValid:
	case res.Winner == "tie":
		v.Winner = "tie"
	case res.WinnerLabel == r.A:
		v.Winner = "A"
	case res.WinnerLabel == r.B:
		v.Winner = "B"
	}
	return v, nil
}

func requiredOutputs(s *taskspec.Spec) []string {
	out := append([]string(nil), s.RequiredOutputs...)
	sort.Strings(out)
	return out
}

// tinyModel is the folder the scripted model's generations train from:
// mass-train's tiny preset (Qwen3 vocabulary and tokenizer, random
// weights), made on first use under <data-dir>/models/tiny.
func (b *Builtins) tinyModel(ctx context.Context) (string, error) {
	b.gens.mu.Lock()
	defer b.gens.mu.Unlock()
	dir := filepath.Join(b.Layout.Root, "models", "tiny")
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err == nil {
		return dir, nil
	}
	tmp := dir + ".tmp"
	_ = os.RemoveAll(tmp)
	if err := massTrain(ctx, b, dir, "init-model", "--config", "tiny", "--out", tmp); err != nil {
		return "", fmt.Errorf("make the tiny model: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", fmt.Errorf("make the tiny model: %w", err)
	}
	return dir, nil
}

// Splits reads each task's split from its stored spec, fresh on every call
// so that a task updated since is judged by its current spec.
func (e genEnv) Splits() generation.Splits {
	return taskSplits{specSplits{newSpecCache(e.b.Layout)}}
}

// taskSplits names a task massd does not have as such.
type taskSplits struct{ specSplits }

func (s taskSplits) Split(ctx context.Context, task string) (string, error) {
	if _, err := os.Stat(filepath.Join(s.c.l.Task(task), taskspec.FileName)); errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("no task %q on this massd; add it with massctl task add or pick one from massctl task list", task)
	}
	return s.specSplits.Split(ctx, task)
}
