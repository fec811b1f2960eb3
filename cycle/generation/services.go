package generation

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mass-dev/mass/agents/eligibility"
	"github.com/mass-dev/mass/agents/episode"
	"github.com/mass-dev/mass/cycle/judge"
	"github.com/mass-dev/mass/cycle/search"
	"github.com/mass-dev/mass/datadir"
	"github.com/mass-dev/mass/jobkind"
	"github.com/mass-dev/mass/jobkind/services"
	"github.com/mass-dev/mass/searchfmt"
	"github.com/mass-dev/mass/taskspec"
)

// Kind is the "generation" job kind on massd's services: episodes are
// real episodes recorded with the job, judgments go through massd's model
// registry, mass-train runs through its runner, and the new model is
// registered and served. An external judge as the model is refused.
func Kind(svc services.Services) jobkind.Kind { return newKind(svcEnv{svc}, notJudge(svc, KindName)) }

// CycleKind is the "cycle" job kind on massd's services: each round's
// searches run inside the cycle job (search.Search), one per task, named so
// that a resumed cycle resumes them; their episodes and events are the
// cycle's. Then generation g runs (Run), in the same job.
func CycleKind(svc services.Services) jobkind.Kind {
	return newCycleKind(svcEnv{svc}, notJudge(svc, CycleKindName))
}

func notJudge(svc services.Services, kind string) func(Params) error {
	return func(p Params) error {
		return services.NotJudge(svc, svc.EpisodeEnv().DefaultModel, kind, services.Role{Key: "model", Model: p.Model})
	}
}

// svcEnv is Env and CycleEnv on massd's services.
type svcEnv struct{ svc services.Services }

var (
	_ CycleEnv = svcEnv{}
	_ Episodes = (*svcEpisodes)(nil)
	_ Judge    = svcJudge{}
	_ Datasets = svcDatasets{}
	_ Trainer  = svcTrainer{}
	_ Exporter = svcExporter{}
	_ Models   = registrar{}
)

func (e svcEnv) Parts(ctx context.Context, job jobkind.Job, rep jobkind.Reporter, parent string) (Parts, error) {
	eps, err := e.svc.Episodes(ctx, job, rep)
	if err != nil {
		return Parts{}, err
	}
	env := e.svc.EpisodeEnv()
	if parent == "" {
		parent = env.DefaultModel
	}
	pm, err := e.svc.ParentModel(ctx, parent)
	if err != nil {
		return Parts{}, err
	}
	dry := env.Models.DryRun(parent)
	specs := services.NewSpecs(job.Layout)
	log := rep.Logger()
	return Parts{Parent: pm, Workflows: searchWorkflows{job.Layout},
		Runner:   &svcEpisodes{Episodes: eps, l: job.Layout, dry: dry},
		Judge:    svcJudge{m: services.ModelCalls(e.svc), l: job.Layout, spec: specs.Get},
		Datasets: svcDatasets{l: job.Layout, dry: dry}, Trainer: svcTrainer{r: e.svc, log: log},
		Exporter: svcExporter{r: e.svc, log: log}, Models: registrar{e.svc, job.ID}}, nil
}

// Splits reads each task's split from its stored spec, fresh on every call
// so that a task updated since is judged by its current spec.
func (e svcEnv) Splits() Splits { return taskSplits{services.NewSpecs(e.svc.Layout()), e.svc.Layout()} }

// taskSplits names a task massd does not have as such.
type taskSplits struct {
	specs *services.Specs
	l     datadir.Layout
}

func (s taskSplits) Split(ctx context.Context, task string) (string, error) {
	if _, err := os.Stat(filepath.Join(s.l.Task(task), taskspec.FileName)); errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("no task %q on this massd; add it with massctl task add or pick one from massctl task list", task)
	}
	return s.specs.Split(ctx, task)
}

// registrar registers a job's generations.
type registrar struct {
	m     services.Models
	jobID string
}

func (r registrar) Register(ctx context.Context, m Model) error {
	return r.m.RegisterModel(ctx, r.jobID, m)
}

// Searches are the cycle's searches: search.Search on massd's services,
// inside the cycle job.
func (e svcEnv) Searches(_ context.Context, job jobkind.Job, rep jobkind.Reporter) (Searches, error) {
	return svcSearches{env: search.ServicesEnv(e.svc), job: job, rep: rep}, nil
}

type svcSearches struct {
	env search.Env
	job jobkind.Job
	rep jobkind.Reporter
}

func (s svcSearches) Search(ctx context.Context, id, task, model string, seed int64, opts SearchOptions) (Retained, error) {
	p := search.Params{Model: model, Seed: seed, Judgments: opts.Judgments, JudgeMode: opts.JudgeMode}
	if opts.Iterations > 0 {
		p.Iterations = &opts.Iterations
	}
	if err := search.CheckParams(p); err != nil {
		return Retained{}, err
	}
	l := s.job.Layout
	req := search.Request{SearchID: id, TaskID: task, Params: p, JobID: s.job.ID, Attempt: s.job.Attempt, Layout: l,
		WorkDir: filepath.Join(s.job.WorkDir, "search", id)}
	if err := os.MkdirAll(req.WorkDir, 0o750); err != nil {
		return Retained{}, fmt.Errorf("search %s: %w", id, err)
	}
	if _, err := search.Search(ctx, s.env, req, s.rep); err != nil {
		return Retained{}, err
	}
	dir := filepath.Join(l.Search(task), id)
	r, err := searchfmt.ReadRetained(dir)
	if err != nil {
		return Retained{}, fmt.Errorf("search %s: %w", id, err)
	}
	return retainedWorkflow(dir, r)
}

// searchWorkflows finds a task's newest finished search.
type searchWorkflows struct{ l datadir.Layout }

func (w searchWorkflows) Retained(_ context.Context, task string) (Retained, error) {
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
		return Retained{}, errors.New("no finished search")
	}
	return retainedWorkflow(bestDir, *best)
}

// retainedWorkflow reads the champion design a search's retained record
// names (Design is a path relative to the search folder) into the text a
// teacher prompt appends to the task.
func retainedWorkflow(dir string, r searchfmt.Retained) (Retained, error) {
	if !filepath.IsLocal(r.Design) {
		return Retained{}, fmt.Errorf("search %s: design path %q leaves the search folder", r.SearchID, r.Design)
	}
	b, err := os.ReadFile(filepath.Join(dir, r.Design))
	if err != nil {
		return Retained{}, fmt.Errorf("search %s: read champion design: %w", r.SearchID, err)
	}
	if strings.TrimSpace(string(b)) == "" {
		return Retained{}, fmt.Errorf("search %s: champion design %s is empty", r.SearchID, r.Design)
	}
	return Retained{Workflow: string(b), BeatsReference: r.BeatsReference}, nil
}

// svcEpisodes runs teacher episodes as child episodes of the job and
// applies the eligibility predicate once, to each finished one.
type svcEpisodes struct {
	services.Episodes
	l   datadir.Layout
	dry bool
}

func (g *svcEpisodes) Run(ctx context.Context, r EpisodeRequest) (EpisodeResult, error) {
	seed := int(r.Seed)
	st, err := g.Episodes.Run(ctx, episode.Options{ID: r.ID, TaskID: r.Task, Workflow: r.Workflow, Directive: r.Directive, Model: r.Model, Seed: &seed})
	if err != nil {
		return EpisodeResult{}, err
	}
	res := EpisodeResult{EpisodeID: r.ID, Tokens: st.Tokens.Prompt + st.Tokens.Completion}
	e, err := eligibility.FromDir(g.l.Episode(r.ID))
	if err != nil {
		res.Reason = fmt.Sprintf("unreadable record: %v", err)
	} else {
		res.Reason = eligibility.Check(e, eligibility.Dataset{DryRun: g.dry})
	}
	return res, nil
}

// svcJudge compares two episodes' workspace exports with the evaluator.
type svcJudge struct {
	m    judge.Model
	l    datadir.Layout
	spec func(task string) (*taskspec.Spec, error)
}

func (j svcJudge) Judge(ctx context.Context, r JudgeRequest) (Verdict, error) {
	spec, err := j.spec(r.Task)
	if err != nil {
		return Verdict{}, err
	}
	req := judge.Request{Key: r.Key, Model: r.Model, Seed: r.Seed,
		Task:   JudgeTask(r.Task, spec),
		First:  judge.Side{Label: r.A, Tar: filepath.Join(j.l.Episode(r.A), "workspace.tar")},
		Second: judge.Side{Label: r.B, Tar: filepath.Join(j.l.Episode(r.B), "workspace.tar")}}
	res, _, err := judge.Run(ctx, j.m, req)
	if err != nil {
		return Verdict{}, err
	}
	v := Verdict{Winner: "invalid", Rationale: res.Rationale, Tokens: res.PromptTokens + res.CompletionTokens}
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

// JudgeTask is the task as a generation's or an evaluation's judge reads
// it. A task with a query template is a reference task: its bare prompt is
// read as the reference's judges read tasks/bare/query{q}.txt
// (search.BareTaskText); any other task's prompt as written.
func JudgeTask(id string, s *taskspec.Spec) judge.Task {
	p := s.Prompt
	if s.QueryTemplate != "" {
		p = search.BareTaskText(p)
	}
	req := append([]string(nil), s.RequiredOutputs...)
	sort.Strings(req)
	return judge.Task{ID: id, Prompt: p, Domain: s.Domain, Required: req}
}
